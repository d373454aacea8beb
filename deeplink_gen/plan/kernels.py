"""The kernels plan: for every enabled op, what its DIOPI wrapper, its
autocompare twin and its autograd function are made of, and which shard it
goes to. Templates under templates/kernels/ spell it out."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, replace

from torchgen.model import SchemaKind

from deeplink_gen.cpptext import mentioned_wrappers, referenced_names
from deeplink_gen.errors import Loc
from deeplink_gen.model import ResolvedOp, ResolvedVendor
from deeplink_gen.plan.reach import reached_functions
from deeplink_gen.translate.args import AUX_SUFFIX, TENSOR_HANDLES, ArgKind, local_name
from deeplink_gen.translate.signature import (
    OpSignature, autograd_class_name, cpu_reference, derived_names, entry_signature, wrapper_name,
)

# Schema argument kinds that need a local before the call.
_CONVERTED = {
    ArgKind.TENSOR, ArgKind.OPT_TENSOR, ArgKind.MUT_TENSOR, ArgKind.SCALAR, ArgKind.OPT_SCALAR,
    ArgKind.INT_LIST, ArgKind.SYMINT_LIST, ArgKind.OPT_INT_LIST, ArgKind.GENERATOR,
}


class CpuUse(enum.Enum):
    """How an argument reaches the CPU reference call."""

    CLONE = "clone"        # a host copy
    OUT = "out"            # a host copy keeping its aliasing with the inputs
    PLAIN = "plain"        # passed as is


class ValueKind(enum.Enum):
    TENSOR = "tensor"
    LIST = "list"
    VALUE = "value"


@dataclass(frozen=True)
class CallArgPlan:
    kind: ArgKind
    name: str                # the schema/local name, or the C++ text of an EXPR
    optional: bool = False   # for INS: a c10::optional<at::Tensor> local

    @property
    def local(self) -> str | None:
        return local_name(self.name, self.kind)

    @property
    def aux(self) -> str | None:
        suffix = AUX_SUFFIX.get(self.kind)
        return self.name + suffix if suffix else None


@dataclass(frozen=True)
class CpuArg:
    name: str
    use: CpuUse


@dataclass(frozen=True)
class ResultValue:
    """A value the CPU reference produces: the result (element *index* of a
    tuple, None for a single return) or the host copy of argument *param*."""

    name: str
    kind: ValueKind
    index: int | None = None
    param: bool = False


@dataclass(frozen=True)
class AutogradPlan:
    cls: str
    forward_params: tuple[tuple[str, str], ...]     # (C++ type, name) of the forward parameters
    param_names: tuple[str, ...]
    forward_args: tuple[str, ...]
    forward_wrapper: str
    forward_code: str
    saved: tuple[str, ...]
    backward_wrapper: str
    backward_schema: str
    backward_args: tuple[str, ...]
    grad_code: str
    return_code: str
    return_type: str
    wrapper_decl: str
    wrapper_return: str
    code_locs: tuple[tuple[str, Loc], ...] = ()     # where forward_code, grad_code, ... were written

    def loc(self, key: str) -> Loc | None:
        return dict(self.code_locs).get(key)


@dataclass(frozen=True)
class WrapperPlan:
    op: str
    schema: str
    wrapper: str
    decl: str
    twin_decl: str
    returns_void: bool
    return_names: tuple[str, ...]
    guard: str | None
    guard_optional_device: bool
    diopi: str
    args: tuple[CallArgPlan, ...]
    conversions: tuple[CallArgPlan, ...]
    allocs: tuple[tuple[str, str, bool], ...]      # (name, C++ expression, is tensor)
    device_checks: tuple[str, ...]
    optional_tensors: tuple[str, ...]
    dumped: tuple[str, ...]
    print_call_info: bool
    print_op_args: bool
    profiler: bool
    device_check: bool
    sync: bool
    fallback: bool
    autocompare: bool
    cpu_args: tuple[CpuArg, ...]
    cpu_callee: str
    cpu_receiver: str | None
    cpu_kind: SchemaKind            # functional, out or inplace (mutable reads as functional)
    results: tuple[ResultValue, ...]   # copied back after a CPU fallback, compared by the twin
    inputs_to_check: tuple[str, ...]
    memory_format: str | None = None    # what the custom code's placeholders become (None: their defaults)
    code_beginning: str = ""
    code_before_call: str = ""
    code_before_return: str = ""
    dummy_call: bool = False
    register: bool = True
    custom_fallback: bool = False
    force_fallback: bool = False
    registered_target: str = ""      # the wrapper, or the autograd _wrapper
    autograd: AutogradPlan | None = None
    includes: tuple[str, ...] = ()   # headers its code needs besides the kernels' own
    locs: tuple[tuple[str, Loc], ...] = ()   # where pasted C++ was written: code hooks, alloc.<name>, call
    # Every DIOPI function a call of the wrapper can reach: its call's, those its custom code
    # calls and those of the wrappers it calls (its call's first, then sorted). A weak DIOPI symbol the library lacks
    # is null: the op is registered only when none is, else it falls back to the CPU.
    reached: tuple[str, ...] = ()

    def loc(self, key: str) -> Loc | None:
        return dict(self.locs).get(key)

    @property
    def reached_pointer(self) -> str:
        """What the register macros test for null: the one DIOPI function, or
        a local that is null when any reached function is (see the kernels template)."""
        return f"::{self.reached[0]}" if len(self.reached) == 1 else "_and_".join(self.reached)

    @property
    def checked(self) -> tuple[str, ...]:
        """The tensors whose device the wrapper checks (when DIPU's device check is on)."""
        return self.device_checks if self.device_check else ()

    def called_wrappers(self) -> set[str]:
        """Other wrappers this op's code calls: its autograd forward/backward,
        and any dipu_<op> its custom code mentions."""
        texts = [self.code_beginning, self.code_before_call, self.code_before_return]
        names = set()
        if self.autograd is not None:
            a = self.autograd
            names |= {a.forward_wrapper, a.backward_wrapper}
            texts += [a.forward_code, a.grad_code, a.return_code, a.wrapper_return]
        for text in texts:
            names |= mentioned_wrappers(text)
        return names - {self.wrapper}


@dataclass(frozen=True)
class KernelsPlan:
    wrappers: tuple[WrapperPlan, ...]
    shards: int

    @staticmethod
    def checks(wrappers: tuple[WrapperPlan, ...]) -> tuple[bool, bool]:
        """(whether *wrappers* check the device of a tensor, of an optional tensor):
        which device-check helpers their translation unit needs."""
        checked = [(t, p.optional_tensors) for p in wrappers for t in p.checked]
        return any(t not in opt for t, opt in checked), any(t in opt for t, opt in checked)

    @staticmethod
    def includes(wrappers: tuple[WrapperPlan, ...]) -> tuple[str, ...]:
        """The headers the custom code of *wrappers* needs, sorted."""
        return tuple(sorted({h for p in wrappers for h in p.includes}))

    def shard(self, index: int) -> tuple[tuple[WrapperPlan, ...], tuple[WrapperPlan, ...]]:
        """(the wrappers of shard *index*, the other wrappers their code calls)."""
        mine = tuple(p for p in self.wrappers if shard_of(p.op, self.shards) == index)
        called = set().union(*(p.called_wrappers() for p in mine))
        return mine, tuple(p for p in self.wrappers if p.wrapper in called)


def signature(r: ResolvedOp) -> OpSignature:
    return entry_signature(r.entry, r.aten)


def _guard(r: ResolvedOp, sig: OpSignature) -> tuple[str | None, bool]:
    if not r.on("device_guard"):
        return None, False
    chosen = r.entry.device_guard.value if r.entry.device_guard is not None else True
    if isinstance(chosen, str):
        return chosen, False
    for wanted in (ArgKind.MUT_TENSOR, ArgKind.TENSOR):
        p = next((p for p in sig.params if p.kind == wanted), None)
        if p is not None:
            return p.name, False
    device = next((p for p in sig.params if p.cpp_type.endswith("optional<at::Device>")), None)
    if device is not None:
        return device.name, True
    return None, False


def _cpu_kind(sig: OpSignature) -> SchemaKind:
    kind = sig.kind
    return kind if kind in (SchemaKind.out, SchemaKind.inplace) else SchemaKind.functional


def _cpu_args(sig: OpSignature) -> tuple[CpuArg, ...]:
    out = []
    for p in sig.params:
        if not p.is_tensor_like:
            out.append(CpuArg(p.name, CpuUse.PLAIN))
        elif sig.kind == SchemaKind.out and p.mutable and p.kind == ArgKind.MUT_TENSOR:
            out.append(CpuArg(p.name, CpuUse.OUT))
        else:
            out.append(CpuArg(p.name, CpuUse.CLONE))
    return tuple(out)


def _results(sig: OpSignature) -> tuple[ResultValue, ...]:
    out = []
    if _cpu_kind(sig) == SchemaKind.functional:
        single = len(sig.returns) == 1
        for i, ret in enumerate(sig.returns):
            kind = ValueKind.LIST if ret.is_tensor_list else ValueKind.TENSOR if ret.is_tensor else ValueKind.VALUE
            out.append(ResultValue(ret.name, kind, None if single else i))
    for p in sig.params:
        if p.mutable:
            kind = ValueKind.LIST if p.kind == ArgKind.TENSOR_LIST else ValueKind.TENSOR
            out.append(ResultValue(p.name, kind, param=True))
    return tuple(out)


def _autograd_plan(r: ResolvedOp, sig: OpSignature, wrapper: str, ops: dict[str, ResolvedOp]) -> AutogradPlan | None:
    ag = r.entry.autograd
    if ag is None:
        return None
    backward = ops[ag.backward.value]
    forward_op = ag.forward.value if ag.forward is not None else r.op
    return AutogradPlan(
        cls=autograd_class_name(r.op),
        forward_params=tuple((p.cpp_type, p.name) for p in sig.params),
        param_names=tuple(p.name for p in sig.params),
        forward_args=ag.forward_args or tuple(p.name for p in sig.params),
        forward_wrapper=wrapper_name(forward_op),
        forward_code=ag.forward_code,
        saved=ag.saved,
        backward_wrapper=wrapper_name(backward.op),
        backward_schema=backward.aten.schema,
        backward_args=tuple(p.name for p in signature(backward).params),
        grad_code=ag.grad_code,
        return_code=ag.return_code,
        return_type=sig.return_type,
        wrapper_decl=sig.decl(wrapper + "_wrapper"),
        wrapper_return=ag.wrapper_return,
        code_locs=ag.code_locs,
    )


def call_args(r: ResolvedOp, sig: OpSignature) -> tuple[list[CallArgPlan], list[CallArgPlan]]:
    """(the DIOPI call's arguments, the locals they and the custom code need, in order of use)."""
    entry = r.entry
    params = {p.name: p for p in sig.params}
    fresh = {ret.name for ret in sig.fresh_returns if ret.is_tensor}
    ins = dict(entry.ins)
    derived = derived_names(sig)
    args, used = [], []

    def uses_local(name: str) -> None:
        """A converted local named in C++ text: the conversion must be emitted."""
        base = derived.get(name) if name not in entry.locals else None
        if base in fresh:
            used.append(CallArgPlan(ArgKind.FRESH, base))
        elif base in params and params[base].kind in _CONVERTED:
            used.append(CallArgPlan(params[base].kind, base))

    for arg in entry.call.args:
        text = arg.text
        if text == "ctx":
            plan = CallArgPlan(ArgKind.CTX, "ctx")
        elif arg.is_name and text in fresh:
            plan = CallArgPlan(ArgKind.FRESH, text)
        elif arg.is_name and text in ins:
            plan = CallArgPlan(ArgKind.INS, text, ins[text])
        elif arg.is_name and text in entry.sizes:
            plan = CallArgPlan(ArgKind.SIZES, text)
        elif arg.is_name and text in entry.outs:
            plan = CallArgPlan(ArgKind.OUTS, text)
        elif arg.is_name and text in params:
            plan = CallArgPlan(params[text].kind, text)
        else:
            plan = CallArgPlan(ArgKind.EXPR, text)
            for name in referenced_names(text):
                uses_local(name)
        args.append(plan)
        if plan.kind in _CONVERTED or plan.kind in (ArgKind.FRESH, ArgKind.INS, ArgKind.OUTS):
            used.append(plan)
    hook_text = entry.hook("before_call") + entry.hook("before_return")
    for name in referenced_names(hook_text) if hook_text else ():
        uses_local(name)
    used += [CallArgPlan(ArgKind.SIZES, n) for n in entry.sizes]
    used += [CallArgPlan(ArgKind.INS, n, optional) for n, optional in entry.ins]
    used += [CallArgPlan(ArgKind.OUTS, n) for n in entry.outs]
    return args, used


def plan_wrapper(r: ResolvedOp, ops: dict[str, ResolvedOp]) -> WrapperPlan:
    sig = signature(r)
    entry = r.entry
    args, used = call_args(r, sig)
    dummy = entry.flag("dummy_call")
    conversions, seen = [], set()
    if not dummy:
        for plan in used:
            if plan.name not in seen:
                seen.add(plan.name)
                conversions.append(plan)
    tensors = [p.name for p in sig.params if p.kind in TENSOR_HANDLES]
    tensors += [n for n, _ in entry.ins] + list(entry.outs)
    tensors += [ret.name for ret in sig.fresh_returns if ret.is_tensor]
    guard, guard_optional = _guard(r, sig)
    custom_fallback = entry.flag("custom_fallback")
    wrapper = wrapper_name(r.op)
    if custom_fallback:
        callee, receiver = "custom_fallback_" + wrapper, None    # takes the wrapper's own parameters
    else:
        callee, receiver = cpu_reference(sig, r.aten.variants)
    autograd = _autograd_plan(r, sig, wrapper, ops)
    target = wrapper + "_wrapper" if autograd is not None else wrapper
    return WrapperPlan(
        op=r.op, schema=r.aten.schema, wrapper=wrapper,
        decl=sig.decl(wrapper), twin_decl=sig.decl(target + "_autocompare"),
        returns_void=sig.return_type == "void",
        return_names=tuple(ret.name for ret in sig.returns),
        guard=guard, guard_optional_device=guard_optional,
        diopi=entry.call.function, args=tuple(args), conversions=tuple(conversions),
        allocs=tuple((ret.name, entry.alloc_for(ret.name), ret.is_tensor)
                     for ret in sig.fresh_returns if entry.alloc_for(ret.name) is not None),
        device_checks=tuple(t for t in tensors if t not in entry.no_device_check),
        optional_tensors=tuple([p.name for p in sig.params if p.kind == ArgKind.OPT_TENSOR]
                               + [n for n, opt in entry.ins if opt]),
        dumped=tuple(p.name for p in sig.params),
        print_call_info=r.on("print_call_info"), print_op_args=r.on("print_op_args"),
        profiler=r.on("profiler"), device_check=r.on("device_check"), sync=r.on("sync_if_enabled"),
        fallback=r.on("fallback_to_cpu"), autocompare=r.on("autocompare"),
        cpu_args=_cpu_args(sig), cpu_callee=callee, cpu_receiver=receiver, cpu_kind=_cpu_kind(sig),
        results=_results(sig),
        inputs_to_check=tuple(p.name for p in sig.params if p.kind == ArgKind.TENSOR),
        memory_format=r.memory_format.value if r.memory_format is not None else None,
        code_beginning=entry.hook("beginning"),
        code_before_call=entry.hook("before_call"),
        code_before_return=entry.hook("before_return"),
        dummy_call=dummy, register=r.on("register"), custom_fallback=custom_fallback,
        force_fallback=entry.flag("force_fallback"),
        registered_target=target, autograd=autograd, includes=entry.includes,
        locs=_pasted_locs(r, args),
    )


def _pasted_locs(r: ResolvedOp, args: list[CallArgPlan]) -> tuple[tuple[str, Loc], ...]:
    """Where each piece of C++ the wrapper pastes from YAML was written."""
    entry = r.entry
    locs = [(hook, text.loc) for hook, text in entry.code]
    locs += [(f"alloc.{name}", entry.key_loc(f"alloc.{name}.text")) for name, _ in entry.alloc]
    if any(a.kind == ArgKind.EXPR for a in args):
        locs.append(("call", entry.call.loc))
    return tuple(locs)


def shard_of(op: str, shards: int) -> int:
    """The shard an op's code goes to: rendezvous (highest-random-weight)
    hashing on sha1("<op>#<shard>"). It depends on nothing but the op name and
    the shard count, so adding, removing or editing an op never moves another
    op (and recompiles only the shard it lands in), and going from N to N+1
    shards moves only the ~1/(N+1) of ops that win the new shard. Balance is
    statistical: sha1 spreads names uniformly, so a shard's op count deviates
    from ops/N by about sqrt(ops/N) (tests/test_shards.py states the bound for
    the bundled vendors). No rule can balance by line count and keep every
    other op in place when one op is added: that needs the assignment to
    depend on the other ops."""
    if shards <= 1:
        return 0

    def score(i: int) -> bytes:
        return hashlib.sha1(f"{op}#{i}".encode("utf-8")).digest()
    return max(range(shards), key=score)


def plan_kernels(rv: ResolvedVendor, operators: frozenset[str]) -> KernelsPlan:
    ops = {r.op: r for r in rv.ops}
    reached = reached_functions(rv.enabled_ops, operators)
    return KernelsPlan(tuple(replace(plan_wrapper(r, ops), reached=reached[r.op]) for r in rv.enabled_ops),
                       int(rv.shards.value))
