"""Semantic checks of a parsed runtime section: every strong DIPU symbol is
defined, every checker named is declared, every template names only
parameters the function has, and each pattern fits its function."""

from __future__ import annotations

from deeplink_gen.errors import Diagnostics, did_you_mean, key_path
from deeplink_gen.runtime.interface import (
    COMM_FUNCTIONS, DEVICE_FUNCTIONS, MEMCPY_KIND, STRUCT_FIELDS, SUCCESS_RETURN, Function,
)
from deeplink_gen.runtime.model import Impl, RuntimeSpec
from deeplink_gen.runtime.template import C_TYPE, IDENT, QUALIFIED, problems

# Which functions each pattern applies to, and the template keys it needs.
PATTERN_RULES = {
    "stream_priority": (("createStream",), ("plain",)),
    "set_device": (("destroyStreamOnDevice", "resetDevice"), ("calls",)),
    "not_null": (("streamNotNull",), ()),
    "query": (("isStreamEmpty", "getEventStatus"), ("calls",)),
    "query_status": (("isStreamEmpty", "getEventStatus"), ("calls",)),
    "malloc": (("mallocDevice",), ("calls",)),
    "peer_copy": (("memCopyD2D", "memCopyD2DAsync"), ("same_device",)),
    "struct": (("getDeviceProperties", "getDeviceStatus"), ("calls", "fields")),
    "version": (("getDriverVersion", "getRuntimeVersion"), ("calls",)),
}
PATTERN_NAMES = {"version": ("major", "minor", "patch"), "query_status": ("status",)}


def provided_names(fn: Function, spec: RuntimeSpec) -> set[str]:
    names = set(fn.param_names)
    if fn.key in MEMCPY_KIND:
        names.add("kind")
    if any(p.type == "at::ScalarType" for p in fn.params):
        names.add("dtype")
    if any(p.type == "const ReduceOp&" for p in fn.params):
        names.add("op")
    return names


def _where(impl: Impl) -> tuple:
    section = "device" if impl.function.section == "device" else "comm"
    return ("runtime", section, "functions", impl.function.key)


def check_runtime(spec: RuntimeSpec, diags: Diagnostics) -> None:
    checker_names = [c.name for c in spec.checkers]

    def check_ref(name, loc, path):
        if name is not None and spec.checker(name) is None:
            diags.add(loc, key_path(path), f"checker '{name}' is not defined under runtime.checkers"
                      f"{did_you_mean(name, checker_names)}")

    check_ref(spec.device_checker, spec.device_checker_loc, ("runtime", "device", "checker"))
    check_ref(spec.comm.checker, spec.comm.checker_loc, ("runtime", "comm", "checker"))
    check_ref(spec.diopi_test.checker, spec.diopi_test.loc, ("runtime", "diopi_test", "checker"))

    for section, functions, impls, loc in (
        ("device", DEVICE_FUNCTIONS, spec.device_impls, spec.loc),
        ("comm", COMM_FUNCTIONS, spec.comm.impls, spec.comm.loc),
    ):
        have = {i.function.key for i in impls}
        for fn in functions:
            if fn.strong and fn.key not in have:
                diags.add(loc, key_path(("runtime", section, "functions")),
                          f"strong DIPU function '{fn.key}' ({fn.signature()}) is not defined; "
                          f"write '{fn.key}: unsupported' to stub it")
    for c in spec.checkers:
        if c.message_call is not None:
            for msg in problems(c.message_call, set()):
                diags.add(c.message_call.loc, key_path(("runtime", "checkers", c.name, "message_call")), msg)
    for impl in spec.device_impls + spec.comm.impls:
        _check_impl(spec, impl, diags, check_ref)
    kinds = dict(spec.memcpy_kinds)
    for impl in spec.device_impls:
        direction = MEMCPY_KIND.get(impl.function.key)
        if direction and direction not in kinds and any("kind" in t.placeholders() for t in impl.all_templates()):
            diags.add(impl.loc, key_path(_where(impl)),
                      f"uses {{kind}} but runtime.device.memcpy_kinds has no {direction}")
    for t in spec.diopi_test.init + spec.diopi_test.finalize:
        for msg in problems(t, set()):
            diags.add(t.loc, "runtime.diopi_test", msg)
    from deeplink_gen.runtime.diopitest import SOURCES
    for name, t in spec.diopi_test.overrides:
        fn_key = SOURCES[name]
        fn = next(f for f in DEVICE_FUNCTIONS if f.key == fn_key)
        for msg in problems(t, provided_names(fn, spec)):
            diags.add(t.loc, key_path(("runtime", "diopi_test", "functions", name)), msg)


