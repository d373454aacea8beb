"""defaults.precompiled_header: the headers every kernel file includes, rendered as
AutoGenedKernelsPrecompiled.h, which the rendered AutoGenedKernels.cmake sets up as
torch_dipu's precompiled header for the kernel files alone. Checked in a CMake project
laid out as DIPU's csrc_dipu/CMakeLists.txt is (the kernel list included before
torch_dipu is made, the kernels compiled into it beside its other sources), and by
compiling a kernel file through it against torch's headers."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import (INCLUDE, OPS, diopi_include, dipu_checkout, edit, kernel_files, run_cli, torch_include_flags,
                     torch_version_code)

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None,
                                reason="needs cmake and ninja")

HEADER = "AutoGenedKernelsPrecompiled.h"
INCLUDE_LINE = re.compile(r'^#include [<"]([^>"]+)[>"]', re.M)


def _choose(ws: Path, vendor: str = "camb") -> None:
    edit(ws / "vendors" / f"{vendor}.yaml", "\ndefaults:\n", "\ndefaults:\n  precompiled_header: true\n")


def _render(ws: Path, *args: str, vendor: str = "camb") -> Path:
    result = run_cli("render", "--vendor", vendor, *args, cwd=ws)
    assert result.exit_code == 0, result.output
    return ws / "generated" / vendor


def _project(folder: Path, kernels: Path, *, make_target: bool = True, flags: str = "") -> subprocess.CompletedProcess:
    """Configure a project laid out as DIPU's csrc_dipu: the kernel list included first, then
    torch_dipu made of its own source and GENERATED_KERNELS."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "other.cpp").write_text("int other() { return 1; }\n")
    target = "add_library(torch_dipu SHARED ${TORCH_DIPU_SOURCE} ${GENERATED_KERNELS})\n" if make_target else ""
    (folder / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(probe LANGUAGES CXX)\nset(CMAKE_CXX_STANDARD 17)\n"
        f'set(UsedVendor camb)\ninclude("{kernels / "AutoGenedKernels.cmake"}")\n'
        f"set(TORCH_DIPU_SOURCE other.cpp)\n{target}{flags}")
    return subprocess.run(["cmake", "-G", "Ninja", "-S", str(folder), "-B", str(folder / "build"),
                           "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], capture_output=True, text=True)


def _commands(folder: Path) -> dict[str, str]:
    return {Path(c["file"]).name: c["command"]
            for c in json.loads((folder / "build" / "compile_commands.json").read_text())}


def test_only_the_kernel_files_use_the_precompiled_header(workspace: Path, tmp_path: Path):
    _choose(workspace)
    out = _render(workspace)
    kernels = out / OPS
    configured = _project(tmp_path / "probe", kernels)
    assert configured.returncode == 0, configured.stderr
    commands = _commands(tmp_path / "probe")
    pch = "torch_dipu.dir/cmake_pch.hxx"
    shards = [f.name for f in kernel_files(out)]
    assert shards == ["AutoGenedKernels_0.cpp", "AutoGenedKernels_1.cpp"]
    assert all(f"-include {tmp_path / 'probe' / 'build' / 'CMakeFiles' / pch}" in commands[s] for s in shards)
    assert "cmake_pch" not in commands["other.cpp"]
    wrapper = (tmp_path / "probe" / "build" / "CMakeFiles" / pch).read_text()
    assert f'#include "{kernels / HEADER}"' in wrapper
    assert json.loads((out / "manifest.json").read_text())["kernels"]["precompiled_header"] is True

    # Where no torch_dipu is made, the build stops, saying why.
    missing = _project(tmp_path / "no-target", kernels, make_target=False)
    assert missing.returncode != 0
    assert "sets up a precompiled header on torch_dipu" in missing.stderr


def test_without_the_choice_nothing_is_precompiled(workspace: Path, tmp_path: Path):
    out = _render(workspace)
    assert not (out / OPS / HEADER).exists()
    assert "precompile" not in (out / OPS / "AutoGenedKernels.cmake").read_text().lower()
    configured = _project(tmp_path / "probe", out / OPS)
    assert configured.returncode == 0, configured.stderr
    assert not any("cmake_pch" in c for c in _commands(tmp_path / "probe").values())
    assert json.loads((out / "manifest.json").read_text())["kernels"]["precompiled_header"] is False


def _included(text: str) -> set[str]:
    """The headers a kernel file includes, less those its ops' catalog includes: add."""
    own = text.split("// Headers the custom code of the ops below needs")
    if len(own) > 1:
        rest = own[1].split("\n\n", 1)[1]
        text = own[0] + rest
    return set(INCLUDE_LINE.findall(text.split("namespace dipu {", 1)[0]))


def test_the_header_holds_what_every_kernel_file_includes_and_no_op_changes_it(workspace: Path):
    _choose(workspace)
    out = _render(workspace, "--shards", "8")
    header = (out / OPS / HEADER).read_text()
    held = set(INCLUDE_LINE.findall(header))
    for f in kernel_files(out):
        assert _included(f.read_text()) <= held, f
    assert "CustomFallbackFunctions.hpp" in held and "torch/csrc/autograd/custom_function.h" in held

    # Another shard count, an op turned off, an op's custom code edited: the same header, not rebuilt.
    for step in (lambda: _render(workspace, "--shards", "3"),
                 lambda: (edit(workspace / "vendors" / "camb.yaml", "\nops:\n", "\nops:\n  add.out: {enabled: false}\n"),
                          _render(workspace))):
        step()
        assert (out / OPS / HEADER).read_text() == header


def test_into_removes_the_header_once_it_is_no_longer_chosen(workspace: Path, tmp_path: Path):
    tree = dipu_checkout(tmp_path / "dipu")
    _choose(workspace)
    first = run_cli("render", "--vendor", "camb", "--into", str(tree), cwd=workspace)
    assert first.exit_code == 0, first.output
    assert (tree / OPS / HEADER).is_file()
    edit(workspace / "vendors" / "camb.yaml", "  precompiled_header: true\n", "")
    second = run_cli("render", "--vendor", "camb", "--into", str(tree), cwd=workspace)
    assert second.exit_code == 0, second.output
    assert not (tree / OPS / HEADER).exists()
    assert f"removed: {OPS}/{HEADER}" in second.output


@pytest.mark.slow
def test_a_kernel_file_compiles_through_the_precompiled_header(workspace: Path, tmp_path: Path):
    """ninja builds the header first, then a kernel file that reads it: an unusable header
    is an error here (-Werror=invalid-pch), not a silent fallback to parsing the headers."""
    _choose(workspace)
    out = _render(workspace, "--shards", "8")
    torch = torch_include_flags()[1::2]
    flags = (f'target_include_directories(torch_dipu PRIVATE "{INCLUDE / "dipu"}" "{diopi_include()}")\n'
             f'target_include_directories(torch_dipu SYSTEM PRIVATE {" ".join(f"{t!r}" for t in torch)})\n'
             f"target_compile_definitions(torch_dipu PRIVATE DIPU_TORCH_VERSION={torch_version_code()} "
             "_GLIBCXX_USE_CXX11_ABI=1)\n"
             f'target_compile_options(torch_dipu PRIVATE -iquote "{INCLUDE / "dipu"}" -Werror=invalid-pch)\n')
    flags = flags.replace("'", '"')
    folder = tmp_path / "probe"
    configured = _project(folder, out / OPS, flags=flags)
    assert configured.returncode == 0, configured.stderr
    smallest = min(kernel_files(out), key=lambda f: f.stat().st_size)
    obj = next(o for o in subprocess.run(["ninja", "-C", str(folder / "build"), "-t", "targets", "all"],
                                         capture_output=True, text=True, check=True).stdout.split("\n")
               if o.split(":")[0].endswith(f"{smallest.name}.o")).split(":")[0]
    built = subprocess.run(["ninja", "-C", str(folder / "build"), "-v", obj], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-6000:]
    lines = [line for line in built.stdout.splitlines() if " -c " in line]
    assert len(lines) == 2 and "cmake_pch.hxx.gch" in lines[0] and smallest.name in lines[1], built.stdout[-3000:]
    assert "-include" in lines[1] and "cmake_pch.hxx" in lines[1]
