"""import-dipu on input and workspaces that try it: a hand-written file that mentions the import
survives --force, a failure midway leaves the workspace as it was, a runtime header outside the
runtime folder and a backslash-newline in a string literal are read without a traceback, a long
runtime source is read in linear time, and a dtype cycle of a convert_config.yaml is reported at
its own line. Built from the fixtures (tests/fixtures/dipu, tests/fixtures/dipu_vendors)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import DIPU_TORCH, REPO, error_lines, run_cli, run_subprocess, tree_state

FUNCTIONS = REPO / "tests" / "fixtures" / "dipu" / "diopi_functions.yaml"
GPULIKE = REPO / "tests" / "fixtures" / "dipu_vendors" / "gpulike"


def _import(out: Path, *args: str, vendors: str = "gpulike", runtime: Path | None = None):
    more = ["--runtime", f"gpulike={runtime}"] if runtime is not None else []
    return run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", vendors, "--torch-version", DIPU_TORCH,
                   "--out", str(out), *more, *args)


def test_force_keeps_a_hand_written_file_that_mentions_the_import(tmp_path: Path):
    ws = tmp_path / "ws"
    assert _import(ws, vendors="camb").exit_code == 0
    mine = ws / "vendors" / "mine.yaml"
    mine.write_text("# My own vendor, written by hand (not by deeplink-gen import-dipu): keep it.\n"
                    "vendor:\n  name: mine\n")
    stale = ws / "vendors" / "ascend.yaml"      # what an earlier import wrote, with the header it writes
    stale.write_text("# yaml-language-server: $schema=../schemas/vendor.schema.json\n"
                     "# Imported by deeplink-gen import-dipu from DIPU's diopi_functions.yaml.\nvendor: {}\n")
    result = _import(ws, "--force", vendors="camb")
    assert result.exit_code == 0, result.output
    assert mine.read_text().startswith("# My own vendor")
    assert not stale.exists()
    assert f"note: kept {mine}: import-dipu did not write" in result.stderr.replace("\n", " ")


def test_a_folder_where_a_file_goes_fails_before_anything_is_written(tmp_path: Path):
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    ws = tmp_path / "ws"
    assert _import(ws, runtime=rt).exit_code == 0
    (rt / "GplCopyInplace.cpp").write_text("// edited since\n" + (rt / "GplCopyInplace.cpp").read_text())
    (ws / "vendors" / "camb.yaml").mkdir()
    before = tree_state(ws)
    result = _import(ws, "--force", vendors="gpulike,camb", runtime=rt)
    assert error_lines(result) == [f"{ws / 'vendors' / 'camb.yaml'}: error: --out: is a folder where the import "
                                   "writes a file; nothing was written: move the folder away"]
    assert tree_state(ws) == before and (ws / "vendors" / "camb.yaml").is_dir()


def test_a_workspace_that_does_not_validate_puts_the_hand_written_files_back(tmp_path: Path):
    """The hand-written files are written for the validation; when it fails they are as they were."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    ws = tmp_path / "ws"
    assert _import(ws, runtime=rt).exit_code == 0
    (rt / "GplCopyInplace.cpp").write_text("// edited since\n" + (rt / "GplCopyInplace.cpp").read_text())
    (rt / "patch" / "GplPatch.cpp").write_bytes(b"// not UTF-8: \xff\n")
    before = tree_state(ws)
    result = _import(ws, "--force", runtime=rt)
    assert any("GplPatch.cpp" in line and "not UTF-8" in line for line in error_lines(result)), result.output
    assert tree_state(ws) == before
    # a fresh workspace is not left behind at all
    assert _import(tmp_path / "new", runtime=rt).exit_code == 1
    assert not (tmp_path / "new").exists()


def test_a_shared_header_outside_the_runtime_folder_is_an_error_at_its_include(tmp_path: Path):
    rt = shutil.copytree(GPULIKE, tmp_path / "gpulike")
    (tmp_path / "common").mkdir()
    shutil.move(rt / "GplExtras.h", tmp_path / "common" / "GplExtras.h")
    for rel, old, new in (("GplCopyInplace.cpp", '"GplExtras.h"', '"../common/GplExtras.h"'),
                          ("patch/GplPatch.cpp", '"../GplExtras.h"', '"../../common/GplExtras.h"'),
                          # a runtime source including it too: its include would go into the comm section
                          ("communicatorimpl.cpp", "", '#include "../common/GplExtras.h"\n')):
        source = rt / rel
        source.write_text(source.read_text().replace(old, new, 1))
    result = _import(tmp_path / "ws", runtime=rt)
    errors = error_lines(result)
    assert len(errors) == 1 and errors[0].startswith(
        f"{rt / 'GplCopyInplace.cpp'}:9:1: error: --runtime: includes \"../common/GplExtras.h\""), errors
    assert "outside the runtime folder" in errors[0]
    assert not (tmp_path / "ws").exists()


