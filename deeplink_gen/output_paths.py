"""Where every rendered file goes, relative to generated/<vendor>/ (laid
out like the upstream trees, so the output can be overlaid on a checkout),
and which files render writes into a vendor folder. Below every stage:
validation, render, output and the commands all read the layout from here."""

from __future__ import annotations

import re

from deeplink_gen.interfaces.diopi import impl_folder
from deeplink_gen.model import Vendor

CSRC_DIR = "dipu/torch_dipu/csrc_dipu"
KERNELS_DIR = f"{CSRC_DIR}/aten/ops"
KERNELS_CMAKE = f"{KERNELS_DIR}/AutoGenedKernels.cmake"
# defaults.precompiled_header: the headers every kernel file includes, precompiled once.
KERNELS_PRECOMPILED = f"{KERNELS_DIR}/AutoGenedKernelsPrecompiled.h"
MANIFEST = "manifest.json"
ONBOARDING_DIR = "onboarding"
DIPU_PATCH = f"{ONBOARDING_DIR}/dipu.patch"
DIOPI_PATCH = f"{ONBOARDING_DIR}/diopi.patch"


def kernels(shards: int) -> list[str]:
    """AutoGenedKernels.cpp for one shard (DIPU's name), else AutoGenedKernels_<i>.cpp."""
    if shards <= 1:
        return [f"{KERNELS_DIR}/AutoGenedKernels.cpp"]
    return [f"{KERNELS_DIR}/AutoGenedKernels_{i}.cpp" for i in range(shards)]


def pasted_of(kernels_file: str) -> str:
    """The file of the C++ from YAML that *kernels_file* includes: AutoGenedKernels_3.pasted.inc."""
    return kernels_file.removesuffix(".cpp") + ".pasted.inc"


_KERNEL_FILE = re.compile(r"AutoGenedKernels(?:_[0-9]+)?(?:\.cpp|\.pasted\.inc)|AutoGenedKernels(?:\.cmake|Precompiled\.h)")


def is_kernel_file(name: str) -> bool:
    """Whether *name* (a file name in KERNELS_DIR) is one a render names as above, for any shard
    count, or DIPU's own generator does: AutoGenedKernels_3.cpp.orig, a copy, is not."""
    return _KERNEL_FILE.fullmatch(name) is not None


def kernels_cmake_from_csrc() -> str:
    """The kernel list as DIPU's csrc_dipu/CMakeLists.txt includes it (from its own folder)."""
    return KERNELS_CMAKE[len(CSRC_DIR) + 1:]


def vendor_dir(vendor: Vendor) -> str:
    return f"{CSRC_DIR}/vendor/{vendor.name}"


def class_prefix(name: str) -> str:
    """The vendor name *name* in CamelCase, as DIPU names its generator class."""
    return "".join(part.capitalize() for part in name.split("_"))


def generator_file(name: str) -> str:
    """The file of vendor *name*'s generator, as DIPU names it: <Prefix>GeneratorImpl.cpp."""
    return f"{class_prefix(name)}GeneratorImpl.cpp"


# The runtime conformance test, in a folder of its own so that the vendor's source glob leaves it out.
CONFORMANCE_TEST = "conformance/runtime_conformance.cpp"


def conformance_target(vendor: Vendor) -> str:
    return f"{vendor.name}_runtime_conformance"


def vendor_folder_files(vendor: Vendor) -> dict[str, str]:
    """The files render writes into the vendor folder, by their name inside it."""
    names = {}
    if vendor.runtime is not None:
        for key, name in (("vendorapi", "vendorapi.h"), ("device", "deviceimpl.cpp"),
                          ("comm", "communicatorimpl.cpp"), ("generator", generator_file(vendor.name))):
            names[key] = name
        names["conformance"] = CONFORMANCE_TEST
    if vendor.build is not None:
        names["cmake"] = "CMakeLists.txt"
        if vendor.runtime is not None:
            names["conformance_cmake"] = "conformance/CMakeLists.txt"
        if vendor.build.toolkit is not None:
            names["find"] = f"cmake/Find{vendor.build.toolkit.name.value}.cmake"
    return names


def in_vendor_dir(vendor: Vendor, name: str) -> str:
    return f"{vendor_dir(vendor)}/{name}"


def diopi_impl_dir(vendor: Vendor) -> str:
    """DIOPI's folder of the vendor's own files (impl/topsrider for DIOPI_IMPL_OPT tops)."""
    return f"dipu/third_party/DIOPI/impl/{impl_folder(vendor.diopi_impl)}"


def adaptor(vendor: Vendor, name: str) -> str:
    return f"{diopi_impl_dir(vendor)}/adaptor/{name}"


def convert_config(vendor: Vendor) -> str:
    return f"{diopi_impl_dir(vendor)}/convert_config.yaml"


def device_configs(vendor: Vendor) -> str:
    return f"{diopi_impl_dir(vendor)}/device_configs.py"


def conform_test(vendor: Vendor) -> str:
    return f"{diopi_impl_dir(vendor)}/test/conform_test.cpp"


def diopi_test_cmake(vendor: Vendor) -> str:
    """Builds conform_test.cpp into diopi_test's Python modules; DIOPI's impl CMake adds test/ under TEST."""
    return f"{diopi_impl_dir(vendor)}/test/CMakeLists.txt"


def host_diopi(vendor: Vendor, name: str) -> str:
    """A file of the host DIOPI library (diopi_library: aten_cpu): functions/functions.cpp, where
    DIOPI's adaptor generator and `coverage --impl` look for definitions, and CMakeLists.txt."""
    return f"{diopi_impl_dir(vendor)}/{name}"


def pytorch_config(vendor: Vendor) -> str:
    """DIPU's test base picks the file by the lower-cased device type."""
    return f"dipu/tests/pytorch_config_{vendor.device_type.lower()}.py"


def onboarding(name: str) -> str:
    return f"{ONBOARDING_DIR}/{name}"
