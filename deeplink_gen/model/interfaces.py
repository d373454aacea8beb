"""The fixed outside interfaces, as values: an ATen op of the chosen torch,
a DIOPI prototype, a DIPU device/communicator function. Readers that build
them live in deeplink_gen.interfaces."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property

from deeplink_gen.errors import Loc
from deeplink_gen.model.catalog import CatalogEntry
from deeplink_gen.model.common import TorchVersion


@dataclass(frozen=True)
class AtenOp:
    name: str
    schema: str
    variants: tuple[str, ...]            # "function" and/or "method"
    const_ref_for_mutable: bool = False  # torchgen passes mutable tensors as const&
    ilistref: bool = False               # torchgen passes Tensor[] as ITensorListRef
    helper: bool = False                 # a DIPU-private helper (its schema comes from the catalog)
    composite_implicit: bool = False     # a CompositeImplicitAutograd kernel: decomposed for every backend
    composite_explicit: bool = False     # a CompositeExplicitAutograd(NonFunctional) kernel serves every backend
    cpu_kernel: bool | None = None       # a CPU kernel serves it (None: not recorded)
    optional_spelling: str | None = None  # how its torch's C++ API spells optional, if not as the installed torchgen

    @property
    def base_name(self) -> str:
        """The name without its overload: ``add`` for ``add.out``."""
        return self.name.split(".", 1)[0]


@dataclass(frozen=True, eq=False)
class OpTable:
    """One torch version's ATen ops: the installed torch's (read through
    torchgen) or a shipped snapshot's. Compared by identity."""

    version: TorchVersion
    ops: dict[str, AtenOp] = field(repr=False)
    source: str                          # "the installed torch" or the snapshot file it was read from
    snapshot: bool = False               # read from a shipped snapshot, not from the installed torch

    @property
    def what(self) -> str:
        """How messages name this torch."""
        return f"torch {self.version}" if self.snapshot else "the installed torch"

    def get(self, name: str) -> AtenOp | None:
        return self.ops.get(name)

    def names(self) -> list[str]:
        return sorted(self.ops)

    def op_of(self, entry: CatalogEntry) -> AtenOp | None:
        """The op a catalog entry defines: a DIPU-private helper (schema: and
        register: false; never registered, so its schema is its own, also
        when torch has an op of that name), or torch's; None when it is
        neither."""
        if entry.schema_text is not None and entry.register is not None and not entry.register.value:
            return AtenOp(entry.op, entry.schema_text.value.strip().removeprefix("aten::"), ("function",), helper=True)
        return self.ops.get(entry.op)

    @cached_property
    def _by_base(self) -> dict[str, list[str]]:
        table: dict[str, list[str]] = {}
        for name in sorted(self.ops):
            table.setdefault(name.split(".", 1)[0], []).append(name)
        return table

    def overloads(self, base: str) -> list[str]:
        """Every op named *base* or *base*.<overload>, sorted."""
        return list(self._by_base.get(base, ()))


class DiopiArgKind(enum.Enum):
    """What a DIOPI parameter is, read from its C type."""

    CTX = "ctx"
    INPUT = "input"              # diopiConstTensorHandle_t (possibly const-qualified)
    OUTPUT = "output"            # diopiTensorHandle_t: written, maybe also read (in-place)
    INPUT_LIST = "input_list"    # diopiConstTensorHandle_t*: length is the next parameter
    HANDLE_PTR = "handle_ptr"    # diopiTensorHandle_t*: allocated or swapped by the implementation
    OTHER = "other"              # scalars, sizes, enums, ... passed through unchanged


_DIOPI_KINDS = {
    "diopiContextHandle_t": DiopiArgKind.CTX,
    "diopiConstTensorHandle_t": DiopiArgKind.INPUT,
    "diopiTensorHandle_t": DiopiArgKind.OUTPUT,
    "diopiConstTensorHandle_t*": DiopiArgKind.INPUT_LIST,
    "diopiTensorHandle_t*": DiopiArgKind.HANDLE_PTR,
}


@dataclass(frozen=True)
class DiopiParam:
    type: str
    name: str

    @property
    def kind(self) -> DiopiArgKind:
        return _DIOPI_KINDS.get(self.type.removeprefix("const ").strip(), DiopiArgKind.OTHER)

    @property
    def is_tensor(self) -> bool:
        return self.kind in (DiopiArgKind.INPUT, DiopiArgKind.OUTPUT, DiopiArgKind.INPUT_LIST,
                             DiopiArgKind.HANDLE_PTR)

    def __str__(self) -> str:
        return f"{self.type} {self.name}"


@dataclass(frozen=True)
class Prototype:
    name: str
    header: str
    params: tuple[DiopiParam, ...]
    loc: Loc
    returns: str = "diopiError_t"

    @property
    def params_text(self) -> str:
        return ", ".join(str(p) for p in self.params)

    def param(self, name: str) -> DiopiParam | None:
        return next((p for p in self.params if p.name == name), None)

    def tensor_names(self) -> list[str]:
        return [p.name for p in self.params if p.is_tensor]

    @property
    def allocates(self) -> bool:
        """True when a parameter is a pointer to a handle the implementation fills in."""
        return any(p.kind == DiopiArgKind.HANDLE_PTR for p in self.params)


@dataclass(frozen=True)
class RuntimeHeader:
    """DIOPI's diopirt.h as data: its #define constants and its top-level
    declarations (types, enums, runtime functions), each normalised to one line."""

    macros: tuple[tuple[str, str], ...] = ()
    declarations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prototypes:
    functions: dict[str, Prototype]           # operators: return diopiError_t, declared DIOPI_API
    runtime_functions: dict[str, Prototype]   # other hooks (diopiGetVendorName, ...)
    commit: str
    source: str
    runtime_header: RuntimeHeader = RuntimeHeader()

    def get(self, name: str) -> Prototype | None:
        return self.functions.get(name)

    def names(self) -> list[str]:
        return sorted(self.functions)


@dataclass(frozen=True)
class DipuParam:
    type: str
    name: str

    def decl(self) -> str:
        return f"{self.type} {self.name}"


@dataclass(frozen=True)
class DipuFunction:
    """A function of DIPU's deviceapis.h or diclapis.h that a vendor implements."""

    key: str            # the key in the vendor file (the C++ name, or a distinct name for an overload)
    name: str           # the C++ function name
    returns: str
    params: tuple[DipuParam, ...]
    strong: bool
    section: str        # "device" or "comm"

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> DipuParam | None:
        return next((p for p in self.params if p.name == name), None)

    def signature(self) -> str:
        return f"{self.returns} {self.name}({', '.join(p.decl() for p in self.params)})"



@dataclass(frozen=True)
class DiopiLibrary:
    """The DIOPI functions a vendor's DIOPI library defines, as far as they
    could be found: in its implementation sources or in a library's symbols."""

    functions: frozenset[str]
    source: str          # the path as given
    how: str             # "sources" (found as DIOPI's adaptor generator finds them), "symbols" or "vendor file"

    def defines(self, function: str) -> bool:
        return function in self.functions