def test_a_backslash_newline_in_a_string_literal_imports(tmp_path: Path):
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    with open(rt / "deviceimpl.cpp", "a") as fh:
        fh.write('static const char* kMsg = "gpulike: \\\nruntime";\n')
    ws = tmp_path / "ws"
    result = _import(ws, runtime=rt)
    assert result.exit_code == 0, result.output
    assert 'kMsg = "gpulike: \\\n      runtime";' in (ws / "vendors" / "gpulike.yaml").read_text()
    assert run_cli("validate", cwd=ws).exit_code == 0


def test_a_long_runtime_source_is_read_in_linear_time(tmp_path: Path):
    """10,000 declarations took a minute (each item hashed the whole file); now seconds."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    with open(rt / "deviceimpl.cpp", "a") as fh:
        fh.writelines(f"static int a{i};\n" for i in range(10_000))
    start = time.monotonic()
    proc = run_subprocess("import-dipu", "--functions", str(FUNCTIONS), "--runtime", f"gpulike={rt}",
                          "--vendors", "gpulike", "--torch-version", DIPU_TORCH, "--out", str(tmp_path / "ws"),
                          timeout=60)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert elapsed < 10, f"{elapsed:.1f} s"


def test_a_dtype_cycle_of_a_convert_config_is_skipped_at_its_line(tmp_path: Path):
    config = tmp_path / "cc.yaml"
    config.write_text('- common_config: {dtype: "(int64)->int32, (int32)->int64"}\n')
    ws = tmp_path / "ws"
    result = _import(ws, "--convert-config", f"camb={config}", vendors="camb")
    assert result.exit_code == 0, result.output
    assert (f"{config}:1:1: warning: common_config.dtype: (int64)->int32 and (int32)->int64 form a cycle, which "
            "deeplink-gen refuses") in result.stderr.replace("\n", " ")
    assert "(int32)->int64 skipped" in result.stderr
    assert run_cli("validate", cwd=ws).exit_code == 0


def _import_op_file(tmp_path: Path, text: str):
    """DIPU's op file *text* imported for camb: the file, the workspace and the successful run."""
    functions, ws = tmp_path / "f.yaml", tmp_path / "ws"
    functions.write_text(text)
    result = run_cli("import-dipu", "--functions", str(functions), "--vendors", "camb", "--torch-version", DIPU_TORCH,
                     "--out", str(ws))
    assert result.exit_code == 0, result.output
    return functions, ws, result


def test_an_entry_calling_the_wrapper_of_a_skipped_op_is_skipped_too(tmp_path: Path):
    """An op the import skips (its interface is no call) leaves no wrapper, so an op whose custom
    code calls that wrapper is skipped too, with a warning at its own entry: the workspace
    validates and renders, where it rendered C++ that did not compile."""
    functions, ws, result = _import_op_file(tmp_path, (
        '- schema: "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)"\n'
        "  interface: diopiFill x\n"
        '- schema: "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"\n'
        "  custom_code_at_the_beginning: |\n"
        "    if (self.numel() == 1 && self.is_cpu()) {\n"
        "      at::Tensor selfD = nodispatch::empty({1}, out.options());\n"
        "      dipu_fill__scalar(selfD, self.item());\n"
        "    }\n"
        "  interface: diopiAdd(ctx, out, self, other, alpha)\n"))
    assert (f"{functions}:3:1: warning: 'add.out' is not valid for deeplink-gen: add.out calls dipu_fill__scalar, "
            "the wrapper of fill_.Scalar" in result.stderr), result.stderr
    assert "add.out" not in (ws / "catalog" / "dipu.yaml").read_text()
    assert run_cli("validate", cwd=ws).exit_code == 0


def test_custom_code_that_is_not_text_skips_its_entry_with_a_warning(tmp_path: Path):
    """custom_code_* given as a mapping, a number or a list was dropped without a word, and the
    op imported without its code: the entry is skipped, with a warning at the key's line."""
    functions, ws, result = _import_op_file(tmp_path, (
        '- schema: "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"\n'
        "  custom_code_at_the_beginning: {a: 1}\n"
        "  interface: diopiAdd(ctx, out, self, other, alpha)\n"
        '- schema: "aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"\n'
        "  interface: diopiAbs(ctx, out, self)\n"))
    assert f"{functions}:2:1: warning: custom_code_at_the_beginning is not text" in result.stderr, result.stderr
    catalog = (ws / "catalog" / "dipu.yaml").read_text()
    assert "abs.out" in catalog and "add.out" not in catalog


