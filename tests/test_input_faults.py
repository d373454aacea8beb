"""Input files that are not what they seem: names too long to become file
names, file names that are not UTF-8, files symlinked out of the workspace or
to devices, FIFOs, unreadable and oversized files, and a workspace path that
is not ASCII under the C locale. Each gives exit 1 with an error at
file:line:col (or simply works), never a traceback or a hang, and a failed
render writes nothing. Cases that could hang run as a process with a timeout."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from helpers import (copy_workspace, diopi_include, dipu_checkout, edit, error_lines, kernels, line_of, run_cli,
                     run_subprocess)

LONG = 260      # longer than any file name may be (255 bytes)
HANG = 60       # seconds: a run that takes longer is taken for a hang
MEMORY = 2 << 30    # bytes of address space for a run that might read a device without end


def _shim(workspace: Path) -> Path:
    """vendors/droplet/shim.cpp, a hand-written source (droplet has a build section, so it is copied)."""
    folder = workspace / "vendors" / "droplet"
    folder.mkdir(exist_ok=True)
    shim = folder / "shim.cpp"
    shim.write_text("int droplet_shim;\n")
    return shim


@pytest.mark.parametrize("old, key", [
    ("device_type: DROPLET", "vendor.device_type"),
    ("diopi_impl: droplet", "vendor.diopi_impl"),
    ("name: TangRT", "build.toolkit.name"),
])
def test_names_that_become_file_names_have_a_bounded_length(workspace: Path, old: str, key: str):
    path = workspace / "vendors" / "droplet.yaml"
    line = line_of(path, old)
    field, value = old.split(": ")
    long = (value[0] * LONG).upper() if value.isupper() else value[0] * LONG
    edit(path, old, f"{field}: {long}")
    for args in (("validate",), ("render", "--all")):
        errors = error_lines(run_cli(*args, cwd=workspace))
        assert any(re.search(rf"droplet\.yaml:{line}:\d+: error: {re.escape(key)}: .*longer than 48 characters", e)
                   for e in errors), errors
    assert not (workspace / "generated").exists()


@pytest.mark.parametrize("impl", ["con", "lpt1"])
def test_a_diopi_impl_windows_cannot_name_a_folder_is_refused(workspace: Path, impl: str):
    path = workspace / "vendors" / "droplet.yaml"
    line = line_of(path, "diopi_impl: droplet")
    edit(path, "diopi_impl: droplet", f"diopi_impl: {impl}")
    for args in (("validate",), ("render", "--all")):
        errors = error_lines(run_cli(*args, cwd=workspace))
        assert any(re.search(rf"droplet\.yaml:{line}:\d+: error: vendor\.diopi_impl: '{impl}' is a device name on Windows",
                             e) for e in errors), errors
    assert not (workspace / "generated").exists()


def test_a_source_file_name_that_is_not_utf8_is_refused_and_shown_safely(workspace: Path):
    _shim(workspace)
    (workspace / "vendors" / "droplet" / os.fsdecode(b"bad\xff.cpp")).write_text("int bad;\n")
    for args in (("validate",), ("render", "--all")):
        errors = error_lines(run_cli(*args, cwd=workspace))
        assert any(re.search(r"vendors/droplet/bad\\xff\.cpp:1:1: error: \(sources\): .*not UTF-8", e)
                   for e in errors), errors
    assert not (workspace / "generated").exists()


def test_a_source_file_name_too_long_to_write_beside_is_refused(workspace: Path):
    """240 bytes is a valid name, but not one the output can be written under (through a temporary file beside)."""
    _shim(workspace).rename(workspace / "vendors" / "droplet" / ("n" * 236 + ".cpp"))
    for args in (("validate",), ("render", "--all")):
        errors = error_lines(run_cli(*args, cwd=workspace))
        assert any(re.search(r"n{236}\.cpp:1:1: error: \(sources\): the file name is longer than 200 bytes", e)
                   for e in errors), errors
    assert not (workspace / "generated").exists()


def test_a_vendor_file_name_that_is_not_utf8_is_shown_safely_in_every_message(workspace: Path):
    """Its stem is quoted in the message too, not only named in the location."""
    (workspace / "vendors" / os.fsdecode(b"bad\xff.yaml")).write_bytes((workspace / "vendors" / "droplet.yaml").read_bytes())
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(re.search(r"vendors/bad\\xff\.yaml:\d+:\d+: error: vendor\.name: .*'bad\\xff\.yaml'", e) for e in errors), errors


def test_a_source_file_that_is_not_utf8_text_is_refused_at_the_first_bad_byte(workspace: Path):
    _shim(workspace).write_bytes(b"int a;\nint caf\xe9;\n")
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(re.search(r"vendors/droplet/shim\.cpp:2:8: error: \(sources\): not UTF-8", e) for e in errors), errors


def test_a_vendor_file_symlinked_from_outside_the_workspace_is_read_and_named_by_its_link(tmp_path: Path,
                                                                                            workspace: Path):
    outside = tmp_path / "elsewhere" / "droplet.yaml"
    outside.parent.mkdir()
    link = workspace / "vendors" / "droplet.yaml"
    link.rename(outside)
    link.symlink_to(outside)
    result = run_cli("render", "--vendor", "droplet", cwd=workspace)
    assert result.exit_code == 0, result.output
    kernels_text = kernels(workspace / "generated" / "droplet", pasted=False)
    assert "vendors/droplet.yaml" in kernels_text.splitlines()[0]
    assert str(outside.parent) not in kernels_text


def test_drift_names_bundled_catalog_files_in_a_workspace_of_its_own(tmp_path: Path):
    """A user's workspace on the bundled catalog: its entries are named deeplink_gen/catalog/..."""
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    result = run_cli("drift", "--from", "2.1.1", "--to", "2.13", "--format", "json", cwd=ws)
    assert result.exit_code in (0, 1), result.output
    assert "deeplink_gen/catalog/" in result.stdout


