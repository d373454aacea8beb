"""A loaded workspace: the op catalog and the vendor files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deeplink_gen.model.catalog import Catalog
from deeplink_gen.model.vendor import Vendor, VendorIdentity
from deeplink_gen.input_paths import workspace_name


@dataclass(frozen=True)
class Workspace:
    root: Path
    catalog: Catalog
    vendors: tuple[Vendor, ...]
    catalog_complete: bool = True     # False when a catalog file could not be loaded
    others: tuple[VendorIdentity, ...] = ()   # the identities of the vendor files not loaded

    def vendor(self, name: str) -> Vendor:
        return next(v for v in self.vendors if v.name == name)

    def rel(self, path: str | Path) -> str:
        """An input file as generated files and reports name it (input_paths.workspace_name)."""
        return workspace_name(path, self.root)
