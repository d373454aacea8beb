"""The host DIOPI library of a simulated device (vendor `diopi_library:
aten_cpu`): each DIOPI function the vendor's ops call, implemented by calling
the ATen op back on CPU views of the same memory.

A function can be turned back into its ATen op (one the installed torch has a
CPU kernel for) when some enabled catalog
entry calls it with nothing but the DIOPI context and the op's own arguments
(each ATen argument exactly once, as a bare name, of a kind that converts
back) and fresh returns, with no custom code around the call (code at the
beginning only takes other paths): then the DIOPI arguments determine the
ATen call completely. The other functions of the DIOPI snapshot that have an
ATen equivalent are stated as ATen calls in host_diopi/aten_calls.yaml
(plan/host_diopi_calls.py), which also says why each remaining function is
not implemented; a stated call wins over the one a catalog entry implies, so
the file also corrects a call whose DIOPI semantics differ from the op's (the
saved statistics of a norm). Every function not implemented is listed with
the reason; DIPU falls back to the CPU for it as for any function a DIOPI
library lacks.

When the vendor gets a DIOPI adaptor (its dtypes or layouts sections convert),
the library is built as DIOPI builds its own vendors': each function is
defined in impl::<folder>, and the adaptor's ``extern "C"`` wrapper, which
converts the tensors its rules name, is what the library exports as diopiX.
So DIPU and diopi_test both call through the rendered adaptor."""

from __future__ import annotations

from dataclasses import dataclass

from torchgen.model import SchemaKind

from deeplink_gen.cpptext import called_diopi
from deeplink_gen.interfaces.aten import function_schema
from deeplink_gen.model import Prototype, Prototypes, ResolvedOp, ResolvedVendor
from deeplink_gen.plan.host_diopi_calls import Glue, StatedCall, Store, stated_calls
from deeplink_gen.plan.kernels import call_args, signature
from deeplink_gen.translate.args import ArgKind
from deeplink_gen.translate.conversion import library_namespace
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

    param: str        # the DIOPI parameter's name ("" for a value no parameter gives)
    kind: ArgKind     # the ATen argument's kind (FRESH: a return the DIOPI caller allocated)
    local: str        # the C++ local holding the ATen value
    aten: str         # the ATen argument it is, or the op's return (by name, else out<i>)
    glue: Glue = Glue.NONE            # how the DIOPI value becomes the ATen one
    value: object = None              # Glue.LITERAL, POINTEE_OR: the value; Glue.SAME_RANK: the two parameters


@dataclass(frozen=True)
class HostResult:
    """A return of the op copied into the caller's tensor."""

    local: str                # the local viewing the caller's tensor
    index: int | None         # which element of the op's result (None: the whole result)
    store: Store = Store.COPY


@dataclass(frozen=True)
class HostFunction:
    name: str                     # diopiAdd
    params: str                   # its parameter list, as DIOPI declares it
    ctx: str                      # the name of its context parameter (unused: work is done when issued)
    op: str                       # the ATen op it runs (add.out)
    ops_struct: str               # at::_ops::<ops_struct>::call
    args: tuple[HostArg, ...]     # DIOPI parameters but the context, in order
    call: tuple[str, ...]         # locals passed to the op, in schema order
    results: tuple[HostResult, ...] = ()    # the op's fresh returns, into the caller's tensors


@dataclass(frozen=True)
class HostDiopiPlan:
    functions: tuple[HostFunction, ...]          # sorted by name
    missing: tuple[tuple[str, str], ...]         # (DIOPI function, why it is not implemented), sorted
    namespace: str | None = None                 # impl::<namespace> defines them for the adaptor (None: extern "C")

    def names(self) -> tuple[str, ...]:
        """The DIOPI functions the library implements."""
        return tuple(f.name for f in self.functions)


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
                                 "v_" + a.name, a.name))
    results = tuple(HostResult("v_" + ret.name, None if len(sig.returns) == 1 else sig.returns.index(ret))
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


def _stated(call: StatedCall, proto: Prototype) -> HostFunction:
    """The function the data file states: each DIOPI parameter in prototype order, then the
    values no parameter gives; the op's returns go to the parameters the file names."""
    derived = (Glue.LITERAL, Glue.SAME_RANK, Glue.DTYPE_OF)      # values no parameter gives as it is
    by_param = {p: a for a in call.args for p in a.params[:1] if a.glue not in derived}
    args = []
    returns = {p: i for i, p in enumerate(call.returns) if p is not None}
    for p in proto.params:
        if p.name in by_param:
            a = by_param[p.name]
            args.append(HostArg(p.name, a.kind, "v_" + a.aten, a.aten, a.glue, a.value))
        elif p.name in returns:
            args.append(HostArg(p.name, ArgKind.FRESH, "r_" + p.name, f"out{returns[p.name]}"))
    args += [HostArg("", a.kind, "v_" + a.aten, a.aten, a.glue, a.value if a.glue is Glue.LITERAL else a.params)
             for a in call.args if a.glue in derived]
    single = len(call.returns) == 1
    results = tuple(HostResult("r_" + p, None if single else i, call.stores.get(p, Store.COPY))
                    for p, i in returns.items())
    ctx = next(p.name for p in proto.params if p.type == "diopiContextHandle_t")
    return HostFunction(name=call.name, params=proto.params_text, ctx=ctx, op=call.op, ops_struct=call.ops_struct,
                        args=tuple(args), call=tuple("v_" + a.aten for a in call.args), results=results)


def plan_host_diopi(rv: ResolvedVendor, protos: Prototypes) -> HostDiopiPlan:
    candidates: dict[str, list[ResolvedOp]] = {}
    in_code: dict[str, list[str]] = {}       # DIOPI functions only custom code calls -> those ops
    for r in rv.enabled_ops:
        candidates.setdefault(r.entry.call.function, []).append(r)
        for _, text in r.entry.code:
            for name in sorted(called_diopi(text.value)):
                if protos.get(name) is not None:
                    in_code.setdefault(name, []).append(r.op)
    stated = stated_calls(rv.op_table, protos)      # checked against the ops the vendor was resolved with
    functions = [_stated(call, protos.get(name)) for name, call in stated.functions.items()]
    missing = []
    for name in sorted(candidates.keys() - stated.functions.keys()):
        proto = protos.get(name)
        reasons, usable = [], []
        for r in candidates[name]:
            why = _why_not(r, proto)
            (reasons if why else usable).append(why or r)
        if usable:
            functions.append(_function(min(usable, key=_preference), proto))
        else:
            missing.append((name, "; ".join(dict.fromkeys(reasons))))
    for name in sorted(in_code.keys() - candidates.keys() - stated.functions.keys()):
        missing.append((name, f"only the custom code of {', '.join(dict.fromkeys(in_code[name]))} calls it"))
    listed = {f.name for f in functions} | {name for name, _ in missing}
    for name, why in stated.not_implemented.items():
        if name not in listed:
            missing.append((name, why))
            listed.add(name)
    for name in protos.names():
        why = stated.headers.get(protos.get(name).header)
        if why is not None and name not in listed:
            missing.append((name, why))
    namespace = library_namespace(rv.vendor) if rv.vendor.converts else None
    return HostDiopiPlan(tuple(sorted(functions, key=lambda f: f.name)), tuple(sorted(missing)), namespace)
