"""vendorapi.h, deviceimpl.cpp, communicatorimpl.cpp and <Vendor>GeneratorImpl.cpp
for one vendor: each DIPU function's body is planned here from the vendor's
description and spelled out by the templates under templates/runtime/."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from deeplink_gen.model import Vendor
from deeplink_gen.runtime.checks import provided_names
from deeplink_gen.runtime.interface import MEMCPY_KIND, SUCCESS_RETURN, Function
from deeplink_gen.runtime.model import Checker, Impl, RuntimeSpec
from deeplink_gen.runtime.template import Template
from deeplink_gen.templating import render


def vendor_dir(vendor: Vendor) -> str:
    return f"dipu/torch_dipu/csrc_dipu/vendor/{vendor.name}"


def class_prefix(vendor: Vendor) -> str:
    return "".join(part.capitalize() for part in vendor.name.split("_"))


def cstr(text: str) -> str:
    """A C string literal for *text*."""
    return json.dumps(text, ensure_ascii=True)


@dataclass(frozen=True)
class Call:
    text: str          # expanded C++ call
    literal: str       # the expanded call as a C string literal, for messages
    checker: Checker | None


@dataclass
class Plan:
    """Everything the body template needs for one function."""

    fn: Function
    impl: Impl
    vendor: str
    signature: str = ""
    calls: list[Call] = field(default_factory=list)
    checker: Checker | None = None
    locals: list[tuple[str, str]] = field(default_factory=list)
    ret: str | None = None
    guard: str | None = None
    t: dict[str, Call] = field(default_factory=dict)
    fields: list[tuple[str, str]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    success: str | None = None
    body: str = ""


def expansions(fn: Function, spec: RuntimeSpec, impl: Impl | None) -> dict[str, str]:
    values = {name: name for name in provided_names(fn, spec)}
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
        for name in ("major", "minor", "patch", "status"):
            values.setdefault(name, name)
    return values


def make_call(t: Template, values: dict[str, str], checker: Checker | None) -> Call:
    text = t.expand(values)
    return Call(text, cstr(text), checker)


def plan_function(vendor: Vendor, spec: RuntimeSpec, impl: Impl) -> Plan:
    fn = impl.function
    checker = spec.checker(impl.checker)
    values = expansions(fn, spec, impl)
    plan = Plan(fn, impl, vendor.name, checker=checker, success=SUCCESS_RETURN.get(fn.returns))
    plan.calls = [make_call(t, values, checker) for t in impl.calls]
    plan.locals = list(impl.locals)
    plan.ret = impl.ret.expand(values) if impl.ret else None
    plan.guard = impl.guard.expand(values) if impl.guard else None
    plan.t = {k: make_call(t, values, checker) for k, t in impl.templates}
    plan.fields = [(k, t.expand(values)) for k, t in impl.fields]
    plan.names = list(impl.names)
    plan.body = render("runtime/body.cpp.j2", p=plan, impl=impl, fn=fn).rstrip("\n")
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", plan.body))
    params = []
    for p in fn.params:
        unused = "[[maybe_unused]] " if p.name not in used else ""
        params.append(f"{unused}{p.decl()}")
    plan.signature = f"{fn.returns} {fn.name}({', '.join(params)})"
    return plan


def _includes(spec: RuntimeSpec) -> list[str]:
    actions = {c.on_failure for c in spec.checkers}
    out = []
    if "print" in actions:
        out.append("cstdio")
    if "throw" in actions:
        out += ["stdexcept", "string"]
    return out


def render_runtime(vendor: Vendor, spec: RuntimeSpec, source: str) -> dict[str, str]:
    base = vendor_dir(vendor)
    device = [plan_function(vendor, spec, i) for i in spec.device_impls]
    comm = [plan_function(vendor, spec, i) for i in spec.comm.impls]
    ctx = dict(source=source, vendor=vendor, spec=spec, cstr=cstr, prefix=class_prefix(vendor))
    return {
        f"{base}/vendorapi.h": render("runtime/vendorapi.h.j2", includes=_includes(spec), **ctx),
        f"{base}/deviceimpl.cpp": render("runtime/deviceimpl.cpp.j2", plans=device, **ctx),
        f"{base}/communicatorimpl.cpp": render("runtime/communicatorimpl.cpp.j2", plans=comm, **ctx),
        f"{base}/{class_prefix(vendor)}GeneratorImpl.cpp": render("runtime/GeneratorImpl.cpp.j2", **ctx),
    }


def render_runtime_tree(vendor: Vendor, source: str) -> dict[str, str]:
    """Every runtime/build artifact of *vendor*: the vendor folder, its CMake,
    the onboarding edits and the diopi_test device runtime."""
    from deeplink_gen.render.build import render_build
    from deeplink_gen.render.diopitest import render_diopitest
    from deeplink_gen.render.onboarding import render_onboarding

    files = render_onboarding(vendor, source)
    if vendor.runtime is not None:
        files.update(render_runtime(vendor, vendor.runtime, source))
        files.update(render_diopitest(vendor, vendor.runtime, source))
    if vendor.build is not None:
        files.update(render_build(vendor, vendor.build, source))
    return files
