"""What the commands say when something is off: that each message names the
right line and the right fix, and that the output itself stays readable
(short paths, a closed pipe ends the command quietly)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import REPO, copy_workspace, edit, error_lines, line_of, run_cli


def _closed_stdout(*args: str, cwd) -> subprocess.CompletedProcess:
    """This checkout's CLI with a standard output whose reader is already
    gone, as `deeplink-gen ... | head` leaves it once head has exited."""
    read, write = os.pipe()
    os.close(read)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    try:
        return subprocess.run([sys.executable, "-m", "deeplink_gen", *args], cwd=cwd, env=env, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [("explain", "--vendor", "hostsim"), ("explain", "add.out", "--vendor", "hostsim"),
                                  ("validate",), ("--help",)])
def test_a_closed_stdout_ends_the_command_quietly(args):
    proc = _closed_stdout(*args, cwd=REPO)
    assert proc.stderr == ""
    assert proc.returncode in (0, 141)


def test_explain_shows_the_packaged_catalog_as_deeplink_gen_paths(tmp_path):
    # Run from a folder outside the package, as a user of the installed wheel does.
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(REPO), "explain", "add.out",
                           "--vendor", "hostsim"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("add.out  (deeplink_gen/catalog/pointwise.yaml:")
    assert str(REPO / "deeplink_gen") not in proc.stdout


def test_check_says_to_remove_a_file_deeplink_gen_did_not_write(tmp_path):
    root = copy_workspace(tmp_path / "ws", own_catalog=False)
    assert run_cli("render", "--all", cwd=root).exit_code == 0
    extra = root / "generated" / "hostsim" / "notes.txt"
    extra.write_text("mine\n")
    result = run_cli("render", "--all", "--check", cwd=root)
    assert result.exit_code == 1
    told = result.stderr.splitlines()
    assert any("did not write" in line and "remove" in line for line in told), result.stderr
    assert any(line.strip().endswith("generated/hostsim/notes.txt") for line in told), result.stderr
    assert "render --vendor" not in result.stderr      # a render would refuse that folder
    # What it says works: with the file gone, the tree is up to date again (no render needed).
    extra.unlink()
    assert run_cli("render", "--all", "--check", cwd=root).exit_code == 0
    # A render refuses the folder while the file is there, as the check says.
    extra.write_text("mine\n")
    assert "did not write" in run_cli("render", "--vendor", "hostsim", cwd=root).stderr
