"""AutoGenedKernels.cpp: the DIOPI wrapper for every enabled op, its
autocompare twin, and the DIPU_LIBRARY_IMPL registrations."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from deeplink_gen import aten
from deeplink_gen.resolve import ResolvedOp, ResolvedVendor
from deeplink_gen.signature import (
    Conv, autograd_class_name, cpu_reference, derived_names, signature_of, wrapper_name,
)
from deeplink_gen.callexpr import referenced_names
from deeplink_gen.templating import environment, render

KERNELS_DIR = "dipu/torch_dipu/csrc_dipu/aten/ops"
KERNELS_PATH = f"{KERNELS_DIR}/AutoGenedKernels.cpp"
MAX_SHARDS = 64

# Conversions that need a local variable before the call.
_LOCAL_CONVS = {
    Conv.TENSOR, Conv.OPT_TENSOR, Conv.MUT_TENSOR, Conv.SCALAR, Conv.OPT_SCALAR,
    Conv.INT_LIST, Conv.SYMINT_LIST, Conv.OPT_INT_LIST, Conv.GENERATOR,
}


@dataclass(frozen=True)
class CallArgPlan:
    conv: str        # a Conv value, "fresh" for an allocated return, "ins"/"outs", or "expr"
    name: str        # the schema/local name, or the C++ text for "expr"
    optional: bool = False   # for "ins": a c10::optional<at::Tensor> local


@dataclass(frozen=True)
class CpuArg:
    name: str
    kind: str        # "clone", "out" (clone keeping aliasing with inputs), "plain"


@dataclass(frozen=True)
class AutogradPlan:
    cls: str
    forward_decl_params: str      # "<type> name, ..." of the forward parameters
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
    cpu_kind: str             # "out", "inplace", "functional"
    copy_back: tuple[tuple[str, str, str], ...]    # (device name, cpu expr, "tensor" | "list" | "value")
    compare: tuple[tuple[str, str, str], ...]      # (label, cpu expr, device expr)
    inputs_to_check: tuple[str, ...]
    macro: str
    code_beginning: str = ""
    code_before_call: str = ""
    code_before_return: str = ""
    dummy_call: bool = False
    register: bool = True
    custom_fallback: bool = False
    force_fallback: bool = False
    registered_target: str = ""      # the wrapper, or the autograd _wrapper
    autograd: AutogradPlan | None = None


def _guard(r: ResolvedOp) -> tuple[str | None, bool]:
    if not r.on("device_guard"):
        return None, False
    chosen = r.entry.device_guard.value if r.entry.device_guard is not None else True
    params = r.sig.params
    if isinstance(chosen, str):
        return chosen, False
    for wanted in (Conv.MUT_TENSOR, Conv.TENSOR):
        p = next((p for p in params if p.conv == wanted), None)
        if p is not None:
            return p.name, False
    device = next((p for p in params if p.cpp_type.endswith("optional<at::Device>")), None)
    if device is not None:
        return device.name, True
    return None, False


def _cpu_plan(r: ResolvedOp, custom_fallback: bool):
    sig = r.sig
    kind = {"out": "out", "inplace": "inplace"}.get(sig.kind.name, "functional")
    if custom_fallback:
        # The hand-written fallback takes the wrapper's own parameters.
        callee, receiver = "custom_fallback_" + wrapper_name(r.op), None
    else:
        callee, receiver = cpu_reference(sig, r.aten.variants)
    cpu_args = []
    for p in sig.params:
        if not p.is_tensor_like:
            cpu_args.append(CpuArg(p.name, "plain"))
        elif kind == "out" and p.mutable and p.conv == Conv.MUT_TENSOR:
            cpu_args.append(CpuArg(p.name, "out"))
        else:
            cpu_args.append(CpuArg(p.name, "clone"))
    copy_back = []
    compare = []
    if kind == "functional":
        single = len(sig.returns) == 1
        for i, ret in enumerate(sig.returns):
            cpu = "result_cpu" if single else f"std::get<{i}>(result_cpu)"
            device = "result_device" if single else f"std::get<{i}>(result_device)"
            copy_back.append((ret.name, cpu, "list" if ret.is_tensor_list else "tensor" if ret.is_tensor else "value"))
            compare.append((ret.name, cpu, device))
    for p in sig.params:
        if p.mutable:
            copy_back.append((p.name, f"{p.name}_cpu", "list" if p.conv == Conv.TENSOR_LIST else "tensor"))
            compare.append((p.name, f"{p.name}_cpu", p.name))
    return kind, callee, receiver, tuple(cpu_args), tuple(copy_back), tuple(compare)


def _macro(autocompare: bool, custom_fallback: bool) -> str:
    return (f"{'WITH' if custom_fallback else 'NO'}_CUSTOMFALLBACK_"
            f"{'WITH' if autocompare else 'NO'}_AUTOCOMPARE_REGISTER")


_PLACEHOLDER = re.compile(r"\$\{PREFERRED_MEMORY_FORMAT_PLACEHOLDER(_3D)?:-([^}]*)\}")


def _memory_formats(r: ResolvedOp, text: str) -> str:
    """Replace the memory-format placeholders in custom code (non-greedy: a
    later '}' on the same line is left alone)."""
    if not text or "PREFERRED_MEMORY_FORMAT_PLACEHOLDER" not in text:
        return text
    kind = r.memory_format.value if r.memory_format is not None else None
    macros = environment().get_template("kernels/memory_format.j2").module

    def replace(m: re.Match) -> str:
        if kind is None:
            return m.group(2)
        return str(macros.memory_format(kind, bool(m.group(1)))).strip()

    return _PLACEHOLDER.sub(replace, text)


def _autograd_plan(r: ResolvedOp, wrapper: str, ops: dict[str, aten.AtenOp]) -> AutogradPlan | None:
    ag = r.entry.autograd
    if ag is None:
        return None
    sig = r.sig
    backward = ops[ag.backward.value]
    backward_sig = signature_of(backward)
    forward_op = ag.forward.value if ag.forward is not None else r.op
    params = ", ".join(f"{p.cpp_type} {p.name}" for p in sig.params)
    return AutogradPlan(
        cls=autograd_class_name(r.op),
        forward_decl_params=params,
        param_names=tuple(p.name for p in sig.params),
        forward_args=ag.forward_args or tuple(p.name for p in sig.params),
        forward_wrapper=wrapper_name(forward_op),
        forward_code=ag.forward_code,
        saved=ag.saved,
        backward_wrapper=wrapper_name(backward.name),
        backward_schema=backward.schema,
        backward_args=tuple(p.name for p in backward_sig.params),
        grad_code=ag.grad_code,
        return_code=ag.return_code,
        return_type=sig.return_type,
        wrapper_decl=sig.decl(wrapper + "_wrapper"),
        wrapper_return=ag.wrapper_return,
    )


def plan_op(r: ResolvedOp, ops: dict[str, aten.AtenOp]) -> WrapperPlan:
    sig = r.sig
    entry = r.entry
    params = {p.name: p for p in sig.params}
    fresh = {ret.name for ret in sig.fresh_returns if ret.is_tensor}
    ins = dict(entry.ins)
    outs = set(entry.outs)
    derived = derived_names(sig)
    args, used = [], []

    def use(plan: CallArgPlan) -> None:
        used.append(plan)

    for arg in entry.call.args:
        if arg.text == "ctx":
            args.append(CallArgPlan("ctx", "ctx"))
        elif arg.is_name and arg.text in fresh:
            plan = CallArgPlan("fresh", arg.text)
            args.append(plan)
            use(plan)
        elif arg.is_name and arg.text in ins:
            plan = CallArgPlan("ins", arg.text, ins[arg.text])
            args.append(plan)
            use(plan)
        elif arg.is_name and arg.text in entry.sizes:
            args.append(CallArgPlan("sizes", arg.text))
        elif arg.is_name and arg.text in outs:
            plan = CallArgPlan("outs", arg.text)
            args.append(plan)
            use(plan)
        elif not arg.is_name or arg.text not in params:
            args.append(CallArgPlan("expr", arg.text))
            # An expression may use the converted form of an argument.
            for name in referenced_names(arg.text):
                base = derived.get(name) if name not in entry.locals else None
                if base is None:
                    continue
                if base in fresh:
                    use(CallArgPlan("fresh", base))
                elif params[base].conv in _LOCAL_CONVS:
                    use(CallArgPlan(params[base].conv.value, base))
        elif params[arg.text].conv in _LOCAL_CONVS:
            plan = CallArgPlan(params[arg.text].conv.value, arg.text)
            args.append(plan)
            use(plan)
        else:
            args.append(CallArgPlan(params[arg.text].conv.value, arg.text))
    # Handles the custom code may use by name (before_call/before_return), e.g. bias_sizesDiopiSize.
    hook_text = entry.hook("before_call") + entry.hook("before_return")
    for name in referenced_names(hook_text) if hook_text else ():
        base = derived.get(name) if name not in entry.locals else None
        if base is not None and base in params and params[base].conv in _LOCAL_CONVS:
            use(CallArgPlan(params[base].conv.value, base))
        elif base is not None and base in fresh:
            use(CallArgPlan("fresh", base))
    for name in entry.sizes:
        use(CallArgPlan("sizes", name))
    for name, optional in entry.ins:
        use(CallArgPlan("ins", name, optional))
    for name in entry.outs:
        use(CallArgPlan("outs", name))
    dummy = entry.dummy_call is not None and entry.dummy_call.value
    conversions, seen = [], set()
    if not dummy:
        for plan in used:
            if plan.name not in seen:
                seen.add(plan.name)
                conversions.append(plan)
    skip = set(entry.no_device_check)
    tensors = [p.name for p in sig.params if p.conv in (Conv.TENSOR, Conv.OPT_TENSOR, Conv.MUT_TENSOR)]
    tensors += [n for n, _ in entry.ins] + list(entry.outs)
    tensors += [ret.name for ret in sig.fresh_returns if ret.is_tensor]
    checks = tuple(t for t in tensors if t not in skip)
    guard, guard_optional = _guard(r)
    custom_fallback = entry.custom_fallback is not None and entry.custom_fallback.value
    kind, callee, receiver, cpu_args, copy_back, compare = _cpu_plan(r, custom_fallback)
    wrapper = wrapper_name(r.op)
    register = r.on("register")
    helper = aten.lookup(r.op) is None
    autocompare = r.on("autocompare") and register and not helper
    autograd = _autograd_plan(r, wrapper, ops)
    target = wrapper + "_wrapper" if autograd is not None else wrapper
    inputs_to_check = tuple(p.name for p in sig.params if p.conv == Conv.TENSOR)
    optional_tensors = [p.name for p in sig.params if p.conv == Conv.OPT_TENSOR]
    optional_tensors += [n for n, opt in entry.ins if opt]
    return WrapperPlan(
        op=r.op, schema=r.aten.schema, wrapper=wrapper,
        decl=sig.decl(wrapper), twin_decl=sig.decl(target + "_autocompare"),
        returns_void=sig.return_type == "void",
        return_names=tuple(ret.name for ret in sig.returns),
        guard=guard, guard_optional_device=guard_optional,
        diopi=entry.call.function, args=tuple(args), conversions=tuple(conversions),
        allocs=tuple((ret.name, entry.alloc_for(ret.name), ret.is_tensor)
                     for ret in sig.fresh_returns if entry.alloc_for(ret.name) is not None),
        device_checks=checks,
        optional_tensors=tuple(optional_tensors),
        dumped=tuple(p.name for p in sig.params),
        print_call_info=r.on("print_call_info"), print_op_args=r.on("print_op_args"),
        profiler=r.on("profiler"), device_check=r.on("device_check"), sync=r.on("sync_if_enabled"),
        fallback=r.on("fallback_to_cpu") and not dummy and not helper, autocompare=autocompare,
        cpu_args=cpu_args, cpu_callee=callee, cpu_receiver=receiver, cpu_kind=kind,
        copy_back=copy_back, compare=compare,
        inputs_to_check=inputs_to_check, macro=_macro(autocompare, custom_fallback),
        code_beginning=_memory_formats(r, entry.hook("beginning")),
        code_before_call=_memory_formats(r, entry.hook("before_call")),
        code_before_return=_memory_formats(r, entry.hook("before_return")),
        dummy_call=dummy, register=register, custom_fallback=custom_fallback,
        force_fallback=entry.force_fallback is not None and entry.force_fallback.value,
        registered_target=target, autograd=autograd,
    )


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


def shard_paths(shards: int) -> list[str]:
    """AutoGenedKernels.cpp for one shard (DIPU's name), else AutoGenedKernels_<i>.cpp."""
    if shards <= 1:
        return [KERNELS_PATH]
    return [f"{KERNELS_DIR}/AutoGenedKernels_{i}.cpp" for i in range(shards)]


_WRAPPER_NAME = re.compile(r"\bdipu_\w+")


def _called_wrappers(p: WrapperPlan) -> set[str]:
    """Wrappers an op's code calls: its autograd forward/backward, and any
    dipu_<op> named in its custom code."""
    texts = [p.code_beginning, p.code_before_call, p.code_before_return]
    names = set()
    if p.autograd is not None:
        a = p.autograd
        names |= {a.forward_wrapper, a.backward_wrapper}
        texts += [a.forward_code, a.grad_code, a.return_code, a.wrapper_return]
    for text in texts:
        names.update(_WRAPPER_NAME.findall(text or ""))
    return names - {p.wrapper}


def render_kernels(rv: ResolvedVendor, source: str) -> dict[str, str]:
    """{path: text}: one translation unit, or *rv.shards* of them. A shard
    declares the wrappers its code calls, so it compiles on its own and
    changes only when one of its own ops (or a callee's signature) does."""
    ops = {r.op: r.aten for r in rv.ops}
    plans = [plan_op(r, ops) for r in rv.enabled_ops]
    count = int(rv.shards.value)
    common = dict(vendor=rv.vendor.identity, source=source, torch_version=rv.torch_version)
    if count <= 1:
        return {KERNELS_PATH: render("kernels/AutoGenedKernels.cpp.j2", plans=plans, shard=None, **common)}
    by_wrapper = {p.wrapper: p for p in plans}
    files = {}
    for i, path in enumerate(shard_paths(count)):
        mine = [p for p in plans if shard_of(p.op, count) == i]
        called = set().union(*(_called_wrappers(p) for p in mine)) if mine else set()
        declared = [p for p in plans if p.wrapper in called and p.wrapper in by_wrapper]
        files[path] = render("kernels/AutoGenedKernels.cpp.j2", plans=mine,
                             shard={"index": i, "count": count, "declared": declared}, **common)
    return files
