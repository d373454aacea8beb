"""vendorapi.h, deviceimpl.cpp, communicatorimpl.cpp and <Vendor>GeneratorImpl.cpp."""

from __future__ import annotations

from deeplink_gen.plan.runtime import plan_runtime
from deeplink_gen.render import paths
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template


def _includes(checkers) -> list[str]:
    actions = {c.on_failure for c in checkers}
    out = []
    if "print" in actions:
        out.append("cstdio")
    if "throw" in actions:
        out += ["stdexcept", "string"]
    return out


def render(job: Job, files: dict[str, str]) -> dict[str, str]:
    vendor, spec = job.vendor, job.vendor.runtime
    if spec is None:
        return {}
    device, comm = plan_runtime(spec)
    names = paths.vendor_folder_files(vendor)
    ctx = dict(source=job.source, vendor=vendor, spec=spec, prefix=paths.class_prefix(vendor))
    return {
        paths.in_vendor_dir(vendor, names["vendorapi"]):
            render_template("runtime/vendorapi.h.j2", includes=_includes(spec.checkers), **ctx),
        paths.in_vendor_dir(vendor, names["device"]): render_template("runtime/deviceimpl.cpp.j2", plans=device, **ctx),
        paths.in_vendor_dir(vendor, names["comm"]): render_template("runtime/communicatorimpl.cpp.j2", plans=comm, **ctx),
        paths.in_vendor_dir(vendor, names["generator"]): render_template("runtime/GeneratorImpl.cpp.j2", **ctx),
    }
