"""vendorapi.h, deviceimpl.cpp, communicatorimpl.cpp, <Vendor>GeneratorImpl.cpp and the
runtime conformance test (conformance/: its source and, with a build section, its CMakeLists.txt)."""

from __future__ import annotations

from deeplink_gen import output_paths
from deeplink_gen.model.runtime import OnFailure
from deeplink_gen.plan.conformance import plan_conformance
from deeplink_gen.plan.runtime import plan_runtime
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template, resume_lines


def _includes(checkers) -> list[str]:
    actions = {c.on_failure for c in checkers}
    out = []
    if OnFailure.PRINT in actions:
        out.append("cstdio")
    if OnFailure.THROW in actions:
        out += ["stdexcept", "string"]
    return out


def render(job: Job) -> dict[str, str]:
    vendor, spec = job.vendor, job.vendor.runtime
    if spec is None:
        return {}
    device, comm = plan_runtime(spec)
    names = output_paths.vendor_folder_files(vendor)
    ctx = dict(source=job.source, vendor=vendor, spec=spec, prefix=output_paths.class_prefix(vendor.name),
               origin=job.origin)
    texts = {
        names["vendorapi"]: render_template("runtime/vendorapi.h.j2", includes=_includes(spec.checkers), **ctx),
        names["device"]: render_template("runtime/deviceimpl.cpp.j2", plans=device, **ctx),
        names["comm"]: render_template("runtime/communicatorimpl.cpp.j2", plans=comm, **ctx),
        names["generator"]: render_template("runtime/GeneratorImpl.cpp.j2", **ctx),
        names["conformance"]: render_template("runtime/conformance.cpp.j2", plan=plan_conformance(spec), **ctx),
    }
    if "conformance_cmake" in names:
        texts[names["conformance_cmake"]] = render_template(
            "runtime/conformance.CMakeLists.txt.j2", target=output_paths.conformance_target(vendor),
            test_source=output_paths.CONFORMANCE_TEST.rsplit("/", 1)[1], runtime_sources=(names["device"], names["comm"]),
            **ctx)
    out = {}
    for name, text in texts.items():
        path = output_paths.in_vendor_dir(vendor, name)
        out[path] = resume_lines(text, path)
    return out
