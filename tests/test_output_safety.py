"""What a render may do to the folders it writes: never delete or replace
what deeplink-gen did not write, never leave a vendor path missing or a
tree torn (killed at any rename, a write that fails half-way, two renders
at once), and clean up what an interrupted run left behind."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import diopi_include, dipu_checkout, run_cli, tree_state

# Run the CLI in a process that kills itself with SIGKILL just before its
# KILL_AT-th file-system step of the kinds below (audit events, so nothing
# of deeplink-gen is replaced): renames (os.replace too), the atomic
# exchange (a ctypes call), links, removals and folder deletions.
_KILLER = """
import os, signal, sys
steps, at = 0, int(os.environ["KILL_AT"])
def hook(event, args):
    global steps
    if event in ("os.rename", "ctypes.call_function", "os.link", "os.remove", "shutil.rmtree"):
        steps += 1
        if steps == at:
            os.kill(os.getpid(), signal.SIGKILL)
sys.addaudithook(hook)
from deeplink_gen.cli import main
main(sys.argv[1:], prog_name="deeplink-gen")
"""


def _killed_at(step: int, *args: str) -> int:
    env = dict(os.environ, KILL_AT=str(step))
    proc = subprocess.run([sys.executable, "-c", _KILLER, *args], env=env, capture_output=True, text=True,
                          timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode


def failing(result) -> list[str]:
    """The error lines of a run that must fail cleanly: exit 1, no traceback."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


def _files(root: Path) -> dict[str, bytes]:
    return {k: v[0] for k, v in tree_state(root).items()}


def _leftovers(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if "deeplink-gen" in p.name)


def _edit(workspace: Path, old: str, new: str, vendor: str = "droplet") -> None:
    path = workspace / "vendors" / f"{vendor}.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _change_droplet(workspace: Path) -> None:
    _edit(workspace, "  profiler: true", "  profiler: false")


# -- never delete what deeplink-gen did not write --------------------------------------------------------------

def test_a_file_put_into_a_vendor_folder_is_never_deleted(workspace: Path):
    out = workspace / "out"
    assert run_cli("render", "--vendor", "droplet", "--out", str(out), cwd=workspace).exit_code == 0
    (out / "droplet" / "NOTES.txt").write_text("mine\n")
    before = tree_state(out)
    _change_droplet(workspace)
    errors = failing(run_cli("render", "--vendor", "droplet", "--out", str(out), cwd=workspace))
    assert any("droplet" in e and "NOTES.txt" in e and "did not write" in e for e in errors), errors
    assert tree_state(out) == before
    # Moved away, the render goes through.
    (out / "droplet" / "NOTES.txt").unlink()
    assert run_cli("render", "--vendor", "droplet", "--out", str(out), cwd=workspace).exit_code == 0


def test_a_hand_written_folder_is_never_an_output_folder(workspace: Path):
    """--out vendors is inside the workspace; vendors/droplet/ holds the vendor's own sources."""
    sources = workspace / "vendors" / "droplet"
    sources.mkdir()
    (sources / "shim.cpp").write_text("int droplet_shim() { return 0; }\n")
    before = tree_state(workspace / "vendors")
    result = run_cli("render", "--vendor", "droplet", "--out", str(workspace / "vendors"), cwd=workspace)
    assert result.exit_code == 2 and "a workspace folder that holds its inputs" in result.output, result.output
    assert tree_state(workspace / "vendors") == before


def test_a_folder_named_like_the_vendor_is_never_replaced(workspace: Path, tmp_path: Path):
    """What `--out / --allow-outside-workspace` with a vendor named `opt` would meet: /opt."""
    out = tmp_path / "root"
    (out / "droplet" / "pypi").mkdir(parents=True)
    (out / "droplet" / "pypi" / "index.html").write_text("precious\n")
    before = tree_state(out)
    errors = failing(run_cli("render", "--vendor", "droplet", "--out", str(out), "--allow-outside-workspace",
                             cwd=workspace))
    assert any("pypi" in e and "left as it was" in e for e in errors), errors
    assert tree_state(out) == before


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_vendor_path_that_is_not_a_folder_is_kept(workspace: Path, tmp_path: Path, kind: str):
    out = workspace / "generated"
    out.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep\n")
    if kind == "file":
        (out / "droplet").write_text("a file\n")
    else:
        (out / "droplet").symlink_to(target)
    errors = failing(run_cli("render", "--vendor", "droplet", cwd=workspace))
    assert any("droplet: is not a folder" in e for e in errors), errors
    assert os.path.lexists(out / "droplet") and (out / "droplet").is_symlink() == (kind == "link")
    assert (target / "keep.txt").read_text() == "keep\n"
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]


