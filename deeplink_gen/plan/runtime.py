"""The runtime plan: for each DIPU function a vendor implements, its call
templates expanded with the function's names, the checker of each call, and
which parameters the body uses. What a pattern's body declares and names, and
which of its calls diopi_test reuses, come from its row of model/patterns.py.
Templates under templates/runtime/ spell out the bodies, one block per kind
and pattern; templates/diopi_test/ reuses the same calls."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.cpptext import IDENT
from deeplink_gen.interfaces.dipu import DIOPI_TEST_SOURCES, FUNCTIONS, MEMCPY_KIND, SUCCESS_RETURN, placeholders
from deeplink_gen.model import BuildSpec, CallTemplate, Checker, DipuFunction, Impl, RuntimeSpec
from deeplink_gen.model.patterns import PATTERNS, VERSION_FIELDS, Part, Pattern
from deeplink_gen.model.runtime import GeneratorKind, ImplKind


@dataclass(frozen=True)
class Call:
    text: str                  # the expanded C++ call
    checker: Checker | None


@dataclass(frozen=True)
class ImplPlan:
    """One DIPU function's body: its kind and pattern choose the block of
    templates/runtime/function.j2 that writes it, from the expanded parts."""

    fn: DipuFunction
    impl: Impl
    calls: tuple[Call, ...] = ()
    locals: tuple[tuple[str, str], ...] = ()
    ret: str | None = None
    guard: str | None = None
    parts: tuple[tuple[Part, Call], ...] = ()      # pattern templates: plain, with_priority, peer, ...
    fields: tuple[tuple[str, str], ...] = ()       # struct: as written; version: every field, "0" if not written
    sets: tuple[tuple[str, str], ...] = ()         # struct pattern: local.member = value, before the calls
    success: str | None = None
    unused: frozenset[str] = frozenset()           # parameters the body never names

    @property
    def kind(self) -> ImplKind:
        return self.impl.kind

    @property
    def pattern(self) -> Pattern | None:
        return self.impl.pattern

    def part(self, part: Part) -> Call | None:
        return dict(self.parts).get(part)


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
        for rule in PATTERNS.values():
            for name in rule.declares:
                values.setdefault(name, name)
    return values


def make_call(t: CallTemplate, values: dict[str, str], checker: Checker | None) -> Call:
    return Call(t.expand(values), checker)


def _used(impl: Impl, texts: list[str]) -> set[str]:
    if impl.kind is ImplKind.CUSTOM:
        texts = [impl.custom.value if impl.custom is not None else ""]
    elif impl.kind is ImplKind.PATTERN:
        texts = texts + list(impl.sentinels + impl.ready) + [impl.status_type or ""]
    elif impl.kind is not ImplKind.CALL:
        return set()
    used = {m.group() for text in texts for m in IDENT.finditer(text)}
    if impl.pattern is not None:
        used |= {u.param for u in PATTERNS[impl.pattern].uses if u.when is None or impl.template(u.when) is not None}
    return used


def plan_impl(spec: RuntimeSpec, impl: Impl) -> ImplPlan:
    fn = impl.function
    checker = spec.checker_of(impl)
    values = expansions(fn, spec, impl)
    calls = tuple(make_call(t, values, checker) for t in impl.calls)
    parts = tuple((part, make_call(tpl, values, checker)) for part, tpl in impl.templates)
    ret = impl.ret.expand(values) if impl.ret else None
    guard = impl.guard.expand(values) if impl.guard else None
    fields = tuple((k, tpl.expand(values)) for k, tpl in impl.fields)
    sets = tuple((k, tpl.expand(values)) for k, tpl in impl.sets)
    texts = [c.text for c in calls] + [c.text for _, c in parts] + [e for _, e in fields + sets]
    texts += [x for x in (ret, guard) if x]
    used = _used(impl, texts)
    if impl.pattern is Pattern.VERSION:
        given = dict(fields)
        fields = tuple((name, given.get(name, "0")) for name in VERSION_FIELDS)
    return ImplPlan(fn, impl, calls, impl.locals, ret, guard, parts, fields, sets, SUCCESS_RETURN.get(fn.returns),
                    frozenset(p.name for p in fn.params if p.name not in used))


def plan_runtime(spec: RuntimeSpec) -> tuple[tuple[ImplPlan, ...], tuple[ImplPlan, ...]]:
    """(device function plans, communicator function plans)."""
    return (tuple(plan_impl(spec, i) for i in spec.device_impls),
            tuple(plan_impl(spec, i) for i in spec.comm.impls))


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
        return TestEntry(name, True, "", (make_call(override, values, spec.test_checker()),), ())
    if impl is None:
        return TestEntry(name, False, f"{fn.key} is not described", (), ())
    checker = spec.checker_of(impl)
    if impl.kind is ImplKind.NOOP:
        return TestEntry(name, True, "", (), ())
    if impl.kind is ImplKind.CALL and not impl.guard and not impl.presync:
        return TestEntry(name, True, "", tuple(make_call(t, values, checker) for t in impl.calls), impl.locals)
    source = _reused(impl)
    if source is not None:
        return TestEntry(name, True, "", (make_call(source, values, checker),), impl.locals)
    return TestEntry(name, False, f"{fn.key} is {impl.kind.value}{' ' + impl.pattern.value if impl.pattern else ''}; "
                     f"describe it under runtime.diopi_test.functions.{name}", (), ())


def _reused(impl: Impl) -> CallTemplate | None:
    """The call of *impl*'s pattern that diopi_test reuses, if it has one."""
    part = PATTERNS[impl.pattern].diopi_test if impl.pattern is not None else None
    if part is Part.CALL:
        return impl.calls[0] if impl.calls else None
    return impl.template(part) if part is not None else None


def _lifecycle(spec: RuntimeSpec, name: str, explicit: tuple[CallTemplate, ...], impl: Impl | None) -> TestEntry:
    if explicit:
        checker = spec.test_checker()
        return TestEntry(name, True, "", tuple(make_call(t, {}, checker) for t in explicit), ())
    if impl is not None and impl.kind is ImplKind.CALL:
        values = expansions(impl.function, spec, impl)
        return TestEntry(name, True, "", tuple(make_call(t, values, spec.checker_of(impl)) for t in impl.calls),
                         impl.locals)
    return TestEntry(name, True, "", (), ())


def _generator_state(spec: RuntimeSpec) -> TestEntry:
    """buildGeneratorState: the initial state of a diopi_test generator, which must
    have the layout the vendor's DIPU generator keeps. Only the seed_offset
    generator's layout is known here; a custom generator's is the vendor's code."""
    if spec.generator.kind is GeneratorKind.SEED_OFFSET:
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


@dataclass(frozen=True)
class TestSdk:
    """Where the SDK libraries conform_test.cpp calls are, for diopi_test's runtime build: DIOPI's
    vendor CMake finds the SDK for its own library, but not always on the link path of a sibling."""

    name: str
    root_vars: tuple[str, ...]        # CMake or environment variables naming an SDK root
    default_roots: tuple[str, ...]
    lib_suffixes: tuple[str, ...]
    libraries: tuple[str, ...]        # the toolkit's libraries, then the vendor's extra link names


def plan_test_sdk(build: BuildSpec | None) -> TestSdk | None:
    if build is None or build.toolkit is None:
        return None
    tk = build.toolkit
    return TestSdk(tk.name.value, tk.root_vars, tk.default_roots, tk.lib_suffixes,
                   tuple(dict.fromkeys(tk.libraries + build.link)))
