"""The kernels plan: for every enabled op, what its DIOPI wrapper, its
autocompare twin and its autograd function are made of, and which shard it
goes to. Templates under templates/kernels/ spell it out."""

from __future__ import annotations

import enum
import functools
import hashlib
from dataclasses import dataclass, fields, replace

from torchgen.model import SchemaKind

from deeplink_gen.cpptext import mentioned_wrappers, referenced_names
from deeplink_gen.errors import Loc
from deeplink_gen.model import Located, ResolvedOp, ResolvedVendor
from deeplink_gen.model.catalog import HOOKS
from deeplink_gen.plan.reach import reached_functions
from deeplink_gen.translate.args import TENSOR_HANDLES, ArgKind, aux_name, declaration, local_name, passed
from deeplink_gen.translate.signature import (
    OpSignature, autograd_class_name, cpu_reference, derived_names, entry_signature, wrapper_name,
)


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
        return aux_name(self.name, self.kind)

    @property
    def declaration(self) -> str:
        """The C++ lines that declare its locals before the call."""
        return declaration(self.name, self.kind, self.optional)

    @property
    def passed(self) -> str:
        """The argument as the DIOPI call passes it."""
        return passed(self.name, self.kind)


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
class Mark:
    """Where the compiler is told C++ from an op's entry was written (its #line): *line*
    counted from the entry's first line, *op* its name; for text written outside the entry
    (a YAML alias of another's), the file's own line and no op. So no mark moves when
    lines are added or removed elsewhere in the file."""

    file: str
    line: int
    op: str | None


@dataclass(frozen=True)
class Pasted:
    text: str
    mark: Mark


def _marked(loc: Loc, r: ResolvedOp) -> Mark:
    entry = r.entry.loc
    if loc.file == entry.file and loc.line >= entry.line:
        return Mark(loc.file, loc.line - entry.line + 1, r.op)
    return Mark(loc.file, loc.line, None)


def _pasted(text: Located[str], r: ResolvedOp) -> Pasted:
    return Pasted(text.value, _marked(text.loc, r))


def _texts(*pasted: Pasted | None) -> list[str]:
    return [p.text for p in pasted if p is not None]


@dataclass(frozen=True)
class AutogradPlan:
    cls: str
    forward_params: tuple[tuple[str, str], ...]     # (C++ type, name) of the forward parameters
    param_names: tuple[str, ...]
    forward_args: tuple[str, ...]
    forward_wrapper: str
    saved: tuple[str, ...]
    backward_wrapper: str
    backward_schema: str
    backward_args: tuple[str, ...]
    return_type: str
    wrapper_decl: str
    # The C++ of the catalog's autograd: entry, where it was written (None: not given).
    return_code: Pasted
    forward_code: Pasted | None = None
    grad_code: Pasted | None = None
    wrapper_return: Pasted | None = None

    @property
    def texts(self) -> list[str]:
        return _texts(self.forward_code, self.grad_code, self.return_code, self.wrapper_return)


@dataclass(frozen=True)
class Switches:
    """An op's on/off settings, under their YAML names: the vendor's resolved
    settings, then the flags of its catalog entry."""

    print_call_info: bool
    print_op_args: bool
    profiler: bool
    device_check: bool
    sync_if_enabled: bool
    fallback_to_cpu: bool
    autocompare: bool
    register: bool
    dummy_call: bool
    custom_fallback: bool
    force_fallback: bool


# The switches that are the catalog entry's flags rather than resolved settings.
_FLAGS = ("dummy_call", "custom_fallback", "force_fallback")


@dataclass(frozen=True)
class CustomCode:
    """The catalog entry's code: at each hook point, the C++ pasted there and where it was
    written (None: none), and the headers it needs besides the kernels' own."""

    beginning: Pasted | None = None
    before_call: Pasted | None = None
    before_return: Pasted | None = None
    includes: tuple[str, ...] = ()
    memory_format: str | None = None    # what its placeholders become (None: their defaults)

    @property
    def texts(self) -> list[str]:
        return _texts(self.beginning, self.before_call, self.before_return)

    @property
    def pastes(self) -> bool:
        """Whether it pastes C++ at any hook point."""
        return bool(self.texts)


@dataclass(frozen=True)
class CpuReference:
    """How the CPU runs the op: after a CPU fallback of the DIOPI call, and in the autocompare twin."""

    args: tuple[CpuArg, ...]
    callee: str
    receiver: str | None
    kind: SchemaKind                   # functional, out or inplace (mutable reads as functional)
    results: tuple[ResultValue, ...]   # copied back after a CPU fallback, compared by the twin
    inputs_to_check: tuple[str, ...]