def test_generated_that_is_a_file_is_an_error(workspace: Path):
    (workspace / "generated").write_text("not a folder\n")
    errors = failing(run_cli("render", "--all", cwd=workspace))
    assert any("generated: is not a folder" in e for e in errors), errors
    assert (workspace / "generated").read_text() == "not a folder\n"


def test_recovery_leaves_foreign_folders_with_our_names_alone(workspace: Path):
    out = workspace / "generated"
    assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    theirs = out / ".deeplink-gen-staging-camb"
    theirs.mkdir()
    (theirs / "data.bin").write_bytes(b"\0")
    _change_droplet(workspace)
    assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    assert (theirs / "data.bin").read_bytes() == b"\0"


# -- never a missing or torn tree ------------------------------------------------------------------------------

def test_killed_at_every_step_the_vendor_path_names_a_whole_tree(workspace: Path):
    out = workspace / "generated"
    assert run_cli("render", "--all", cwd=workspace).exit_code == 0
    old = _files(out)
    _change_droplet(workspace)
    assert run_cli("render", "--vendor", "droplet", "--out", str(workspace / "new"), cwd=workspace).exit_code == 0
    new = _files(workspace / "new")
    wanted_old = {k: v for k, v in old.items() if k.startswith("droplet/")}
    others = {k: v for k, v in old.items() if not k.startswith("droplet/")}
    step, killed = 1, True
    while killed:
        killed = _killed_at(step, "-C", str(workspace), "render", "--all") == -9
        now = _files(out)
        droplet = {k: v for k, v in now.items() if k.startswith("droplet/")}
        assert droplet in (wanted_old, new), f"killed at step {step}: droplet's tree is neither the old nor the new"
        assert {k: v for k, v in now.items() if not k.startswith(("droplet/", "."))} == others
        # The next render cleans up and finishes.
        assert run_cli("render", "--all", cwd=workspace).exit_code == 0
        assert {k: v for k, v in _files(out).items() if k.startswith("droplet/")} == new
        assert not list(out.glob(".*")), f"after a kill at step {step}: {sorted(p.name for p in out.glob('.*'))}"
        # Back to the old tree for the next round.
        _edit(workspace, "  profiler: false", "  profiler: true")
        assert run_cli("render", "--all", cwd=workspace).exit_code == 0
        _change_droplet(workspace)
        step += 1
    assert step > 5      # the render took several steps, each of them killed once


def test_a_failed_write_leaves_the_previous_tree(workspace: Path):
    """A full disk, simulated by a file-size limit: writing a large file fails with EFBIG."""
    import resource

    out = workspace / "generated"
    assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    before = tree_state(out)
    _change_droplet(workspace)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    proc = subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(workspace), "render", "--vendor", "droplet"],
                          env=dict(os.environ, DEEPLINK_GEN_NO_CACHE="1"), preexec_fn=limit,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "cannot write" in proc.stderr and "File too large" in proc.stderr and "as it was" in proc.stderr
    assert tree_state(out) == before
    assert not list(out.glob(".*"))