def test_a_file_of_ones_own_where_the_import_writes_is_replaced_only_with_force(tmp_path: Path):
    """Without --force, a hand-written file of the user's where the import writes DIPU's is an
    error naming it, and nothing is written (it was replaced without a word); with --force it is
    replaced. A link there is never written through nor kept to put back: an error either way."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    ws = tmp_path / "ws"
    mine = ws / "vendors" / "gpulike" / "GplCopyInplace.cpp"
    mine.parent.mkdir(parents=True)
    mine.write_text("// my own\n")
    before = tree_state(ws)
    result = _import(ws, runtime=rt)
    assert error_lines(result) == [f"{mine}: error: --out: is a file of its own where the import writes DIPU's; "
                                   "nothing was written: use --force to replace it"]
    assert tree_state(ws) == before
    outside = tmp_path / "outside.cpp"
    outside.write_text("// outside\n")
    mine.unlink()
    mine.symlink_to(outside)
    result = _import(ws, "--force", runtime=rt)
    assert any(f"{mine}: error: --out: is a link" in line for line in error_lines(result)), result.output
    assert mine.is_symlink() and outside.read_text() == "// outside\n"
    mine.unlink()
    mine.write_text("// my own\n")
    assert _import(ws, "--force", runtime=rt).exit_code == 0
    assert mine.read_bytes() == (rt / "GplCopyInplace.cpp").read_bytes()


def test_force_keeps_a_link_and_an_out_inside_a_runtime_folder_is_refused(tmp_path: Path):
    """--force removes only files an import wrote, and an import writes no link; --out inside
    the runtime folder it reads would make each import read the last one's output."""
    ws = tmp_path / "ws"
    assert _import(ws, vendors="camb").exit_code == 0
    elsewhere = tmp_path / "ext.yaml"
    elsewhere.write_text((ws / "vendors" / "camb.yaml").read_text())     # opens with the import's header
    link = ws / "vendors" / "ext.yaml"
    link.symlink_to(elsewhere)
    result = _import(ws, "--force", vendors="camb")
    assert result.exit_code == 0 and link.is_symlink(), result.output
    assert f"note: kept {link}" in result.stderr.replace("\n", " ")
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    result = _import(rt / "ws", runtime=rt)
    assert result.exit_code == 2 and "is inside gpulike's runtime folder" in result.output, result.output
    assert not (rt / "ws").exists()


def test_links_the_import_would_follow_are_refused(tmp_path: Path):
    """vendors/ linked to catalog/ made one folder of two, and the written workspace did not
    validate; a file of the runtime folder linking out of it was carried as a hand-written source."""
    ws = tmp_path / "ws"
    (ws / "catalog").mkdir(parents=True)
    (ws / "vendors").symlink_to("catalog")
    result = _import(ws, vendors="camb")
    assert any(f"{ws / 'vendors'}: error: --out: is a link (to catalog)" in line for line in error_lines(result))
    assert not any((ws / "catalog").iterdir())
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    outside = tmp_path / "outside.txt"
    outside.write_text("not the runtime's\n")
    (rt / "notes.txt").symlink_to(outside)
    result = _import(tmp_path / "ws2", runtime=rt)
    assert any(f"{rt / 'notes.txt'}: error: --runtime: is a link that leads outside" in line
               for line in error_lines(result)), result.output
    assert not (tmp_path / "ws2").exists()


def test_a_runtime_folder_of_too_many_files_is_refused_early(tmp_path: Path):
    """30,000 files took 91 s to carry (each staged and synced), for a vendor folder render refuses."""
    from deeplink_gen.input_paths import MAX_HAND_WRITTEN

    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    many = rt / "many"
    many.mkdir()
    for i in range(MAX_HAND_WRITTEN + 1):
        (many / f"f{i}.txt").touch()
    start = time.monotonic()
    result = _import(tmp_path / "ws", runtime=rt)
    assert any(f"holds more than {MAX_HAND_WRITTEN} files" in line for line in error_lines(result)), result.output
    assert time.monotonic() - start < 20 and not (tmp_path / "ws").exists()


def test_runtime_code_the_compiler_cannot_read_is_an_error_at_its_own_line(tmp_path: Path):
    """An unclosed comment or a stray character in a runtime source is reported at that
    source's line, where the user can fix it, not at the vendor file the import would write."""
    for name, inserted, column, why in (("comment", "  /* never closed\n", 3, "is not closed (*/)"),
                                        ("char", "  int x = 1 @ 2;\n", 13, "U+0040")):
        rt = shutil.copytree(GPULIKE, tmp_path / name / "rt")
        source = rt / "deviceimpl.cpp"
        lines = source.read_text().splitlines(keepends=True)
        at = next(n for n, line in enumerate(lines) if line.startswith("void createStream(")) + 1
        source.write_text("".join(lines[:at] + [inserted] + lines[at:]))
        result = _import(tmp_path / name / "ws", runtime=rt)
        [error] = error_lines(result)
        assert error.startswith(f"{source}:{at + 1}:{column}: error: --runtime: ") and why in error, error
        assert not (tmp_path / name / "ws").exists()


def test_runtime_code_not_in_utf8_is_imported_with_a_warning_at_its_byte(tmp_path: Path):
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    source = rt / "deviceimpl.cpp"
    data = source.read_bytes()
    at = data.index(b"void createStream(")
    source.write_bytes(data[:at] + "// 设备 (GBK)\n".encode("gbk") + data[at:])
    ws = tmp_path / "ws"
    result = _import(ws, runtime=rt)
    assert result.exit_code == 0, result.output
    line = data[:at].count(b"\n") + 1
    assert f"{source}:{line}:4: warning: not valid UTF-8 (byte 0xc9)" in result.output
    assert run_cli("validate", cwd=ws).exit_code == 0


