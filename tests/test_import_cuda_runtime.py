"""import-dipu --runtime on a vendor folder written for NVIDIA's real CUDA runtime and NCCL
(tests/fixtures/dipu_vendors/cudalike), checked against the real headers
(helpers.cuda_headers(); no stand-ins): the imported vendor validates and renders, its
rendered runtime compiles to objects without warnings, and the undefined CUDA and NCCL
symbols of those objects are exactly the calls the folder's own sources make. Stand-in
SDK headers could hide a renamed argument or a call the SDK does not declare; these
cannot."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import (CUDA_RENAMED, DIPU_CHECKOUT, DIPU_TORCH, REPO, compile_runtime_objects, cuda_symbols, edit,
                     run_cli, vendor_dir)

FIXTURE = REPO / "tests" / "fixtures" / "dipu_vendors" / "cudalike"
FUNCTIONS = DIPU_CHECKOUT / "dipu" / "scripts" / "autogen_diopi_wrapper" / "diopi_functions.yaml"
SOURCES = ("deviceimpl.cpp", "communicatorimpl.cpp")
WARNINGS = ["-Wall", "-Wextra", "-Werror=missing-declarations", "-Werror=return-type"]
# A call of the CUDA runtime or NCCL, `::`-qualified or not (a name of a type or a macro is
# not followed by '(').
SDK_CALL = re.compile(r"(?<![\w.])(?:::)?((?:cuda|nccl)[A-Za-z0-9_]*)\s*\(")


def _import(fixture: Path, ws: Path) -> Path:
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--runtime", f"cudalike={fixture}",
                     "--vendors", "cudalike", "--torch-version", DIPU_TORCH, "--out", str(ws))
    assert result.exit_code == 0, result.output
    assert run_cli("validate", cwd=ws).exit_code == 0
    rendered = run_cli("render", "--all", cwd=ws)
    assert rendered.exit_code == 0, rendered.output
    return ws / "generated"


def _compile(generated: Path, out: Path) -> dict[str, subprocess.CompletedProcess]:
    return compile_runtime_objects(generated, "cudalike", out, SOURCES, WARNINGS,
                                   extra=[f"-I{vendor_dir(generated, 'cudalike')}"])


def _calls_of_the_folder() -> set[str]:
    """The CUDA and NCCL functions the fixture's runtime sources call, with vendorapi.h,
    whose check macro they expand; under the names CUDA 12 links them by."""
    text = "\n".join((FIXTURE / name).read_text() for name in ("vendorapi.h", *SOURCES))
    return {CUDA_RENAMED.get(n, n) for n in SDK_CALL.findall(text)}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> tuple[Path, dict[str, subprocess.CompletedProcess]]:
    tmp = tmp_path_factory.mktemp("cudalike")
    out = tmp / "objects"
    return out, _compile(_import(FIXTURE, tmp / "ws"), out)


def test_the_imported_runtime_compiles_against_the_real_headers(compiled):
    out, results = compiled
    for name, result in results.items():
        assert result.returncode == 0, (name, result.stderr[-6000:])
        assert "warning:" not in result.stderr, (name, result.stderr[-6000:])
        assert (out / f"{name}.o").stat().st_size > 0


def test_the_undefined_sdk_symbols_are_the_calls_of_the_folder(compiled):
    out, results = compiled
    assert all(r.returncode == 0 for r in results.values())
    expected = _calls_of_the_folder()
    # the extraction sees both libraries, the checkers' message functions and the renamed entry point
    for name in ("cudaMemcpyPeerAsync", "cudaStreamCreateWithPriority", "cudaGetErrorString",
                 "cudaGetDeviceProperties_v2", "ncclReduceScatter", "ncclGetErrorString"):
        assert name in expected, name
    assert cuda_symbols([out / f"{name}.o" for name in SOURCES]) == expected


def test_a_misspelled_call_in_the_folder_does_not_compile(tmp_path: Path):
    """Negative control: a copy of the folder whose device code calls a function the CUDA
    runtime does not declare imports, and its rendered runtime fails to compile, naming it."""
    copy = tmp_path / "cudalike"
    shutil.copytree(FIXTURE, copy)
    edit(copy / "deviceimpl.cpp", "cudaEventElapsedTime(ms, begin, finish)", "cudaEventElapsedTimes(ms, begin, finish)")
    results = _compile(_import(copy, tmp_path / "ws"), tmp_path / "out")
    assert results["communicatorimpl.cpp"].returncode == 0, results["communicatorimpl.cpp"].stderr[-4000:]
    stderr = results["deviceimpl.cpp"].stderr
    assert results["deviceimpl.cpp"].returncode != 0
    assert re.search(r"error: .*cudaEventElapsedTimes", stderr), stderr[-4000:]
