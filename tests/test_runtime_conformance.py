"""The rendered runtime conformance test, built with its own CMakeLists.txt (through the vendor
folder's, as DIPU adds it) against our DIPU declaration headers and this torch, and run: hostsim's
runtime is libc, so the whole program runs here. It must pass as rendered and fail, naming the
check, when a call's arguments are swapped or a function answers wrongly. A function the vendor file
leaves `unsupported` skips, naming it, each check that would call it: the untouched scaffold of a new
vendor builds with no SDK and runs without a failure."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import INCLUDE, copy_workspace, edit, run_cli, torch_root, vendor_dir

pytestmark = pytest.mark.slow


def _build_and_run(generated: Path, tmp_path: Path, mutate=None, vendor: str = "hostsim") -> subprocess.CompletedProcess:
    """Copy *vendor*'s rendered vendor folder, let *mutate* edit it, build the conformance test, run it."""
    folder = tmp_path / vendor
    shutil.copytree(vendor_dir(generated, vendor), folder)
    if mutate is not None:
        mutate(folder)
    build = tmp_path / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(folder / "conformance"), "-B", str(build), f"-DDIPU_INCLUDE_DIR={INCLUDE / 'dipu'}",
         f"-DTORCH_DIR={torch_root()}", "-DCMAKE_CXX_FLAGS=-Wall -Wextra -O1"],
        capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout[-3000:] + configure.stderr[-3000:]
    compiled = subprocess.run(["cmake", "--build", str(build)], capture_output=True, text=True, timeout=900)
    assert compiled.returncode == 0, compiled.stdout[-5000:] + compiled.stderr[-3000:]
    assert "warning:" not in compiled.stdout + compiled.stderr, compiled.stdout[-5000:]
    return subprocess.run([str(build / f"{vendor}_runtime_conformance")], capture_output=True, text=True, timeout=120)


def test_hostsim_passes_every_check(rendered: Path, tmp_path: Path):
    run = _build_and_run(rendered, tmp_path)
    out = run.stdout
    assert run.returncode == 0 and out.endswith(" passed, 0 failed\n"), out + run.stderr
    passed = int(out.splitlines()[-1].split()[0])
    assert passed == out.count("PASS ") and passed >= 90, out
    for line in ("PASS memCopyH2D() of 100 bytes at offset 7 writes those only",
                 "PASS memCopyH2DAsync(), memCopyD2DAsync(), memCopyD2HAsync() on one stream",
                 "PASS getEventStatus() after waitEvent() is READY",
                 "PASS mallocDevice(4 PiB, throwExcepion=false) returns ERR_NOMEM",
                 "PASS no stale error after the throw",
                 "PASS diclGetCommAsyncError() is DICL_SUCCESS on a healthy communicator",
                 "PASS diclAllReduce(SUM) of Half on one rank leaves the input",
                 "PASS diclReduceScatter(SUM) of Long on one rank leaves the input",
                 "PASS diclAllReduce() of ComplexDouble (not in comm.dtypes) is rejected with an error naming it",
                 "SKIP isPinnedPtr(): isPinnedPtr is constant in vendors/hostsim.yaml",
                 "SKIP diclSend(): diclSend is unsupported in vendors/hostsim.yaml"):
        assert line in out.splitlines(), (line, out)


def test_swapped_arguments_fail(rendered: Path, tmp_path: Path):
    """memSetAsync's value and size swapped: it compiles, and the test names what broke."""
    def swap(folder: Path):
        edit(folder / "deviceimpl.cpp", "memset(ptr, val, size);", "memset(ptr, size, val);")

    run = _build_and_run(rendered, tmp_path, swap)
    assert run.returncode == 1, run.stdout
    fails = [line for line in run.stdout.splitlines() if line.startswith("FAIL ")]
    assert fails == ["FAIL the work recorded before an event is done when waitEvent() returns",
                     "FAIL memSetAsync() sets every byte: byte 0 is 3, expected 90",
                     "FAIL memSetAsync() of 32 bytes at offset 16 sets those only: byte 0 is 3, expected 90"], run.stdout
    assert run.stdout.endswith(" passed, 3 failed\n"), run.stdout


