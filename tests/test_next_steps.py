"""A command that succeeds ends with a `next:` line, and the command it names
runs: from `init` to a rendered, checked vendor by following them alone."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from helpers import REPO, copy_workspace, dipu_checkout, run_cli, run_subprocess


def _next(result) -> str:
    """The last line of a successful run, which must be its `next:` line."""
    assert result.exit_code == 0, result.output
    last = result.output.splitlines()[-1]
    assert last.startswith("next: "), result.output
    return last


def _follow(line: str, **names: str):
    """Run the deeplink-gen command a `next:` line names (NAME and the like filled in)."""
    command = line[line.index("deeplink-gen"):].split("   (")[0].split(", then")[0]
    args = shlex.split(command)[1:]
    return run_cli(*[names.get(a, a) for a in args])


def test_following_next_from_init_to_a_checked_render(tmp_path: Path):
    line = _next(run_cli("init", str(tmp_path)))
    assert line.startswith(f"next: deeplink-gen -C {tmp_path} new-vendor NAME")
    line = _next(_follow(line, NAME="acme"))
    assert line == f"next: fill in vendors/acme.yaml (step 1), then deeplink-gen -C {tmp_path} validate --vendor acme"
    line = _next(_follow(line))
    assert line == f"next: deeplink-gen -C {tmp_path} render --vendor acme"
    line = _next(_follow(line))
    assert line.startswith(f"next: deeplink-gen -C {tmp_path} render --vendor acme --into CHECKOUT")
    line = _next(run_cli("render", "--all", "--check", cwd=tmp_path))
    assert line.startswith(f"next: deeplink-gen -C {tmp_path} render --vendor acme --into CHECKOUT")


def test_validate_without_vendors_names_new_vendor(tmp_path: Path):
    run_cli("init", str(tmp_path))
    assert _next(run_cli("validate", cwd=tmp_path)) == f"next: deeplink-gen -C {tmp_path} new-vendor NAME"


def test_explain_and_coverage_end_with_a_runnable_next(tmp_path: Path):
    line = _next(run_cli("explain", "--vendor", "camb", cwd=REPO))
    assert line.startswith(f"next: deeplink-gen -C {REPO} explain OP --vendor camb")
    result = _follow(line, OP="add.out")
    assert result.output.startswith("add.out  (")
    assert _next(result).startswith("next: change it under ops: add.out: in vendors/camb.yaml, then "
                                    f"deeplink-gen -C {REPO} render --vendor camb")
    line = _next(run_cli("coverage", "--vendor", "camb", cwd=REPO))
    assert _follow(line, OP="mm.out").exit_code == 0
    # A report for tools keeps stdout clean: the next line goes to stderr.
    result = run_cli("coverage", "--vendor", "camb", "--format", "json", cwd=REPO)
    assert result.stdout.rstrip().endswith("}") and result.stderr.splitlines()[-1].startswith("next: ")


def test_drift_ends_with_next_when_nothing_breaks():
    line = _next(run_cli("drift", "--from", "2.1.1", "--to", "2.2.2", cwd=REPO))
    assert line == (f"next: deeplink-gen -C {REPO} validate --torch-version 2.2.2, then set torch: 2.2.2 in "
                    "deeplink-gen.yaml and render --all")
    assert _follow(line).exit_code == 0


def _run_from(where: Path, command: str, **names: str):
    """A deeplink-gen command line run as a process from the folder *where* (NAME and the like filled in)."""
    args = [names.get(a, a) for a in shlex.split(command)[1:]]
    return run_subprocess(*args, cwd=where)


def _next_command(proc) -> str:
    """The deeplink-gen command of a process's `next:` line (the last line of stdout or stderr)."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = (proc.stdout.splitlines() or [""])[-1]
    if not line.startswith("next: "):
        line = proc.stderr.splitlines()[-1]
    assert line.startswith("next: "), proc.stdout + proc.stderr
    return line[line.index("deeplink-gen"):].split("   (")[0].split(", then")[0].split("`")[0]


def test_next_lines_run_from_the_users_folder_with_dash_C(tmp_path: Path):
    """Each `next:` of a command run with -C DIR names the workspace the same way, so that
    pasting it where the user stands works: validate, render, render --check and
    explain, through to --into a checkout."""
    user = tmp_path / "user"
    copy_workspace(user / "ws")
    checkout = dipu_checkout(tmp_path / "framework")
    command = _next_command(run_subprocess("-C", "ws", "validate", "--vendor", "droplet", cwd=user))
    assert command == "deeplink-gen -C ws render --vendor droplet"
    command = _next_command(_run_from(user, command))
    assert command == "deeplink-gen -C ws render --vendor droplet --into CHECKOUT"
    assert _next_command(run_subprocess("-C", "ws", "render", "--vendor", "droplet", "--check", cwd=user)) == command
    into = _run_from(user, command, CHECKOUT=str(checkout))
    assert into.returncode == 0, into.stdout + into.stderr
    assert "of `deeplink-gen -C ws render --vendor droplet` says what else" in into.stdout
    assert (checkout / "dipu/torch_dipu/csrc_dipu/vendor/droplet").is_dir()
    command = _next_command(run_subprocess("-C", "ws", "explain", "--vendor", "droplet", cwd=user))
    assert command == "deeplink-gen -C ws explain OP --vendor droplet"
    assert _run_from(user, command, OP="add.out").returncode == 0


def test_a_next_line_quotes_a_path_the_shell_would_split_or_run(tmp_path: Path):
    """A workspace path with a space, or with `$(...)`, is one word of the command a next: line
    names: pasted into a shell, it runs that command on that folder, and nothing else."""
    ws = tmp_path / "my ws;$(touch PWNED)"
    line = _next(run_cli("init", str(ws)))
    assert line.startswith(f"next: deeplink-gen -C {shlex.quote(str(ws))} new-vendor NAME")
    command = line[len("next: "):].split("   (")[0].replace("NAME", "acme")
    proc = subprocess.run(command.replace("deeplink-gen", f"{shlex.quote(sys.executable)} -m deeplink_gen", 1),
                          shell=True, cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert (ws / "vendors" / "acme.yaml").is_file() and not (tmp_path / "PWNED").exists()
