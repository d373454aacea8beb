"""Every reader fuzzed with hypothesis: each target starts from a bundled or fixture file,
applies random edits (YAML and C++ tokens, long repeats, deletions, duplicated lines,
bytes that are not text), runs the command that reads it as a process, and requires what
a user may expect of any input: exit 0, 1 or 2, no traceback and no signal, an end within
TIME_LIMIT seconds in MEMORY bytes, and an error about the file that names the file. A
workspace that passes (or that an import made, which must validate) is rendered too, and
what is rendered must read as C++ (no comment, literal or bracket left open, no stray
character: what pasted text breaks) and as Python. The time
is the process's CPU time, which a loaded machine does not stretch as it stretches the wall
clock; a run past HANG_LIMIT seconds of wall time is a hang.

DEEPLINK_GEN_FUZZ_EXAMPLES sets the examples per target (.ci/run runs more than the
default), DEEPLINK_GEN_FUZZ_SECONDS the time a target may take (later examples are not run). The examples are the same on every run, so that a run passes or fails as the
last one did, unless DEEPLINK_GEN_FUZZ_RANDOM=1 (a long run by hand). A failing input is written to DEEPLINK_GEN_FUZZ_SAVE (default: a folder under
the system's temp folder) as <target>.failing, the smallest one hypothesis found last; a
copy in tests/fixtures/fuzz/<target>/ is replayed by test_saved_cases on every run."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deeplink_gen import cpplex
from helpers import DIPU_CHECKOUT, DIPU_TORCH, REPO, copy_workspace, diopi_include, run_cli

TIME_LIMIT = 20.0
HANG_LIMIT = 6 * TIME_LIMIT
MEMORY = 4 << 30
EXAMPLES = int(os.environ.get("DEEPLINK_GEN_FUZZ_EXAMPLES", "12"))
SECONDS = float(os.environ.get("DEEPLINK_GEN_FUZZ_SECONDS", "inf"))
RANDOM = os.environ.get("DEEPLINK_GEN_FUZZ_RANDOM") == "1"
SAVED = REPO / "tests" / "fixtures" / "fuzz"
FIXTURES = REPO / "tests" / "fixtures" / "dipu"
VENDORS = REPO / "tests" / "fixtures" / "dipu_vendors"
# A vendor runtime folder's files that import-dipu reads as C++ or CMake.
RUNTIME_SEEDS = ("deviceimpl.cpp", "communicatorimpl.cpp", "vendorapi.h", "CMakeLists.txt", "GplExtras.h")
MAX_BYTES = 3 << 20

# What an edit inserts: the syntax of YAML, JSON and C++, values the schemas treat specially,
# text that is not what it seems (bidirectional marks, surrogates, NUL), and paths.
TOKENS = [b"[", b"]", b"{", b"}", b": ", b"- ", b",", b"&a ", b"*a", b"<<: *a\n", b"!!int ", b"!!float ",
          b"!!bool ", b"!!binary ", b"!!python/object:os.system ", b"!!set ", b"? ", b"|\n", b">-\n", b"\n",
          b"\r\n", b"\r", b"  ", b"\t", b"# ", b'"', b"'", b"\\", b"\\u", b"\x00", b"%YAML 1.1\n", b"---\n",
          b"...\n", "\u00e9\U0001F600\u202e\u2066".encode(), b"\xed\xa0\x80", b"\xff\xfe", b"{{ x }}", b"{%",
          b"${X}", b";", b"$", b"../../", b"/etc/passwd", b"*/", b"/*", b"//", b"#include <x>\n", b"[[", b"]]",
          b"(", b")", b"<", b">", b"diopiAdd", b"DIOPI_API diopiError_t diopiFuzz(", b"diopiError_t f() {",
          b"1e400", b"-1", b"0x", b"99999999999999999999", b"null", b"~", b"true", b"no", b"2.10", b"add.out",
          b"Tensor", b"{\"a\":", b"[{}]", b"5"]
REPEATS = [1, 1, 1, 2, 3, 16, 1000, 30000]


@dataclass(frozen=True)
class Target:
    """A reader: the files it may be fed (relative to the scratch tree), how the tree is made,
    the command that reads the file (given the tree and the file), and what an error must name
    (None: the file's name)."""

    name: str
    seeds: tuple[str, ...]
    prepare: Callable[[Path], None]
    command: Callable[[Path, Path], list[str]]
    named: str | None = None
    workspace: str | None = None  # the workspace (in the tree) the command checks or makes: when the command
    #                               passes, it must validate, and it is rendered and what was rendered read


def _workspace(own_catalog: bool) -> Callable[[Path], None]:
    """The bundled vendors; with *own_catalog* a copy of the catalog too (its settings switch the
    bundled one off), else the bundled workspace's settings."""
    def prepare(tree: Path) -> None:
        copy_workspace(tree, own_catalog=own_catalog)
        if not own_catalog:
            shutil.copy(REPO / "deeplink-gen.yaml", tree / "deeplink-gen.yaml")
    return prepare


def _import_fixtures(tree: Path) -> None:
    tree.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "diopi_functions.yaml", tree / "diopi_functions.yaml")
    shutil.copy(FIXTURES / "camb_convert_config.yaml", tree / "convert_config.yaml")