def test_a_runtime_file_of_a_name_render_refuses_is_an_error_at_that_file(tmp_path: Path):
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    odd = rt / "patch" / "a;b.h"
    shutil.copy(rt / "GplExtras.h", odd)
    result = _import(tmp_path / "ws", runtime=rt)
    [error] = error_lines(result)
    assert error.startswith(f"{odd}: error: --runtime: a name in its path, 'a;b.h', holds ;"), error
    assert "vendors/gpulike/patch/a;b.h; rename it" in error
    assert not (tmp_path / "ws").exists()


def test_a_comment_inside_a_runtime_call_is_dropped_not_joined_into_its_line(tmp_path: Path):
    """A call split over lines with a // comment between its arguments becomes a one-line
    call template: the comment is dropped, where joined it swallowed the call's `)`."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    source = rt / "deviceimpl.cpp"
    old = "GPL_CALL(::gplSetDevice(device_id))"
    assert old in source.read_text()
    source.write_text(source.read_text().replace(old, "GPL_CALL(::gplSetDevice(device_id  // the id\n/* c */))"))
    ws = tmp_path / "ws"
    result = _import(ws, runtime=rt)
    assert result.exit_code == 0, result.output
    assert "      setDevice: gplSetDevice({devId} )\n" in (ws / "vendors" / "gpulike.yaml").read_text()
    assert run_cli("validate", cwd=ws).exit_code == 0


def test_custom_code_holding_characters_yaml_reads_as_line_breaks_is_kept_byte_for_byte(tmp_path: Path):
    """NEL, LS and PS inside a // comment: the compiler reads one comment line, but a YAML
    literal block reads each as a line break (a live `return out;` after the comment); the
    import writes such code with escapes, and it reads back as it was."""
    functions = tmp_path / "diopi_functions.yaml"
    code = "// fast path disabled\x85return out;\n// a\u2028b\u2029c\n"
    functions.write_text(
        '- schema: "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"\n'
        f'  custom_code_at_the_beginning: "{code.encode("unicode_escape").decode()}"\n'
        '  interface: diopiAdd(ctx, out, self, other, alpha)\n', encoding="utf-8")
    ws = tmp_path / "ws"
    result = run_cli("import-dipu", "--functions", str(functions), "--vendors", "camb", "--torch-version", DIPU_TORCH,
                     "--out", str(ws))
    assert result.exit_code == 0, result.output
    import yaml
    catalog = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text(encoding="utf-8"))
    assert catalog["ops"]["add.out"]["code"]["beginning"] == code



def test_hidden_files_and_editor_leftovers_are_not_carried_and_binary_files_are_refused(tmp_path: Path):
    """A runtime folder that is a git submodule (a .git file), with a .svn/ folder, an editor's
    swap file and backup: none is a source, and render would skip or git would drop them,
    so they are left with a warning naming them. A file that is not text is an error at it."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    (rt / ".git").write_text("gitdir: ../.git/modules/gpulike\n")
    (rt / ".svn").mkdir()
    (rt / ".svn" / "entries").write_text("12\n")
    (rt / ".deviceimpl.cpp.swp").write_bytes(b"\x00b0VIM")
    shutil.copy(rt / "deviceimpl.cpp", rt / "deviceimpl.cpp~")
    ws = tmp_path / "ws"
    result = _import(ws, runtime=rt)
    assert result.exit_code == 0, result.output
    assert f"{rt}: warning: not carried (hidden, or left by a version control system, an editor or patch): " \
           ".deviceimpl.cpp.swp, .git, .svn/entries, deviceimpl.cpp~" in result.output
    assert sorted(p.name for p in (ws / "vendors" / "gpulike").rglob("*") if p.is_file()) == \
        ["GplCopyInplace.cpp", "GplExtras.h", "GplPatch.cpp"]
    assert run_cli("validate", cwd=ws).exit_code == 0
    (rt / "logo.bin").write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    result = _import(tmp_path / "ws2", runtime=rt)
    [error] = error_lines(result)
    assert error.startswith(f"{rt / 'logo.bin'}:1:1: error: --runtime: not UTF-8 text (byte 0x89)"), error
    assert not (tmp_path / "ws2").exists()


def test_a_runtime_file_with_cr_line_ends_imports_as_with_lf(tmp_path: Path):
    """g++ ends a line at a lone CR or a CRLF as at an LF, so the import does too: a
    deviceimpl.cpp with either imports exactly as with LF (it was not found to define DIPU's
    functions, and an error named the vendor file that was never written)."""
    def imported(ending: bytes) -> dict:
        rt = shutil.copytree(GPULIKE, tmp_path / f"rt{len(ending)}{ending[:1].hex()}")
        source = rt / "deviceimpl.cpp"
        source.write_bytes(source.read_bytes().replace(b"\n", ending))
        ws = rt.parent / (rt.name + "-ws")
        result = _import(ws, runtime=rt)
        assert result.exit_code == 0, result.output
        return {rel: data for rel, (data, _, _) in tree_state(ws).items()}

    assert imported(b"\r") == imported(b"\r\n") == imported(b"\n")


