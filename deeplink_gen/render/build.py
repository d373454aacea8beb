"""The vendor folder's CMakeLists.txt (the four PARENT_SCOPE variables DIPU's
csrc_dipu/CMakeLists.txt reads) and cmake/Find<Toolkit>.cmake."""

from __future__ import annotations

import re

from deeplink_gen.model import Vendor
from deeplink_gen.render.runtime import vendor_dir
from deeplink_gen.runtime.model import BuildSpec
from deeplink_gen.templating import render


def render_build(vendor: Vendor, build: BuildSpec, source: str) -> dict[str, str]:
    base = vendor_dir(vendor)
    tk = build.toolkit
    var = tk.name.upper()
    libs = [(lib, f"{var}_{re.sub(r'[^A-Za-z0-9]', '_', lib).upper()}_LIBRARY") for lib in tk.libraries]
    ctx = dict(source=source, vendor=vendor, build=build, tk=tk, var=var, libs=libs)
    return {
        f"{base}/CMakeLists.txt": render("cmake/VendorCMakeLists.txt.j2", **ctx),
        f"{base}/cmake/Find{tk.name}.cmake": render("cmake/FindToolkit.cmake.j2", **ctx),
    }
