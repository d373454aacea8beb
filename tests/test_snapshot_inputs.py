"""Hostile inputs of locate and the snapshot commands: each fails cleanly (exit 1, naming
the file) or is read bounded, never with a traceback or a hang. An --out file a snapshot
command compares with is read bounded, and one that cannot be a snapshot (not UTF-8,
gigabytes, a gzip bomb, corrupt) is simply replaced."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from helpers import DIPU_CHECKOUT, REPO, diopi_include, error_lines, run_cli, run_subprocess

MEMORY = 600 << 20      # a snapshot command runs in less; reading a huge file whole fails in it


def _locate(ws: Path, data: bytes | None, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "deeplink_gen", "-C", str(ws), "locate"], input=data,
                          capture_output=True, env=env, timeout=300, **kwargs)


def test_locate_passes_a_number_too_long_for_a_line_through(workspace: Path):
    line = b"catalog/pointwise.yaml:add.out:" + b"9" * 5000 + b":5: error: x\n"
    done = _locate(workspace, line)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == line


def test_locate_with_standard_input_closed_fails_cleanly(workspace: Path):
    done = _locate(workspace, None, preexec_fn=lambda: os.close(0))     # as `locate <&-`
    assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr
    assert b"error: standard input: is closed" in done.stderr


def test_diopi_snapshot_replaces_an_out_file_that_is_not_utf8_or_huge(tmp_path: Path):
    out = tmp_path / "bad.yaml"
    out.write_bytes(b"\xff\xfe")
    result = run_cli("diopi-snapshot", "--include", str(diopi_include()), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("wrote ") and out.read_bytes().startswith(b"#")
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as f:         # 8 GiB, sparse on disk
        f.truncate(8 << 30)
    done = run_subprocess("diopi-snapshot", "--include", str(diopi_include()), "--out", str(huge), memory=MEMORY)
    assert done.returncode == 0, done.stderr[-2000:]
    assert huge.read_bytes() == out.read_bytes()


def _gzip_bomb(path: Path, mib: int) -> None:
    """*mib* MiB of zeros, gzip-compressed (at about 1:230) a MiB at a time."""
    pack = zlib.compressobj(1, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(pack.compress(zeros))
        f.write(pack.flush())


def test_torch_snapshot_replaces_a_gzip_bomb_or_a_corrupt_out_file(tmp_path: Path):
    bomb = tmp_path / "bomb.json.gz"
    _gzip_bomb(bomb, 1024)
    done = run_subprocess("torch-snapshot", "--out", str(bomb), memory=MEMORY)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("wrote ")
    good = bomb.read_bytes()
    assert gzip.decompress(good).startswith(b'{"//": ')
    corrupt = tmp_path / "corrupt.json.gz"
    corrupt.write_bytes(good[:-8] + bytes([good[-8] ^ 1]) + good[-7:])      # its CRC is wrong
    result = run_cli("torch-snapshot", "--out", str(corrupt))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("wrote ") and corrupt.read_bytes() == good


_TAMPER = """
from pathlib import Path
from deeplink_gen import cache
from deeplink_gen.input_paths import cache_dir
from deeplink_gen.interfaces import aten
rows = aten.installed_rows()                      # builds the index into the cache
[entry] = cache_dir().glob("store-*/aten-ops/*/*")
rows["linear"][0] = "linear(Tensor tampered) -> Tensor"
cache.store("aten-ops", entry.parent.name + entry.name, rows)    # over it, its checksum valid
"""


def test_torch_snapshot_indexes_torch_afresh_not_from_the_cache(tmp_path: Path):
    """A tampered op index in the cache (with a valid checksum) is not what torch-snapshot records."""
    env = {**os.environ, "DEEPLINK_GEN_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run([sys.executable, "-c", _TAMPER], env=env, check=True)
    read = subprocess.run([sys.executable, "-c", "from deeplink_gen.interfaces import aten; "
                           "print(aten.installed_rows()['linear'][0])"], env=env, check=True, capture_output=True)
    assert read.stdout == b"linear(Tensor tampered) -> Tensor\n"      # the cache serves the tampered rows
    out = tmp_path / "torch.json"
    done = run_subprocess("torch-snapshot", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text()
    assert '"linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"' in text and "tampered" not in text


def _dipu_build(root: Path, compile_commands) -> Path:
    """A DIPU build folder: one core object and *compile_commands* as its compile_commands.json."""
    build = root / "build"
    (build / "csrc_dipu").mkdir(parents=True)
    (build / "csrc_dipu" / "core.cpp").write_text("int g() { return 1; }\n")
    subprocess.run(["g++", "-c", "core.cpp", "-o", "core.o"], cwd=build / "csrc_dipu", check=True)
    text = compile_commands if isinstance(compile_commands, str) else json.dumps(compile_commands)
    (build / "compile_commands.json").write_text(text)
    return build


def _core_entry(build: Path, **command) -> list[dict]:
    return [{"file": "csrc_dipu/core.cpp", "directory": str(build / "csrc_dipu"), **command}]


def _kernel_headers(root: Path) -> Path:
    """A checkout holding DIPU's kernel headers, empty but for one that defines a function and declares a dipu_*."""
    from deeplink_gen.interfaces.dipu_link import KERNEL_HEADERS

    csrc = root / "dipu" / "torch_dipu"
    for header in KERNEL_HEADERS:
        (csrc / header).parent.mkdir(parents=True, exist_ok=True)
        (csrc / header).write_text("")
    (csrc / "csrc_dipu/aten/ops/OpUtils.hpp").write_text(
        "namespace dipu { namespace native {\ninline int helper(int x) { return x; }\n"
        "int dipu_wrap_diopi_x(int);\n} }\n")
    return root


