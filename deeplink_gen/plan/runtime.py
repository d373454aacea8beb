"""The runtime plan: for each DIPU function a vendor implements, its call
templates expanded with the function's names, the checker of each call, and
which parameters the body uses. Templates under templates/runtime/ spell out
the bodies; templates/diopi_test/ reuses the same calls."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.cpptext import IDENT
from deeplink_gen.interfaces.dipu import DIOPI_TEST_SOURCES, FUNCTIONS, MEMCPY_KIND, PATTERN_NAMES, SUCCESS_RETURN, placeholders
from deeplink_gen.model import CallTemplate, Checker, DipuFunction, Impl, RuntimeSpec

# Parameters a pattern's own body uses (besides what its templates name).
PATTERN_PARAMS = {
    "set_device": ("devId",), "not_null": ("stream",), "malloc": ("throwExcepion",),
    "peer_copy": ("dstDevId", "srcDevId"), "version": ("version",),
}


@dataclass(frozen=True)
class Call:
    text: str                  # the expanded C++ call
    checker: Checker | None


@dataclass(frozen=True)
class FunctionPlan:
    fn: DipuFunction
    impl: Impl
    checker: Checker | None
    calls: tuple[Call, ...] = ()
    locals: tuple[tuple[str, str], ...] = ()
    ret: str | None = None
    guard: str | None = None
    t: dict[str, Call] | None = None               # pattern templates: plain, with_priority, peer, ...
    fields: tuple[tuple[str, str], ...] = ()
    sets: tuple[tuple[str, str], ...] = ()         # struct pattern: local.member = value, before the calls
    names: tuple[str, ...] = ()
    success: str | None = None
    unused: frozenset[str] = frozenset()           # parameters the body never names


def expansions(fn: DipuFunction, spec: RuntimeSpec, impl: Impl | None) -> dict[str, str]:
    values = {name: name for name in placeholders(fn)}
    if fn.key in MEMCPY_KIND:
        values["kind"] = dict(spec.memcpy_kinds).get(MEMCPY_KIND[fn.key], "")
    for p in fn.params:
        if p.type == "at::ScalarType":
            values["dtype"] = f"toVendorDataType({p.name})"
        if p.type == "const ReduceOp&":
            values["op"] = f"toVendorReduceOp({p.name})"
    if impl is not None:
        for name, _ in impl.locals:
            values[name] = name
        for names in PATTERN_NAMES.values():
            for name in names:
                values.setdefault(name, name)
    return values


def make_call(t: CallTemplate, values: dict[str, str], checker: Checker | None) -> Call:
    return Call(t.expand(values), checker)


def _used(impl: Impl, texts: list[str]) -> set[str]:
    if impl.kind == "custom":
        texts = [impl.custom or ""]
    elif impl.kind == "pattern":
        texts = texts + list(impl.names) + [impl.status_type or ""]
    elif impl.kind != "call":
        return set()
    used = {m.group() for text in texts for m in IDENT.finditer(text)}
    used |= set(PATTERN_PARAMS.get(impl.pattern or "", ()))
    if impl.pattern == "stream_priority" and impl.template("with_priority") is not None:
        used.add("prior")
    return used


def plan_function(spec: RuntimeSpec, impl: Impl) -> FunctionPlan:
    fn = impl.function
    checker = spec.checker(impl.checker)
    values = expansions(fn, spec, impl)
    calls = tuple(make_call(t, values, checker) for t in impl.calls)
    t = {k: make_call(tpl, values, checker) for k, tpl in impl.templates}
    ret = impl.ret.expand(values) if impl.ret else None
    guard = impl.guard.expand(values) if impl.guard else None
    fields = tuple((k, tpl.expand(values)) for k, tpl in impl.fields)
    sets = tuple((k, tpl.expand(values)) for k, tpl in impl.sets)
    texts = [c.text for c in calls] + [c.text for c in t.values()] + [e for _, e in fields + sets]
    texts += [x for x in (ret, guard) if x]
    used = _used(impl, texts)
    return FunctionPlan(fn, impl, checker, calls, impl.locals, ret, guard, t, fields, sets, impl.names,
                        SUCCESS_RETURN.get(fn.returns),
                        frozenset(p.name for p in fn.params if p.name not in used))


def plan_runtime(spec: RuntimeSpec) -> tuple[tuple[FunctionPlan, ...], tuple[FunctionPlan, ...]]:
    """(device function plans, communicator function plans)."""
    return (tuple(plan_function(spec, i) for i in spec.device_impls),
            tuple(plan_function(spec, i) for i in spec.comm.impls))


# ---------------------------------------------------------------- diopi_test

@dataclass(frozen=True)
class TestEntry:
    """One extern "C" function of diopi_test's device runtime."""

    name: str
    available: bool
    why: str
    calls: tuple[Call, ...]
    locals: tuple[tuple[str, str], ...]


