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


def _droplet(tmp_path, old: str, new: str):
    root = copy_workspace(tmp_path / "ws", own_catalog=False)
    path = edit(root / "vendors" / "droplet.yaml", old, new)
    return path, error_lines(run_cli("validate", "--vendor", "droplet", cwd=root))


def test_a_torch_dtype_name_is_told_its_diopi_spelling(tmp_path):
    path, errors = _droplet(tmp_path, "    float64: float32\n", "    torch.float64: torch.float32\n")
    assert len(errors) == 2, errors
    assert errors[0].endswith("did you mean 'float64'?") and errors[1].endswith("did you mean 'float32'?"), errors


def test_a_key_moved_left_is_reported_on_its_own_line(tmp_path):
    path, errors = _droplet(tmp_path, "  supported: [bool", "supported: [bool")
    assert len(errors) == 1 and errors[0].startswith(f"{path}:{line_of(path, 'supported: [bool')}:1:"), errors
    assert "'dtypes:'" in errors[0], errors


def test_a_missing_strong_function_is_reported_at_its_section_functions(tmp_path):
    path, errors = _droplet(tmp_path, "      syncDevice: tangDeviceSynchronize()\n", "")
    device = line_of(path, "  device:")
    # The first functions: below runtime.device:.
    functions = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                     if n > device and text == "    functions:")
    assert len(errors) == 1 and errors[0].startswith(f"{path}:{functions}:5:"), errors
    assert "'syncDevice'" in errors[0]


def test_a_key_nested_too_deep_says_where_it_belongs(tmp_path):
    path, errors = _droplet(tmp_path, "  generator:\n    kind: seed_offset\n", "    generator:\n      kind: seed_offset\n")
    assert len(errors) == 1 and "runtime.comm.generator" in errors[0], errors
    assert "belongs under 'runtime', beside 'comm'" in errors[0], errors


@pytest.mark.parametrize("written", ['"2.13"', '"2.13.0"'])
def test_the_workspace_torch_takes_what_torch_version_takes(tmp_path, written):
    root = copy_workspace(tmp_path / "ws", own_catalog=False)
    (root / "deeplink-gen.yaml").write_text(f"torch: {written}\n")
    assert run_cli("validate", "--torch-version", "2.13", "--vendor", "hostsim", cwd=root).exit_code == 0
    result = run_cli("validate", "--vendor", "hostsim", cwd=root)
    assert result.exit_code == 0, result.output
    assert "torch 2.13.0" in result.output


def test_an_unquoted_torch_version_is_told_yaml_read_a_number(tmp_path):
    root = copy_workspace(tmp_path / "ws", own_catalog=False)
    (root / "deeplink-gen.yaml").write_text("torch: 2.2\n")
    errors = error_lines(run_cli("validate", "--vendor", "hostsim", cwd=root))
    assert len(errors) == 1 and "as a number" in errors[0] and 'torch: "2.2"' in errors[0], errors


def test_validate_help_names_the_torch_it_checks_against():
    """validate checks against deeplink-gen.yaml's torch (often a shipped op table), not always the installed one."""
    text = " ".join(run_cli("validate", "--help").output.split())
    assert "op names exist in the torch the workspace renders for (deeplink-gen.yaml's torch:" in text
    assert "exist in the installed torch," not in text
