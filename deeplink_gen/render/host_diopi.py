"""The host DIOPI library of a simulated device (vendor `diopi_library:
aten_cpu`): functions/functions.cpp, each DIOPI function running its ATen op
on the CPU over the caller's memory, and the CMakeLists.txt that builds it
into libdiopi_impl.so for DIPU's -DWITH_DIOPI_LIBRARY=<dir>, with the DIOPI
adaptor's wrappers when the vendor has one (they are what the library exports)."""

from __future__ import annotations

import posixpath

from deeplink_gen import output_paths
from deeplink_gen.plan.host_diopi import DTYPES
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template

SOURCE = "functions/functions.cpp"


def render(job: Job) -> dict[str, str]:
    vendor = job.vendor
    if vendor.diopi_library is None:
        return {}
    plan = job.host_diopi_plan()
    common = dict(source=job.source, vendor=vendor, plan=plan, torch_version=job.rv.torch_version)
    cmake = output_paths.host_diopi(vendor, "CMakeLists.txt")
    sources = [SOURCE]
    if plan.namespace is not None:      # the adaptor's wrappers export the functions
        sources.append(posixpath.relpath(output_paths.adaptor(vendor, "diopi_adaptor.cpp"), posixpath.dirname(cmake)))
    return {
        output_paths.host_diopi(vendor, SOURCE): render_template("host_diopi/functions.cpp.j2", dtypes=DTYPES, **common),
        cmake: render_template("host_diopi/CMakeLists.txt.j2", sources=sources, **common),
    }