def test_wrong_answers_fail(tmp_path: Path):
    """A vendor file whose event query, allocation and async-error answers are wrong, rendered by
    the CLI: each wrong answer fails its own check."""
    ws = copy_workspace(tmp_path / "ws")
    yaml = ws / "vendors" / "hostsim.yaml"
    edit(yaml, 'getEventStatus: {return: "EventStatus::READY"}', 'getEventStatus: {return: "EventStatus::PENDING"}')
    edit(yaml, 'mallocDevice: {pattern: malloc, call: "posix_memalign({p}, 64, {nbytes})"}',
         'mallocDevice: {call: "posix_memalign({p}, 64, {nbytes})", return: "OpStatus::SUCCESS"}')
    edit(yaml, 'diclGetCommAsyncError: {return: "DICL_SUCCESS"}', 'diclGetCommAsyncError: {return: "DICL_ERR_UNDEF"}')
    result = run_cli("render", "--vendor", "hostsim", cwd=ws)
    assert result.exit_code == 0, result.output
    run = _build_and_run(ws / "generated", tmp_path / "out")
    assert run.returncode == 1, run.stdout
    fails = [line.split(":")[0] for line in run.stdout.splitlines() if line.startswith("FAIL ")]
    assert fails == ["FAIL getEventStatus() after waitEvent() is READY",
                     "FAIL mallocDevice(4 PiB, throwExcepion=false) returns ERR_NOMEM",
                     "FAIL diclGetCommAsyncError() is DICL_SUCCESS on a healthy communicator"], run.stdout


def test_unsupported_functions_skip_the_checks_that_call_them(tmp_path: Path):
    """hostsim with an event query, an async copy and a collective made `unsupported`: the checks that
    would call them skip, naming the function and the vendor file; every other check still runs and passes."""
    ws = copy_workspace(tmp_path / "ws")
    yaml = ws / "vendors" / "hostsim.yaml"
    edit(yaml, 'getEventStatus: {return: "EventStatus::READY"}', "getEventStatus: unsupported")
    edit(yaml, 'memCopyD2DAsync: {call: "memmove({dst}, {src}, {nbytes})", checker: none}', "memCopyD2DAsync: unsupported")
    edit(yaml, "checkLastError: noop", "checkLastError: unsupported")
    result = run_cli("render", "--vendor", "hostsim", cwd=ws)
    assert result.exit_code == 0, result.output
    run = _build_and_run(ws / "generated", tmp_path / "out")
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and run.stdout.endswith(" passed, 0 failed\n"), run.stdout
    for line in ("SKIP events around 64 MiB of work: createEvent(), getEventStatus(), waitEvent(): "
                 "getEventStatus is unsupported in vendors/hostsim.yaml",
                 "SKIP memCopyH2DAsync(), memCopyD2DAsync(), memCopyD2HAsync() on one stream: "
                 "memCopyD2DAsync is unsupported in vendors/hostsim.yaml",
                 "SKIP no stale error after ERR_NOMEM: checkLastError is unsupported in vendors/hostsim.yaml",
                 "PASS mallocDevice(4 PiB, throwExcepion=false) returns ERR_NOMEM",
                 "PASS memCopyH2D() of 100 bytes at offset 7 writes those only",
                 "PASS isStreamEmpty() after streamWaitEvent() and syncStream()",
                 "PASS diclAllReduce(SUM) of Half on one rank leaves the input"):
        assert line in lines, (line, run.stdout)


def test_untouched_scaffold_builds_and_skips_without_an_sdk(tmp_path: Path):
    """A new vendor in a fresh workspace, rendered as scaffolded: its conformance test configures and
    builds with no SDK, and skips every check (all its functions are `unsupported`) instead of failing."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for args in (("init",), ("new-vendor", "zeta"), ("render", "--vendor", "zeta")):
        result = run_cli(*args, cwd=ws)
        assert result.exit_code == 0, result.output
    run = _build_and_run(ws / "generated", tmp_path / "out", vendor="zeta")
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and lines[-1] == "0 passed, 0 failed", run.stdout
    assert not [line for line in lines if not line.startswith("SKIP ")][:-1], run.stdout
    assert ("SKIP out of memory: mallocDevice(4 PiB) with and without throwExcepion: "
            "mallocDevice is unsupported in vendors/zeta.yaml") in lines, run.stdout