def _import(tree: Path, _: Path) -> list[str]:
    return ["import-dipu", "--functions", str(tree / "diopi_functions.yaml"), "--convert-config",
            f"camb={tree / 'convert_config.yaml'}", "--vendors", "camb", "--out", str(tree / "ws")]


def _runtime(tree: Path) -> None:
    shutil.copytree(VENDORS / "gpulike", tree / "rt")


def _import_runtime(tree: Path, _: Path) -> list[str]:
    return ["import-dipu", "--functions", str(FIXTURES / "diopi_functions.yaml"), "--runtime", f"gpulike={tree / 'rt'}",
            "--vendors", "gpulike", "--torch-version", DIPU_TORCH, "--out", str(tree / "ws")]


def _headers(tree: Path) -> None:
    shutil.copytree(diopi_include(), tree / "include")


def _impl(tree: Path) -> None:
    shutil.copytree(DIPU_CHECKOUT / "dipu" / "third_party" / "DIOPI" / "impl" / "camb", tree / "camb")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    """The bundled droplet vendor rendered once, the tree the output readers see."""
    ws = copy_workspace(tmp_path_factory.mktemp("fuzz-rendered") / "ws", own_catalog=False)
    shutil.copy(REPO / "deeplink-gen.yaml", ws / "deeplink-gen.yaml")
    result = run_cli("render", "--vendor", "droplet", cwd=ws)
    assert result.exit_code == 0, result.output
    return ws


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    """A `coverage --format json` report of the bundled workspace, the seed of the baseline reader."""
    path = tmp_path_factory.mktemp("fuzz-baseline") / "baseline.json"
    result = run_cli("coverage", "--format", "json", "--vendor", "droplet", cwd=REPO)
    assert result.exit_code == 0, result.output
    path.write_text(result.stdout)
    return path