def _link_snapshot(tmp_path: Path, build: Path, source: Path, **kwargs) -> subprocess.CompletedProcess:
    """dipu-link-snapshot run from *tmp_path*, its probes in tmp_path/tmp (left empty, whatever the outcome)."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    done = run_subprocess("dipu-link-snapshot", "--build", os.path.relpath(build, tmp_path),
                          "--source", os.path.relpath(source, tmp_path), "--out", "out.json.gz", "--commit", "abc",
                          "--torch", "2.2.2", cwd=tmp_path, env={"TMPDIR": str(tmp_path / "tmp")}, **kwargs)
    assert not list((tmp_path / "tmp").iterdir())
    return done


def _clean_failure(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return done.stderr


@pytest.mark.parametrize("entries, where, message", [
    ('[{"file": 1}]', "[0]", "not a compile command"),
    ('{"a": 1}', "(top level)", "not a list of compile commands"),
    ('[[', "--build", "not JSON"),
    (lambda b: _core_entry(b, command='g++ "-c'), "[0].command", "not a shell command: No closing quotation"),
    (lambda b: _core_entry(b, command="g++ -include no_such.h -c core.cpp"), "[0].command",
     "DIPU's kernel headers do not compile with this command"),
    (lambda b: _core_entry(b, arguments=["no-such-compiler", "-c", "core.cpp"]), "[0].arguments",
     "cannot run no-such-compiler"),
])
def test_dipu_link_snapshot_refuses_a_bad_compile_command(tmp_path: Path, entries, where: str, message: str):
    build = _dipu_build(tmp_path, "[]")
    if callable(entries):
        entries = json.dumps(entries(build))
    (build / "compile_commands.json").write_text(entries)
    stderr = _clean_failure(_link_snapshot(tmp_path, build, _kernel_headers(tmp_path / "src")))
    assert "build/compile_commands.json" in stderr and f": {where}: {message}" in stderr, stderr


def test_dipu_link_snapshot_probe_failure_with_the_checkout_fixture(tmp_path: Path):
    """The stand-in checkout has none of DIPU's kernel headers: the header probe cannot compile."""
    build = _dipu_build(tmp_path, "[]")
    (build / "compile_commands.json").write_text(json.dumps(_core_entry(build, command="g++ -c core.cpp")))
    stderr = _clean_failure(_link_snapshot(tmp_path, build, DIPU_CHECKOUT))
    assert "build/compile_commands.json: error: [0].command: DIPU's kernel headers do not compile" in stderr


def test_dipu_link_snapshot_takes_the_arguments_form(tmp_path: Path):
    """compile_commands.json may give a command as "arguments" (a list of words); --source may be relative,
    though the probes are compiled in the command's directory."""
    build = _dipu_build(tmp_path, "[]")
    (build / "compile_commands.json").write_text(json.dumps(_core_entry(build, arguments=["g++", "-c", "core.cpp"])))
    done = _link_snapshot(tmp_path, build, _kernel_headers(tmp_path / "src"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("wrote out.json.gz: 1 objects, 1 expected, 1 provided, 1 defined by headers")
    data = json.loads(gzip.decompress((tmp_path / "out.json.gz").read_bytes()))
    assert data["expected"] == {"_ZN4dipu6native17dipu_wrap_diopi_xEi": "dipu::native::dipu_wrap_diopi_x(int)"}
    assert data["header_defined"] == ["dipu::native::helper"]


def test_dipu_link_snapshot_refuses_an_object_file_nm_cannot_read(tmp_path: Path):
    build = _dipu_build(tmp_path, "[]")
    (build / "compile_commands.json").write_text(json.dumps(_core_entry(build, command="g++ -c core.cpp")))
    (build / "csrc_dipu" / "bad.o").write_text("not an object file\n")
    stderr = _clean_failure(_link_snapshot(tmp_path, build, _kernel_headers(tmp_path / "src")))
    assert "build/csrc_dipu/bad.o: error: nm cannot read it:" in stderr, stderr


def test_dipu_link_snapshot_reads_headers_as_input_files(tmp_path: Path):
    """A FIFO named *.h under --source is refused, naming it, instead of blocking the read."""
    build = _dipu_build(tmp_path, "[]")
    (build / "compile_commands.json").write_text(json.dumps(_core_entry(build, command="g++ -c core.cpp")))
    source = _kernel_headers(tmp_path / "src")
    os.mkfifo(source / "dipu/torch_dipu/csrc_dipu/pipe.h")
    stderr = _clean_failure(_link_snapshot(tmp_path, build, source, timeout=60))
    assert "src/dipu/torch_dipu/csrc_dipu/pipe.h:1:1: error: --source: a FIFO is not a regular file" in stderr


@pytest.mark.parametrize("char", ["\0", "\x1b"])
def test_a_control_character_in_a_diopi_header_is_an_error_at_it(tmp_path: Path, char: str):
    """A NUL inside a declaration was read as part of a parameter's type, and the snapshot
    written with it did not parse as YAML."""
    include = shutil.copytree(diopi_include(), tmp_path / "include")
    functions = include / "diopi" / "functions.h"
    text = functions.read_text()
    functions.write_text(text + f"\nDIOPI_API diopiError_t diopiZz(diopiContextHandle_t ctx,{char} diopiTensorHandle_t out);\n")
    line = text.count("\n") + 2
    result = run_cli("diopi-snapshot", "--include", str(include), "--out", str(tmp_path / "protos.yaml"))
    assert error_lines(result) == [f"{functions}:{line}:57: error: --diopi-include: the control character "
                                   f"U+{ord(char):04X} is not C text"]
    assert not (tmp_path / "protos.yaml").exists()