def test_concurrent_renders_into_one_folder_exclude_each_other(workspace: Path, tmp_path: Path):
    """Two workspaces that render droplet differently, into one folder, at the same time, again and again."""
    other = tmp_path / "other"
    other.mkdir()
    for name in ("vendors", "catalog", "deeplink-gen.yaml"):
        os.system(f"cp -r '{workspace / name}' '{other / name}'")
    _change_droplet(other)
    out = tmp_path / "out"
    trees = []
    for ws, tag in ((workspace, "a"), (other, "b")):
        assert run_cli("render", "--vendor", "droplet", "--out", str(tmp_path / tag), "--allow-outside-workspace",
                       cwd=ws).exit_code == 0
        trees.append(_files(tmp_path / tag))
    env = dict(os.environ, DEEPLINK_GEN_NO_CACHE="1")
    for _ in range(8):
        procs = [subprocess.Popen([sys.executable, "-m", "deeplink_gen", "-C", str(ws), "render", "--vendor", "droplet",
                                   "--out", str(out), "--allow-outside-workspace"],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for ws in (workspace, other)]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0 and "Traceback" not in err, err
        assert _files(out) in trees
        assert not list(out.glob(".*"))


def _waits_for_the_lock(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the CLI while this process holds *folder*'s lock, releasing it only once the run says it waits."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = subprocess.Popen([sys.executable, "-m", "deeplink_gen", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, DEEPLINK_GEN_NO_CACHE="1"))
    try:
        first = proc.stderr.readline()               # blocks until the run has met the lock
        assert not os.path.lexists(folder / "camb" / "manifest.json")
    finally:
        os.close(fd)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, first + err)


def test_a_render_waits_for_the_one_writing_and_says_so(workspace: Path):
    out = workspace / "generated"
    out.mkdir()
    proc = _waits_for_the_lock(out, "-C", str(workspace), "render", "--vendor", "camb")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith(f"waiting for another deeplink-gen writing to {out} to finish")
    assert (out / "camb" / "manifest.json").is_file()


# -- render --into -----------------------------------------------------------------------------------------------

def test_into_killed_at_every_step_is_finished_and_cleaned_by_the_next_run(workspace: Path, tmp_path: Path):
    reference = dipu_checkout(tmp_path / "reference")
    assert run_cli("render", "--vendor", "droplet", "--into", str(reference), cwd=workspace).exit_code == 0
    done = _files(reference)
    step, killed = 1, True
    while killed:
        tree = dipu_checkout(tmp_path / f"dipu-{step}")
        killed = _killed_at(step, "-C", str(workspace), "render", "--vendor", "droplet", "--into", str(tree)) == -9
        result = run_cli("render", "--vendor", "droplet", "--into", str(tree), cwd=workspace)
        assert result.exit_code == 0, f"after a kill at step {step}: {result.output}"
        assert _leftovers(tree) == [], f"after a kill at step {step}"
        assert _files(tree) == done, f"after a kill at step {step}"
        step += 1
    assert step > 5


def test_into_waits_for_another_render_into_the_same_checkout(workspace: Path, tmp_path: Path):
    tree = dipu_checkout(tmp_path / "dipu")
    proc = _waits_for_the_lock(tree, "-C", str(workspace), "render", "--vendor", "droplet", "--into", str(tree))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith(f"waiting for another deeplink-gen writing to {tree} to finish")


def test_a_report_that_cannot_be_written_is_an_error(workspace: Path):
    (workspace / "afile").write_text("x\n")
    result = run_cli("coverage", "--format", "json", "--out", str(workspace / "afile" / "report.json"), cwd=workspace)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "afile" in result.stderr and "Not a directory" in result.stderr


@pytest.mark.parametrize("command", [("coverage", "--vendor", "camb"), ("drift", "--from", "2.1.1", "--to", "2.13")])
def test_a_report_replaces_only_a_file_deeplink_gen_wrote(workspace: Path, tmp_path: Path, command: tuple):
    """--out of coverage and drift: a hand-written file, a workspace input or a link is never
    replaced; a report deeplink-gen wrote there before is."""
    vendor = workspace / "vendors" / "camb.yaml"
    mine = tmp_path / "notes.txt"
    mine.write_text("keep me\n")
    link = tmp_path / "link.txt"
    link.symlink_to(mine)
    noted = tmp_path / "noted.md"        # names deeplink-gen's header, below its first line
    noted.write_text("# notes\n# (the report: @generated by deeplink-gen from vendors/camb.yaml. DO NOT EDIT.)\n")
    for target in (vendor, mine, link, noted):
        before = target.read_bytes()
        result = run_cli(*command, "--out", str(target), cwd=workspace)
        assert result.exit_code == 1, (target, result.output)
        assert f"{target}: --out names a file deeplink-gen did not write" in result.stderr
        assert target.read_bytes() == before and (target != link or link.is_symlink())
    report = tmp_path / "report.txt"
    assert run_cli(*command, "--out", str(report), cwd=workspace).exit_code == 0
    assert run_cli(*command, "--out", str(report), cwd=workspace).exit_code == 0      # its own: replaced


@pytest.mark.parametrize("out", ["vendors", "vendors/camb", "catalog/x", "schemas"])
def test_render_never_writes_into_a_workspaces_inputs(workspace: Path, tmp_path: Path, out: str):
    """A render into vendors/ would make its output the vendor's hand-written sources next time:
    refused for this workspace's input folders and for another workspace's."""
    other = tmp_path / "other"
    (other / "vendors").mkdir(parents=True)
    (other / "deeplink-gen.yaml").write_text("torch: 2.2.2\n")
    before, before_other = tree_state(workspace), tree_state(other)
    for target in (workspace / out, other / out):
        result = run_cli("render", "--vendor", "camb", "--out", str(target), "--allow-outside-workspace",
                         cwd=workspace)
        assert result.exit_code == 2 and "a workspace folder that holds its inputs" in result.output, result.output
    assert tree_state(workspace) == before and tree_state(other) == before_other


# -- never write through a folder that links out of the checkout or the workspace --------------------------------

def _link_out(tree: Path, rel: str, outside: Path) -> Path:
    """*rel* below *tree* made a link to a folder *outside* (holding what *rel* held), which is returned."""
    place = tree / rel
    target = outside / rel.replace("/", "_")
    outside.mkdir(exist_ok=True)
    if place.is_dir():
        place.rename(target)
    else:
        target.mkdir(parents=True)
    (target / "mine.txt").write_text("mine\n")
    place.parent.mkdir(parents=True, exist_ok=True)
    place.symlink_to(target)
    return target


def _refused_link(result, link: Path, target: Path) -> None:
    errors = failing(result)
    assert any(f"{link.name} is a link to {target}, outside" in e and "nothing was written" in e for e in errors), errors


@pytest.mark.parametrize("rel", ["dipu/torch_dipu/csrc_dipu/vendor", "dipu/torch_dipu/csrc_dipu/vendor/droplet",
                                 "dipu/tests", "dipu/torch_dipu/csrc_dipu/aten"])
def test_into_never_writes_through_a_folder_that_links_out(workspace: Path, tmp_path: Path, rel: str):
    tree = dipu_checkout(tmp_path / "dipu")
    target = _link_out(tree, rel, tmp_path / "outside")
    before, outside = tree_state(tree), tree_state(target)
    _refused_link(run_cli("render", "--vendor", "droplet", "--into", str(tree), cwd=workspace), tree / rel, target)
    assert tree_state(tree) == before and tree_state(target) == outside


def test_into_refuses_a_folder_link_that_makes_two_of_its_files_one(workspace: Path, tmp_path: Path):
    """The vendor folder linked to a folder above it inside the checkout: its CMakeLists.txt is
    DIPU's own. Refused before anything is written, naming both paths; the checkout is as it was."""
    tree = dipu_checkout(tmp_path / "dipu")
    vendor = tree / "dipu/torch_dipu/csrc_dipu/vendor/droplet"
    vendor.parent.mkdir(parents=True, exist_ok=True)
    vendor.symlink_to("..")
    before = tree_state(tree)
    errors = failing(run_cli("render", "--vendor", "droplet", "--into", str(tree), cwd=workspace))
    assert any("a folder link in" in e and "leads one path to the other" in e and "CMakeLists.txt" in e
               for e in errors), errors
    assert tree_state(tree) == before


def test_into_replaces_a_linked_file_and_leaves_its_target(workspace: Path, tmp_path: Path):
    tree = dipu_checkout(tmp_path / "dipu")
    mine = tmp_path / "mine.cpp"
    mine.write_text("mine\n")
    linked = tree / "dipu/torch_dipu/csrc_dipu/vendor/droplet/deviceimpl.cpp"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(mine)
    assert run_cli("render", "--vendor", "droplet", "--into", str(tree), cwd=workspace).exit_code == 0
    assert not linked.is_symlink() and "@generated" in linked.read_text() and mine.read_text() == "mine\n"


@pytest.mark.parametrize("rel", ["generated", "generated/droplet/dipu"])
def test_render_never_writes_through_a_folder_that_links_out(workspace: Path, tmp_path: Path, rel: str):
    if rel != "generated":
        assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    target = _link_out(workspace, rel, tmp_path / "outside")
    outside = tree_state(target)
    result = run_cli("render", "--vendor", "droplet", "--no-autocompare", cwd=workspace)
    if rel == "generated":
        _refused_link(result, workspace / rel, target)
    else:                  # a vendor tree holding a link is not deeplink-gen's to replace
        assert any("did not write (dipu)" in e for e in failing(result))
    assert tree_state(target) == outside


@pytest.mark.parametrize("rel", ["schemas", "vendors", ".github/workflows", ".vscode"])
def test_init_never_writes_through_a_folder_that_links_out(tmp_path: Path, rel: str):
    root = tmp_path / "ws"
    root.mkdir()
    target = _link_out(root, rel, tmp_path / "outside")
    _refused_link(run_cli("init", str(root)), root / rel, target)
    assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]
    made = sorted(os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files)
    assert made == sorted({rel, *(p.as_posix() for p in Path(rel).parents if p != Path("."))})     # nothing else


