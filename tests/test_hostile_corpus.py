"""A fixed corpus of hostile input: seeded mutations of every kind of input
file (each bundled vendor file, deeplink-gen.yaml, three catalog files and a
hand-written source in vendors/<name>/), and the faults an input file can
meet on disk (a FIFO, a link to /dev/zero or /dev/urandom, a folder, a
dangling link, a link out of the workspace, a name that is not UTF-8 or is
too long). Each case runs validate and render in-process under a watchdog, so
a hang fails instead of blocking (a link to a device as a process bounded in
time and memory), and must: exit 0 or 1, raise nothing, print
no traceback, name file:line:col on every error line, and after a failed
render leave the output folder as it was. test_robustness.py checks the
shape errors of structured mutations; this corpus checks the rules every
outcome obeys."""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
from pathlib import Path

import pytest

from helpers import REPO, copy_workspace, run_cli, run_subprocess, tree_state

SEED = 20
VARIANTS = 6                  # mutations per input file
WATCHDOG = 30                 # seconds one command may take before it counts as a hang
SHIM = "vendors/droplet/shim.cpp"
YAML_FILES = [*(f"vendors/{p.name}" for p in sorted((REPO / "vendors").glob("*.yaml"))), "deeplink-gen.yaml",
              "catalog/pointwise.yaml", "catalog/reduce.yaml", "catalog/older_torch.yaml"]
LOCATED = re.compile(r"^.+:\d+:\d+: (error|warning): ")

# Values a mutation writes in place of a scalar: names too long for a file system, C++ and
# shell text, YAML that is not a string, line breaks, and characters terminals act on.
PAYLOADS = [
    "a" * 300, "A" * 260, '"a\\nb"', "'x\"); system(\"touch PWNED\"); //'", "[a, list]", "{a: map}",
    "12345678901234567890", "-1", ".inf", "null", "~", "!!binary aGk=", "&anchor x", "*undefined",
    "'${HOME}$(id)`id`'", "../../../etc/passwd", '"\\u202e\\u0000\\x1b[31m"', "yes", "''", "|\n  block",
]
JUNK = ["\t", "\x00", "\x1b[2J", "\u2028", "\x85", "\ufeff", ": :", "- ", "{", "]", "&a", "*a", "!!python/object:os.system",
        "#", "'", '"', "%YAML 1.1", "---", "...", "<<: *a", "é", "\U0001f600"]


def _mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One seeded mutation of a text file: a line deleted, repeated, swapped or
    re-indented, the file cut short, junk or bytes that are not UTF-8 put in, a
    value replaced by a payload, a key made too long."""
    lines = data.decode("utf-8").splitlines(keepends=True) or ["\n"]
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.choice(["delete", "repeat", "swap", "indent", "truncate", "junk", "bytes", "value", "long key"])
    if kind == "delete":
        del lines[i]
    elif kind == "repeat":
        lines.insert(i, lines[i])
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "indent":
        lines[i] = " " * rng.choice([1, 2, 3]) + lines[i] if rng.random() < 0.5 else lines[i].lstrip(" ")
    elif kind == "truncate":
        return kind, data[:rng.randrange(len(data) + 1)]
    elif kind == "bytes":
        at = rng.randrange(len(data) + 1)
        return kind, data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + data[at:]
    elif kind == "junk":
        at = rng.randrange(len(lines[i]) + 1)
        lines[i] = lines[i][:at] + rng.choice(JUNK) + lines[i][at:]
    else:
        keyed = [n for n, line in enumerate(lines) if re.match(r"^\s*[\w.\-]+:", line)] or [i]
        n = rng.choice(keyed)
        key, sep, _ = lines[n].partition(":")
        if kind == "value" and sep:
            lines[n] = f"{key}: {rng.choice(PAYLOADS)}\n"
        else:
            lines[n] = re.sub(r"^(\s*)(\S)", lambda m: m.group(1) + "k" * 260 + m.group(2), lines[n], count=1)
    return kind, "".join(lines).encode("utf-8", "surrogateescape")


def _mutate_source(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """A hand-written C++ source: it is copied byte for byte, so only its encoding matters."""
    kind = rng.choice(["empty", "not UTF-8", "NUL and escapes", "random bytes", "long line"])
    return kind, {"empty": b"", "not UTF-8": data + b"\xff\xfe", "NUL and escapes": data + b"\x00\x1b[2J\r\n",
                  "random bytes": bytes(rng.randrange(256) for _ in range(64)),
                  "long line": b"// " + b"x" * 100_000 + b"\n"}[kind]


def _cases() -> list[tuple[str, int]]:
    return [(rel, n) for rel in [*YAML_FILES, SHIM] for n in range(VARIANTS)]


class Hang(BaseException):
    """A command ran past WATCHDOG: raised from the alarm, it interrupts a blocking read,
    and no `except OSError` or `except Exception` in the code under test can swallow it."""


@contextlib.contextmanager
def _watchdog(what: str):
    """Hang in this thread after WATCHDOG seconds."""
    def expired(signum, frame):
        raise Hang(f"{what}: still running after {WATCHDOG} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(WATCHDOG)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _in_process(workspace: Path, args: tuple[str, ...], label: str) -> tuple[int, str, str]:
    with _watchdog(label):
        result = run_cli(*args, cwd=workspace)
    return result.exit_code, result.output, result.stderr


def _as_process(workspace: Path, args: tuple[str, ...], label: str) -> tuple[int, str, str]:
    """For a device that never ends: a regression would read it into memory inside
    a C loop no alarm interrupts, so it runs in its own process, bounded in time and memory."""
    proc = run_subprocess("-C", str(workspace), *args, timeout=WATCHDOG, memory=2 << 30)
    return proc.returncode, proc.stdout + proc.stderr, proc.stderr


def _check(workspace: Path, label: str, run=_in_process) -> None:
    """validate, then render --all: each obeys the corpus's rules."""
    generated = workspace / "generated"
    for args in (("validate",), ("render", "--all")):
        before = tree_state(generated)
        code, output, stderr = run(workspace, args, f"{label}: {' '.join(args)}")
        where = f"{label}: {' '.join(args)} (exit {code})\n{output[-3000:]}"
        assert code in (0, 1), where
        assert "Traceback" not in output, where
        problems = [line for line in stderr.splitlines() if "error: " in line or "warning: " in line]
        assert all(LOCATED.match(line) for line in problems), where
        if code == 1:
            assert any(": error: " in line for line in problems), where
            if args[0] == "render":
                assert tree_state(generated) == before, f"{where}\na failed render changed the output folder"


