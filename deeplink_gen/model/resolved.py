"""A vendor resolved for one torch version: every op with its final settings
and where each came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from deeplink_gen.errors import Loc
from deeplink_gen.model.catalog import CatalogEntry
from deeplink_gen.model.common import TorchVersion
from deeplink_gen.model.interfaces import AtenOp, OpTable
from deeplink_gen.model.vendor import Vendor

T = TypeVar("T")

@dataclass(frozen=True)
class Setting(Generic[T]):
    value: T
    source: str          # command line, vendor op override, vendor default, catalog, vendor replace, built-in
                         # default (highest precedence first), or a description such as "vendor layouts for diopiX"
    loc: Loc | None = None

    def describe(self) -> str:
        where = f" ({self.loc})" if self.loc else ""
        shown = str(self.value).lower() if isinstance(self.value, bool) else str(self.value)
        return f"{shown:5} from {self.source}{where}"


@dataclass(frozen=True)
class ResolvedOp:
    entry: CatalogEntry                    # the definition in force (the vendor's replacement, if any)
    aten: AtenOp
    enabled: Setting[bool]
    settings: tuple[tuple[str, Setting[bool]], ...]   # the switches, then "register"
    fixed: frozenset[str] = frozenset()    # switches a fact of the op keeps off, whatever the vendor says
    memory_format: Setting[str] | None = None   # contiguous | channels_last | preserve
    replaced: CatalogEntry | None = None   # the catalog's entry, when the vendor replaced it
    reason: str = ""                       # the vendor's reason for its override

    @property
    def op(self) -> str:
        return self.entry.op

    def get(self, name: str) -> Setting[bool]:
        return dict(self.settings)[name]

    def on(self, name: str) -> bool:
        return bool(self.get(name).value)

    def possible(self, name: str) -> bool:
        """Whether a vendor could turn the switch on for this op."""
        return name not in self.fixed


@dataclass(frozen=True)
class Skipped:
    op: str
    reason: str
    loc: Loc | None = None      # the catalog entry left out


# Kernel translation units when neither --shards nor defaults.shards says: on two cores, two
# build DIPU's kernels as fast as one file or faster, rebuild one edit faster and peak lower
# (bench/compile.py; docs/performance.md).
DEFAULT_SHARDS = 2


@dataclass(frozen=True)
class ResolvedVendor:
    vendor: Vendor
    torch_version: TorchVersion
    ops: tuple[ResolvedOp, ...]      # enabled and disabled, catalog order
    skipped: tuple[Skipped, ...]     # not applicable to this torch version
    shards: Setting[int] = Setting(DEFAULT_SHARDS, "built-in default")   # kernel translation units
    op_table: OpTable | None = field(default=None, compare=False, repr=False)   # the ATen ops resolved against

    @property
    def enabled_ops(self) -> tuple[ResolvedOp, ...]:
        return tuple(o for o in self.ops if o.enabled.value)
