"""The host DIOPI library of a simulated device (vendor `diopi_library:
aten_cpu`): each DIOPI function the vendor's ops call, implemented by calling
the ATen op back on CPU views of the same memory.

A function can be turned back into its ATen op (one the installed torch has a
CPU kernel for) when some enabled catalog
entry calls it with nothing but the DIOPI context and the op's own arguments
(each ATen argument exactly once, as a bare name, of a kind that converts
back) and fresh returns, with no custom code around the call (code at the
beginning only takes other paths): then the DIOPI arguments determine the
ATen call completely. Every other function the ops call is
listed as not implemented, with the reason; DIPU falls back to the CPU for
it as for any function a DIOPI library lacks."""

from __future__ import annotations

from dataclasses import dataclass

from torchgen.model import SchemaKind

from deeplink_gen.cpptext import called_diopi
from deeplink_gen.interfaces.aten import function_schema
from deeplink_gen.model import Prototype, Prototypes, ResolvedOp, ResolvedVendor
from deeplink_gen.plan.kernels import call_args, signature
from deeplink_gen.translate.args import ArgKind
from deeplink_gen.translate.signature import signature_of

# ATen argument kinds a DIOPI value converts back from, and the plain C++ types that pass through.
CONVERTIBLE = frozenset({ArgKind.TENSOR, ArgKind.OPT_TENSOR, ArgKind.MUT_TENSOR, ArgKind.SCALAR, ArgKind.OPT_SCALAR,
                         ArgKind.INT_LIST, ArgKind.SYMINT_LIST, ArgKind.OPT_INT_LIST, ArgKind.SYMINT,
                         ArgKind.PLAIN, ArgKind.FRESH, ArgKind.GENERATOR})
PLAIN_TYPES = frozenset({"int64_t", "double", "bool"})
# DIOPI dtype -> at::ScalarType (those every torch DIPU builds with has).
DTYPES = (
    ("diopi_dtype_int8", "Char"), ("diopi_dtype_uint8", "Byte"), ("diopi_dtype_int16", "Short"),
    ("diopi_dtype_int32", "Int"), ("diopi_dtype_int64", "Long"), ("diopi_dtype_float16", "Half"),
    ("diopi_dtype_float32", "Float"), ("diopi_dtype_float64", "Double"), ("diopi_dtype_bool", "Bool"),
    ("diopi_dtype_bfloat16", "BFloat16"), ("diopi_dtype_complex32", "ComplexHalf"),
    ("diopi_dtype_complex64", "ComplexFloat"), ("diopi_dtype_complex128", "ComplexDouble"),
)


@dataclass(frozen=True)
class HostArg:
    """One DIOPI parameter and the ATen value it becomes."""

    param: str        # the DIOPI parameter's name
    kind: ArgKind     # the ATen argument's kind (FRESH: a return the DIOPI caller allocated)
    local: str        # the C++ local holding the ATen value


@dataclass(frozen=True)
class HostFunction:
    name: str                     # diopiAdd
    params: str                   # its parameter list, as DIOPI declares it
    ctx: str                      # the name of its context parameter (unused: work is done when issued)
    op: str                       # the ATen op it runs (add.out)
    ops_struct: str               # at::_ops::<ops_struct>::call
    args: tuple[HostArg, ...]     # DIOPI parameters but the context, in order
    call: tuple[str, ...]         # locals passed to the op, in schema order
    results: tuple[tuple[str, int | None], ...] = ()   # fresh return local <- element of the result (None: all)


@dataclass(frozen=True)
class HostDiopiPlan:
    functions: tuple[HostFunction, ...]          # sorted by name
    missing: tuple[tuple[str, str], ...]         # (DIOPI function, why it is not implemented), sorted