def _make_unreadable(path: Path, fault: str) -> None:
    if path.exists():
        path.unlink()
    if fault == "chmod 000":
        path.write_text("x: 1\n")
        path.chmod(0)
    elif fault == "a directory":
        path.mkdir()
    elif fault == "a dangling symlink":
        path.symlink_to(path.parent / "no-such-file")
    elif fault == "a symlink loop":
        path.symlink_to(path.name)


PLACES = ["vendors/droplet.yaml", "catalog/pointwise.yaml", "deeplink-gen.yaml", "vendors/droplet/shim.cpp"]


@pytest.mark.parametrize("fault", ["chmod 000", "a directory", "a dangling symlink", "a symlink loop"])
@pytest.mark.parametrize("rel", PLACES)
def test_unreadable_input_files_are_located_errors(workspace: Path, rel: str, fault: str):
    if fault == "chmod 000" and os.geteuid() == 0:
        pytest.skip("root reads a file whatever its mode; the other faults cover unreadable files")
    if fault == "a directory" and rel.endswith(".cpp"):
        pytest.skip("a folder in vendors/<name>/ is a folder of sources")
    _shim(workspace)
    _make_unreadable(workspace / rel, fault)
    for args in (("validate",), ("render", "--all")):
        errors = error_lines(run_cli(*args, cwd=workspace))
        assert any(re.search(rf"{re.escape(rel)}:1:1: error: ", e) for e in errors), errors
    assert not (workspace / "generated").exists()


SPECIAL = {
    "a FIFO": lambda path: os.mkfifo(path),
    "a symlink to /dev/zero": lambda path: path.symlink_to("/dev/zero"),
    "a symlink to /dev/urandom": lambda path: path.symlink_to("/dev/urandom"),
}


