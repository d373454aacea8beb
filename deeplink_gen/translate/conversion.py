"""How one DIOPI function is wrapped by the adaptor: which tensors the
``extern "C"`` wrapper converts (dtype cast, memory layout) before calling
``impl::<namespace>::diopiX`` and copies back after; a function that needs
nothing is forwarded unchanged. The decision reads only the vendor's dtypes,
layouts and adaptor sections and the function's prototype, so validation
asks it too; plan/adaptor.py decides which functions are wrapped.

Unlike DIOPI's adaptor generator, every conversion's status is checked (a
failing cast or copy-back is returned, not lost), a tensor whose dtype and
layout both change is copied once, per-tensor layouts work, and in-place
arguments come from the DIOPI naming convention plus a table of known
read-write arguments instead of a substring test."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen.interfaces.diopi import CONVERSION_PRIMITIVES, impl_folder, impl_namespace
from deeplink_gen.model import DiopiArgKind, DiopiParam, Prototype, Rule, Vendor
from deeplink_gen.model.layouts import LAYOUTS


_INPLACE_NAME = re.compile(r"Inp(Scalar|Tensor)?$")
# Arguments that are read and written although the function is not named ...Inp.
READ_WRITE = {
    "diopiAdadelta": ("param", "square_avg", "acc_delta"),
    "diopiAdam": ("param", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"),
    "diopiAdamW": ("param", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"),
    "diopiBatchNorm": ("running_mean", "running_var"),
    "diopiIndexBackward": ("zeros_like_input",),
    "diopiIndexPut": ("out",),
    "diopiRmsprop": ("param", "square_avg", "grad_avg", "momentum_buf"),
    "diopiSgd": ("param", "buf"),
}


@dataclass(frozen=True)
class CastPlan:
    name: str
    rules: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class TensorPlan:
    name: str
    kind: DiopiArgKind        # INPUT, OUTPUT or INPUT_LIST
    cast: str | None          # CastPlan name
    formats: tuple[str, ...]  # diopiMemoryFormat_t enumerators, preference order
    copy_in: bool = False     # outputs: the implementation also reads it
    count: str = ""           # input lists: the length parameter

    @property
    def local(self) -> str:
        return f"{self.name}Conv"


@dataclass(frozen=True)
class ForwardedArg:
    """An argument of the forwarded call: the parameter itself, or its converted tensor."""

    name: str
    tensor: TensorPlan | None = None


@dataclass(frozen=True)
class FunctionPlan:
    proto: Prototype
    namespace: str                 # impl::<namespace> defines it
    args: tuple[ForwardedArg, ...]
    tensors: tuple[TensorPlan, ...]
    note: str                      # why a function is forwarded unchanged

    @property
    def name(self) -> str:
        return self.proto.name

    @property
    def passthrough(self) -> bool:
        return not self.tensors


def cast_name(rules: tuple[Rule, ...]) -> str:
    return "cast_" + "_".join(f"{r.source}_to_{r.target}" for r in rules)


def _formats(layouts: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for token in layouts:
        if LAYOUTS[token] not in out:
            out.append(LAYOUTS[token])
    return tuple(out)


def library_namespace(vendor: Vendor) -> str:
    """The C++ namespace (impl::<namespace>) of the vendor's DIOPI library, where
    the adaptor section names no other."""
    return impl_namespace(impl_folder(vendor.diopi_impl))


def namespace_of(vendor: Vendor, function: str) -> str:
    """The C++ namespace (impl::<namespace>) that defines *function*."""
    found = vendor.implemented.namespace_of(function) if vendor.implemented is not None else None
    return found or library_namespace(vendor)


def _tensor_plan(p: Prototype, i: int, param: DiopiParam, vendor: Vendor, casts: dict[str, CastPlan]) -> TensorPlan | None:
    kind = param.kind
    if kind not in (DiopiArgKind.INPUT, DiopiArgKind.OUTPUT, DiopiArgKind.INPUT_LIST):
        return None
    rules = vendor.dtypes.rules(p.name, param.name)
    cast = None
    if rules:
        cast = cast_name(rules)
        casts.setdefault(cast, CastPlan(cast, tuple((r.source, r.target) for r in rules)))
    formats = _formats(vendor.layouts.layouts(p.name, param.name))
    count = ""
    if kind == DiopiArgKind.INPUT_LIST:
        nxt = p.params[i + 1] if i + 1 < len(p.params) else None
        if nxt is None or nxt.kind != DiopiArgKind.OTHER or "int" not in nxt.type:
            return None  # no length parameter to iterate with
        count = nxt.name
    if not (cast or formats):
        return None
    read_write = _INPLACE_NAME.search(p.name) is not None or param.name in READ_WRITE.get(p.name, ())
    return TensorPlan(param.name, kind, cast, formats, copy_in=kind == DiopiArgKind.OUTPUT and read_write,
                      count=count)


def plan_function(p: Prototype, vendor: Vendor, casts: dict[str, CastPlan]) -> FunctionPlan:
    ns = namespace_of(vendor, p.name)
    plain = tuple(ForwardedArg(q.name) for q in p.params)
    if p.name in CONVERSION_PRIMITIVES:
        return FunctionPlan(p, ns, plain, (), "a conversion primitive of this adaptor")
    if p.allocates:
        return FunctionPlan(p, ns, plain, (), "fills in tensor handles; forwarded unconverted")
    args, tensors = [], []
    for i, param in enumerate(p.params):
        plan = _tensor_plan(p, i, param, vendor, casts)
        args.append(ForwardedArg(param.name, plan))
        if plan is not None:
            tensors.append(plan)
    if not tensors:
        return FunctionPlan(p, ns, plain, (), "no conversion applies")
    return FunctionPlan(p, ns, tuple(args), tuple(tensors), "")
