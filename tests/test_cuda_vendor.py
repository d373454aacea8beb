"""The bundled cuda vendor against the real CUDA runtime and NCCL headers (NVIDIA's wheels,
helpers.cuda_headers(); no stand-ins): its rendered runtime compiles to objects whose
undefined CUDA and NCCL symbols are exactly the calls vendors/cuda.yaml names, and a
misspelled call does not compile."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import (CUDA_RENAMED, REPO, compile_runtime_objects, copy_workspace, cuda_symbols, edit, run_cli,
                     vendor_dir)

SOURCES = ("deviceimpl.cpp", "communicatorimpl.cpp", "CudaGeneratorImpl.cpp")
WARNINGS = ["-Wall", "-Wextra", "-Werror=missing-declarations"]
CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(")


def _compile(generated: Path, out: Path, sources=SOURCES) -> dict[str, subprocess.CompletedProcess]:
    """Each rendered cuda source compiled to out/<source>.o (g++ -c)."""
    return compile_runtime_objects(generated, "cuda", out, sources, WARNINGS)


def _named_calls(section: dict) -> set[str]:
    """The vendor calls a runtime section's functions name (call templates of every shape)."""
    names = set()
    for value in section["functions"].values():
        templates = [value] if isinstance(value, str) else [
            *value.get("calls", []), *(value.get(k) for k in ("call", "with_priority", "plain", "same_device", "peer"))]
        names |= {m.group(1) for t in templates if t and (m := CALL.match(t))}
    return {CUDA_RENAMED.get(n, n) for n in names}


def _expected_symbols() -> set[str]:
    runtime = yaml.safe_load((REPO / "vendors" / "cuda.yaml").read_text())["runtime"]
    used = {runtime["device"]["checker"], runtime["comm"]["checker"]}
    checker_calls = {runtime["checkers"][c][k] for c in used for k in ("clear_error", "message_function")
                     if k in runtime["checkers"][c]}
    return _named_calls(runtime["device"]) | _named_calls(runtime["comm"]) | checker_calls


@pytest.fixture(scope="module")
def compiled(rendered: Path, tmp_path_factory) -> tuple[Path, dict[str, subprocess.CompletedProcess]]:
    out = tmp_path_factory.mktemp("cuda-objects")
    return out, _compile(rendered, out)


def test_runtime_compiles_against_the_real_headers(compiled):
    out, results = compiled
    for name, result in results.items():
        assert result.returncode == 0, (name, result.stderr[-6000:])
        assert "warning:" not in result.stderr, (name, result.stderr[-6000:])
        assert (out / f"{name}.o").stat().st_size > 0


def test_the_calls_the_yaml_names_are_the_undefined_sdk_symbols(compiled):
    out, results = compiled
    assert all(r.returncode == 0 for r in results.values())
    undefined = cuda_symbols([out / f"{name}.o" for name in SOURCES])
    for symbol in ("cudaMemcpyAsync", "cudaEventElapsedTime", "cudaEventCreateWithFlags", "cudaMallocHost",
                   "ncclAllReduce", "ncclCommGetAsyncError", "cudaGetDeviceProperties_v2"):
        assert symbol in undefined, symbol
    assert undefined == _expected_symbols()


def test_the_symbol_check_sees_a_call_that_is_not_made(rendered: Path, tmp_path: Path):
    """Negative control: a deviceimpl.cpp without its cudaEventElapsedTime call compiles, and the
    comparison with the vendor file then fails, naming the missing call."""
    copy = tmp_path / "generated"
    shutil.copytree(rendered / "cuda", copy / "cuda")
    edit(vendor_dir(copy, "cuda") / "deviceimpl.cpp", "DIPU_CALLCUDA(cudaEventElapsedTime(time, start, end));",
         "static_cast<void>(time), static_cast<void>(start), static_cast<void>(end);")
    results = _compile(copy, tmp_path / "out", ("deviceimpl.cpp", "communicatorimpl.cpp"))
    assert all(r.returncode == 0 for r in results.values()), results
    undefined = cuda_symbols([tmp_path / "out" / f"{name}.o" for name in results])
    assert _expected_symbols() - undefined == {"cudaEventElapsedTime"}


def test_a_misspelled_runtime_call_does_not_compile(tmp_path: Path):
    """Negative control: with the real headers, a runtime call the CUDA runtime does not
    declare is a compile error naming it (stand-in headers could hide such a slip)."""
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    edit(ws / "vendors" / "cuda.yaml", 'call: "cudaMalloc({p}, {nbytes})"', 'call: "cudaMallocc({p}, {nbytes})"')
    result = run_cli("render", "--vendor", "cuda", cwd=ws)
    assert result.exit_code == 0, result.output
    results = _compile(ws / "generated", tmp_path / "out", ("deviceimpl.cpp",))
    stderr = results["deviceimpl.cpp"].stderr
    assert results["deviceimpl.cpp"].returncode != 0
    assert re.search(r"error: .*cudaMallocc", stderr), stderr[-4000:]


def test_events_are_timed_and_async_errors_are_not_inverted(rendered: Path):
    """eventElapsedTime needs events created with timing; diclGetCommAsyncError succeeds only
    when NCCL reports no asynchronous error (DIPU's own cuda file inverts this)."""
    device = (vendor_dir(rendered, "cuda") / "deviceimpl.cpp").read_text()
    assert "cudaEventCreateWithFlags(event, cudaEventDefault)" in device
    assert "cudaEventDisableTiming" not in device
    comm = (vendor_dir(rendered, "cuda") / "communicatorimpl.cpp").read_text()
    assert "return asyncError == ncclSuccess ? DICL_SUCCESS : DICL_ERR_UNDEF;" in comm