@pytest.mark.parametrize("kind", sorted(SPECIAL))
@pytest.mark.parametrize("rel", PLACES + ["--diopi-include diopi/functions_ext.h"])
def test_only_regular_files_are_read(tmp_path: Path, workspace: Path, rel: str, kind: str):
    """A FIFO would block its reader forever and a device never ends: neither is read, anywhere
    (a link out of a vendor's hand-written folder is refused as such, before any read)."""
    _shim(workspace)
    args: tuple[str, ...] = ()
    if rel.startswith("--diopi-include"):
        include = tmp_path / "include"
        shutil.copytree(diopi_include(), include)         # the test headers, one of them replaced below
        rel = rel.split()[1]
        args = ("--diopi-include", str(include))
        path = include / rel
    else:
        path = workspace / rel
    path.unlink()
    SPECIAL[kind](path)
    commands = [("validate",), ("render", "--all")] if kind == "a FIFO" else [("validate",)]
    for command in commands:
        proc = run_subprocess("-C", str(workspace), *args, *command, timeout=HANG, memory=MEMORY)
        assert proc.returncode == 1, proc.stderr[-3000:]
        assert "Traceback" not in proc.stderr
        why = "is a link that leads outside" if "symlink" in kind and rel.startswith("vendors/droplet/") \
            else "not a regular file"
        assert re.search(rf"{re.escape(rel)}:1:1: error: .*{why}", proc.stderr), proc.stderr[-3000:]
    assert not (workspace / "generated").exists()


def test_an_oversized_source_file_is_refused(workspace: Path):
    with open(_shim(workspace), "wb") as fh:
        fh.truncate(17 * 1024 * 1024)
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(re.search(r"shim\.cpp:1:1: error: .*larger than 16 MiB", e) for e in errors), errors


@pytest.mark.parametrize("env", [{"LC_ALL": "C", "LANG": "C"}, {"LC_ALL": "", "LANG": "C"}], ids=["LC_ALL=C", "LANG=C"])
def test_a_non_ascii_workspace_path_under_the_c_locale(tmp_path: Path, env: dict):
    ws = copy_workspace(tmp_path / "wörk späce")
    _shim(ws)
    for args in (("validate",), ("render", "--vendor", "droplet")):
        proc = run_subprocess("-C", str(ws), *args, env=env, timeout=HANG * 3)
        assert proc.returncode == 0, proc.stderr[-3000:]
    plain = copy_workspace(tmp_path / "plain")
    _shim(plain)
    assert run_cli("render", "--vendor", "droplet", cwd=plain).exit_code == 0
    assert kernels(ws / "generated" / "droplet", pasted=False) == kernels(plain / "generated" / "droplet", pasted=False)
    (ws / "vendors" / "droplet.yaml").write_text("vendor: [\n")
    proc = run_subprocess("-C", str(ws), "validate", env=env, timeout=HANG)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert re.search(r"droplet\.yaml:\d+:\d+: error: ", proc.stderr), proc.stderr


def test_a_non_ascii_workspace_path_read_as_ascii(tmp_path: Path):
    """Without Python's UTF-8 mode the C locale decodes file names as ASCII, each other byte
    held as a lone surrogate: paths must still be hashed, named in errors and rendered."""
    ws = copy_workspace(tmp_path / "wörk späce")
    _shim(ws)
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    proc = run_subprocess("-C", str(ws), "validate", env=env, timeout=HANG)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_subprocess("-C", str(ws), "render", "--vendor", "droplet", env={**env, "DEEPLINK_GEN_NO_CACHE": "1"},
                          timeout=HANG * 3)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (ws / "vendors" / "droplet.yaml").write_text("vendor: [\n")
    proc = run_subprocess("-C", str(ws), "validate", env=env, timeout=HANG)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert re.search(r"droplet\.yaml:\d+:\d+: error: ", proc.stderr), proc.stderr


def _rendered(workspace: Path) -> Path:
    """The camb vendor rendered into the workspace's generated/ folder."""
    assert run_cli("render", "--vendor", "camb", cwd=workspace).exit_code == 0
    return workspace / "generated" / "camb"


@pytest.mark.parametrize("args", [("render", "--vendor", "camb"), ("render", "--vendor", "camb", "--check")])
def test_a_huge_file_in_place_of_a_rendered_one_is_never_read_whole(workspace: Path, args: tuple):
    """An 8 GB sparse file where a rendered file was: compared by a bounded read, out of date."""
    target = next(_rendered(workspace).rglob("*.cpp"))
    target.unlink()
    with open(target, "wb") as fh:
        fh.truncate(8 << 30)
    proc = run_subprocess("-C", str(workspace), *args, timeout=HANG, memory=MEMORY)
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-2000:]
    if "--check" in args:
        assert proc.returncode == 1 and f"stale: camb/{target.relative_to(workspace / 'generated' / 'camb')}" \
            in proc.stdout + proc.stderr
    else:
        assert proc.returncode == 0 and target.stat().st_size < 1 << 20


