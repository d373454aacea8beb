"""What every artifact is rendered from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen.errors import Loc
from deeplink_gen.model import Prototypes, ResolvedVendor, Vendor
from deeplink_gen.paths import PACKAGE


@dataclass(frozen=True)
class Job:
    rv: ResolvedVendor
    source: str               # the vendor file, relative to the workspace (named in every header)
    protos: Prototypes
    options: dict = field(default_factory=dict)   # the options that change output, for manifest.json
    root: Path | None = None                      # the workspace
    origins: dict = field(default_factory=dict, compare=False, repr=False)   # origin() of each file so far

    @property
    def vendor(self) -> Vendor:
        return self.rv.vendor

    def origin(self, loc: Loc) -> str:
        """The file *loc* is in, as generated code names it: relative to the
        workspace, or deeplink_gen/... for what ships with deeplink-gen
        (resolved once per file in this job)."""
        found = self.origins.get(loc.file)
        if found is None:
            found = self.origins[loc.file] = _origin(loc.file, self.root)
        return found


def _origin(file: str, root: Path | None) -> str:
    path = Path(file).resolve()
    for base, prefix in ((root, ""), (PACKAGE, "deeplink_gen/")):
        if base is not None and path.is_relative_to(base.resolve()):
            return prefix + path.relative_to(base.resolve()).as_posix()
    return file
