"""AutoGenedKernels.cpp: the DIOPI wrapper for every enabled op, its
autocompare twin, and the DIPU_LIBRARY_IMPL registrations."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.resolve import ResolvedOp, ResolvedVendor
from deeplink_gen.signature import Conv, Param, cpu_reference, wrapper_name
from deeplink_gen.templating import render

KERNELS_PATH = "dipu/torch_dipu/csrc_dipu/aten/ops/AutoGenedKernels.cpp"

# Conversions that need a local variable before the call.
_LOCAL_CONVS = {
    Conv.TENSOR, Conv.OPT_TENSOR, Conv.MUT_TENSOR, Conv.SCALAR, Conv.OPT_SCALAR,
    Conv.INT_LIST, Conv.SYMINT_LIST, Conv.OPT_INT_LIST, Conv.GENERATOR,
}


@dataclass(frozen=True)
class CallArgPlan:
    conv: str        # a Conv value, "fresh" for an allocated return, or "expr"
    name: str        # the schema name, or the C++ text for "expr"


@dataclass(frozen=True)
class CpuArg:
    name: str
    kind: str        # "clone", "out" (clone keeping aliasing with inputs), "plain"


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
    allocs: tuple[tuple[str, str], ...]
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
    copy_back: tuple[tuple[str, str, bool], ...]   # (device name, cpu expr, is list)
    compare: tuple[tuple[str, str, str], ...]      # (label, cpu expr, device expr)
    inputs_to_check: tuple[str, ...]
    macro: str


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


def _cpu_plan(r: ResolvedOp):
    sig = r.sig
    kind = {"out": "out", "inplace": "inplace"}.get(sig.kind.name, "functional")
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
            if ret.is_tensor:
                copy_back.append((ret.name, cpu, False))
            compare.append((ret.name, cpu, device))
    for p in sig.params:
        if p.mutable:
            copy_back.append((p.name, f"{p.name}_cpu", p.conv == Conv.TENSOR_LIST))
            compare.append((p.name, f"{p.name}_cpu", p.name))
    return kind, callee, receiver, tuple(cpu_args), tuple(copy_back), tuple(compare)


def _macro(autocompare: bool) -> str:
    return f"NO_CUSTOMFALLBACK_{'WITH' if autocompare else 'NO'}_AUTOCOMPARE_REGISTER"


def plan_op(r: ResolvedOp) -> WrapperPlan:
    sig = r.sig
    entry = r.entry
    params = {p.name: p for p in sig.params}
    fresh = {ret.name for ret in sig.fresh_returns}
    args, used = [], []
    for arg in entry.call.args:
        if arg.text == "ctx":
            args.append(CallArgPlan("ctx", "ctx"))
        elif arg.is_name and arg.text in fresh:
            args.append(CallArgPlan("fresh", arg.text))
            used.append(CallArgPlan("fresh", arg.text))
        elif not arg.is_name or arg.text not in params:
            args.append(CallArgPlan("expr", arg.text))
        elif params[arg.text].conv in _LOCAL_CONVS:
            plan = CallArgPlan(params[arg.text].conv.value, arg.text)
            args.append(plan)
            used.append(plan)
        else:
            args.append(CallArgPlan(params[arg.text].conv.value, arg.text))
    conversions, seen = [], set()
    for plan in used:
        if plan.name not in seen:
            seen.add(plan.name)
            conversions.append(plan)
    tensors = [p.name for p in sig.params if p.conv in (Conv.TENSOR, Conv.OPT_TENSOR, Conv.MUT_TENSOR)]
    checks = tuple(tensors + [ret.name for ret in sig.fresh_returns if ret.is_tensor])
    guard, guard_optional = _guard(r)
    kind, callee, receiver, cpu_args, copy_back, compare = _cpu_plan(r)
    wrapper = wrapper_name(r.op)
    autocompare = r.on("autocompare")
    inputs_to_check = tuple(p.name for p in sig.params if p.conv == Conv.TENSOR)
    return WrapperPlan(
        op=r.op, schema=r.aten.schema, wrapper=wrapper,
        decl=sig.decl(wrapper), twin_decl=sig.decl(wrapper + "_autocompare"),
        returns_void=sig.return_type == "void",
        return_names=tuple(ret.name for ret in sig.returns),
        guard=guard, guard_optional_device=guard_optional,
        diopi=entry.call.function, args=tuple(args), conversions=tuple(conversions),
        allocs=tuple((ret.name, entry.alloc_for(ret.name)) for ret in sig.fresh_returns if ret.is_tensor),
        device_checks=checks,
        optional_tensors=tuple(p.name for p in sig.params if p.conv == Conv.OPT_TENSOR),
        dumped=tuple(p.name for p in sig.params),
        print_call_info=r.on("print_call_info"), print_op_args=r.on("print_op_args"),
        profiler=r.on("profiler"), device_check=r.on("device_check"), sync=r.on("sync_if_enabled"),
        fallback=r.on("fallback_to_cpu"), autocompare=autocompare,
        cpu_args=cpu_args, cpu_callee=callee, cpu_receiver=receiver, cpu_kind=kind,
        copy_back=copy_back, compare=compare,
        inputs_to_check=inputs_to_check, macro=_macro(autocompare),
    )


def render_kernels(rv: ResolvedVendor, source: str) -> str:
    plans = [plan_op(r) for r in rv.enabled_ops]
    return render("kernels/AutoGenedKernels.cpp.j2", plans=plans, vendor=rv.vendor.identity,
                  source=source, torch_version=rv.torch_version)