def _targets(rendered: Path, baseline: Path) -> dict[str, Target]:
    vendor_files = tuple(f"vendors/{p.name}" for p in sorted((REPO / "vendors").glob("*.yaml")))
    catalog_files = tuple(f"catalog/{p.name}" for p in sorted((REPO / "deeplink_gen" / "catalog").glob("*.yaml")))
    ws = ["validate"]
    targets = [
        Target("vendor", vendor_files, _workspace(False), lambda tree, _: ["-C", str(tree), *ws], workspace="."),
        Target("catalog", catalog_files, _workspace(True), lambda tree, _: ["-C", str(tree), *ws], workspace="."),
        Target("settings", ("deeplink-gen.yaml",), _workspace(False), lambda tree, _: ["-C", str(tree), *ws],
               workspace="."),
        Target("dipu_ops", ("diopi_functions.yaml",), _import_fixtures, _import, workspace="ws"),
        Target("convert_config", ("convert_config.yaml",), _import_fixtures, _import, workspace="ws"),
        Target("runtime", tuple(f"rt/{name}" for name in RUNTIME_SEEDS), _runtime, _import_runtime, workspace="ws"),
        Target("baseline", ("baseline.json",), lambda tree: (tree.mkdir(parents=True), shutil.copy(baseline, tree)),
               lambda tree, f: ["-C", str(REPO), "coverage", "--vendor", "droplet", "--baseline", str(f)]),
        Target("manifest", ("generated/droplet/manifest.json",), lambda tree: shutil.copytree(rendered, tree),
               lambda tree, _: ["-C", str(tree), "render", "--vendor", "droplet", "--check"]),
        # A declaration cut out of the header is an error where the catalog or a vendor names it,
        # against the prototypes of the folder given.
        Target("diopi_header", ("include/diopi/functions.h",), _headers,
               lambda tree, _: ["-C", str(REPO), "--diopi-include", str(tree / "include"), "validate"],
               named="include/diopi"),
        Target("impl", ("camb/functions/unary.cpp",), _impl,
               lambda tree, _: ["-C", str(REPO), "coverage", "--vendor", "camb", "--impl", f"camb={tree / 'camb'}"]),
    ]
    return {t.name: t for t in targets}


# An edit: (what, where as a fraction of the file, a token, how many times).
EDIT = st.tuples(st.sampled_from(["insert", "delete", "duplicate", "replace"]), st.floats(0, 1),
                 st.one_of(st.sampled_from(TOKENS), st.binary(min_size=1, max_size=6)), st.sampled_from(REPEATS))


