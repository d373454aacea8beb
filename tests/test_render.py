"""render: the committed generated/ tree is current, output is deterministic,
--check/--diff catch drift, and an unchanged render touches no file."""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import KERNELS_0, REPO, copy_workspace, kernels, run_cli, run_subprocess


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_committed_generated_tree_is_current():
    result = run_cli("render", "--all", "--check", cwd=REPO)
    assert result.exit_code == 0, result.output
    if (REPO / ".git").exists():
        # A render earlier in the same job must not have changed the committed files either.
        status = subprocess.run(["git", "status", "--porcelain", "--", "generated"], cwd=REPO,
                                capture_output=True, text=True)
        if status.returncode == 0:
            assert status.stdout == "", f"generated/ differs from the commit:\n{status.stdout}"


def test_every_generated_file_starts_with_the_header():
    for path in sorted((REPO / "generated").rglob("*")):
        if path.is_file():
            first = path.read_text().splitlines()[0]
            assert "@" + "generated" in first and "DO NOT EDIT" in first, path


def test_render_writes_kernels_and_manifest(workspace: Path):
    result = run_cli("render", "--vendor", "camb", cwd=workspace)
    assert result.exit_code == 0, result.output
    out = workspace / "generated" / "camb"
    kernels_text = kernels(out, pasted=False)
    manifest = json.loads((out / "manifest.json").read_text())
    registered = [o["op"] for o in manifest["ops"] if o["enabled"] and o["flags"]["register"]]
    assert registered, manifest
    for op in registered:
        assert f'_REGISTER("{op}", ' in kernels_text, op
    # Helpers DIPU core calls are defined, not registered.
    for o in manifest["ops"]:
        if o["enabled"] and not o["flags"]["register"]:
            assert f'_REGISTER("{o["op"]}", ' not in kernels_text and f' {o["wrapper"]}(' in kernels_text, o["op"]
    listed = {f["path"] for f in manifest["files"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert KERNELS_0 in listed and listed == on_disk - {"manifest.json"}
    assert not (workspace / "generated" / "ascend").exists()


def test_output_is_identical_across_hash_seeds_and_locales(tmp_path: Path):
    # The bundled catalog, as in the repository, so #line directives name the same files.
    workspace = copy_workspace(tmp_path / "ws", own_catalog=False)
    shutil.copy(REPO / "deeplink-gen.yaml", workspace / "deeplink-gen.yaml")    # its target torch
    trees = []
    for seed, locale in (("0", "C"), ("1", "C.UTF-8"), ("42", "C"), ("4242", "C.UTF-8"), ("random", "C")):
        out = tmp_path / f"out-{seed}"
        proc = run_subprocess("-C", str(workspace), "render", "--all", "--out", str(out), "--allow-outside-workspace",
                              env={"PYTHONHASHSEED": seed, "LC_ALL": locale})
        assert proc.returncode == 0, proc.stderr
        trees.append(_tree(out))
    assert all(tree == trees[0] for tree in trees)
    # The workspace lives at another path than the repository: no absolute paths leak.
    assert trees[0] == _tree(REPO / "generated")


def test_unchanged_render_touches_nothing(workspace: Path):
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    files = sorted((workspace / "generated").rglob("*"))
    before = {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in files}
    result = run_cli("render", "--all", cwd=workspace)
    assert result.exit_code == 0
    assert result.output.startswith("0 written")
    assert {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in files} == before


def test_changing_one_vendor_rewrites_only_its_files(workspace: Path):
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    camb_kernels = workspace / "generated" / "camb" / KERNELS_0
    ascend_kernels = workspace / "generated" / "ascend" / KERNELS_0
    camb_before, ascend_before = camb_kernels.stat().st_mtime_ns, ascend_kernels.stat().st_mtime_ns
    vendor = workspace / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("  profiler: true", "  profiler: false"))
    result = run_cli("render", "--all", cwd=workspace)
    assert result.exit_code == 0
    assert "RecordBlockCreator" not in camb_kernels.read_text()
    assert camb_kernels.stat().st_mtime_ns != camb_before
    assert ascend_kernels.stat().st_mtime_ns == ascend_before


def test_check_reports_stale_missing_and_unexpected(workspace: Path):
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    gen = workspace / "generated"
    kernels = gen / "camb" / KERNELS_0
    kernels.write_text(kernels.read_text().replace("return out;", "return out; // hand edit\x1b]0;T\x07", 1))
    (gen / "ascend" / "manifest.json").unlink()
    (gen / "droplet" / "notes.txt").write_text("stray")
    (gen / "droplet" / "extra\x1b]0;PWNED\x07.txt").write_text("stray")
    result = run_cli("render", "--all", "--check", "--diff", cwd=workspace)
    assert result.exit_code == 1
    assert f"stale: camb/{KERNELS_0}" in result.stderr
    assert "missing: ascend/manifest.json" in result.stderr
    assert "unexpected: droplet/notes.txt" in result.stderr
    assert "unexpected: droplet/extra\\x1b]0;PWNED\\x07.txt" in result.stderr
    assert "-  return out; // hand edit\\x1b]0;T\\x07\n" in result.stdout and f"+++ b/camb/{KERNELS_0}" in result.stdout
    assert "\x1b" not in result.output      # a file's bytes shown, never a terminal's commands
    # --check wrote nothing.
    assert "hand edit" in kernels.read_text() and not (gen / "ascend" / "manifest.json").exists()
    (gen / "droplet" / "extra\x1b]0;PWNED\x07.txt").unlink()
    # A real render repairs the edit, but deletes neither the stray file nor a folder it cannot tell is its own.
    result = run_cli("render", "--all", cwd=workspace)
    assert result.exit_code == 1
    assert "droplet: holds an entry deeplink-gen did not write (notes.txt)" in result.stderr
    assert (gen / "droplet" / "notes.txt").read_text() == "stray"
    (gen / "droplet" / "notes.txt").unlink()
    shutil.rmtree(gen / "ascend")
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    assert run_cli("render", "--all", "--check", cwd=workspace).exit_code == 0


def test_check_without_output_fails(workspace: Path):
    result = run_cli("render", "--vendor", "camb", "--check", cwd=workspace)
    assert result.exit_code == 1
    assert f"missing: camb/{KERNELS_0}" in result.stderr


def test_autocompare_flag_overrides_vendor_defaults(workspace: Path, tmp_path: Path):
    def twins(flag: str) -> int:
        out = tmp_path / flag.strip("-")
        assert run_cli("render", "--vendor", "camb", flag, "--out", str(out), "--allow-outside-workspace", cwd=workspace).exit_code == 0
        return kernels(out / "camb", pasted=False).count("_autocompare(")

    on, off = twins("--autocompare"), twins("--no-autocompare")
    assert off == 0
    assert on > 40


def test_torch_gate_selects_entries(workspace: Path, tmp_path: Path):
    """A gated entry applies to the versions its gate admits: torch 2.1's op
    table (the shipped snapshot) has bmm.out rendered, the installed 2.13 not."""
    cat = workspace / "catalog" / "reduce.yaml"
    cat.write_text(cat.read_text().replace("  bmm.out:\n", "  bmm.out:\n    torch: '<2.5'\n"))
    old = run_cli("explain", "bmm.out", "--vendor", "camb", "--torch-version", "2.1", cwd=workspace)
    assert old.exit_code == 0, old.output
    assert old.output.startswith("bmm.out  (") and "DIOPI call      diopiBmm(" in old.output
    new = tmp_path / "new"
    assert run_cli("render", "--vendor", "camb", "--out", str(new), "--allow-outside-workspace", cwd=workspace).exit_code == 0
    assert '"bmm.out"' not in kernels(new / "camb", pasted=False)
    skipped = json.loads((new / "camb" / "manifest.json").read_text())["skipped"]
    assert {"op": "bmm.out", "reason": "torch 2.13.0 is outside '<2.5'"} in skipped
    now = run_cli("explain", "bmm.out", "--vendor", "camb", cwd=workspace)
    assert now.output.splitlines()[0] == "bmm.out: not rendered: torch 2.13.0 is outside '<2.5'"


def test_render_torch_version_renders_for_a_torch_not_installed(workspace: Path):
    """--torch-version renders with the installed torch when it is that version and with
    the shipped op table otherwise; a version nothing ships a table for is a usage error
    naming what is there, before anything is written."""
    for wanted in ("2.13.1", "1.13"):
        result = run_cli("render", "--vendor", "camb", "--torch-version", wanted, cwd=workspace)
        assert result.exit_code == 2, result.output
        assert f"no op table for torch {wanted}" in result.output and "shipped for 2.0.0, 2.1.1, 2.2.2, 2.13.0" in \
            result.output, result.output
        assert not (workspace / "generated").exists()
    manifest = workspace / "generated" / "camb" / "manifest.json"
    for wanted, rendered in (("2.1", "2.1.1"), ("2.13", "2.13.0"), ("2.2.2", "2.2.2")):
        result = run_cli("render", "--vendor", "camb", "--torch-version", wanted, cwd=workspace)
        assert result.exit_code == 0, result.output
        assert json.loads(manifest.read_text())["torch_version"] == rendered
    kernels_text = kernels(workspace / "generated" / "camb", pasted=False)
    assert "const c10::optional<at::Tensor> & bias" in kernels_text and "::std::optional" not in kernels_text


def test_disabled_op_is_not_registered(workspace: Path):
    assert run_cli("render", "--vendor", "ascend", "--vendor", "camb", cwd=workspace).exit_code == 0
    ascend = kernels(workspace / "generated" / "ascend", pasted=False)
    camb = kernels(workspace / "generated" / "camb", pasted=False)
    assert '"_log_softmax.out"' not in ascend and '"_log_softmax.out"' in camb


@pytest.mark.parametrize("args", [["render"], ["render", "--all", "--vendor", "camb"], ["render", "--all", "--diff"],
                                  ["render", "--all", "--torch-version", "two"]])
def test_usage_errors_exit_2(workspace: Path, args: list[str]):
    result = run_cli(*args, cwd=workspace)
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_interrupted_swap_is_recovered(workspace: Path):
    """A render killed between moving the old tree away and moving the new one in."""
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    gen = workspace / "generated"
    os.replace(gen / "camb", gen / ".deeplink-gen-previous-camb")
    shutil.copytree(gen / "ascend", gen / ".deeplink-gen-staging-ascend")
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    assert not list(gen.glob(".*"))
    assert run_cli("render", "--all", "--check", cwd=workspace).exit_code == 0


@pytest.mark.parametrize("command", [["validate"], ["coverage", "--format", "json"],
                                     ["drift", "--from", "2.1", "--to", "2.13"]])
def test_cli_never_imports_torch(command: list[str]):
    code = ("import sys; from deeplink_gen.cli import main; "
            "sys.argv=['deeplink-gen','-C',sys.argv[1]] + sys.argv[2:];\n"
            "try:\n  main()\nexcept SystemExit: pass\n"
            "assert 'torch' not in sys.modules, 'torch imported'")
    proc = subprocess.run([os.sys.executable, "-c", code, str(REPO), *command], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_render_with_nothing_to_do_loads_no_stage(workspace: Path):
    """A render whose output is what the same inputs rendered last time is done from the
    stamps: it imports neither torchgen, jsonschema nor Jinja, nor the model, the interfaces or any
    stage of the pipeline."""
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    code = ("import sys; from deeplink_gen.cli import main; "
            "sys.argv=['deeplink-gen','-C',sys.argv[1],'render','--all'];\n"
            "try:\n  main()\nexcept SystemExit as exc: assert exc.code == 0, exc.code\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torchgen', 'jsonschema', 'jinja2')\n"
            "               or m.split('.')[:2] in (['deeplink_gen', s] for s in ('load', 'validate', 'plan', 'render', 'model',\n"
            "                                                                  'interfaces', 'translate')))\n"
            "assert not heavy, heavy")
    proc = subprocess.run([os.sys.executable, "-c", code, str(workspace)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("0 written"), proc.stdout


def test_symlinks_in_the_output_tree_are_not_followed(workspace: Path, tmp_path: Path):
    assert run_cli("render", "--vendor", "camb", cwd=workspace).exit_code == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    kernels = workspace / "generated" / "camb" / KERNELS_0
    kernels.unlink()
    kernels.symlink_to(outside)
    result = run_cli("render", "--vendor", "camb", "--check", cwd=workspace)
    assert result.exit_code == 1 and f"stale: camb/{KERNELS_0}" in result.stderr
    assert run_cli("render", "--vendor", "camb", cwd=workspace).exit_code == 0
    assert outside.read_text() == "precious"
    assert not kernels.is_symlink() and kernels.read_text().startswith("//")


def test_out_outside_the_workspace_needs_a_flag(workspace: Path, tmp_path: Path):
    out = tmp_path / "elsewhere"
    result = run_cli("render", "--vendor", "camb", "--out", str(out), cwd=workspace)
    assert result.exit_code == 2 and "--allow-outside-workspace" in result.output
    assert not out.exists()
    inside = workspace / "build" / "gen"
    assert run_cli("render", "--vendor", "camb", "--out", str(inside), cwd=workspace).exit_code == 0
    assert (inside / "camb" / "manifest.json").is_file()


def test_unchanged_render_skips_work_but_not_hand_edits(workspace: Path):
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    kernels = workspace / "generated" / "camb" / KERNELS_0
    original = kernels.read_text()
    # Nothing changed: the stamp short-cut answers without rendering.
    assert run_cli("render", "--all", cwd=workspace).output.startswith("0 written")
    # A hand edit is noticed and repaired even though no input changed.
    kernels.write_text(original + "// hand edit\n")
    result = run_cli("render", "--all", cwd=workspace)
    assert result.output.startswith("1 written") and kernels.read_text() == original
    # A stray file is not deeplink-gen's to delete.
    stray = workspace / "generated" / "camb" / "stray.cpp"
    stray.write_text("x")
    assert run_cli("render", "--all", cwd=workspace).exit_code == 1 and stray.read_text() == "x"
    stray.unlink()
    # An input change re-renders.
    vendor = workspace / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("  print_op_args: true", "  print_op_args: false"))
    result = run_cli("render", "--all", cwd=workspace)
    assert not result.output.startswith("0 written") and "dumpArg(" not in kernels.read_text()


def test_a_render_failing_midway_writes_nothing(workspace: Path):
    """ascend and camb render fine, droplet fails (a hand-written source clashes
    with a rendered file): no vendor's tree changes."""
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    before = _tree(workspace / "generated")
    camb = workspace / "vendors" / "camb.yaml"
    camb.write_text(camb.read_text().replace("  profiler: true", "  profiler: false"))
    clash = workspace / "vendors" / "droplet" / "deviceimpl.cpp"
    clash.parent.mkdir()
    clash.write_text("// hand-written\n")
    result = run_cli("render", "--all", cwd=workspace)
    assert result.exit_code == 1 and "deviceimpl.cpp" in result.stderr
    assert _tree(workspace / "generated") == before
    assert not list((workspace / "generated").glob(".*"))


def test_hand_written_sources_invalidate_the_unchanged_shortcut(workspace: Path):
    assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    source = workspace / "vendors" / "droplet" / "pccl_shim.cpp"
    source.parent.mkdir()
    source.write_text("// v1\n")
    assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    copied = next((workspace / "generated" / "droplet").rglob("pccl_shim.cpp"))
    assert copied.read_text() == "// v1\n"
    source.write_text("// v2\n")
    result = run_cli("render", "--vendor", "droplet", cwd=workspace)
    assert result.output.startswith("2 written") and copied.read_text() == "// v2\n"  # the file and the manifest


def test_check_knows_how_the_tree_was_rendered(workspace: Path):
    """manifest.json records the tool and torch versions and the options that change output; a plain
    --check uses them and says so, and its hint is the full command that renders the tree again."""
    assert run_cli("render", "--vendor", "camb", "--autocompare", "--shards", "2", cwd=workspace).exit_code == 0
    manifest = json.loads((workspace / "generated" / "camb" / "manifest.json").read_text())
    assert manifest["options"] == {"autocompare": True, "shards": 2, "diopi_include": None}
    assert manifest["tool_version"] and manifest["torch_version"].count(".") == 2
    plain = run_cli("render", "--vendor", "camb", "--check", cwd=workspace)
    assert plain.exit_code == 0, plain.output
    assert "camb: checking with the options of its manifest.json and the command line: --autocompare --shards 2" \
        in plain.stdout
    vendor = workspace / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("  profiler: true", "  profiler: false"))
    stale = run_cli("render", "--vendor", "camb", "--check", cwd=workspace)
    assert stale.exit_code == 1
    hint = f"deeplink-gen -C {workspace} render --vendor camb --autocompare --shards 2"
    assert hint in stale.stderr, stale.stderr
    explicit = run_cli("render", "--vendor", "camb", "--check", "--shards", "1", cwd=workspace)
    assert "--shards 1" in explicit.stdout        # the command line wins over the manifest


def test_explain_shows_every_setting_and_agrees_with_the_manifest(workspace: Path):
    """A disabled op is not registered and says why; the dtype and layout rules its DIOPI
    function gets are listed with their places; manifest.json states the same."""
    assert run_cli("render", "--vendor", "ascend", cwd=workspace).exit_code == 0
    manifest = {o["op"]: o for o in json.loads((workspace / "generated/ascend/manifest.json").read_text())["ops"]}
    disabled = run_cli("explain", "_log_softmax.out", "--vendor", "ascend", cwd=workspace).output
    assert re.search(r"enabled\s+false from vendor op override \(\S*ascend\.yaml:\d+:\d+\)", disabled)
    assert re.search(r"reason\s+ascend's log_softmax kernel is slower", disabled)
    assert re.search(r"register\s+false from the op being disabled", disabled), disabled
    entry = manifest["_log_softmax.out"]
    assert entry["flags"]["register"] is False and entry["reason"].startswith("ascend's log_softmax kernel")
    norm = run_cli("explain", "native_layer_norm", "--vendor", "ascend", cwd=workspace).output
    assert re.search(r"dtype rules\s+float64->float32 \(function, \S*ascend\.yaml:\d+:\d+\)", norm), norm
    assert re.search(r"save_invstd\s+float16->float32 \(tensor, \S*ascend\.yaml:\d+:\d+\)", norm), norm
    assert re.search(r"layouts\s+NCHW \(vendor default", norm), norm
    assert manifest["native_layer_norm"]["dtype_rules"] == {"float64": "float32"}
    assert manifest["native_layer_norm"]["layouts"] == ["NCHW"]
