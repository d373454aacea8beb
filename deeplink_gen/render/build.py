"""The vendor folder's CMakeLists.txt (the four PARENT_SCOPE variables DIPU's
csrc_dipu/CMakeLists.txt reads) and cmake/Find<Toolkit>.cmake."""

from __future__ import annotations

import re

from deeplink_gen.errors import Diagnostic, Loc, UserError
from deeplink_gen.model import Vendor
from deeplink_gen.paths import hand_written_dir
from deeplink_gen.render.runtime import class_prefix, vendor_dir
from deeplink_gen.runtime.model import BuildSpec
from deeplink_gen.templating import render

SOURCES_README = "README.md"


def custom_sources(vendor: Vendor, rendered: set[str]) -> dict[str, str]:
    """Every file of vendors/<name>/ except its top-level README.md (hidden files and
    folders skipped), byte for byte, keyed by its path inside the vendor folder."""
    folder = hand_written_dir(vendor.path)
    if not folder.is_dir():
        return {}
    out: dict[str, str] = {}
    problems = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or rel.as_posix() == SOURCES_README or any(p.startswith(".") for p in rel.parts):
            continue
        if rel.as_posix() in rendered:
            problems.append(Diagnostic(Loc(str(path)), "(sources)",
                                       f"'{rel.as_posix()}' is also a rendered file of the vendor folder; rename it"))
            continue
        try:
            out[rel.as_posix()] = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            problems.append(Diagnostic(Loc(str(path)), "(sources)", "not UTF-8 text; only text files are copied"))
    if problems:
        raise UserError(problems)
    return out


def render_build(vendor: Vendor, build: BuildSpec, source: str) -> dict[str, str]:
    base = vendor_dir(vendor)
    tk = build.toolkit
    var = tk.name.upper()
    libs = [(lib, f"{var}_{re.sub(r'[^A-Za-z0-9]', '_', lib).upper()}_LIBRARY") for lib in tk.libraries]
    rendered = {"CMakeLists.txt", f"cmake/Find{tk.name}.cmake"}
    if vendor.runtime is not None:
        rendered |= {"vendorapi.h", "deviceimpl.cpp", "communicatorimpl.cpp", f"{class_prefix(vendor)}GeneratorImpl.cpp"}
    custom = custom_sources(vendor, rendered)
    ctx = dict(source=source, vendor=vendor, build=build, tk=tk, var=var, libs=libs, custom=sorted(custom))
    files = {
        f"{base}/CMakeLists.txt": render("cmake/VendorCMakeLists.txt.j2", **ctx),
        f"{base}/cmake/Find{tk.name}.cmake": render("cmake/FindToolkit.cmake.j2", **ctx),
    }
    # Hand-written files from vendors/<name>/, copied next to the rendered ones.
    files.update({f"{base}/{rel}": text for rel, text in custom.items()})
    return files