@dataclass(frozen=True)
class Guard:
    """The device guard: on the device of the tensor *name*, or (*is_device*) on the optional device *name*."""

    name: str
    is_device: bool = False


@dataclass(frozen=True)
class WrapperPlan:
    op: str
    schema: str
    wrapper: str
    decl: str
    twin_decl: str
    returns_void: bool
    return_names: tuple[str, ...]
    guard: Guard | None
    diopi: str
    args: tuple[CallArgPlan, ...]
    conversions: tuple[CallArgPlan, ...]
    allocs: tuple[Pasted, ...]            # the declarations of the returns it allocates (alloc:)
    call_mark: Mark | None                # where the call was written, when it pastes C++ text from there
    device_checks: tuple[str, ...]
    optional_tensors: tuple[str, ...]
    dumped: tuple[str, ...]
    switches: Switches
    cpu: CpuReference
    code: CustomCode
    registered_target: str               # the wrapper, or the autograd _wrapper
    autograd: AutogradPlan | None = None
    # Every DIOPI function a call of the wrapper can reach: its call's, those its custom code
    # calls and those of the wrappers it calls (its call's first, then sorted). A weak DIOPI symbol the library lacks
    # is null: the op is registered only when none is, else it falls back to the CPU.
    reached: tuple[str, ...] = ()

    @property
    def call(self) -> str:
        return f"::{self.diopi}({', '.join(a.passed for a in self.args)})"

    @property
    def reached_pointer(self) -> str:
        """What the register macros test for null: the one DIOPI function, or
        a local that is null when any reached function is (see the kernels template)."""
        return f"::{self.reached[0]}" if len(self.reached) == 1 else "_and_".join(self.reached)

    @property
    def checked(self) -> tuple[str, ...]:
        """The tensors whose device the wrapper checks (when DIPU's device check is on)."""
        return self.device_checks if self.switches.device_check else ()

    def called_wrappers(self) -> set[str]:
        """Other wrappers this op's code calls: its autograd forward/backward,
        and any dipu_<op> its custom code mentions."""
        texts = self.code.texts
        names = set()
        if self.autograd is not None:
            a = self.autograd
            names |= {a.forward_wrapper, a.backward_wrapper}
            texts += a.texts
        for text in texts:
            names |= mentioned_wrappers(text)
        return names - {self.wrapper}


@dataclass(frozen=True)
class DeviceChecks:
    """Which device-check helpers a translation unit needs: whether its wrappers
    check the device of a tensor, and of an optional tensor."""

    tensor: bool
    optional_tensor: bool


@dataclass(frozen=True)
class KernelsPlan:
    wrappers: tuple[WrapperPlan, ...]
    shards: int

    @staticmethod
    def checks(wrappers: tuple[WrapperPlan, ...]) -> DeviceChecks:
        checked = [(t, p.optional_tensors) for p in wrappers for t in p.checked]
        return DeviceChecks(any(t not in opt for t, opt in checked), any(t in opt for t, opt in checked))

    @staticmethod
    def includes(wrappers: tuple[WrapperPlan, ...]) -> tuple[str, ...]:
        """The headers the custom code of *wrappers* needs, sorted."""
        return tuple(sorted({h for p in wrappers for h in p.code.includes}))

    def shard(self, index: int) -> tuple[tuple[WrapperPlan, ...], tuple[WrapperPlan, ...]]:
        """(the wrappers of shard *index*, the other wrappers their code calls)."""
        mine = tuple(p for p in self.wrappers if shard_of(p.op, self.shards) == index)
        called = set().union(*(p.called_wrappers() for p in mine))
        return mine, tuple(p for p in self.wrappers if p.wrapper in called)


def signature(r: ResolvedOp) -> OpSignature:
    return entry_signature(r.entry, r.aten)