@pytest.mark.parametrize("inserted, why", [
    ("#endif\n", "#endif without an #if before it"),
    ("#else\n", "#else without an #if before it"),
    ("#if (X >=\n#endif\n", "the condition of #if ends where an operand belongs"),
    ("#ifdef 1\n#endif\n", "the condition of #ifdef does not start with a macro name"),
    ("#if GPL_NEW_SDK\n", "this #if has no #endif"),
])
def test_a_runtime_conditional_the_compiler_refuses_is_an_error_at_its_line(tmp_path: Path, inserted: str, why: str):
    """A conditional was taken as true with a warning that the SDK decides it (or a stray
    #endif passed unseen); the compiler refuses each, so the import does, at its line."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    source = rt / "deviceimpl.cpp"
    text = source.read_text()
    at = text.index("void syncDevice()")
    source.write_text(text[:at] + inserted + text[at:])
    result = _import(tmp_path / "ws", runtime=rt)
    [error] = error_lines(result)
    assert error == f"{source}:{text[:at].count(chr(10)) + 1}:1: error: --runtime: {why}: the compiler refuses it", error
    assert not (tmp_path / "ws").exists()


def test_an_import_into_new_folders_locks_their_parent_and_leaves_none_behind_on_failure(tmp_path: Path):
    """Every import into one --out locks --out's parent, made for it when missing, so that two
    imports started before and after its folders exist lock one folder; a failed import removes
    the folders it made, and one that waits says so."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    (rt / "logo.bin").write_bytes(b"\xff")              # fails the import after the lock is taken
    result = _import(tmp_path / "a" / "b" / "ws", runtime=rt)
    assert result.exit_code == 1
    assert not (tmp_path / "a").exists()
    (rt / "logo.bin").unlink()
    import fcntl
    import os
    (tmp_path / "a" / "b").mkdir(parents=True)
    fd = os.open(tmp_path / "a" / "b", os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "deeplink_gen", "import-dipu", "--functions", str(FUNCTIONS),
                                 "--runtime", f"gpulike={rt}", "--vendors", "gpulike", "--torch-version", DIPU_TORCH,
                                 "--out", str(tmp_path / "a" / "x" / ".." / "b" / "ws")],
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        deadline = time.monotonic() + 60
        waiting = ""
        while "waiting for another deeplink-gen" not in waiting and time.monotonic() < deadline:
            waiting += proc.stderr.readline()
        assert "waiting for another deeplink-gen" in waiting
        assert not (tmp_path / "a" / "b" / "ws").exists()
    finally:
        os.close(fd)
    assert proc.wait(timeout=120) == 0
    assert (tmp_path / "a" / "b" / "ws" / "vendors" / "gpulike.yaml").is_file()


def test_a_runtime_cmake_file_of_many_commands_is_read_in_linear_time(tmp_path: Path):
    """Each command's if() depth was counted over the whole file before it: 30,000 set() lines
    (a fuzzer's input) ran for minutes; now seconds."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    cmake = rt / "CMakeLists.txt"
    cmake.write_text("set(CMAKE_MODULE_PATH ${CMAKE_MODULE_PATH} ${CMAKE_CURRENT_SOURCE_DIR}/cmake)\n" * 20_000
                     + cmake.read_text())
    start = time.monotonic()
    proc = run_subprocess("import-dipu", "--functions", str(FUNCTIONS), "--runtime", f"gpulike={rt}",
                          "--vendors", "gpulike", "--torch-version", DIPU_TORCH, "--out", str(tmp_path / "ws"),
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert time.monotonic() - start < 20


def test_a_runtime_cmake_file_that_is_no_regular_file_is_an_error_at_it(tmp_path: Path):
    """A FIFO or a folder where CMakeLists.txt goes was taken as no CMake file at all: the import
    globbed the folder's sources and passed with a warning about a file it never read."""
    for kind in ("fifo", "folder"):
        rt = shutil.copytree(GPULIKE, tmp_path / kind)
        (rt / "CMakeLists.txt").unlink()
        if kind == "fifo":
            import os
            os.mkfifo(rt / "CMakeLists.txt")
        else:
            (rt / "CMakeLists.txt").mkdir()
        result = _import(tmp_path / f"{kind}-ws", runtime=rt)
        [error] = error_lines(result)
        assert error.startswith(f"{rt / 'CMakeLists.txt'}:1:1: error: --runtime: "), error
        assert not (tmp_path / f"{kind}-ws").exists()


# ---------------------------------------------------------------- the runtime CMake, read as CMake reads it

_FIND_CUDA = 'find_package(CUDA "11.0" REQUIRED)\n'


def _cudalike_cmake(tmp_path: Path, cmake: str):
    """The cudalike fixture imported with *cmake* as its CMakeLists.txt: the result, the file."""
    from test_import_runtime import _cudalike, _import_folder

    folder = _cudalike(tmp_path, cmake=cmake)
    return _import_folder(tmp_path, folder), folder / "CMakeLists.txt"


def _build_section(tmp_path: Path) -> dict:
    from test_import_runtime import _runtime

    return _runtime(tmp_path)["build"]


