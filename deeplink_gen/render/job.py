"""What every artifact is rendered from."""

from __future__ import annotations

from dataclasses import dataclass, field

from deeplink_gen.model import Prototypes, ResolvedVendor, Vendor


@dataclass(frozen=True)
class Job:
    rv: ResolvedVendor
    source: str               # the vendor file, relative to the workspace (named in every header)
    protos: Prototypes
    options: dict = field(default_factory=dict)   # the options that change output, for manifest.json

    @property
    def vendor(self) -> Vendor:
        return self.rv.vendor