def mutate(seed: bytes, edits: list) -> bytes:
    data = seed
    for what, where, token, times in edits:
        at = int(where * len(data))
        if what == "insert":
            data = data[:at] + token * times + data[at:]
        elif what == "delete":
            data = data[:at] + data[at + min(times, 4096):]
        elif what == "duplicate":
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            line = data[start:(len(data) if end < 0 else end + 1)]
            data = data[:start] + line * min(times, max(1, MAX_BYTES // max(len(line), 1))) + data[start:]
        else:
            data = data[:at] + token * times + data[at + len(token) * times:]
        data = data[:MAX_BYTES]
    return data


def problems(target: Target, tree: Path, path: Path) -> list[str]:
    """What is wrong with the run of *target* on the tree (and, for a workspace that passes, with
    its render and what was rendered): empty when it behaved."""
    code, found = _ran(target, target.command(tree, path), tree, path)
    if found or code != 0 or target.workspace is None:
        return found
    ws = tree / target.workspace
    if target.workspace != ".":         # an import that passed promises a workspace that validates
        code, found = _ran(target, ["-C", str(ws), "validate"], tree, path)
        if code != 0:
            return found or [f"the import passed, but its workspace does not validate (exit {code})"]
    code, found = _ran(target, ["-C", str(ws), "render", "--all"], tree, path)
    return found or (_rendered_problems(ws) if code == 0 else [])


def _rendered_problems(ws: Path) -> list[str]:
    """What the compilers would refuse in the rendered files that is visible without them: C++ that
    does not read as C++ (a comment, literal or bracket left open, a stray character: what pasted
    code breaks), Python that does not compile. A vendor's hand-written file is copied as it is,
    broken or not (vendors/<name>/ holds the same bytes), and is not looked at."""
    found = []
    own = {p.read_bytes() for p in (ws / "vendors").rglob("*") if p.is_file() and p.suffix != ".yaml"}
    for p in sorted((ws / "generated").rglob("*")):
        if p.is_file() and p.read_bytes() in own:
            continue
        if p.suffix in (".cpp", ".h", ".hpp", ".inc"):
            why = cpplex.problem(p.read_text(errors="replace"), directives=True)
            if why is not None:
                found.append(f"rendered {p.relative_to(ws)} is not C++: {why}")
        elif p.suffix == ".py":
            try:
                compile(p.read_bytes(), str(p), "exec")
            except (SyntaxError, ValueError) as exc:
                found.append(f"rendered {p.relative_to(ws)} is not Python: {exc}")
    return found


def _ran(target: Target, args: list[str], tree: Path, path: Path) -> tuple[int | None, list[str]]:
    """One run of deeplink-gen with *args*: its exit code (None: killed) and what is wrong with it."""
    env = {**os.environ, "DEEPLINK_GEN_NO_CACHE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        ran = subprocess.run([sys.executable, "-m", "deeplink_gen", *args], cwd=tree,
                             env=env, capture_output=True, text=True, errors="replace", timeout=HANG_LIMIT,
                             preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return None, [f"ran past {HANG_LIMIT} s of wall time"]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    out = ran.stdout + ran.stderr
    found = [f"took {cpu:.1f} s of CPU time, over {TIME_LIMIT}"] if cpu > TIME_LIMIT else []
    if ran.returncode not in (0, 1, 2):
        found.append(f"exit {ran.returncode}")
    if "Traceback (most recent call last)" in out:
        found.append("traceback")
    named = target.named or path.name
    if ran.returncode == 1 and named not in out:
        found.append(f"an error that does not name {named}")
    return ran.returncode, [f"{p}:\n{out[-3000:]}" for p in found]


def _save(target: str, data: bytes) -> Path:
    folder = Path(os.environ.get("DEEPLINK_GEN_FUZZ_SAVE") or Path(tempfile.gettempdir()) / "deeplink-gen-fuzz")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{target}.failing"
    path.write_bytes(data)
    return path


def _run(targets: dict[str, Target], name: str, rel: str, data: bytes) -> None:
    target = targets[name]
    tree = Path(tempfile.mkdtemp(prefix=f"fuzz-{name}-"))
    try:
        target.prepare(tree / "t")
        path = tree / "t" / rel
        path.write_bytes(data)
        found = problems(target, tree / "t", path)
        if found:
            saved = _save(name, rel.encode() + b"\n" + data)
            pytest.fail(f"{name} ({rel}), input saved as {saved}: " + "\n".join(found))
    finally:
        shutil.rmtree(tree, ignore_errors=True)


TARGETS = ["vendor", "catalog", "settings", "dipu_ops", "convert_config", "runtime", "baseline", "manifest",
           "diopi_header", "impl"]


@pytest.mark.parametrize("name", TARGETS)
def test_fuzz(name: str, rendered: Path, baseline: Path):
    targets = _targets(rendered, baseline)
    target = targets[name]

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(rel=st.sampled_from(target.seeds), edits=st.lists(EDIT, min_size=1, max_size=5))
    def run(rel: str, edits: list) -> None:
        if time.monotonic() > until:
            return
        seed = _seed(target, rel)
        _run(targets, name, rel, mutate(seed, edits))
        tried.append(rel)

    tried: list[str] = []
    start = time.monotonic()
    until = start + SECONDS
    run()
    # shown with pytest -rP (or -s): what a long run by hand reports
    print(f"fuzz {name}: {len(tried)} inputs, mutated from {len(set(tried))} of {len(target.seeds)} seed files, "
          f"in {time.monotonic() - start:.0f} s")


_SEEDS: dict[tuple[str, str], bytes] = {}


def _seed(target: Target, rel: str) -> bytes:
    if (target.name, rel) not in _SEEDS:
        scratch = Path(tempfile.mkdtemp(prefix="fuzz-seed-"))
        try:
            target.prepare(scratch / "t")
            _SEEDS[target.name, rel] = (scratch / "t" / rel).read_bytes()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return _SEEDS[target.name, rel]


def _saved_cases() -> list[Path]:
    return sorted(p for p in SAVED.glob("*/*") if p.is_file())


@pytest.mark.parametrize("case", _saved_cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_saved_cases(case: Path, rendered: Path, baseline: Path):
    """Inputs the fuzzer once failed on, each as its file's path in the tree, a newline, and the bytes."""
    rel, _, data = case.read_bytes().partition(b"\n")
    _run(_targets(rendered, baseline), case.parent.name, rel.decode(), data)
