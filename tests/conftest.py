"""Shared fixtures: a private cache directory, scratch copies of the bundled
workspace, and the bundled workspace rendered once. Shared functions are in
helpers.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import helpers
from helpers import copy_workspace, run_cli


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Keep the torch op index and render stamps out of the user's home."""
    os.environ["DEEPLINK_GEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A scratch copy of the bundled workspace (catalog and vendors, no output)."""
    return copy_workspace(tmp_path / "ws")


@pytest.fixture(scope="session")
def rendered(tmp_path_factory) -> Path:
    """The bundled workspace rendered once into a scratch directory (read-only for tests)."""
    ws = copy_workspace(tmp_path_factory.mktemp("rendered-ws"))
    result = run_cli("render", "--all", cwd=ws)
    assert result.exit_code == 0, result.output
    return ws / "generated"


def pytest_configure(config):
    helpers.PYTEST_CONFIG = config       # a first-run download shows its progress (helpers.download)
    config.addinivalue_line("markers", "slow: builds C++ against torch (about a minute); runs by default")
