"""The hand-written DIPU vendor folders under tests/fixtures/dipu_vendors stay valid
DIPU vendor code. import-dipu's tests read them as a vendor's runtime folder; each is
our own code for a fictional SDK (cudalike's for the real CUDA runtime and NCCL),
written in the shapes DIPU's vendor folders use, so a fixture that no longer compiles
would test the import against code no vendor could ship.

Every source compiles as DIPU's build compiles it: its folder's vendorapi.h standing at
csrc_dipu/vendor/vendorapi.h, against our DIPU declaration headers, the fixture's SDK
declarations (tests/include/sdk/<fixture>; NVIDIA's headers for cudalike) and torch's
headers, with a definition that matches no declaration of the contract an error. Each
README's planted defects name a file:line that must still hold the code it describes."""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import INCLUDE, REPO, sdk_include_flags, syntax_check

FIXTURES = REPO / "tests" / "fixtures" / "dipu_vendors"
WARNINGS = ["-Wall", "-Wextra", "-Werror=missing-declarations", "-Werror=return-type"]

# Each fixture's sources with the defines of each configuration DIPU's build would compile
# them in: one build per SDK version folder, and both sides of an in-body API switch.
BUILDS = {
    "cudalike": {
        (): ["deviceimpl.cpp", "communicatorimpl.cpp", "CudalikeGeneratorImpl.cpp", "CudalikeCopyInplace.cpp"],
    },
    "gpulike": {
        (): ["deviceimpl.cpp", "communicatorimpl.cpp", "GplGeneratorImpl.cpp", "GplCopyInplace.cpp",
             "patch/GplPatch.cpp"],
    },
    "tablelike": {
        (): ["rt_1.x/deviceimpl.cpp", "rt_2.x/deviceimpl.cpp", "rt_2.x/communicatorimpl.cpp",
             "TblGeneratorImpl.cpp", "TblActivity.cpp", "TblCopyInplace.cpp"],
    },
    "statuslike": {
        (): ["deviceimpl.cpp", "commimpl.cpp", "stlgenerator.cpp"],
        ("-DSTL_NEW_API",): ["deviceimpl.cpp"],
    },
}
# The files that together define a fixture's device functions, per build.
DEVICE_FILES = {
    "cudalike": [["deviceimpl.cpp"]],
    "gpulike": [["deviceimpl.cpp"]],
    "tablelike": [["basedeviceimpl.hpp", "rt_1.x/deviceimpl.cpp"], ["basedeviceimpl.hpp", "rt_2.x/deviceimpl.cpp"]],
    "statuslike": [["deviceimpl.cpp"]],
}
DEVICEAPIS = INCLUDE / "dipu" / "csrc_dipu" / "runtime" / "device" / "deviceapis.h"
# A README entry of a planted defect: - `FILE:LINE` `CODE` ...
DEFECT = re.compile(r"^- `([\w./]+):(\d+)` `([^`]+)`", re.M)


def _overlay(fixture: str, tmp: Path) -> Path:
    """A folder holding the fixture's vendorapi.h where DIPU's build links it."""
    overlay = tmp / f"overlay-{fixture}"
    (overlay / "csrc_dipu" / "vendor").mkdir(parents=True)
    shutil.copy(FIXTURES / fixture / "vendorapi.h", overlay / "csrc_dipu" / "vendor" / "vendorapi.h")
    return overlay


@pytest.mark.slow
@pytest.mark.parametrize("fixture", sorted(BUILDS))
def test_fixture_sources_compile(fixture: str, tmp_path: Path):
    overlay = _overlay(fixture, tmp_path)
    jobs = [(source, list(defines)) for defines, sources in BUILDS[fixture].items() for source in sources]

    def check(job):
        source, defines = job
        result = syntax_check(FIXTURES / fixture / source, overlay=overlay, warnings=WARNINGS,
                              extra=[*sdk_include_flags(fixture), *defines])
        return f"{source} {' '.join(defines)}", result

    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f"{name}:\n{r.stderr}" for name, r in pool.map(check, jobs) if r.returncode != 0]
    assert not failures, "\n".join(failures)


def test_every_fixture_source_is_compiled():
    """A source added to a fixture joins BUILDS, or it would go unchecked."""
    for fixture, builds in BUILDS.items():
        on_disk = {p.relative_to(FIXTURES / fixture).as_posix() for p in (FIXTURES / fixture).rglob("*.cpp")}
        assert on_disk == {s for sources in builds.values() for s in sources}, fixture


def test_a_wrong_sdk_call_does_not_compile(tmp_path: Path):
    """The SDK declarations are strict enough for the compile check to mean something:
    a copy whose memcpy lost its direction fails."""
    copy = tmp_path / "gpulike"
    shutil.copytree(FIXTURES / "gpulike", copy)
    impl = copy / "deviceimpl.cpp"
    text = impl.read_text()
    assert "::gplMemcpy(dst, src, nbytes, ::gplMemcpyHostToDevice)" in text
    impl.write_text(text.replace("::gplMemcpy(dst, src, nbytes, ::gplMemcpyHostToDevice)",
                                 "::gplMemcpy(dst, src, nbytes)"))
    result = syntax_check(impl, overlay=_overlay("gpulike", tmp_path), warnings=WARNINGS,
                          extra=sdk_include_flags("gpulike"))
    assert result.returncode != 0 and "gplMemcpy" in result.stderr


@pytest.mark.parametrize("fixture", sorted(DEVICE_FILES))
def test_device_files_define_the_whole_contract(fixture: str):
    """Every function deviceapis.h declares has a definition in each build of the fixture
    (a weak one may be left out, as DIPU lets a vendor do)."""
    declared = re.findall(r"^DIPU_(API|WEAK) [\w:]+ (\w+)\(", DEVICEAPIS.read_text(), re.M)
    assert len(declared) == 38, len(declared)
    for files in DEVICE_FILES[fixture]:
        text = "\n".join((FIXTURES / fixture / f).read_text() for f in files)
        missing = [name for kind, name in declared
                   if kind == "API" and not re.search(rf"\b{name}\([^;{{]*\)\s*\{{", text)]
        assert not missing, (files, missing)


@pytest.mark.parametrize("fixture", sorted(BUILDS))
def test_readme_defects_point_at_their_code(fixture: str):
    readme = (FIXTURES / fixture / "README.md").read_text()
    defects = DEFECT.findall(readme)
    assert defects, f"{fixture}/README.md lists no planted defect"
    for path, line, code in defects:
        lines = (FIXTURES / fixture / path).read_text().splitlines()
        assert code in lines[int(line) - 1], (path, line, code)