def test_a_cmake_bracket_comment_is_no_code(tmp_path: Path):
    """`#[[ ... ]]` and `#[==[ ... ]==]` comment out whole commands: their set() was read as the
    VENDOR_FILES that counts, and the folder then defined none of DIPU's functions."""
    result, _ = _cudalike_cmake(tmp_path, (
        "#[[ the old rule, kept for reference:\nset(VENDOR_FILES nothing.cpp PARENT_SCOPE)\n]]\n"
        + _FIND_CUDA
        + "#[==[ nor this one: ]] does not close it\nset(VENDOR_FILES other.cpp PARENT_SCOPE)\n]==]\n"
        "file(GLOB SRC_FILES *.cpp) #[[ a bracket comment ends a command's line too ]]\n"
        "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n"))
    assert result.exit_code == 0, result.output
    assert "CudalikeCopyInplace.cpp" in _build_section(tmp_path)["sources"]


def test_a_cmake_bracket_argument_is_one_literal_argument(tmp_path: Path):
    """[[*.cpp]] is the glob *.cpp, and [=[ ]=] holds `]]` and no variable reference."""
    result, _ = _cudalike_cmake(tmp_path, (
        _FIND_CUDA
        + "set(NOTE [=[${SRC_FILES} ]] stays as written]=])\n"
        "file(GLOB SRC_FILES [[*.cpp]])\n"
        "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n"))
    assert result.exit_code == 0, result.output
    assert "CudalikeCopyInplace.cpp" in _build_section(tmp_path)["sources"]


def test_a_quoted_cmake_list_is_its_items(tmp_path: Path):
    """"a.cpp;b.cpp" is a list of two files, as a\\;b in an unquoted argument is: each was taken
    as one file name (an error without a CMake line)."""
    result, _ = _cudalike_cmake(tmp_path, (
        _FIND_CUDA
        + 'set(MY_SRCS "${CMAKE_CURRENT_SOURCE_DIR}/deviceimpl.cpp;${CMAKE_CURRENT_SOURCE_DIR}/communicatorimpl.cpp")\n'
        "set(MORE CudalikeGeneratorImpl.cpp\\;CudalikeCopyInplace.cpp)\n"
        "set(VENDOR_FILES ${MY_SRCS} ${MORE} PARENT_SCOPE)\n"))
    assert result.exit_code == 0, result.output
    build = _build_section(tmp_path)
    assert "CudalikeCopyInplace.cpp" in build["sources"]
    assert "ncclAllReduce" in (tmp_path / "ws" / "vendors" / "cudalike.yaml").read_text()


@pytest.mark.parametrize("cmake, line, message", [
    (_FIND_CUDA + "set(DIPU_VENDOR_LIB $<$<CONFIG:Debug>:nccl_dbg> $<$<NOT:$<CONFIG:Debug>>:nccl> ${CUDA_LIBRARIES}"
     " PARENT_SCOPE)\nfile(GLOB SRC_FILES *.cpp)\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 2,
     "DIPU_VENDOR_LIB holds the generator expression `$<$<CONFIG:Debug>:nccl_dbg>`, which CMake evaluates only when "
     "it writes the build"),
    (_FIND_CUDA + "file(GLOB SRC_FILES *.cpp)\nset(VENDOR_FILES\n    ${SRC_FILES}\n"
     "    $<$<CONFIG:Debug>:debugchecks.cpp>\n    PARENT_SCOPE)\n", 5,
     "VENDOR_FILES holds the generator expression `$<$<CONFIG:Debug>:debugchecks.cpp>`"),
    (_FIND_CUDA + "set(DIPU_VENDOR_LIB /usr/lib/libnccl.so ${CUDA_LIBRARIES} PARENT_SCOPE)\n"
     "file(GLOB SRC_FILES *.cpp)\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 2,
     "DIPU_VENDOR_LIB names `/usr/lib/libnccl.so`, which is no library name"),
    (_FIND_CUDA + "file(GLOB SRC_FILES *.cpp)\nset(VENDOR_FILES ${SRC_FILES} ${SDK_EXTRAS}/extra.cpp PARENT_SCOPE)\n",
     3, "VENDOR_FILES names `${SDK_EXTRAS}/extra.cpp`, whose ${SDK_EXTRAS} this file does not set"),
    (_FIND_CUDA + "set(EXTRA $ENV{SDK_EXTRAS}/extra.cpp)\nfile(GLOB SRC_FILES *.cpp)\n"
     "set(VENDOR_FILES ${SRC_FILES} ${EXTRA} PARENT_SCOPE)\n",
     2, "EXTRA, which VENDOR_FILES names, is set here from $ENV{SDK_EXTRAS}, which this file does not set"),
    (_FIND_CUDA + "file(GLOB SRC_FILES *.cpp\n    ${EXTRA_SOURCES})\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n",
     2, "file(GLOB) matches `${EXTRA_SOURCES}`, whose ${EXTRA_SOURCES} this file does not set"),
], ids=["genex-libraries", "genex-sources", "library-path", "unknown-in-source", "source-list-from-unknown",
        "glob-of-unknown"])
