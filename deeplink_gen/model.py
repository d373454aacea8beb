"""What the YAML means, as frozen dataclasses. Everything parsed from a file
carries the Loc it came from so later stages can point back at it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from deeplink_gen.errors import Loc

if TYPE_CHECKING:
    from deeplink_gen.conversions import Conversions
    from deeplink_gen.testspec import TestSpec
    from deeplink_gen.runtime.model import BuildSpec, RuntimeSpec

T = TypeVar("T")


@dataclass(frozen=True)
class Located(Generic[T]):
    """A value and the place it was written."""

    value: T
    loc: Loc


# ---------------------------------------------------------------- versions

@dataclass(frozen=True, order=True)
class TorchVersion:
    major: int
    minor: int
    patch: int = 0

    @staticmethod
    def parse(text: str) -> "TorchVersion":
        core = text.strip().split("+")[0]
        parts = [int(p) for p in core.split(".")[:3] if p.isdigit()]
        if len(parts) < 2:
            raise ValueError(f"not a torch version: {text!r}")
        return TorchVersion(*parts)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


@dataclass(frozen=True)
class TorchGate:
    """A conjunction of comparisons such as ``>=2.1,<2.3``."""

    text: str
    clauses: tuple[tuple[str, TorchVersion], ...]
    loc: Loc

    @staticmethod
    def parse(text: str, loc: Loc) -> "TorchGate":
        clauses = []
        for part in text.split(","):
            part = part.strip()
            op = next(o for o in ("==", "!=", ">=", "<=", ">", "<") if part.startswith(o))
            clauses.append((op, TorchVersion.parse(part[len(op):])))
        return TorchGate(text, tuple(clauses), loc)

    def admits(self, version: TorchVersion) -> bool:
        def compare(op: str, bound: TorchVersion) -> bool:
            # A bound written as X.Y compares on major.minor only (">=2.1" admits 2.1.2).
            have = (version.major, version.minor, version.patch)
            want = (bound.major, bound.minor, bound.patch)
            return {
                "==": have == want, "!=": have != want, ">=": have >= want,
                "<=": have <= want, ">": have > want, "<": have < want,
            }[op]
        return all(compare(op, bound) for op, bound in self.clauses)


# ---------------------------------------------------------------- catalog

@dataclass(frozen=True)
class CallArg:
    """One argument of a DIOPI call: a bare name (converted by type) or C++ text."""

    text: str

    @property
    def is_name(self) -> bool:
        return self.text.isidentifier()


@dataclass(frozen=True)
class DiopiCall:
    function: str
    args: tuple[CallArg, ...]
    loc: Loc

    def __str__(self) -> str:
        return f"{self.function}({', '.join(a.text for a in self.args)})"


@dataclass(frozen=True)
class Autograd:
    """An autograd.Function around the wrapper: forward calls the wrapper of
    `forward` (default: the op itself), backward the wrapper of `backward`."""

    loc: Loc
    backward: Located[str]
    forward: Located[str] | None = None
    saved: tuple[str, ...] = ()
    forward_code: str = ""
    grad_code: str = ""
    return_code: str = ""
    wrapper_return: str = ""
    forward_args: tuple[str, ...] = ()    # arguments of the forward call (default: the op's)


@dataclass(frozen=True)
class CatalogEntry:
    op: str
    loc: Loc
    call: DiopiCall
    schema_text: Located[str] | None = None
    alloc: tuple[tuple[str, str], ...] = ()
    enabled: Located[bool] | None = None
    autocompare: Located[bool] | None = None
    fallback_to_cpu: Located[bool] | None = None
    device_guard: Located[bool | str] | None = None
    torch: TorchGate | None = None
    doc: str = ""
    # Escape hatches (upstream diopi_functions.yaml parity); see schemas/catalog.schema.json.
    code: tuple[tuple[str, Located[str]], ...] = ()   # hook -> free-form C++ (byte for byte)
    locals: tuple[str, ...] = ()                      # names declared by the custom code
    ins: tuple[tuple[str, bool], ...] = ()            # (local, optional) -> const handle
    outs: tuple[str, ...] = ()                        # local -> mutable handle
    no_device_check: tuple[str, ...] = ()
    dummy_call: Located[bool] | None = None
    custom_fallback: Located[bool] | None = None
    force_fallback: Located[bool] | None = None
    register: Located[bool] | None = None
    autograd: "Autograd | None" = None
    sizes: tuple[str, ...] = ()                       # locals converted to diopiSize_t
    returns: tuple[str, ...] = ()                     # names of the locals holding the returns

    def hook(self, name: str) -> str:
        found = dict(self.code).get(name)
        return found.value if found is not None else ""

    def alloc_for(self, name: str) -> str | None:
        return dict(self.alloc).get(name)


@dataclass(frozen=True)
class Catalog:
    entries: tuple[CatalogEntry, ...]
    files: tuple[str, ...]

    def get(self, op: str) -> CatalogEntry | None:
        return self._index.get(op)

    @property
    def _index(self) -> dict[str, CatalogEntry]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {e.op: e for e in self.entries}
            object.__setattr__(self, "_index_cache", cached)
        return cached

    def names(self) -> list[str]:
        return [e.op for e in self.entries]


# ---------------------------------------------------------------- vendor

SWITCHES = (
    "autocompare", "fallback_to_cpu", "device_guard", "print_call_info", "print_op_args",
    "profiler", "device_check", "sync_if_enabled",
)

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


@dataclass(frozen=True)
class VendorIdentity:
    name: str
    device_type: str
    cmake_aliases: tuple[str, ...]
    diopi_impl: str
    description: str
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

    def switch(self, name: str) -> Located[bool] | None:
        for key, value in self.switches:
            if key == name:
                return value
        return None


@dataclass(frozen=True)
class Vendor:
    path: str
    identity: VendorIdentity
    defaults: tuple[tuple[str, Located[bool]], ...]
    overrides: tuple[OpOverride, ...]
    # dtype/layout conversions (deeplink_gen.conversions) and test settings (deeplink_gen.testspec)
    conversions: "Conversions | None" = None
    tests: "TestSpec | None" = None
    # the vendor runtime and its build wiring (deeplink_gen.runtime)
    runtime: "RuntimeSpec | None" = None
    build: "BuildSpec | None" = None
    # defaults.shards: how many translation units the kernels are split into
    shards: Located[int] | None = None

    @property
    def name(self) -> str:
        return self.identity.name

    def default(self, name: str) -> Located[bool] | None:
        return self._lookup("defaults", lambda: dict(self.defaults)).get(name)

    def override(self, op: str) -> OpOverride | None:
        return self._lookup("overrides", lambda: {o.op: o for o in self.overrides}).get(op)

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

    def _lookup(self, name: str, build) -> dict:
        """Index tables built once per (immutable) instance."""
        key = f"_{name}_index"
        table = self.__dict__.get(key)
        if table is None:
            table = build()
            object.__setattr__(self, key, table)
        return table
