"""`deeplink-gen locate`: compiler output with each op-relative place of pasted C++
("<file>:<op>:<n>", as the .pasted.inc's #line names it) written as the line of the
YAML file, for catalog entries and vendor replacements alike; the rest passes
through byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO, copy_workspace, edit


def _locate(ws: Path, data: bytes) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(ws), "locate"], input=data,
                          capture_output=True, env=env, timeout=300)


def _line(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


def test_places_are_lines_of_the_file_as_it_is_now(tmp_path: Path):
    ws = copy_workspace(tmp_path / "ws")
    vendor = edit(ws / "vendors" / "camb.yaml", "\n# DIOPI dtypes and layouts",
                  "\n  abs.out:\n    replace:\n      call: diopiAbs(ctx, out, self)\n\n# DIOPI dtypes and layouts")
    catalog = ws / "catalog" / "pointwise.yaml"
    log = (b"In file included from AutoGenedKernels_3.cpp:120:\n"
           b"catalog/pointwise.yaml:add.out:7:3: error: 'x' was not declared\n"
           b"vendors/camb.yaml:abs.out:2:9: note: here\n"
           b"catalog/pointwise.yaml:no_such_op:7:3: error: left as it is\n"
           b"catalog/pointwise.yaml:add.out: In function \xff\xfe\n")
    done = _locate(ws, log)
    assert done.returncode == 0, done.stderr
    add, replace = _line(catalog, "  add.out:"), _line(vendor, "    replace:")
    assert done.stdout.splitlines() == [
        b"In file included from AutoGenedKernels_3.cpp:120:",
        f"catalog/pointwise.yaml:{add + 6}:3: error: 'x' was not declared".encode(),
        f"vendors/camb.yaml:{replace + 1}:9: note: here".encode(),
        b"catalog/pointwise.yaml:no_such_op:7:3: error: left as it is",
        b"catalog/pointwise.yaml:add.out: In function \xff\xfe"]
    # An edit above the entry moves the line it gives, as the file moved.
    edit(catalog, "ops:\n", "ops:\n\n\n")
    again = _locate(ws, b"catalog/pointwise.yaml:add.out:7:3: error\n")
    assert again.stdout == f"catalog/pointwise.yaml:{add + 8}:3: error\n".encode()


def test_what_is_read_is_bounded(tmp_path: Path):
    """A LOG that is a pipe or a device (which would be read without end) is refused,
    naming it; a line without end on standard input passes through in bounded pieces,
    as it is, without memory growing with it."""
    ws = copy_workspace(tmp_path / "ws")
    fifo = tmp_path / "build.log"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.log"
    zero.symlink_to("/dev/zero")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for log in (fifo, zero):
        done = subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(ws), "locate", str(log)],
                              capture_output=True, env=env, timeout=120)
        assert done.returncode == 1, done.stderr
        assert f"{log}: is not a regular file" in done.stderr.decode() and b"Traceback" not in done.stderr
    endless = tmp_path / "zeros"            # one line of 256 MiB, sparse on disk
    with open(endless, "wb") as f:
        f.truncate(256 << 20)

    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (300 << 20, 300 << 20))

    with open(endless, "rb") as stdin:
        done = subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(ws), "locate"], stdin=stdin,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=300, preexec_fn=limit)
    assert done.returncode == 0, done.stderr[-2000:]
    # Split into pieces or not, each line is rewritten as before.
    log = b"y" * (3 << 20) + b"\ncatalog/pointwise.yaml:add.out:1:1: error\n"
    done = subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(ws), "locate"], input=log,
                          capture_output=True, env=env, timeout=300)
    line = _line(ws / "catalog" / "pointwise.yaml", "  add.out:")
    assert done.stdout == log.replace(b"add.out:1:", f"{line}:".encode())
