"""The rendered vendor runtime compiles against DIPU's interface headers and
per-vendor SDK declaration headers (tests/include/sdk/<vendor>; for cuda the real
CUDA and NCCL headers), with
-Werror=missing-declarations so a signature drifting from deviceapis.h or
diclapis.h fails; the rendered CMake configures against a fake toolkit."""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import (
    BUNDLED_VENDORS, INCLUDE, REPO, conform_test_source, diopi_include, sdk_include_flags, torch_include_flags,
    torch_root, vendor_dir,
)

VENDORS = BUNDLED_VENDORS
SDK = INCLUDE / "sdk"
FLAGS = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Werror=missing-declarations"]


def _compile(source: Path, flags: list[str], torch: bool) -> subprocess.CompletedProcess:
    cmd = FLAGS + flags + (torch_include_flags() if torch else []) + [str(source)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def _check_vendor(root: Path, vendor: str, tmp: Path) -> list[str]:
    """Compile every rendered runtime source of *vendor*; return the failures."""
    vdir = vendor_dir(root, vendor)
    overlay = tmp / f"overlay-{vendor}"
    (overlay / "csrc_dipu" / "vendor").mkdir(parents=True)
    shutil.copy(vdir / "vendorapi.h", overlay / "csrc_dipu" / "vendor" / "vendorapi.h")
    sdk = sdk_include_flags(vendor)
    dipu = [f"-I{overlay}", f"-I{INCLUDE / 'dipu'}", *sdk]
    jobs = [(vdir / name, dipu, True) for name in
            ("deviceimpl.cpp", "communicatorimpl.cpp", f"{vendor.capitalize()}GeneratorImpl.cpp",
             "conformance/runtime_conformance.cpp")]
    jobs.append((conform_test_source(root, vendor), [f"-I{diopi_include()}", f"-I{SDK / 'common'}", *sdk], False))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda j: (j[0], _compile(*j)), jobs))
    return [f"{src.name}:\n{r.stderr}" for src, r in results if r.returncode != 0]


@pytest.mark.parametrize("vendor", VENDORS)
def test_runtime_sources_compile(rendered: Path, vendor: str, tmp_path: Path):
    failures = _check_vendor(rendered, vendor, tmp_path)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("vendor", VENDORS)
def test_conform_test_defines_all_of_conform_test_h(rendered: Path, vendor: str):
    """diopi_test's export_runtime.cpp calls every function conform_test.h declares, so a
    missing definition compiles but does not link."""
    header = (SDK / "common" / "conform_test.h").read_text()
    declared = re.findall(r"^[\w*]+\s+\**(\w+)\([^;]*\);$", header, re.M)
    assert "buildGeneratorState" in declared and "device_malloc" in declared
    text = conform_test_source(rendered, vendor).read_text()
    missing = [name for name in declared if not re.search(rf"\b{name}\([^;{{]*\)\s*\{{", text)]
    assert not missing, missing


def test_signature_drift_is_a_compile_error(rendered: Path, tmp_path: Path):
    """A definition whose signature differs from deviceapis.h must not compile."""
    root = tmp_path / "copy"
    shutil.copytree(rendered / "droplet", root / "droplet")
    impl = vendor_dir(root, "droplet") / "deviceimpl.cpp"
    text = impl.read_text()
    assert "void syncStream(deviceStream_t stream)" in text
    impl.write_text(text.replace("void syncStream(deviceStream_t stream)", "void syncStream(deviceEvent_t stream)"))
    assert any("deviceimpl.cpp" in f for f in _check_vendor(root, "droplet", tmp_path))


def test_wrong_sdk_call_is_a_compile_error(rendered: Path, tmp_path: Path):
    """The SDK shims are strict: dropping a memcpy argument fails."""
    root = tmp_path / "copy"
    shutil.copytree(rendered / "camb", root / "camb")
    impl = vendor_dir(root, "camb") / "deviceimpl.cpp"
    text = impl.read_text()
    needle = "cnrtMemcpyAsync(dst, const_cast<void*>(src), nbytes, stream, CNRT_MEM_TRANS_DIR_HOST2DEV)"
    assert needle in text
    impl.write_text(text.replace(needle, "cnrtMemcpyAsync(dst, const_cast<void*>(src), nbytes, stream)"))
    assert any("deviceimpl.cpp" in f for f in _check_vendor(root, "camb", tmp_path))


def _consumer_project(rendered: Path, vendor: str, tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(vendor_dir(rendered, vendor), project / "vendor")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(fake LANGUAGES NONE)\nadd_subdirectory(vendor)\n"
        "foreach(v VENDOR_INCLUDE_DIRS VENDOR_LIB_DIRS DIPU_VENDOR_LIB VENDOR_FILES)\n"
        "  message(STATUS \"${v}=[${${v}}]\")\nendforeach()\n")
    return project


def _check_configures_without_toolkit(rendered: Path, vendor: str, tmp_path: Path) -> None:
    """A vendor without an SDK (hostsim) needs nothing found: no Find module, empty variables."""
    assert not (vendor_dir(rendered, vendor) / "cmake").exists()
    project = _consumer_project(rendered, vendor, tmp_path)
    r = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for var in ("VENDOR_INCLUDE_DIRS", "VENDOR_LIB_DIRS", "DIPU_VENDOR_LIB"):
        assert f"{var}=[]" in r.stdout, r.stdout
    assert "deviceimpl.cpp" in r.stdout and "communicatorimpl.cpp" in r.stdout


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
@pytest.mark.parametrize("vendor", VENDORS)
def test_vendor_cmake_configures(rendered: Path, vendor: str, tmp_path: Path):
    """A tiny project adds the rendered vendor folder like csrc_dipu/CMakeLists.txt does,
    with a fake toolkit laid out from the vendor file's probes, and prints the four variables."""
    import yaml

    build = yaml.safe_load((REPO / "vendors" / f"{vendor}.yaml").read_text())["build"]
    if "toolkit" not in build:
        return _check_configures_without_toolkit(rendered, vendor, tmp_path)
    tk = build["toolkit"]
    fake = tmp_path / "toolkit"
    for header in tk["headers"]:
        path = fake / tk.get("include_suffixes", ["include"])[0] / header
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    libdir = fake / tk.get("lib_suffixes", ["lib64"])[0]
    libdir.mkdir(parents=True, exist_ok=True)
    for lib in tk.get("libraries", []):
        (libdir / f"lib{lib}.so").write_text("")
    project = _consumer_project(rendered, vendor, tmp_path)
    root_var = tk["root_vars"][0]
    r = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build"), f"-D{root_var}={fake}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"VENDOR_INCLUDE_DIRS=[{fake}/{tk.get('include_suffixes', ['include'])[0]}" in r.stdout
    assert f"VENDOR_LIB_DIRS=[{libdir}]" in r.stdout
    assert "deviceimpl.cpp" in r.stdout and "communicatorimpl.cpp" in r.stdout
    for lib in tk.get("libraries", []):
        assert f"lib{lib}.so" in r.stdout
    # The conformance test's project adds the same folder and finds the same toolkit.
    r = subprocess.run(["cmake", "-S", str(project / "vendor" / "conformance"), "-B", str(tmp_path / "conformance"),
                        f"-D{root_var}={fake}", f"-DDIPU_INCLUDE_DIR={INCLUDE / 'dipu'}", f"-DTORCH_DIR={torch_root()}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "Generating done" in r.stdout, r.stdout + r.stderr
    # Without the toolkit, configuring fails with find_package's message.
    r = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build2"),
                        f"-D{root_var}={tmp_path / 'nowhere'}"], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert tk["name"] in r.stderr
