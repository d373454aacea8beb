"""Hostile and broken input: every variant of the bundled vendor files and
catalog below must give exit code 1, an error naming the file and a line, no
traceback, and no output written."""

from __future__ import annotations

import copy
import os
import re
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import CATALOG, REPO, copy_workspace, run_cli, run_subprocess

# Keys whose values are free text or C++ by design; every other string that is an
# identifier in the bundled files is identifier-like and must reject C++ text.
FREE_FORM = {"description", "reason", "doc", "call", "schema", "alloc", "skip_params"}
INJECTION = 'x"); system("rm -rf /"); //'
VENDOR_FILES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "vendors").glob("*.yaml"))
CATALOG_FILES = sorted(f"catalog/{p.name}" for p in CATALOG.glob("*.yaml"))
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def _walk(data, path=()):
    yield path, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _walk(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _walk(v, path + (i,))


def _set(data, path, value):
    target = data
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _delete(data, path):
    target = data
    for part in path[:-1]:
        target = target[part]
    del target[path[-1]]


def _source(rel: str) -> Path:
    """The bundled file a workspace-relative path stands for."""
    return CATALOG / Path(rel).name if rel.startswith("catalog/") else REPO / rel


def _original(rel: str):
    return yaml.safe_load(_source(rel).read_text())


def _assert_rejected(workspace: Path, rel: str, *, render: bool = False) -> str:
    gen = workspace / "generated"
    args = ("render", "--all") if render else ("validate",)
    start = time.monotonic()
    result = run_cli(*args, cwd=workspace)
    assert time.monotonic() - start < 20
    assert result.exit_code == 1, (rel, result.output[-2000:])
    assert "Traceback" not in result.output
    name = Path(rel).name
    located = [line for line in result.stderr.splitlines() if re.search(rf"{re.escape(name)}:\d+:\d+: error: ", line)]
    assert located, (rel, result.stderr[-2000:])
    if render:
        assert not gen.exists() or not any(gen.rglob("*")), "a failed render wrote files"
    return result.stderr


def _write(workspace: Path, rel: str, data) -> None:
    (workspace / rel).write_text(yaml.safe_dump(data, sort_keys=False))


# Mappings whose keys are names the user chooses (ops, runtime functions, DIOPI functions...):
# their entries share one shape, so the first *entries* of each stand for the rest.
NAMED = {"ops", "functions", "checkers", "tensors"}


def _sampled_out(data, path: tuple, entries: int) -> bool:
    """Whether *path* goes through an entry past the first *entries* of a list or a NAMED mapping."""
    node = data
    for i, part in enumerate(path):
        if isinstance(part, int) and part >= entries:
            return True
        if isinstance(part, str) and i and path[i - 1] in NAMED and isinstance(node, dict) \
                and part not in list(node)[:entries]:
            return True
        node = node[part]
    return False


def _variants(rel: str, entries: int = 2):
    """(label, mutated data) pairs for one file. Only the first *entries* of each list
    and of each mapping of named entries (ops, runtime functions) are mutated: every
    depth and kind of key is covered, and each variant costs a full validation of the
    workspace."""
    data = _original(rel)
    out = []
    for path, value in _walk(data):
        if _sampled_out(data, path, entries):
            continue
        if isinstance(value, dict):
            mutated = copy.deepcopy(data)
            target = mutated
            for part in path:
                target = target[part]
            target["zz_unknown_key"] = True
            out.append((f"unknown key at {path}", mutated))
        elif path and isinstance(value, bool) and not FREE_FORM.intersection(k for k in path if isinstance(k, str)):
            mutated = copy.deepcopy(data)
            _set(mutated, path, "yes")
            out.append((f"yes for a boolean at {path}", mutated))
        elif path and isinstance(value, str):
            mutated = copy.deepcopy(data)
            _set(mutated, path, ["a", "list"])
            out.append((f"list for a string at {path}", mutated))
            keys = [p for p in path if isinstance(p, str)]
            if _IDENT.match(value) and not FREE_FORM.intersection(keys):
                mutated = copy.deepcopy(data)
                _set(mutated, path, INJECTION)
                out.append((f"C++ injection at {path}", mutated))
    return out


@pytest.mark.parametrize("rel", VENDOR_FILES + CATALOG_FILES)
def test_structural_mutations_are_rejected(workspace: Path, rel: str):
    for label, mutated in _variants(rel):
        _write(workspace, rel, mutated)
        try:
            _assert_rejected(workspace, rel)
        except AssertionError as exc:
            raise AssertionError(f"{rel}: {label}: {exc}") from None
    (workspace / rel).write_text(_source(rel).read_text())


@pytest.mark.parametrize("rel", VENDOR_FILES)
def test_each_required_key_missing(workspace: Path, rel: str):
    data = _original(rel)
    for key in list(data["vendor"]):
        mutated = copy.deepcopy(data)
        _delete(mutated, ("vendor", key))
        _write(workspace, rel, mutated)
        result = run_cli("validate", cwd=workspace)
        if key in ("name", "device_type"):
            assert result.exit_code == 1 and f"missing required key '{key}'" in result.stderr


RAW_CASES = {
    "syntax error": b"vendor:\n  name: camb\n  device_type: MLU\n   bad: indent\n",
    "tab indentation": b"vendor:\n\tname: camb\n",
    "empty file": b"",
    "only a comment": b"# nothing here\n",
    "top-level list": b"- vendor\n- name\n",
    "top-level string": b"just some text\n",
    "non-UTF-8 bytes": b"vendor:\n  name: camb\n  description: caf\xe9\n",
    "duplicate key": b"vendor:\n  name: camb\n  name: camb\n  device_type: MLU\n",
    "alias bomb": (b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                   b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                   b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"),
    "YAML 1.1 on": b"vendor:\n  name: camb\n  device_type: MLU\ndefaults:\n  autocompare: on\n",
    "YAML 1.1 float version": b"ops:\n  add.out:\n    call: diopiAdd(ctx, out, self, other, alpha)\n    torch: 2.10\n",
    "python object tag": b"vendor: !!python/object/apply:os.system ['true']\n",
    "binary tag": b"vendor: !!binary aGVsbG8=\n",
    "non-string key": b"vendor:\n  1: camb\n",
    "merge key": b"base: &b {name: camb}\nvendor:\n  <<: *b\n  device_type: MLU\n",
    "20,000 levels deep": b"vendor: " + b"[" * 20000 + b"]" * 20000 + b"\n",
    "float tag on text": b'vendor:\n  name: camb\n  device_type: MLU\n  description: !!float "abc"\n',
    "int tag on text": b'vendor:\n  name: camb\n  device_type: MLU\n  description: !!int "abc"\n',
    "bool tag on text": b'vendor:\n  name: camb\n  device_type: MLU\n  description: !!bool "maybe"\n',
    "python tag on a mapping": b"vendor: !!python/object:os.system\n  name: camb\n",
    "python tag on a list": b"vendor: !!python/tuple [camb]\n",
}


@pytest.mark.parametrize("case", sorted(RAW_CASES))
def test_raw_broken_files(workspace: Path, case: str):
    rel = "catalog/pointwise.yaml" if "version" in case else "vendors/camb.yaml"
    (workspace / rel).write_bytes(RAW_CASES[case])
    _assert_rejected(workspace, rel, render=True)


@pytest.mark.parametrize("case", ["alias bomb", "huge file"])
def test_hostile_files_run_in_bounded_memory(workspace: Path, case: str):
    """Under a 2 GiB address-space limit the process still answers with a located error."""
    import resource
    import subprocess
    import sys

    rel = "vendors/camb.yaml"
    if case == "alias bomb":
        (workspace / rel).write_bytes(RAW_CASES["alias bomb"])
    else:
        (workspace / rel).write_bytes(b"vendor:\n  description: '" + b"x" * (50 * 1024 * 1024) + b"'\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    proc = subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(workspace), "validate"],
                          capture_output=True, text=True, preexec_fn=limit, timeout=60)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and re.search(r"camb\.yaml:\d+:\d+: error: ", proc.stderr)


def test_huge_file_is_rejected_quickly(workspace: Path):
    rel = "vendors/camb.yaml"
    with open(workspace / rel, "wb") as fh:
        fh.write(b"vendor:\n  name: camb\n  device_type: MLU\n  description: '")
        fh.write(b"x" * (50 * 1024 * 1024))
        fh.write(b"'\n")
    stderr = _assert_rejected(workspace, rel, render=True)
    assert "larger than" in stderr


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_edits_never_crash(workspace: Path, data):
    rel = data.draw(st.sampled_from(VENDOR_FILES + CATALOG_FILES[:1]))
    original = _source(rel).read_text()
    lines = original.splitlines(keepends=True)
    index = data.draw(st.integers(0, len(lines) - 1))
    action = data.draw(st.sampled_from(["delete", "duplicate", "insert", "truncate"]))
    if action == "delete":
        del lines[index]
    elif action == "duplicate":
        lines.insert(index, lines[index])
    elif action == "insert":
        junk = data.draw(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12))
        pos = data.draw(st.integers(0, len(lines[index])))
        lines[index] = lines[index][:pos] + junk + lines[index][pos:]
    else:
        lines = lines[:index]
    (workspace / rel).write_text("".join(lines))
    try:
        result = run_cli("validate", cwd=workspace)
        assert "Traceback" not in result.output
        assert result.exit_code in (0, 1), result.output
        if result.exit_code == 1:
            assert re.search(r":\d+:\d+: error: ", result.stderr) or "error:" in result.stderr, result.stderr
    finally:
        (workspace / rel).write_text(original)


def test_deep_nesting_in_dipus_op_config(tmp_path: Path):
    """import-dipu reads DIPU's file with YAML 1.1 as DIPU does; a file nested 30,000 levels deep
    is refused at the place it passes the limit, not with a segfault."""
    path = tmp_path / "diopi_functions.yaml"
    path.write_bytes(b"- " + b"[" * 30000 + b"]" * 30000 + b"\n")
    proc = run_subprocess("import-dipu", "--functions", str(path), "--vendors", "camb", "--out", str(tmp_path / "ws"),
                          timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert re.search(r"diopi_functions\.yaml:1:\d+: error: .*nested more than 64 levels deep", proc.stderr), proc.stderr


@pytest.mark.parametrize("tagged", ['!!bool "maybe"', '!!int "abc"', '!!float "x"'])
def test_a_tag_its_text_does_not_fit_in_dipus_op_config(tmp_path: Path, tagged: str):
    """YAML 1.1 tags build values from text; one that cannot is refused at its line."""
    path = tmp_path / "diopi_functions.yaml"
    path.write_text(f'- schema: "abs(Tensor self) -> Tensor"\n  custom_fallback: {tagged}\n')
    result = run_cli("import-dipu", "--functions", str(path), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert re.search(r"diopi_functions\.yaml:2:20: error: .*is not a valid", result.stderr), result.stderr


DEEP = {
    "flow lists": lambda n: b"[" * n + b"]" * n,
    "flow mappings": lambda n: b"{a: " * n + b"}" * n,
    "pairs in flow lists": lambda n: b"[a: " * n + b"]" * n,
    "compact block lists": lambda n: b"\n" + b"- " * n + b"x",
    "indented mappings": lambda n: b"\n" + b"".join(b" " * i + b"k:\n" for i in range(n)),
}


@pytest.mark.parametrize("rel", ["vendors/camb.yaml", "catalog/pointwise.yaml", "deeplink-gen.yaml"])
@pytest.mark.parametrize("shape", sorted(DEEP))
def test_deep_nesting_is_refused_before_the_parser_sees_it(tmp_path: Path, rel: str, shape: str):
    """The YAML parser recurses in C per level (30,000 levels: a segfault) and slows down with
    the square of the depth before that: the depth is measured on the text first, in every file."""
    ws = copy_workspace(tmp_path / "ws")
    n = 2000 if shape == "indented mappings" else 1_000_000
    head = b"bundled_catalog: false\nx: " if rel == "deeplink-gen.yaml" else b"x: "
    (ws / rel).write_bytes(head + DEEP[shape](n) + b"\n")
    start = time.monotonic()
    proc = run_subprocess("-C", str(ws), "validate", timeout=60)
    assert time.monotonic() - start < 10
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    name = re.escape(Path(rel).name)
    assert re.search(rf"{name}:\d+:\d+: error: .*nested more than 64 levels deep", proc.stderr), proc.stderr[-2000:]


@pytest.mark.parametrize("text", [
    "x: '[[[[' \ny: \"{{{{\"\n",
    "x: |\n  [[[[[[[[[[[[\n  {{{{{{{{{{{{\ny: 1\n",
    "x: a[[[[[[[[[[[[[[[[\n  b[[[[[[[[[[[[[[[[[[\n",
    "x: [a, '[[[[[[[[[[[[[[[[', \"]]]]]\"]  # [[[[[[[[[[[[[[[[\n",
])
def test_brackets_in_text_are_not_nesting(workspace: Path, text: str):
    """Quoted, block and plain text and comments hold brackets that open nothing: 60 of them
    in each do not reach the limit."""
    (workspace / "deeplink-gen.yaml").write_text("bundled_catalog: false\n" + text.replace("[[[[", "[" * 60)
                                                 .replace("{{{{", "{" * 60))
    result = run_cli("validate", cwd=workspace)
    assert "nested more than" not in result.output, result.output


@pytest.mark.parametrize("anchored, uses", [(8 << 20, 90_000), (10, 20_000)])
def test_alias_expansion_is_bounded_in_bytes_and_count(tmp_path: Path, anchored: int, uses: int):
    """Each alias of a flow list used to copy its text: 90,000 aliases of an 8 MiB list grew
    without bound. Uses are counted, and their text, and refused at the list that holds them."""
    ws = copy_workspace(tmp_path / "ws")
    (ws / "catalog" / "pointwise.yaml").write_text(
        f"big: &a [{'x' * anchored}]\nuses: [{'*a, ' * uses}]\n")
    proc = run_subprocess("-C", str(ws), "validate", timeout=60, memory=2 << 30)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    what = "to more than 4 MiB of text" if anchored > 10 else "more than 10000 times"
    assert re.search(rf"pointwise\.yaml:2:7: error: uses\[\d+\]: aliases \(\*name\) expand anchored values {what}",
                     proc.stderr), proc.stderr[-2000:]


def test_a_character_yaml_forbids_in_dipus_op_config(tmp_path: Path):
    """libyaml's reader refuses a control character before parsing: its position, in our words."""
    path = tmp_path / "diopi_functions.yaml"
    path.write_bytes(b'- schema: "a\x01b"\n')
    result = run_cli("import-dipu", "--functions", str(path), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "diopi_functions.yaml:1:13: error:" in result.stderr and "unicode string" not in result.stderr


@pytest.mark.parametrize("tagged", ["!!map x", "!!seq x", "!!python/none x"])
def test_a_tag_for_no_scalar_is_refused_in_our_words(workspace: Path, tagged: str):
    """PyYAML's own text for these names its "<unicode string>" on a second line."""
    (workspace / "vendors" / "camb.yaml").write_text(
        f"vendor:\n  name: camb\n  device_type: MLU\n  description: {tagged}\n")
    stderr = _assert_rejected(workspace, "vendors/camb.yaml")
    assert "camb.yaml:4:16: error: vendor.description: unsupported YAML tag" in stderr, stderr
    assert "unicode string" not in stderr and "\\n" not in stderr, stderr


def test_a_number_is_shown_as_written(workspace: Path):
    """torch: 2.10 is the float 2.1 to YAML; the message quotes what the file says."""
    path = workspace / "catalog" / "pointwise.yaml"
    text = path.read_text()
    first = re.search(r"^  (\S+):\n", text, re.M)
    path.write_text(text[:first.end()] + "    torch: 2.10\n" + text[first.end():])
    stderr = _assert_rejected(workspace, "catalog/pointwise.yaml")
    assert 'got 2.10 (YAML reads an unquoted 2.10 as a number, not text: quote it as written, as in torch: "2.10")' \
        in stderr, stderr


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("delay", [0.15, 0.3, 1.0, 2.5])
def test_ctrl_c_at_any_moment_exits_1_without_a_traceback(workspace: Path, tmp_path: Path, delay: float, sig: str):
    """Ctrl-C (or SIGTERM) *delay* seconds into a render, then again every few milliseconds until
    it ends (while the libraries are imported, while it renders, while it exits): "Aborted!" and
    exit 1, or the render's own exit 0 when it ended first; never a traceback or death by the
    signal, and no staging folder left beside the output. (Before that, while Python itself
    starts, Python answers a signal as it answers it for any program.)"""
    import signal
    import subprocess
    import sys
    import time

    env = dict(os.environ, DEEPLINK_GEN_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.Popen([sys.executable, "-m", "deeplink_gen", "-C", str(workspace), "render", "--all"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(delay)
    while proc.poll() is None:
        proc.send_signal(getattr(signal, sig))
        time.sleep(0.005)
    out, err = proc.communicate()
    assert proc.returncode in (0, 1), (proc.returncode, err[-2000:])
    assert "Traceback" not in out + err, err[-2000:]
    generated = workspace / "generated"
    assert not (generated.is_dir() and [p.name for p in generated.iterdir() if p.name.startswith(".")])
    if proc.returncode == 1:
        assert err.rstrip().endswith("Aborted!"), err[-500:]


@pytest.mark.parametrize("args", [("render", "--vendor", "camb", "--out", ""), ("-C", "", "validate"),
                                  ("import-dipu", "--functions", "f.yaml", "--vendors", "camb", "--out", "")])
def test_an_empty_path_is_a_usage_error(workspace: Path, args: tuple):
    """An empty path is no path: Path("") would read it as the current folder, and import-dipu wrote
    a workspace there."""
    result = run_cli(*args, cwd=workspace) if args[0] != "-C" else run_cli(*args)
    assert result.exit_code == 2 and "is empty: give a path" in result.output, result.output
