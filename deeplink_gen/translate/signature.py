"""An ATen op -> the C++ wrapper signature DIPU registers (torchgen's
dispatcher API) and, per argument, its ArgKind. Names only; templates turn
these facts into C++."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from torchgen import local
from torchgen.api import cpp
from torchgen.api.types import DispatcherSignature
from torchgen.model import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, SchemaKind, Type

from deeplink_gen.interfaces.aten import function_schema, optional_spelling, parse_schema
from deeplink_gen.model import AtenOp, CatalogEntry
from deeplink_gen.translate.args import AUX_SUFFIX, HANDLE, NAMEABLE_AUX, TENSOR_LIKE, ArgKind, local_name


@dataclass(frozen=True)
class CppArg:
    """One parameter of the wrapper."""

    name: str
    cpp_type: str
    kind: ArgKind
    mutable: bool

    @property
    def is_tensor_like(self) -> bool:
        """Cloned to the CPU for fallback and autocompare."""
        return self.kind in TENSOR_LIKE


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
    params: tuple[CppArg, ...]
    returns: tuple[Ret, ...]
    return_type: str
    const_ref_for_mutable: bool = False
    ilistref: bool = False
    optional_spelling: str | None = None    # the op's torch spells optional so, not as the installed torchgen

    @property
    def kind(self) -> SchemaKind:
        return self.func.kind()

    def param(self, name: str) -> CppArg | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def fresh_returns(self) -> tuple[Ret, ...]:
        return tuple(r for r in self.returns if r.alias is None)

    def decl(self, name: str) -> str:
        """The C++ declaration of a function *name* with this signature."""
        returns, _, params = _decl(self).partition(_NAME)
        return f"{returns}{name}{params}"


# Stands for the function's name in _decl's text: no C++ type or argument can contain it.
_NAME = "\0name\0"


@functools.lru_cache(maxsize=None)
def _decl(sig: OpSignature) -> str:
    """torchgen's declaration of *sig*, with _NAME as the name (made once per signature)."""
    with _dispatcher_context(sig.const_ref_for_mutable, sig.ilistref):
        return _respell(DispatcherSignature.from_schema(sig.func).decl(name=_NAME), sig.optional_spelling)


def _respell(cpp: str, spelling: str | None) -> str:
    """*cpp* (C++ torchgen wrote) with optional types spelled as the op's torch spells them:
    torchgen of torch 2.2 and older writes c10::optional, newer torchgen ::std::optional."""
    return cpp if spelling is None else cpp.replace(optional_spelling() + "<", spelling + "<")


def _dispatcher_context(const_ref_for_mutable: bool, ilistref: bool):
    # The same per-function switches torchgen uses, so signatures match PyTorch's registration.
    return local.parametrize(use_const_ref_for_mutable_tensors=const_ref_for_mutable,
                             use_ilistref_for_tensor_lists=ilistref)


def _base(t: Type) -> BaseTy | None:
    return t.name if isinstance(t, BaseType) else None


def arg_kind(t: Type, mutable: bool) -> ArgKind:
    if isinstance(t, OptionalType):
        inner = t.elem
        if _base(inner) == BaseTy.Tensor:
            return ArgKind.OPT_TENSOR
        if _base(inner) == BaseTy.Scalar:
            return ArgKind.OPT_SCALAR
        if _base(inner) == BaseTy.Generator:
            return ArgKind.GENERATOR
        if isinstance(inner, ListType) and _base(inner.elem) == BaseTy.int:
            return ArgKind.OPT_INT_LIST
        return ArgKind.PLAIN
    if isinstance(t, ListType):
        elem = t.elem
        if _base(elem) == BaseTy.Tensor:
            return ArgKind.TENSOR_LIST
        if isinstance(elem, OptionalType) and _base(elem.elem) == BaseTy.Tensor:
            return ArgKind.OPT_TENSOR_LIST
        if _base(elem) == BaseTy.int:
            return ArgKind.INT_LIST
        if _base(elem) == BaseTy.SymInt:
            return ArgKind.SYMINT_LIST
        return ArgKind.PLAIN
    base = _base(t)
    if base == BaseTy.Tensor:
        return ArgKind.MUT_TENSOR if mutable else ArgKind.TENSOR
    return {BaseTy.Scalar: ArgKind.SCALAR, BaseTy.SymInt: ArgKind.SYMINT,
            BaseTy.Generator: ArgKind.GENERATOR}.get(base, ArgKind.PLAIN)


def return_names(func: FunctionSchema) -> list[str]:
    """The schema's return names, else out, or out0, out1, ..."""
    rets = func.returns
    return [r.name if r.name else ("out" if len(rets) == 1 else f"out{i}") for i, r in enumerate(rets)]


def signature_of(op: AtenOp, rename: tuple[str, ...] = (), written: str | None = None) -> OpSignature:
    """The wrapper signature of *op*: torchgen's dispatcher signature of the
    chosen torch's schema, or of *written* (a catalog entry's own schema:,
    which validation has checked against torch's) so that its argument names
    and its int/SymInt choices win, as custom code written for them expects.
    *rename* renames the returns (the locals custom code declares)."""
    return _signature(op, tuple(rename), written)


@functools.lru_cache(maxsize=None)
def _signature(op: AtenOp, rename: tuple[str, ...], written: str | None) -> OpSignature:
    func = parse_schema(written) if written is not None else function_schema(op)
    with _dispatcher_context(op.const_ref_for_mutable, op.ilistref):
        sig = DispatcherSignature.from_schema(func)
        bindings = sig.arguments()
        return_type = _respell(sig.returns_type().cpp_type(), op.optional_spelling)
    params = []
    for b in bindings:
        arg = b.argument
        mutable = bool(getattr(arg, "annotation", None) and arg.annotation.is_write)
        params.append(CppArg(b.name, _respell(b.nctype.cpp_type(), op.optional_spelling), arg_kind(arg.type, mutable),
                             mutable))
    # Mutable returns alias the mutable argument with the same alias set.
    writable = [a for a in func.arguments.flat_all if a.annotation and a.annotation.is_write]
    names = return_names(func)
    if rename and len(rename) == len(names):
        names = list(rename)
    returns = []
    for name, r in zip(names, func.returns):
        alias = None
        if r.annotation and r.annotation.is_write:
            alias = next((a.name for a in writable if a.annotation.alias_set == r.annotation.alias_set), None)
        is_list = isinstance(r.type, ListType) and _base(r.type.elem) == BaseTy.Tensor
        returns.append(Ret(alias or name, alias, _base(r.type) == BaseTy.Tensor, is_list))
    return OpSignature(op.name, func, tuple(params), tuple(returns), return_type, op.const_ref_for_mutable,
                       op.ilistref, op.optional_spelling)


def entry_signature(entry: CatalogEntry, op: AtenOp) -> OpSignature:
    """The wrapper signature of a catalog entry: its schema: (if any) and returns: applied."""
    written = entry.schema_text.value if entry.schema_text is not None and not op.helper else None
    return signature_of(op, entry.returns, written)


def derived_names(sig: OpSignature) -> dict[str, str]:
    """Locals a call expression may use besides the arguments: the converted
    form of an argument (``running_meanDiopiTensorHandle``) -> the argument."""
    out = {}
    for p in sig.params:
        local = local_name(p.name, p.kind)
        if local:
            out[local] = p.name
        if p.kind in NAMEABLE_AUX:
            out[p.name + AUX_SUFFIX[p.kind]] = p.name
    for r in sig.fresh_returns:
        if r.is_tensor:
            out[r.name + HANDLE] = r.name
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