def _test_entry(spec: RuntimeSpec, name: str) -> TestEntry:
    fn = FUNCTIONS[DIOPI_TEST_SOURCES[name]]
    override = dict(spec.diopi_test.overrides).get(name)
    impl = spec.impl(fn.key)
    values = expansions(fn, spec, impl)
    if override is not None:
        return TestEntry(name, True, "", (make_call(override, values, spec.checker(spec.diopi_test.checker)),), ())
    if impl is None:
        return TestEntry(name, False, f"{fn.key} is not described", (), ())
    checker = spec.checker(impl.checker)
    if impl.kind == "noop":
        return TestEntry(name, True, "", (), ())
    if impl.kind == "call" and not impl.guard and not impl.presync:
        return TestEntry(name, True, "", tuple(make_call(t, values, checker) for t in impl.calls), impl.locals)
    source = {"stream_priority": impl.template("plain"), "peer_copy": impl.template("same_device"),
              "malloc": impl.calls[0] if impl.calls else None}.get(impl.pattern or "")
    if source is not None:
        return TestEntry(name, True, "", (make_call(source, values, checker),), impl.locals)
    return TestEntry(name, False, f"{fn.key} is {impl.kind}{' ' + impl.pattern if impl.pattern else ''}; "
                     f"describe it under runtime.diopi_test.functions.{name}", (), ())


def _lifecycle(spec: RuntimeSpec, name: str, explicit: tuple[CallTemplate, ...], impl: Impl | None) -> TestEntry:
    if explicit:
        checker = spec.checker(spec.diopi_test.checker)
        return TestEntry(name, True, "", tuple(make_call(t, {}, checker) for t in explicit), ())
    if impl is not None and impl.kind == "call":
        values = expansions(impl.function, spec, impl)
        return TestEntry(name, True, "", tuple(make_call(t, values, spec.checker(impl.checker)) for t in impl.calls),
                         impl.locals)
    return TestEntry(name, True, "", (), ())


def _generator_state(spec: RuntimeSpec) -> TestEntry:
    """buildGeneratorState: the initial state of a diopi_test generator, which must
    have the layout the vendor's DIPU generator keeps. Only the seed_offset
    generator's layout is known here; a custom generator's is the vendor's code."""
    if spec.generator.kind == "seed_offset":
        return TestEntry("buildGeneratorState", True, "", (), ())
    return TestEntry("buildGeneratorState", False,
                     "runtime.generator is custom, so the layout of its state is the vendor's own code", (), ())


@dataclass(frozen=True)
class DiopiTestPlan:
    entries: dict[str, TestEntry]
    init: TestEntry
    finalize: TestEntry
    generator_state: TestEntry
    checkers: tuple[Checker, ...]           # the checkers the calls use, by name


def plan_diopi_test(spec: RuntimeSpec) -> DiopiTestPlan:
    entries = {name: _test_entry(spec, name) for name in DIOPI_TEST_SOURCES}
    init = _lifecycle(spec, "initLibrary", spec.diopi_test.init, spec.impl("initializeVendor"))
    fin = _lifecycle(spec, "finalizeLibrary", spec.diopi_test.finalize, spec.impl("finalizeVendor"))
    used = {c.checker.name: c.checker for e in list(entries.values()) + [init, fin] for c in e.calls if c.checker}
    return DiopiTestPlan(entries, init, fin, _generator_state(spec), tuple(used[k] for k in sorted(used)))
