"""A rendered runtime, linked and run: droplet's deviceimpl.cpp against a tang runtime with
CUDA's sticky-error behaviour (fixtures/runtime_run/sticky_tang.cpp, only the functions the
program reaches; the others are left unresolved and never called)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import INCLUDE, REPO, torch_root, vendor_dir

FIXTURES = REPO / "tests" / "fixtures" / "runtime_run"


def _build(rendered: Path, tmp_path: Path, vendorapi: str | None = None) -> Path:
    overlay = tmp_path / "overlay" / "csrc_dipu" / "vendor"
    overlay.mkdir(parents=True)
    vdir = vendor_dir(rendered, "droplet")
    (overlay / "vendorapi.h").write_text(vendorapi if vendorapi is not None else (vdir / "vendorapi.h").read_text())
    torch = torch_root()
    exe = tmp_path / "after_oom"
    cmd = ["g++", "-std=c++17", "-O0", "-no-pie", f"-I{tmp_path / 'overlay'}", f"-I{INCLUDE / 'dipu'}",
           f"-I{INCLUDE / 'sdk' / 'droplet'}", "-isystem", str(torch / "include"),
           str(vdir / "deviceimpl.cpp"), str(FIXTURES / "sticky_tang.cpp"), str(FIXTURES / "after_oom.cpp"),
           "-o", str(exe), "-Wl,--unresolved-symbols=ignore-all", f"-L{torch / 'lib'}", "-lc10",
           f"-Wl,-rpath,{torch / 'lib'}"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    return exe


def test_no_stale_error_after_an_out_of_memory(rendered: Path, tmp_path: Path):
    """Every failure path of a checked call clears the SDK's sticky error (the checker's
    clear_error): after a caught out-of-memory, the next checkLastError() finds nothing."""
    run = subprocess.run([str(_build(rendered, tmp_path))], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.endswith("0 failed\n") and run.stdout.count("PASS") == 7, run.stdout


def test_the_check_fails_without_the_clear(rendered: Path, tmp_path: Path):
    """The program can fail: a check function that does not clear leaves the out-of-memory behind."""
    text = (vendor_dir(rendered, "droplet") / "vendorapi.h").read_text()
    line = "  static_cast<void>(tangGetLastError());  // a failed call leaves no sticky error for the next check\n"
    assert line in text
    run = subprocess.run([str(_build(rendered, tmp_path, text.replace(line, "")))], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1 and "FAIL no stale error after the throw" in run.stdout, run.stdout


def test_rendered_checkers_clear_where_they_can(rendered: Path):
    """Each checker with clear_error calls it when a call fails, in every vendor that has one."""
    import yaml

    seen = 0
    for vendor in ("ascend", "camb", "cuda", "droplet"):
        checkers = yaml.safe_load((REPO / "vendors" / f"{vendor}.yaml").read_text())["runtime"]["checkers"]
        text = (vendor_dir(rendered, vendor) / "vendorapi.h").read_text()
        for name, checker in checkers.items():
            body = text.split(f"inline void dipuCheck_{name}(", 1)[1].split("\n}\n", 1)[0]
            clear = checker.get("clear_error")
            assert (f"static_cast<void>({clear}());" in body) if clear else ("static_cast<void>(" not in body), name
            seen += bool(clear)
    assert seen >= 3