@pytest.fixture(scope="module")
def corpus_workspace(tmp_path_factory) -> Path:
    """The bundled workspace with deeplink-gen.yaml's torch, a hand-written source, and its render."""
    ws = copy_workspace(tmp_path_factory.mktemp("corpus") / "ws")
    (ws / "deeplink-gen.yaml").write_text((REPO / "deeplink-gen.yaml").read_text() + "bundled_catalog: false\n")
    (ws / SHIM).parent.mkdir()
    (ws / SHIM).write_text('#include "vendorapi.h"\n\n// A hand-written helper.\nint droplet_shim() { return 0; }\n')
    assert run_cli("render", "--all", cwd=ws).exit_code == 0
    return ws


def _inputs(workspace: Path) -> list[Path]:
    """Every entry below vendors/ and catalog/, and deeplink-gen.yaml."""
    found = [*(workspace / "vendors").rglob("*"), *(workspace / "catalog").rglob("*")]
    return found + [workspace / "deeplink-gen.yaml"] * os.path.lexists(workspace / "deeplink-gen.yaml")


def _reset(workspace: Path, baseline: dict[Path, bytes]) -> None:
    """The inputs as *baseline* holds them: whatever a case added, renamed or put in a file's place goes."""
    folders = {parent for path in baseline for parent in path.parents}
    for path in sorted(_inputs(workspace), reverse=True):
        if path in folders and path.is_dir() and not path.is_symlink():
            continue
        if path not in baseline or path.is_symlink() or not path.is_file():
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    for path, data in baseline.items():
        path.write_bytes(data)


@pytest.fixture
def pristine(corpus_workspace: Path):
    """The corpus workspace, and a function that puts its inputs back; they are put back after the test too."""
    baseline = {path: path.read_bytes() for path in _inputs(corpus_workspace) if path.is_file()}
    yield corpus_workspace, lambda: _reset(corpus_workspace, baseline)
    _reset(corpus_workspace, baseline)


def test_mutations_of_every_input_file(pristine):
    workspace, reset = pristine
    rng = random.Random(SEED)
    for rel, n in _cases():
        path = workspace / rel
        kind, data = (_mutate_source if rel == SHIM else _mutate)(rng, path.read_bytes())
        path.write_bytes(data)
        _check(workspace, f"{rel} #{n} ({kind})")
        reset()


def _outside(tmp: Path, path: Path) -> None:
    target = tmp / "outside" / path.name
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)


FAULTS = {
    "a FIFO": lambda tmp, path: (path.unlink(), os.mkfifo(path)),
    "a link to /dev/zero": lambda tmp, path: (path.unlink(), path.symlink_to("/dev/zero")),
    "a link to /dev/urandom": lambda tmp, path: (path.unlink(), path.symlink_to("/dev/urandom")),
    "a folder": lambda tmp, path: (path.unlink(), path.mkdir()),
    "a dangling link": lambda tmp, path: (path.unlink(), path.symlink_to(tmp / "nowhere")),
    "a link out of the workspace": _outside,
    "a name that is not UTF-8": lambda tmp, path: path.rename(path.with_name(os.fsdecode(b"\xff" + os.fsencode(path.name)))),
    "a name that is too long": lambda tmp, path: path.rename(path.with_name("n" * 240 + path.suffix)),
}
PLACES = ["vendors/droplet.yaml", "deeplink-gen.yaml", "catalog/pointwise.yaml", SHIM]


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_file_system_faults_at_every_kind_of_input(pristine, tmp_path: Path, fault: str):
    workspace, reset = pristine
    for rel in PLACES:
        if fault == "a folder" and rel == SHIM:
            continue          # a folder in vendors/<name>/ is a folder of sources
        FAULTS[fault](tmp_path, workspace / rel)
        _check(workspace, f"{rel} as {fault}", _as_process if fault.startswith("a link to /dev/") else _in_process)
        reset()