@pytest.mark.parametrize("rel", ["schemas", ".github/workflows"])
@pytest.mark.parametrize("leads, why", [("missing", "missing, which is not a folder; nothing was written"),
                                        ("a_file", "a_file, which is not a folder; nothing was written"),
                                        ("self", " is a link that leads round a loop of links; nothing was written")])
def test_init_refuses_a_link_that_leads_to_no_folder_before_writing(tmp_path: Path, rel: str, leads: str, why: str):
    """A folder init writes in that is a link to nothing, to a file or to itself stops init at
    the start, naming the link: not "Not a directory" half-way, after vendors/ was made."""
    root = tmp_path / "ws"
    link = root / rel
    link.parent.mkdir(parents=True)
    (root / "a_file").write_text("mine\n")
    link.symlink_to(link.name if leads == "self" else os.path.relpath(root / leads, link.parent))
    before = tree_state(root)
    result = run_cli("init", str(root))
    assert result.exit_code == 1
    assert [e for e in failing(result) if f"{rel} is a link" in e and why in e], result.output
    assert tree_state(root) == before


@pytest.mark.parametrize("rel, args", [("vendors", ()), ("vendors/acme", ("--with-sources",))])
def test_new_vendor_never_writes_through_a_folder_that_links_out(workspace: Path, tmp_path: Path, rel: str,
                                                                args: tuple):
    if rel == "vendors":
        shutil.rmtree(workspace / "vendors")
    target = _link_out(workspace, rel, tmp_path / "outside")
    before = tree_state(workspace)
    _refused_link(run_cli("new-vendor", "acme", *args, cwd=workspace), workspace / rel, target)
    assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]
    assert tree_state(workspace) == before


def test_a_report_is_never_written_through_a_folder_that_links_out(workspace: Path, tmp_path: Path):
    target = _link_out(workspace, "reports", tmp_path / "outside")
    result = run_cli("drift", "--from", "2.1.1", "--to", "2.13", "--out", str(workspace / "reports" / "drift.md"),
                     cwd=workspace)
    assert result.exit_code == 1 and f"reports is a link to {target}, outside" in result.stderr, result.output
    assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]


def test_a_snapshot_is_never_written_through_a_folder_that_links_out(tmp_path: Path, monkeypatch):
    """--out FILE below the current folder stays below it."""
    here = tmp_path / "here"
    here.mkdir()
    target = _link_out(here, "snaps", tmp_path / "outside")
    monkeypatch.chdir(here)
    result = run_cli("diopi-snapshot", "--include", str(diopi_include()), "--out", "snaps/diopi.yaml")
    assert result.exit_code == 1 and f"snaps is a link to {target}, outside" in result.stderr, result.output
    assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]
