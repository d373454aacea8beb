"""cmake/DeeplinkGen.cmake in a real CMake project: configure renders, an
unchanged build does nothing, and editing the vendor file re-renders."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import KERNELS, OPS, REPO

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("deeplink-gen") is None,
                                reason="needs cmake and the installed deeplink-gen command")


def _run(*cmd: str, cwd: Path) -> str:
    proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def _project(tmp_path: Path, workspace: Path, options: str, after: str = "") -> Path:
    """A CMake project that renders camb with deeplink_gen_render(... *options*), then runs *after*."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.19)
project(consumer NONE)
include({(REPO / "cmake" / "DeeplinkGen.cmake").as_posix()})
deeplink_gen_render(VENDOR camb WORKSPACE {workspace.as_posix()} OUTPUT_DIR ${{CMAKE_BINARY_DIR}}/gen{options})
{after}
""")
    return project


def test_build_time_render(workspace: Path, tmp_path: Path):
    project = _project(tmp_path, workspace, " SHARDS 1", """
list(LENGTH deeplink_gen_camb_OUTPUTS n)
message(STATUS "deeplink-gen outputs: ${n}")""")
    build = tmp_path / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = _run("cmake", *generator, "-S", str(project), "-B", str(build), cwd=tmp_path)
    kernels = build / "gen" / "camb" / KERNELS
    assert kernels.is_file()
    listed = int(configure.split("deeplink-gen outputs: ")[1].split()[0])
    assert listed == sum(1 for p in (build / "gen" / "camb").rglob("*") if p.is_file())

    first = _run("cmake", "--build", str(build), "--target", "deeplink_gen_camb", cwd=tmp_path)
    assert "deeplink-gen: rendering camb" in first
    mtime = kernels.stat().st_mtime_ns
    again = _run("cmake", "--build", str(build), "--target", "deeplink_gen_camb", cwd=tmp_path)
    assert "rendering camb" not in again
    assert kernels.stat().st_mtime_ns == mtime

    vendor = workspace / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("  profiler: true", "  profiler: false"))
    changed = _run("cmake", "--build", str(build), "--target", "deeplink_gen_camb", cwd=tmp_path)
    assert "rendering camb" in changed
    assert "RecordBlockCreator" not in kernels.read_text()


def test_build_time_render_takes_renders_options(workspace: Path, tmp_path: Path):
    """deeplink_gen_render() passes SHARDS and AUTOCOMPARE on; the tree records them, so a plain
    `render --check` (CI) checks it as it was rendered."""
    project = _project(tmp_path, workspace, " SHARDS 3 AUTOCOMPARE")
    build = tmp_path / "build"
    _run("cmake", "-S", str(project), "-B", str(build), cwd=tmp_path)
    ops = build / "gen" / "camb" / OPS
    assert sorted(p.name for p in ops.glob("AutoGenedKernels*.cpp")) == [f"AutoGenedKernels_{i}.cpp" for i in range(3)]
    assert "_autocompare(" in (ops / "AutoGenedKernels_0.cpp").read_text()
    check = subprocess.run(["deeplink-gen", "-C", str(workspace), "render", "--vendor", "camb", "--check",
                            "--out", str(build / "gen")], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "--autocompare --shards 3" in check.stdout
