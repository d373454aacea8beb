"""A workspace renders for the torch deeplink-gen.yaml names, whichever torch is installed:
with the op table shipped for it, byte for byte what that torch installed renders. The
bundled workspace targets DIPU's torch; a --torch-version that disagrees, or a torch nothing
ships a table for, is an error at deeplink-gen.yaml's line; AutoGenedKernels.cmake stops a
DIPU build with another torch."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import DIPU_TORCH, OPS, REPO, copy_workspace, dipu_torch_python, error_lines, run_cli

CMAKE = "dipu/torch_dipu/csrc_dipu/aten/ops/AutoGenedKernels.cmake"


def _workspace(tmp_path: Path, torch: str) -> Path:
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    (ws / "deeplink-gen.yaml").write_text(f"# target\ntorch: {torch}\n")
    return ws


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_bundled_workspace_targets_dipus_torch():
    import yaml

    assert yaml.safe_load((REPO / "deeplink-gen.yaml").read_text())["torch"] == DIPU_TORCH
    text = (REPO / "generated" / "camb" / CMAKE).read_text()
    assert 'NOT "${DIPU_TORCH_VERSION}" STREQUAL "20202"' in text and "rendered for torch 2.2.2" in text


def test_a_render_for_dipus_torch_without_it_installed_is_what_it_renders(tmp_path: Path):
    """The installed torch (2.13) renders for 2.2.2 from the shipped table; torch 2.2.2's own
    deeplink-gen renders the same workspace; every file is the same, byte for byte."""
    from deeplink_gen.interfaces.aten import installed_torch_version

    if str(installed_torch_version()) == DIPU_TORCH:
        pytest.skip("the installed torch is DIPU's own: nothing to render without it")
    ws = _workspace(tmp_path / "here", DIPU_TORCH)
    result = run_cli("render", "--all", cwd=ws)
    assert result.exit_code == 0, result.output
    theirs = _workspace(tmp_path / "there", DIPU_TORCH)
    done = subprocess.run([str(dipu_torch_python()), "-m", "deeplink_gen", "-C", str(theirs), "render", "--all"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    ours, expected = _tree(ws / "generated"), _tree(theirs / "generated")
    assert sorted(ours) == sorted(expected)
    assert [p for p in ours if ours[p] != expected[p]] == []
    # What differs between the two torches' torchgen shows: optional types as 2.2.2 spells them.
    camb = b"".join(text for path, text in sorted(ours.items())
                    if path.startswith(f"camb/{OPS}/AutoGenedKernels") and path.endswith(".cpp")).decode()
    assert "const c10::optional<at::Tensor> & bias" in camb and "::std::optional" not in camb


def test_a_torch_version_that_disagrees_with_the_workspace_is_an_error(tmp_path: Path):
    ws = _workspace(tmp_path, DIPU_TORCH)
    result = run_cli("render", "--all", "--torch-version", "2.13", cwd=ws)
    assert result.exit_code == 1
    lines = error_lines(result)
    assert lines[0].startswith(f"{ws / 'deeplink-gen.yaml'}:2:") and "torch: " in lines[0], lines
    assert "torch 2.2.2" in lines[0] and "torch 2.13" in lines[0], lines
    assert not (ws / "generated").exists()
    assert run_cli("render", "--all", "--torch-version", "2.2", cwd=ws).exit_code == 0


@pytest.mark.parametrize("torch, message", [("2.5.0", "no op table for torch 2.5.0"),
                                            ("2.2", "a torch version such as 2.2.2")])
def test_a_target_torch_without_a_table_is_an_error(tmp_path: Path, torch: str, message: str):
    ws = _workspace(tmp_path, torch)
    for command in (("render", "--all"), ("validate",)):
        result = run_cli(*command, cwd=ws)
        assert result.exit_code == 1, result.output
        lines = error_lines(result)
        assert lines[0].startswith(f"{ws / 'deeplink-gen.yaml'}:2:") and message in lines[0], lines


@pytest.mark.parametrize("dipu_torch, ok", [("20202", True), ("21300", False), ("20101", False)])
def test_the_kernel_list_stops_a_dipu_build_with_another_torch(tmp_path: Path, dipu_torch: str, ok: bool):
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(fake LANGUAGES NONE)\n"
        f"set(UsedVendor camb)\nset(DIPU_TORCH_VERSION {dipu_torch})\n"
        f"include(\"{REPO / 'generated' / 'camb' / CMAKE}\")\nmessage(STATUS \"kernels: ${{GENERATED_KERNELS}}\")\n")
    r = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build")], capture_output=True, text=True,
                       timeout=300)
    if ok:
        assert r.returncode == 0 and "AutoGenedKernels_0.cpp" in r.stdout, r.stdout + r.stderr
    else:
        assert r.returncode != 0
        flat = " ".join(r.stderr.split())
        assert "rendered for torch 2.2.2" in flat and f"DIPU_TORCH_VERSION {dipu_torch}" in flat, r.stderr


@pytest.mark.parametrize("version", ["2.2.2.5", "2.x.1", "2.2.2-rc"])
def test_a_version_with_more_or_other_parts_is_not_read_as_a_shorter_one(tmp_path: Path, version: str):
    """--torch-version 2.2.2.5 was taken as torch 2.2.2 (and deeplink-gen.yaml's torch: 2.x.1 as
    2.1): a version is X.Y[.Z] with what torch's own builds add, or it is refused."""
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    result = run_cli("validate", "--torch-version", version, cwd=ws)
    assert result.exit_code == 2 and f"'{version}' is not a version such as 2.13" in result.output, result.output
    (ws / "deeplink-gen.yaml").write_text(f"torch: '{version}'\n")
    errors = error_lines(run_cli("validate", cwd=ws))
    assert any("deeplink-gen.yaml:1:" in e and "is not a torch version" in e for e in errors), errors
