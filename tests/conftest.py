"""Shared fixtures: the repository (the bundled workspace), scratch copies of
it, the CLI, and a C++ syntax checker against torch's headers plus our own
DIPU/DIOPI declaration headers."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from deeplink_gen.cli import main

REPO = Path(__file__).resolve().parent.parent
INCLUDE = REPO / "tests" / "include"
KERNELS = "dipu/torch_dipu/csrc_dipu/aten/ops/AutoGenedKernels.cpp"


def run_cli(*args: str, cwd: Path | None = None):
    """Invoke the CLI in-process; returns click's Result (exit_code, stdout, stderr)."""
    argv = list(args)
    if cwd is not None:
        argv = ["-C", str(cwd), *argv]
    return CliRunner().invoke(main, argv, catch_exceptions=False)


def run_subprocess(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "deeplink_gen", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Keep the torch op index and render stamps out of the user's home."""
    os.environ["DEEPLINK_GEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A scratch copy of the bundled workspace (catalog and vendors, no output)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for part in ("catalog", "vendors"):
        shutil.copytree(REPO / part, ws / part)
    return ws


@pytest.fixture(scope="session")
def rendered(tmp_path_factory) -> Path:
    """The bundled workspace rendered once into a scratch directory (read-only for tests)."""
    ws = tmp_path_factory.mktemp("rendered-ws")
    for part in ("catalog", "vendors"):
        shutil.copytree(REPO / part, ws / part)
    result = run_cli("render", "--all", cwd=ws)
    assert result.exit_code == 0, result.output
    return ws / "generated"


def torch_include_flags() -> list[str]:
    """torch's header directories, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    root = Path(next(iter(spec.submodule_search_locations)))
    inc = root / "include"
    # -isystem: warnings in torch's own headers are not ours to fix.
    return ["-isystem", str(inc), "-isystem", str(inc / "torch" / "csrc" / "api" / "include"),
            "-isystem", str(inc / "kineto")]


def syntax_check(source: Path, *, extra: list[str] = (), warnings: list[str] = ("-Wall", "-Wextra"),
                 torch: bool = True) -> subprocess.CompletedProcess:
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-D_GLIBCXX_USE_CXX11_ABI=1", *warnings,
           f"-I{INCLUDE / 'dipu'}", f"-I{INCLUDE / 'diopi'}", f"-iquote{INCLUDE / 'dipu'}"]
    if torch:
        cmd += torch_include_flags()
    cmd += [*extra, str(source)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds C++ against torch (about a minute); runs by default")
