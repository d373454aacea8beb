"""The DIOPI dtype/layout adaptor of one vendor: for every DIOPI function the
vendor's DIPU kernels call or its dtypes/layouts sections name, an
``extern "C"`` wrapper that converts tensors the vendor cannot take, calls
``impl::<vendor>::diopiX`` and copies results back; functions that need
nothing are forwarded unchanged.

Unlike DIOPI's adaptor generator, every conversion's status is checked
(a failing cast or copy-back is returned, not lost), a tensor whose dtype and
layout both change is copied once, per-tensor layouts work, and in-place
arguments come from the DIOPI naming convention plus a table of known
read-write arguments instead of a substring test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen import diopi_api
from deeplink_gen.conversions import EMPTY, LAYOUTS, PRIMITIVES, Conversions, Rule
from deeplink_gen.diopi_api import Kind, Prototype
from deeplink_gen.resolve import ResolvedVendor
from deeplink_gen.templating import render

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


def impl_dir(rv: ResolvedVendor) -> str:
    return f"dipu/third_party/DIOPI/impl/{rv.vendor.identity.diopi_impl}"


@dataclass(frozen=True)
class CastPlan:
    name: str
    rules: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class TensorPlan:
    name: str
    kind: str                 # "input", "output", "input_list"
    cast: str | None          # CastPlan name
    formats: tuple[str, ...]  # diopiMemoryFormat_t enumerators, preference order
    copy_in: bool = False     # outputs: the implementation also reads it
    count: str = ""           # input lists: the length parameter

    @property
    def local(self) -> str:
        return f"{self.name}Conv"


@dataclass(frozen=True)
class FunctionPlan:
    name: str
    params: str
    args: tuple[str, ...]          # the argument expressions of the forwarded call
    tensors: tuple[TensorPlan, ...]
    note: str                      # why a function is forwarded unchanged

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


def functions_of(rv: ResolvedVendor, conv: Conversions) -> list[str]:
    """DIOPI functions the adaptor wraps: those the enabled kernels call and
    those the vendor's dtypes/layouts sections name, plus the two conversion
    primitives (which the vendor must implement anyway; forwarded unchanged)."""
    protos = diopi_api.active()
    names = {r.entry.call.function for r in rv.enabled_ops} | set(conv.named_functions()) | set(PRIMITIVES)
    return sorted(n for n in names if protos.get(n) is not None)


def plan_function(p: Prototype, conv: Conversions, casts: dict[str, CastPlan]) -> FunctionPlan:
    args = tuple(p.name for p in p.params)
    if p.name in PRIMITIVES:
        return FunctionPlan(p.name, p.params_text, args, (), "a conversion primitive of this adaptor")
    if p.allocates:
        return FunctionPlan(p.name, p.params_text, args, (), "fills in tensor handles; forwarded unconverted")
    inplace = bool(_INPLACE_NAME.search(p.name))
    read_write = set(READ_WRITE.get(p.name, ()))
    tensors: list[TensorPlan] = []
    call_args: list[str] = []
    params = list(p.params)
    for i, param in enumerate(params):
        kind = param.kind
        plan = None
        if kind in (Kind.INPUT, Kind.OUTPUT, Kind.INPUT_LIST):
            rules = conv.rules(p.name, param.name)
            cast = None
            if rules:
                cast = cast_name(rules)
                casts.setdefault(cast, CastPlan(cast, tuple((r.source, r.target) for r in rules)))
            formats = _formats(conv.layouts(p.name, param.name))
            count = ""
            if kind == Kind.INPUT_LIST:
                nxt = params[i + 1] if i + 1 < len(params) else None
                if nxt is None or nxt.kind != Kind.OTHER or "int" not in nxt.type:
                    cast, formats = None, ()  # no length parameter to iterate with
                else:
                    count = nxt.name
            if cast or formats:
                plan = TensorPlan(param.name, kind.value, cast, formats,
                                  copy_in=kind == Kind.OUTPUT and (inplace or param.name in read_write),
                                  count=count)
        if plan is None:
            call_args.append(param.name)
        else:
            tensors.append(plan)
            call_args.append(f"{plan.local}.get()" if kind == Kind.OUTPUT
                             else f"{plan.local}.data()" if kind == Kind.INPUT_LIST else plan.local)
    if not tensors:
        return FunctionPlan(p.name, p.params_text, args, (), "no conversion applies")
    return FunctionPlan(p.name, p.params_text, tuple(call_args), tuple(tensors), "")


def plan_adaptor(rv: ResolvedVendor) -> tuple[list[FunctionPlan], list[CastPlan]]:
    conv = rv.vendor.conversions or EMPTY
    protos = diopi_api.active()
    casts: dict[str, CastPlan] = {}
    plans = [plan_function(protos.get(n), conv, casts) for n in functions_of(rv, conv)]
    return plans, [casts[k] for k in sorted(casts)]


def render_adaptor(rv: ResolvedVendor, source: str) -> dict[str, str]:
    plans, casts = plan_adaptor(rv)
    protos = diopi_api.active()
    ns = rv.vendor.identity.diopi_impl
    declared = sorted({p.name for p in plans} | set(PRIMITIVES))
    decls = [protos.get(n) for n in declared]
    base = f"{impl_dir(rv)}/adaptor"
    headers = sorted({d.header for d in decls})
    context = dict(source=source, ns=ns, vendor=rv.vendor.identity, plans=plans, casts=casts,
                   decls=decls, commit=protos.commit, headers=headers)
    return {
        f"{base}/impl_functions.hpp": render("adaptor/impl_functions.hpp.j2", **context),
        f"{base}/adaptor_runtime.hpp": render("adaptor/adaptor_runtime.hpp.j2", **context),
        f"{base}/diopi_adaptor.cpp": render("adaptor/diopi_adaptor.cpp.j2", **context),
    }
