"""The vendor folder's CMakeLists.txt (the four PARENT_SCOPE variables DIPU's
csrc_dipu/CMakeLists.txt reads), cmake/Find<Toolkit>.cmake, and the
vendor's hand-written files copied byte for byte beside them."""

from __future__ import annotations

import re

from deeplink_gen import output_paths
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template


def render(job: Job) -> dict[str, str]:
    vendor, build = job.vendor, job.vendor.build
    if build is None:
        return {}
    tk = build.toolkit
    package = tk.name.value if tk is not None else None      # CMake's find_package name
    var = package.upper() if package is not None else None
    libs = [(lib, f"{var}_{re.sub(r'[^A-Za-z0-9]', '_', lib).upper()}_LIBRARY") for lib in tk.libraries] if tk else []
    sources = {s.rel: s.data.decode("utf-8") for s in vendor.sources}   # validate checked they are UTF-8
    names = output_paths.vendor_folder_files(vendor)
    ctx = dict(source=job.source, vendor=vendor, build=build, tk=tk, package=package, var=var, libs=libs,
               custom=sorted(sources))
    out = {output_paths.in_vendor_dir(vendor, names["cmake"]): render_template("cmake/VendorCMakeLists.txt.j2", **ctx)}
    if tk is not None:
        out[output_paths.in_vendor_dir(vendor, names["find"])] = render_template("cmake/FindToolkit.cmake.j2", **ctx)
    out.update({output_paths.in_vendor_dir(vendor, rel): text for rel, text in sources.items()})
    return out
