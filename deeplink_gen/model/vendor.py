"""A vendor file: identity, defaults, per-op overrides, and the sections the
other model modules describe (dtypes, layouts, tests, runtime, build)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

from deeplink_gen.errors import Loc
from deeplink_gen.model.catalog import CatalogEntry
from deeplink_gen.model.common import Located, TorchGate, TorchVersion
from deeplink_gen.model.dtypes import DtypeRules
from deeplink_gen.model.implemented import Implemented
from deeplink_gen.model.layouts import LayoutRules
from deeplink_gen.model.runtime import BuildSpec, RuntimeSpec
from deeplink_gen.model.testconfig import TestConfig

# Per-op switches a vendor (or the command line) may set, with their built-in defaults.
BUILTIN_DEFAULTS = {
    "autocompare": False,
    "fallback_to_cpu": True,
    "device_guard": True,
    "print_call_info": True,
    "print_op_args": True,
    "profiler": True,
    "device_check": True,
    "sync_if_enabled": True,
}
SWITCHES = tuple(BUILTIN_DEFAULTS)
# Switches a catalog entry may turn off as a fact about the op (it then always wins).
FACTS = ("autocompare", "fallback_to_cpu", "device_guard")


@dataclass(frozen=True)
class VendorIdentity:
    """The vendor: section, each value where it is written (or, when left
    out, where its default comes from)."""

    name: Located[str]
    device_type: Located[str]
    cmake_aliases: Located[tuple[str, ...]]
    diopi_impl: Located[str]
    description: str
    loc: Loc


@dataclass(frozen=True)
class SourceFile:
    """A hand-written file of vendors/<name>/, copied into DIPU's vendor folder."""

    rel: str             # its path inside the folder, with forward slashes
    data: bytes
    loc: Loc


@dataclass(frozen=True)
class OpOverride:
    op: str
    loc: Loc
    enabled: Located[bool] | None = None
    switches: tuple[tuple[str, Located[bool]], ...] = ()
    reason: str = ""
    register: Located[bool] | None = None
    memory_format: Located[str] | None = None   # contiguous | channels_last | preserve
    replace: CatalogEntry | None = None          # this vendor's own definition of the op
    torch: TorchGate | None = None               # the torch versions the override applies to (default: all)

    def switch(self, name: str) -> Located[bool] | None:
        return dict(self.switches).get(name)


@dataclass(frozen=True)
class Vendor:
    path: str
    identity: VendorIdentity
    defaults: tuple[tuple[str, Located[bool]], ...]
    overrides: tuple[OpOverride, ...]
    dtypes: DtypeRules = DtypeRules()
    layouts: LayoutRules = LayoutRules()
    implemented: Implemented | None = None        # adaptor.implemented: what the DIOPI library defines
    tests: TestConfig = TestConfig()
    runtime: RuntimeSpec | None = None
    build: BuildSpec | None = None
    shards: Located[int] | None = None            # defaults.shards: kernel translation units
    precompiled_header: Located[bool] | None = None   # defaults.precompiled_header
    sources: tuple[SourceFile, ...] = ()
    diopi_library: Located[str] | None = None     # aten_cpu: render a host DIOPI library
    rejected: frozenset = frozenset()             # paths the schema rejected (taken out; see load/prune.py)

    @property
    def name(self) -> str:
        return self.identity.name.value

    @property
    def device_type(self) -> str:
        """DIPU's VendorDeviceType enumerator for this vendor."""
        return self.identity.device_type.value

    @property
    def cmake_aliases(self) -> tuple[str, ...]:
        """The -DDEVICE values that select this vendor in DIPU's build."""
        return self.identity.cmake_aliases.value

    @property
    def diopi_impl(self) -> str:
        """DIOPI's IMPL_OPT for this vendor's library."""
        return self.identity.diopi_impl.value

    @property
    def converts(self) -> bool:
        """Whether the dtypes or layouts sections say anything (then the vendor gets an adaptor)."""
        d, lay = self.dtypes, self.layouts
        return bool(d.convert or d.functions or lay.default is not None or lay.functions)

    def at(self, version: TorchVersion) -> "Vendor":
        """This vendor for one torch version: only the op overrides and test
        settings whose torch: gates admit *version* (outside its gate, an
        override does not exist: the catalog's definition and settings apply)."""
        overrides = tuple(o for o in self.overrides if o.torch is None or o.torch.admits(version))
        tests = self.tests.at(version)
        if len(overrides) == len(self.overrides) and tests == self.tests:
            return self
        return dataclasses.replace(self, overrides=overrides, tests=tests)

    @cached_property
    def _defaults(self) -> dict[str, Located[bool]]:
        return dict(self.defaults)

    @cached_property
    def _overrides(self) -> dict[str, OpOverride]:
        return {o.op: o for o in self.overrides}

    def default(self, name: str) -> Located[bool] | None:
        return self._defaults.get(name)

    def override(self, op: str) -> OpOverride | None:
        return self._overrides.get(op)

    def definition(self, entry: CatalogEntry) -> CatalogEntry:
        """The op's definition for this vendor: its ops.<op>.replace, else the catalog's."""
        override = self.override(entry.op)
        return override.replace if override is not None and override.replace is not None else entry

    def op_flag(self, name: str, entry: CatalogEntry) -> tuple[Located[bool] | None, bool]:
        """`enabled` or `register` as stated for this vendor: the op override's
        value, else the definition's; and whether it came from the override.
        (None: not stated anywhere, i.e. true.)"""
        override = self.override(entry.op)
        chosen = getattr(override, name) if override is not None else None
        if chosen is not None:
            return chosen, True
        return getattr(self.definition(entry), name), False

    def keeps(self, entry: CatalogEntry) -> tuple[bool, Loc]:
        """Whether the vendor keeps (enables) the op, and where that is decided."""
        stated, _ = self.op_flag("enabled", entry)
        return (bool(stated.value), stated.loc) if stated is not None else (True, entry.loc)
