"""The diopi_test device runtime (DIOPI impl/<impl>/test/conform_test.cpp):
the extern "C" functions of conform_test.h at the pinned DIOPI commit, built
from the same vendor calls as DIPU's device functions (diopi.md §6.1)."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.model import Vendor
from deeplink_gen.render.runtime import Call, cstr, expansions, make_call
from deeplink_gen.runtime.diopitest import SOURCES
from deeplink_gen.runtime.interface import FUNCTIONS
from deeplink_gen.runtime.model import RuntimeSpec
from deeplink_gen.templating import render


def diopitest_path(vendor: Vendor) -> str:
    return f"dipu/third_party/DIOPI/impl/{vendor.identity.diopi_impl}/test/conform_test.cpp"


@dataclass(frozen=True)
class Entry:
    name: str
    available: bool
    why: str
    calls: tuple[Call, ...]
    locals: tuple[tuple[str, str], ...]


def _entry(spec: RuntimeSpec, name: str) -> Entry:
    fn = FUNCTIONS[SOURCES[name]]
    override = dict(spec.diopi_test.overrides).get(name)
    impl = spec.impl(fn.key)
    values = expansions(fn, spec, impl)
    if override is not None:
        checker = spec.checker(spec.diopi_test.checker)
        return Entry(name, True, "", (make_call(override, values, checker),), ())
    if impl is None:
        return Entry(name, False, f"{fn.key} is not described", (), ())
    checker = spec.checker(impl.checker)
    if impl.kind == "noop":
        return Entry(name, True, "", (), ())
    if impl.kind == "call" and not impl.guard and not impl.presync:
        return Entry(name, True, "", tuple(make_call(t, values, checker) for t in impl.calls), impl.locals)
    source = {"stream_priority": impl.template("plain"), "peer_copy": impl.template("same_device")}.get(
        impl.pattern or "")
    if impl.pattern == "malloc":
        source = impl.calls[0]
    if source is not None:
        return Entry(name, True, "", (make_call(source, values, checker),), impl.locals)
    return Entry(name, False, f"{fn.key} is {impl.kind}{' ' + impl.pattern if impl.pattern else ''}; "
                 f"describe it under runtime.diopi_test.functions.{name}", (), ())


def render_diopitest(vendor: Vendor, spec: RuntimeSpec, source: str) -> dict[str, str]:
    entries = {name: _entry(spec, name) for name in SOURCES}
    init_fn, fin_fn = spec.impl("initializeVendor"), spec.impl("finalizeVendor")
    checker = spec.checker(spec.diopi_test.checker)

    def lifecycle(name, explicit, impl) -> Entry:
        if explicit:
            return Entry(name, True, "", tuple(make_call(t, {}, checker) for t in explicit), ())
        if impl is not None and impl.kind == "call":
            values = expansions(impl.function, spec, impl)
            return Entry(name, True, "", tuple(make_call(t, values, spec.checker(impl.checker))
                                                for t in impl.calls), impl.locals)
        return Entry(name, True, "", (), ())

    init = lifecycle("initLibrary", spec.diopi_test.init, init_fn)
    fin = lifecycle("finalizeLibrary", spec.diopi_test.finalize, fin_fn)
    used = {c.checker.name: c.checker for e in list(entries.values()) + [init, fin] for c in e.calls if c.checker}
    return {diopitest_path(vendor): render(
        "diopi_test/conform_test.cpp.j2", source=source, vendor=vendor, spec=spec, e=entries,
        init=init, fin=fin, checkers=[used[k] for k in sorted(used)], cstr=cstr,
    )}