@pytest.mark.parametrize("manifest, message", [
    ("[" * 100_000 + "]" * 100_000, None),
    ('{"//": "STAMP", "options": {"shards": "two"}, "files": []}', "options.shards: not a value this option takes"),
    ('{"//": "STAMP", "options": {"diopi_include": 5}, "files": []}', "options.diopi_include: not a value"),
])
def test_a_broken_manifest_is_read_with_bounds_and_shape_checked(workspace: Path, manifest: str, message: str | None):
    path = _rendered(workspace) / "manifest.json"
    stamp = json.loads(path.read_text())["//"]
    path.write_text(manifest.replace("STAMP", stamp))
    for args in (("render", "--vendor", "camb", "--check"), ("render", "--vendor", "camb")):
        result = run_cli(*args, cwd=workspace)
        assert "Traceback" not in result.output and result.exit_code in (0, 1), result.output
        if message is not None and "--check" in args:
            assert any(re.search(rf"manifest\.json:1:1: error: {re.escape(message)}", e) for e in error_lines(result))


@pytest.mark.parametrize("doc, message", [
    ('{"format": F, "vendors": [{}]}', r"--baseline vendors\[0\]\.name: expected a vendor's name \(such as camb\)"),
    ('{"format": F, "vendors": 5}', r"--baseline vendors: expected a list of objects"),
    ('{"format": F, "vendors": [{"name": ["camb"]}]}', r"--baseline vendors\[0\]\.name: expected"),
    ('{"format": F, "vendors": [{"name": "camb"}], "ops": [{"vendors": 3}]}', r"--baseline ops\[0\]\.vendors: "),
    ("[" * 100_000 + "]" * 100_000, r"--baseline: values are nested more than 64 levels deep"),
    ('{"format": F,\n "vendors": ]}', r"--baseline: not JSON: Expecting value"),
])
def test_a_baseline_of_the_wrong_shape_is_refused(workspace: Path, tmp_path: Path, doc: str, message: str):
    from deeplink_gen.render.coverage import FORMAT

    path = tmp_path / "baseline.json"
    path.write_text(doc.replace("F", json.dumps(FORMAT)))
    errors = error_lines(run_cli("coverage", "--baseline", str(path), cwd=workspace))
    assert any(re.search(rf"baseline\.json:\d+:\d+: error: {message}", e) for e in errors), errors


def test_a_checkout_file_with_crlf_line_ends_is_refused_saying_so(workspace: Path, tmp_path: Path):
    checkout = dipu_checkout(tmp_path / "checkout")
    cmake = checkout / "dipu" / "torch_dipu" / "csrc_dipu" / "CMakeLists.txt"
    cmake.write_bytes(cmake.read_bytes().replace(b"\n", b"\r\n"))
    result = run_cli("render", "--vendor", "camb", "--into", str(checkout), cwd=workspace)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert re.search(r"csrc_dipu/CMakeLists\.txt: .*the file has CRLF line ends", result.stderr), result.stderr


def test_an_error_quotes_only_the_start_of_a_long_line(workspace: Path, tmp_path: Path):
    against = tmp_path / "ops.txt"
    against.write_text("add.out\n" + "x" * 100_000 + "(\n")
    errors = error_lines(run_cli("coverage", "--against", str(against), cwd=workspace))
    assert any(re.search(r"ops\.txt:2:1: error: 'x+\.\.\.' is not an op name", e) for e in errors), errors
    assert all(len(e) < 300 for e in errors), [len(e) for e in errors]


def test_init_never_reads_a_huge_schema_file_whole(tmp_path: Path):
    """init compares schemas/*.schema.json with its own before refreshing them."""
    assert run_cli("init", str(tmp_path)).exit_code == 0
    schema = tmp_path / "schemas" / "vendor.schema.json"
    schema.unlink()
    with open(schema, "wb") as fh:
        fh.truncate(8 << 30)
    proc = run_subprocess("init", str(tmp_path), timeout=HANG, memory=MEMORY)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert schema.stat().st_size < 1 << 20