def test_what_the_runtime_cmake_cannot_carry_is_an_error_at_its_line(tmp_path: Path, cmake, line, message):
    """A generator expression, a library by its path or a source under a variable DIPU's CMake sets
    went into the vendor file, which then failed to validate (an error blaming the import, at the
    vendor file it would have written), was dropped without a word, or (a glob of such a variable)
    ended in a traceback."""
    result, cmake_file = _cudalike_cmake(tmp_path, cmake)
    [error] = error_lines(result)
    assert error.startswith(f"{cmake_file}:{line}:1: error: --runtime: {message}"), error
    assert not (tmp_path / "ws").exists()


_LOST = ("is not a command the import follows: the rendered CMakeLists.txt is made from the vendor file's build: "
         "section (its sources, hand-written files and libraries), so what it does to the build would be lost;")


@pytest.mark.parametrize("cmake, line, message", [
    (_FIND_CUDA + "file(GLOB SRC_FILES *.cpp)\nlist(REMOVE_ITEM SRC_FILES ${CMAKE_CURRENT_SOURCE_DIR}/x.cpp)\n"
     "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 3, f"list(REMOVE_ITEM) {_LOST}"),
    (_FIND_CUDA + "aux_source_directory(. SRC_FILES)\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 2,
     f"aux_source_directory() {_LOST} write file(GLOB SRC_FILES *.cpp) for its sources"),
    (_FIND_CUDA + "add_compile_definitions(FAST_FREE=1)\nfile(GLOB SRC_FILES *.cpp)\n"
     "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 2, f"add_compile_definitions() {_LOST}"),
    (_FIND_CUDA + "file(GLOB_RECURSE SRC_FILES *.cpp)\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 2,
     f"file(GLOB_RECURSE) {_LOST}"),
    (_FIND_CUDA + "foreach(f a.cpp)\nendforeach()\nfile(GLOB SRC_FILES *.cpp)\n"
     "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 2, f"foreach() {_LOST}"),
], ids=["list-remove-item", "aux-source-directory", "always-on-define", "glob-recurse", "foreach"])
def test_a_runtime_cmake_command_the_import_does_not_follow_is_an_error_at_its_line(tmp_path: Path, cmake, line,
                                                                                    message):
    """A file DIPU's CMake removed was still compiled, aux_source_directory's sources were not seen, and an
    always-on define was lost from the rendered build, each with exit 0."""
    result, cmake_file = _cudalike_cmake(tmp_path, cmake)
    [error] = error_lines(result)
    assert error.startswith(f"{cmake_file}:{line}:1: error: --runtime: {message}"), error
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize("cmake, where, message", [
    ("#[==[ disabled:\nset(VENDOR_FILES nothing.cpp PARENT_SCOPE)\n]]\n" + _FIND_CUDA, "1:1",
     "the bracket comment opened here is never closed by `]==]`: close it"),
    (_FIND_CUDA + 'set(SRC_FILES "deviceimpl.cpp)\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n', "2:15",
     'the quoted argument opened here is never closed by `"`: close it'),
    (_FIND_CUDA + "file(GLOB SRC_FILES *.cpp) set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", "2:28",
     "`set` follows other code on its line: put each command on a line of its own"),
    (_FIND_CUDA + 'file(GLOB SRC_FILES "\\q*.cpp")\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n', "2:1",
     "`\\q` is no escape sequence"),
], ids=["open-bracket-comment", "open-quoted-argument", "two-commands-on-a-line", "bad-escape"])
def test_a_runtime_cmake_file_cmake_refuses_is_an_error_at_its_place(tmp_path: Path, cmake, where, message):
    result, cmake_file = _cudalike_cmake(tmp_path, cmake)
    [error] = error_lines(result)
    assert error.startswith(f"{cmake_file}:{where}: error: --runtime: CMake cannot read this file: {message}"), error


def test_a_runtime_folder_given_as_a_relative_path_is_read(tmp_path: Path, monkeypatch):
    """The paths file(GLOB) found already held the folder, which was joined to them a second time:
    `--runtime cudalike=cudalike` failed with 'cannot read file: cudalike/cudalike/...'."""
    from test_import_runtime import _cudalike, _import_folder, _runtime

    _cudalike(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = _import_folder(tmp_path, Path("cudalike"))
    assert result.exit_code == 0, result.output
    assert "CudalikeCopyInplace.cpp" in _runtime(tmp_path)["build"]["sources"]


@pytest.mark.parametrize("pattern, sources", [
    ("*/*.cpp", ["extra/CudalikeExtra.cpp"]),               # a wildcard in a folder's part, as CMake matches it
    ("Cudalike[^G]*.cpp", ["CudalikeCopyInplace.cpp"]),    # CMake's negated set
])
def test_a_glob_matches_what_cmake_matches(tmp_path: Path, pattern: str, sources: list[str]):
    from test_import_runtime import _cudalike, _import_folder, _runtime

    folder = _cudalike(tmp_path, cmake=(
        _FIND_CUDA + "set(SRC_FILES deviceimpl.cpp communicatorimpl.cpp CudalikeGeneratorImpl.cpp)\n"
        f"file(GLOB MORE {pattern})\nset(VENDOR_FILES ${{SRC_FILES}} ${{MORE}} PARENT_SCOPE)\n"))
    (folder / "extra").mkdir()
    (folder / "extra" / "CudalikeExtra.cpp").write_text("int cudalikeExtra() { return 1; }\n")
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    built = _runtime(tmp_path)["build"]["sources"]
    assert [s for s in built if s not in ("deviceimpl.cpp", "communicatorimpl.cpp", "CudalikeGeneratorImpl.cpp")] \
        == sources, built


@pytest.mark.parametrize("included, error", [
    ("list(APPEND SRC_FILES ${CMAKE_CURRENT_SOURCE_DIR}/extra.cpp)\n",
     "include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/more.cmake) runs a file that changes SRC_FILES, which decides what "
     "DIPU compiles or links"),
    (None, "include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/more.cmake) names no file of"),
    ("set(MORE_FLAGS -O2)\nmessage(STATUS ${SRC_FILES})\n", None),      # its own variables: nothing DIPU builds
])
def test_an_included_cmake_file_that_changes_the_sources_is_an_error_at_the_include(tmp_path: Path, included, error):
    """The import does not follow include(): the sources a local .cmake file appended or removed were ignored."""
    from test_import_runtime import _cudalike, _import_folder

    folder = _cudalike(tmp_path, cmake=(
        _FIND_CUDA + "file(GLOB SRC_FILES *.cpp)\ninclude(${CMAKE_CURRENT_SOURCE_DIR}/cmake/more.cmake)\n"
        "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n"))
    if included is not None:
        (folder / "cmake").mkdir()
        (folder / "cmake" / "more.cmake").write_text(included)
    result = _import_folder(tmp_path, folder)
    if error is None:
        assert result.exit_code == 0, result.output
    else:
        [line] = error_lines(result)
        assert line.startswith(f"{folder / 'CMakeLists.txt'}:3:1: error: --runtime: {error}"), line


def test_a_source_appended_under_an_if_is_the_only_conditional_one(tmp_path: Path):
    """One list(APPEND) under if() made every item of the list conditional: CudalikeCopyInplace.cpp,
    which DIPU always compiles, was carried but not built."""
    from test_import_runtime import _cudalike, _import_folder, _runtime

    folder = _cudalike(tmp_path, cmake=(
        _FIND_CUDA + "file(GLOB SRC_FILES *.cpp)\nif (CUDALIKE_PATCH)\n"
        "  list(APPEND SRC_FILES ${CMAKE_CURRENT_SOURCE_DIR}/patch/Patch.cpp)\nendif()\n"
        "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n"))
    (folder / "patch").mkdir()
    (folder / "patch" / "Patch.cpp").write_text("int cudalikePatch() { return 1; }\n")
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    build = _runtime(tmp_path)["build"]
    assert "CudalikeCopyInplace.cpp" in build["sources"] and "patch/Patch.cpp" not in build["sources"]
    assert "patch/Patch.cpp" in build["hand_written"]


@pytest.mark.parametrize("cmake, line, message", [
    ("if (CUDA_FOUND)\n  set(DIPU_VENDOR_LIB nccl cudart PARENT_SCOPE)\nelse()\n"
     "  set(DIPU_VENDOR_LIB cudart_stub PARENT_SCOPE)\nendif()\n"
     "file(GLOB SRC_FILES *.cpp)\nset(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n", 5,
     "DIPU_VENDOR_LIB is written here and at line 3, under an if() the import cannot decide"),
    ("file(GLOB SRC_FILES *.cpp)\nset(VENDOR_FILES ${SRC_FILES} ${CMAKE_CURRENT_SOURCE_DIR}/../shared/x.cpp "
     "${CMAKE_CURRENT_SOURCE_DIR}/../other/x.cpp PARENT_SCOPE)\n", 3,
     "VENDOR_FILES names `{folder}/../other/x.cpp`, outside the runtime folder, which the import carries into the "
     "vendor's folder as x.cpp, the name of `{folder}/../shared/x.cpp` too"),
    ("file(GLOB SRC_FILES *.cpp)\nset(VENDOR_FILES ${SRC_FILES} ${CMAKE_CURRENT_SOURCE_DIR}/../shared/deviceimpl.cpp "
     "PARENT_SCOPE)\n", 3,
     "VENDOR_FILES names `{folder}/../shared/deviceimpl.cpp`, outside the runtime folder, which the import carries "
     "into the vendor's folder as deviceimpl.cpp, the name of `deviceimpl.cpp` too"),
], ids=["libraries-in-two-branches", "outside-sources-of-one-name", "outside-source-named-like-the-folders"])
def test_what_the_build_decides_otherwise_than_the_import_can_is_an_error_at_its_line(tmp_path: Path, cmake, line,
                                                                                       message):
    """The last branch's libraries were taken silently; sources outside the folder of one name became one file."""
    for name in ("shared/x.cpp", "other/x.cpp", "shared/deviceimpl.cpp"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("int sharedX() { return 1; }\n")
    result, cmake_file = _cudalike_cmake(tmp_path, _FIND_CUDA + cmake)
    [error] = error_lines(result)
    message = message.format(folder=cmake_file.parent)
    assert error.startswith(f"{cmake_file}:{line}:1: error: --runtime: {message}"), error