def _check_impl(spec: RuntimeSpec, impl: Impl, diags: Diagnostics, check_ref) -> None:
    fn = impl.function
    where = _where(impl)
    if impl.checker_loc is not None:
        check_ref(impl.checker, impl.checker_loc, where + ("checker",))
    allowed = provided_names(fn, spec)
    for name, ctype in impl.locals:
        if not IDENT.match(name):
            diags.add(impl.loc, key_path(where + ("locals", name)), f"'{name}' is not a C identifier")
        elif name in allowed:
            diags.add(impl.loc, key_path(where + ("locals", name)), f"local '{name}' shadows a parameter")
        if not C_TYPE.match(ctype):
            diags.add(impl.loc, key_path(where + ("locals", name)), f"'{ctype}' is not a C type name")
        allowed.add(name)
    if impl.pattern:
        allowed |= set(PATTERN_NAMES.get(impl.pattern, ()))
    for t in impl.all_templates():
        for msg in problems(t, allowed):
            diags.add(t.loc, key_path(where), msg)
    if impl.kind == "call" and impl.ret is None and fn.returns not in SUCCESS_RETURN:
        diags.add(impl.loc, key_path(where),
                  f"{fn.name} returns {fn.returns}: add return: <expression> (or use a pattern)")
    if impl.kind != "pattern":
        return
    fits, needs = PATTERN_RULES[impl.pattern]
    if fn.key not in fits:
        diags.add(impl.loc, key_path(where + ("pattern",)),
                  f"pattern '{impl.pattern}' applies to {', '.join(fits)}, not {fn.key}")
        return
    for need in needs:
        present = bool(impl.calls) if need == "calls" else bool(impl.fields) if need == "fields" \
            else impl.template(need) is not None
        if not present:
            key = "call" if need == "calls" else need
            diags.add(impl.loc, key_path(where), f"pattern '{impl.pattern}' needs '{key}'")
    checker = spec.checker(impl.checker)
    if impl.pattern in ("query", "malloc"):
        if checker is None:
            diags.add(impl.loc, key_path(where), f"pattern '{impl.pattern}' needs a checker")
        elif impl.pattern == "query" and not checker.not_ready:
            diags.add(checker.loc, key_path(("runtime", "checkers", checker.name)),
                      f"pattern 'query' (in {fn.key}) needs not_ready codes on this checker")
        elif impl.pattern == "malloc" and not checker.out_of_memory:
            diags.add(checker.loc, key_path(("runtime", "checkers", checker.name)),
                      f"pattern 'malloc' (in {fn.key}) needs out_of_memory on this checker")
    if impl.pattern == "query_status":
        if not impl.status_type or not C_TYPE.match(impl.status_type):
            diags.add(impl.loc, key_path(where + ("status_type",)), "query_status needs status_type: a C type name")
        if not impl.names:
            diags.add(impl.loc, key_path(where), "query_status needs ready: [status values meaning done]")
    if impl.pattern == "struct":
        target = fn.returns
        for name, t in impl.fields:
            if name not in STRUCT_FIELDS[target]:
                diags.add(t.loc, key_path(where + ("fields", name)),
                          f"{target} has no field '{name}'{did_you_mean(name, STRUCT_FIELDS[target])}"
                          f" (fields: {', '.join(STRUCT_FIELDS[target])})")
    for name in impl.names:
        if not QUALIFIED.match(name):
            diags.add(impl.loc, key_path(where), f"'{name}' is not a C identifier")