def _why_not(r: ResolvedOp, proto: Prototype | None) -> str | None:
    """Why *r*'s call cannot be turned back into its op, or None."""
    entry = r.entry
    if proto is None:
        return "not a DIOPI operator"
    if r.aten.helper:
        return f"{r.op} is not an ATen op"
    if r.aten.cpu_kernel is None:
        return (f"the shipped op table does not record whether a CPU kernel serves {r.op} "
                f"(install that torch to render it)")
    if not r.aten.cpu_kernel:
        return f"torch has no CPU kernel for {r.op}"
    if entry.flag("dummy_call"):
        return f"{r.op}'s custom code does the work"
    # Code at the beginning handles special cases and returns early (add.out with a CPU scalar);
    # code next to the call changes what the call gets or what the op returns.
    if entry.hook("before_call") or entry.hook("before_return"):
        return f"{r.op} has custom code around the call"
    sig = signature(r)
    args, _ = call_args(r, sig)
    for a in args:
        if a.kind not in CONVERTIBLE and a.kind is not ArgKind.CTX:
            return f"{r.op} passes {a.name if a.kind is not ArgKind.EXPR else repr(a.name)} ({a.kind.value})"
        if a.kind is ArgKind.PLAIN and sig.param(a.name).cpp_type not in PLAIN_TYPES:
            return f"{r.op} passes {a.name} as {sig.param(a.name).cpp_type}"
    named = [a.name for a in args if a.kind is not ArgKind.CTX]
    missing = [p.name for p in sig.params if p.name not in named]
    if missing:
        return f"{r.op} does not pass {', '.join(missing)}"
    if len(set(named)) != len(named):
        return f"{r.op} passes an argument twice"
    if len(args) != len(proto.params):
        return f"{r.op} passes {len(args)} arguments, {proto.name} takes {len(proto.params)}"
    if sig.fresh_returns and any(not ret.is_tensor for ret in sig.fresh_returns):
        return f"{r.op} returns a value that is not a tensor"
    return None


def _function(r: ResolvedOp, proto: Prototype) -> HostFunction:
    sig = signature(r)
    torch_sig = signature_of(r.aten)             # the kinds at::_ops::<op>::call takes
    args, _ = call_args(r, sig)
    kinds = {p.name: t.kind for p, t in zip(sig.params, torch_sig.params)}
    host_args = []
    for a, param in zip(args, proto.params):
        if a.kind is ArgKind.CTX:
            continue
        host_args.append(HostArg(param.name, ArgKind.FRESH if a.kind is ArgKind.FRESH else kinds[a.name],
                                 "v_" + a.name))
    results = tuple(("v_" + ret.name, None if len(sig.returns) == 1 else sig.returns.index(ret))
                    for ret in sig.fresh_returns)
    ctx = next(p.name for p, a in zip(proto.params, args) if a.kind is ArgKind.CTX)
    return HostFunction(
        name=proto.name, params=proto.params_text, ctx=ctx, op=r.op,
        ops_struct=function_schema(r.aten).name.unambiguous_name(),
        args=tuple(host_args), call=tuple("v_" + p.name for p in sig.params), results=results,
    )


def _preference(r: ResolvedOp) -> int:
    """Out and in-place ops write the caller's memory directly; functional ones copy their result."""
    return 0 if signature(r).kind in (SchemaKind.out, SchemaKind.inplace) else 1


def plan_host_diopi(rv: ResolvedVendor, protos: Prototypes) -> HostDiopiPlan:
    candidates: dict[str, list[ResolvedOp]] = {}
    in_code: dict[str, list[str]] = {}       # DIOPI functions only custom code calls -> those ops
    for r in rv.enabled_ops:
        candidates.setdefault(r.entry.call.function, []).append(r)
        for _, text in r.entry.code:
            for name in sorted(called_diopi(text.value)):
                if protos.get(name) is not None:
                    in_code.setdefault(name, []).append(r.op)
    functions, missing = [], []
    for name in sorted(candidates):
        proto = protos.get(name)
        reasons, usable = [], []
        for r in candidates[name]:
            why = _why_not(r, proto)
            (reasons if why else usable).append(why or r)
        if usable:
            functions.append(_function(min(usable, key=_preference), proto))
        else:
            missing.append((name, "; ".join(dict.fromkeys(reasons))))
    for name in sorted(in_code.keys() - candidates.keys()):
        missing.append((name, f"only the custom code of {', '.join(dict.fromkeys(in_code[name]))} calls it"))
    return HostDiopiPlan(tuple(functions), tuple(sorted(missing)))
