"""Type translation: an ATen FunctionSchema -> the C++ wrapper signature DIPU
registers (torchgen's dispatcher API) and, per argument, how it reaches DIOPI.
No text is emitted here; templates turn these facts into C++."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING
import functools
from dataclasses import dataclass

from torchgen import local
from torchgen.api import cpp
from torchgen.api.types import DispatcherSignature
from torchgen.model import (
    BaseTy, BaseType, FunctionSchema, ListType, OptionalType, SchemaKind, Type,
)

if TYPE_CHECKING:
    from deeplink_gen.aten import AtenOp


class Conv(enum.Enum):
    """How a schema argument becomes a DIOPI argument."""

    TENSOR = "tensor"                 # const handle
    OPT_TENSOR = "opt_tensor"         # const handle or nullptr
    MUT_TENSOR = "mut_tensor"         # mutable handle
    TENSOR_LIST = "tensor_list"       # no automatic conversion
    OPT_TENSOR_LIST = "opt_tensor_list"
    SCALAR = "scalar"                 # &diopiScalar_t
    OPT_SCALAR = "opt_scalar"         # const diopiScalar_t* (nullptr when absent)
    INT_LIST = "int_list"             # diopiSize_t
    SYMINT_LIST = "symint_list"       # diopiSize_t through a concrete int vector
    OPT_INT_LIST = "opt_int_list"     # diopiSize_t (empty when absent)
    SYMINT = "symint"                 # int64_t via expect_int()
    GENERATOR = "generator"           # diopiGeneratorHandle_t (default generator when absent)
    PLAIN = "plain"                   # passed as written


@dataclass(frozen=True)
class Param:
    name: str
    cpp_type: str
    conv: Conv
    is_tensor_like: bool   # cloned to the CPU for fallback/autocompare
    mutable: bool


@dataclass(frozen=True)
class Ret:
    name: str
    alias: str | None      # the argument a mutable return aliases
    is_tensor: bool
    is_tensor_list: bool


@dataclass(frozen=True)
class OpSignature:
    op: str
    func: FunctionSchema
    params: tuple[Param, ...]
    returns: tuple[Ret, ...]
    return_type: str

    @property
    def kind(self) -> SchemaKind:
        return self.func.kind()

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def fresh_returns(self) -> tuple[Ret, ...]:
        return tuple(r for r in self.returns if r.alias is None)

    const_ref_for_mutable: bool = False
    ilistref: bool = False

    def decl(self, name: str) -> str:
        with _dispatcher_context(self.const_ref_for_mutable, self.ilistref):
            return DispatcherSignature.from_schema(self.func).decl(name=name)


def _dispatcher_context(const_ref_for_mutable: bool, ilistref: bool):
    # The same per-function switches torchgen uses, so signatures match PyTorch's registration.
    return local.parametrize(use_const_ref_for_mutable_tensors=const_ref_for_mutable,
                             use_ilistref_for_tensor_lists=ilistref)


def _base(t: Type) -> BaseTy | None:
    return t.name if isinstance(t, BaseType) else None


def conversion(t: Type, mutable: bool) -> Conv:
    if isinstance(t, OptionalType):
        inner = t.elem
        if _base(inner) == BaseTy.Tensor:
            return Conv.OPT_TENSOR
        if _base(inner) == BaseTy.Scalar:
            return Conv.OPT_SCALAR
        if _base(inner) == BaseTy.Generator:
            return Conv.GENERATOR
        if isinstance(inner, ListType) and _base(inner.elem) in (BaseTy.int, BaseTy.SymInt):
            return Conv.OPT_INT_LIST if _base(inner.elem) == BaseTy.int else Conv.PLAIN
        return Conv.PLAIN
    if isinstance(t, ListType):
        elem = t.elem
        if _base(elem) == BaseTy.Tensor:
            return Conv.TENSOR_LIST
        if isinstance(elem, OptionalType) and _base(elem.elem) == BaseTy.Tensor:
            return Conv.OPT_TENSOR_LIST
        if _base(elem) == BaseTy.int:
            return Conv.INT_LIST
        if _base(elem) == BaseTy.SymInt:
            return Conv.SYMINT_LIST
        return Conv.PLAIN
    base = _base(t)
    if base == BaseTy.Tensor:
        return Conv.MUT_TENSOR if mutable else Conv.TENSOR
    if base == BaseTy.Scalar:
        return Conv.SCALAR
    if base == BaseTy.SymInt:
        return Conv.SYMINT
    if base == BaseTy.Generator:
        return Conv.GENERATOR
    return Conv.PLAIN


_TENSOR_LIKE = {Conv.TENSOR, Conv.OPT_TENSOR, Conv.MUT_TENSOR, Conv.TENSOR_LIST, Conv.OPT_TENSOR_LIST}


def _return_names(func: FunctionSchema) -> list[str]:
    rets = func.returns
    names = []
    for i, r in enumerate(rets):
        if r.name:
            names.append(r.name)
        elif len(rets) == 1:
            names.append("out")
        else:
            names.append(f"out{i}")
    return names


def signature_of(op: "AtenOp", return_names: tuple[str, ...] = ()) -> OpSignature:
    """*return_names* renames the fresh returns (the locals custom code declares)."""
    return _signature(op.name, op.schema, op.const_ref_for_mutable, op.ilistref, tuple(return_names))


@functools.lru_cache(maxsize=None)
def _signature(op: str, schema: str, const_ref_for_mutable: bool, ilistref: bool,
               rename: tuple[str, ...] = ()) -> OpSignature:
    func = FunctionSchema.parse(schema)
    with _dispatcher_context(const_ref_for_mutable, ilistref):
        sig = DispatcherSignature.from_schema(func)
        bindings = sig.arguments()
        return_type = sig.returns_type().cpp_type()
    params = []
    for b in bindings:
        arg = b.argument
        mutable = bool(getattr(arg, "annotation", None) and arg.annotation.is_write)
        conv = conversion(arg.type, mutable)
        params.append(Param(b.name, b.nctype.cpp_type(), conv, conv in _TENSOR_LIKE, mutable))
    # Mutable returns alias the mutable argument with the same alias set.
    writable = [a for a in func.arguments.flat_all if a.annotation and a.annotation.is_write]
    returns = []
    names = _return_names(func)
    if rename and len(rename) == len(names):
        names = list(rename)
    for name, r in zip(names, func.returns):
        alias = None
        if r.annotation and r.annotation.is_write:
            alias = next((a.name for a in writable if a.annotation.alias_set == r.annotation.alias_set), None)
        is_list = isinstance(r.type, ListType) and _base(r.type.elem) == BaseTy.Tensor
        returns.append(Ret(alias or name, alias, _base(r.type) == BaseTy.Tensor, is_list))
    return OpSignature(op, func, tuple(params), tuple(returns), return_type, const_ref_for_mutable, ilistref)


# The local each conversion declares, as a suffix of the argument name.
DERIVED_SUFFIX = {
    Conv.TENSOR: "DiopiTensorHandle", Conv.OPT_TENSOR: "DiopiTensorHandle",
    Conv.MUT_TENSOR: "DiopiTensorHandle", Conv.SCALAR: "DiopiScalar", Conv.OPT_SCALAR: "DiopiScalarPtr",
    Conv.INT_LIST: "DiopiSize", Conv.SYMINT_LIST: "DiopiSize", Conv.OPT_INT_LIST: "DiopiSize",
    Conv.GENERATOR: "DiopiGenerator",
}


def derived_names(sig: OpSignature) -> dict[str, str]:
    """Locals a call expression may use besides the arguments: the converted
    form of an argument (``running_meanDiopiTensorHandle``) -> the argument."""
    out = {}
    for p in sig.params:
        suffix = DERIVED_SUFFIX.get(p.conv)
        if suffix:
            out[p.name + suffix] = p.name
        if p.conv == Conv.SYMINT_LIST:
            out[p.name + "Vector"] = p.name      # the concrete int64_t values, as DIPU names them
    for r in sig.fresh_returns:
        if r.is_tensor:
            out[r.name + "DiopiTensorHandle"] = r.name
    return out


def autograd_class_name(op: str) -> str:
    """DIPU's naming: Dipu + CamelCase of the op split on '_' and '.' + Function."""
    parts = [p for p in op.replace(".", "_").split("_") if p]
    return "Dipu" + "".join(p[:1].upper() + p[1:] for p in parts) + "Function"


def wrapper_name(op: str) -> str:
    """DIPU's naming: dipu_ + op name, '.' -> '_', lower case."""
    return "dipu_" + op.replace(".", "_").lower()


def cpu_reference(sig: OpSignature, variants: tuple[str, ...]) -> tuple[str, str | None]:
    """How to call the op on CPU tensors: (callee, receiver).

    receiver is None for a free function ``at::name(args)``; otherwise the
    callee is a method invoked on that argument (``self.add_(...)``)."""
    func = sig.func
    has_symint = any(a.type.is_symint_like() for a in func.arguments.flat_all)
    name = cpp.name(func, faithful_name_for_out_overloads=True, symint_overload=has_symint)
    if "function" in variants:
        return f"at::{name}", None
    first = func.arguments.self_arg
    receiver = first.argument.name if first is not None else None
    return name, receiver
