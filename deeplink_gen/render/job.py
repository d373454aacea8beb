"""What every artifact is rendered from."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.model import Prototypes, ResolvedVendor, Vendor


@dataclass(frozen=True)
class Job:
    rv: ResolvedVendor
    source: str               # the vendor file, relative to the workspace (named in every header)
    protos: Prototypes

    @property
    def vendor(self) -> Vendor:
        return self.rv.vendor