def _guard(r: ResolvedOp, sig: OpSignature) -> Guard | None:
    if not r.on("device_guard"):
        return None
    chosen = r.entry.device_guard.value if r.entry.device_guard is not None else True
    if isinstance(chosen, str):
        return Guard(chosen)
    for wanted in (ArgKind.MUT_TENSOR, ArgKind.TENSOR):
        p = next((p for p in sig.params if p.kind == wanted), None)
        if p is not None:
            return Guard(p.name)
    device = next((p for p in sig.params if p.cpp_type.endswith("optional<at::Device>")), None)
    if device is not None:
        return Guard(device.name, is_device=True)
    return None


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

    def code(text: Located[str] | None) -> Pasted | None:
        return _pasted(text, r) if text is not None and text.value else None

    return AutogradPlan(
        cls=autograd_class_name(r.op),
        forward_params=tuple((p.cpp_type, p.name) for p in sig.params),
        param_names=tuple(p.name for p in sig.params),
        forward_args=ag.forward_args or tuple(p.name for p in sig.params),
        forward_wrapper=wrapper_name(forward_op),
        saved=ag.saved,
        backward_wrapper=wrapper_name(backward.op),
        backward_schema=backward.aten.schema,
        backward_args=tuple(p.name for p in signature(backward).params),
        return_type=sig.return_type,
        wrapper_decl=sig.decl(wrapper + "_wrapper"),
        return_code=_pasted(ag.return_code, r),
        forward_code=code(ag.forward_code), grad_code=code(ag.grad_code), wrapper_return=code(ag.wrapper_return),
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
        elif base in params and params[base].kind.local:
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
        if plan.local and plan.kind is not ArgKind.SIZES:    # sizes locals come after the others, below
            used.append(plan)
    hook_text = entry.hook("before_call") + entry.hook("before_return")
    for name in referenced_names(hook_text) if hook_text else ():
        uses_local(name)
    used += [CallArgPlan(ArgKind.SIZES, n) for n in entry.sizes]
    used += [CallArgPlan(ArgKind.INS, n, optional) for n, optional in entry.ins]
    used += [CallArgPlan(ArgKind.OUTS, n) for n in entry.outs]
    return args, used


def _switches(r: ResolvedOp) -> Switches:
    names = [f.name for f in fields(Switches)]
    return Switches(**{n: r.entry.flag(n) if n in _FLAGS else r.on(n) for n in names})


def _custom_code(r: ResolvedOp) -> CustomCode:
    written = dict(r.entry.code)
    return CustomCode(**{hook: _pasted(written[hook], r) for hook in HOOKS if hook in written and written[hook].value},
                      includes=r.entry.includes,
                      memory_format=r.memory_format.value if r.memory_format is not None else None)


def _allocs(r: ResolvedOp, sig: OpSignature) -> tuple[Pasted, ...]:
    return tuple(Pasted(f"{'at::Tensor' if ret.is_tensor else 'auto'} {ret.name} = {alloc.expr.value};",
                        _marked(alloc.expr.loc, r))
                 for ret in sig.fresh_returns for alloc in [r.entry.alloc_for(ret.name)] if alloc is not None)


def _cpu_reference(r: ResolvedOp, sig: OpSignature, wrapper: str) -> CpuReference:
    if r.entry.flag("custom_fallback"):
        callee, receiver = "custom_fallback_" + wrapper, None    # takes the wrapper's own parameters
    else:
        callee, receiver = cpu_reference(sig, r.aten.variants)
    return CpuReference(_cpu_args(sig), callee, receiver, _cpu_kind(sig), _results(sig),
                        tuple(p.name for p in sig.params if p.kind == ArgKind.TENSOR))


def plan_wrapper(r: ResolvedOp, ops: dict[str, ResolvedOp]) -> WrapperPlan:
    sig = signature(r)
    entry = r.entry
    args, used = call_args(r, sig)
    conversions, seen = [], set()
    if not entry.flag("dummy_call"):
        for plan in used:
            if plan.name not in seen:
                seen.add(plan.name)
                conversions.append(plan)
    tensors = [p.name for p in sig.params if p.kind in TENSOR_HANDLES]
    tensors += [n for n, _ in entry.ins] + list(entry.outs)
    tensors += [ret.name for ret in sig.fresh_returns if ret.is_tensor]
    wrapper = wrapper_name(r.op)
    autograd = _autograd_plan(r, sig, wrapper, ops)
    target = wrapper + "_wrapper" if autograd is not None else wrapper
    return WrapperPlan(
        op=r.op, schema=r.aten.schema, wrapper=wrapper,
        decl=sig.decl(wrapper), twin_decl=sig.decl(target + "_autocompare"),
        returns_void=sig.return_type == "void",
        return_names=tuple(ret.name for ret in sig.returns),
        guard=_guard(r, sig),
        diopi=entry.call.function, args=tuple(args), conversions=tuple(conversions),
        allocs=_allocs(r, sig),
        call_mark=_marked(entry.call.loc, r) if any(a.kind == ArgKind.EXPR for a in args) else None,
        device_checks=tuple(t for t in tensors if t not in entry.no_device_check),
        optional_tensors=tuple([p.name for p in sig.params if p.kind == ArgKind.OPT_TENSOR]
                               + [n for n, opt in entry.ins if opt]),
        dumped=tuple(p.name for p in sig.params),
        switches=_switches(r), cpu=_cpu_reference(r, sig, wrapper), code=_custom_code(r),
        registered_target=target, autograd=autograd,
    )


@functools.lru_cache(maxsize=1 << 16)       # asked once per shard for every op (KernelsPlan.shard)
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
