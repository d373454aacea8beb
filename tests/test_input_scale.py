"""Input built to make the reading code slow or to misplace its errors: a long line
under a YAML syntax error, an impl folder of blank lines, a DIOPI header of unclosed
attributes or tens of thousands of declarations, an op file of aliases and duplicates.
Each run is a process with a timeout and must answer within a few seconds; an error
names the file and the line where the mistake is. Bidirectional control characters,
which make pasted C++ show other than it compiles, are refused at their line."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from helpers import copy_workspace, edit, error_lines, line_of, run_cli, run_subprocess

BOUND = 8       # seconds: each case took minutes before its reader was made linear
HANG = 60


def _timed(*args: str):
    start = time.monotonic()
    proc = run_subprocess(*args, timeout=HANG, env={"DEEPLINK_GEN_NO_CACHE": "1"})
    return proc, time.monotonic() - start


def test_a_long_line_under_a_syntax_error_is_explained_quickly(workspace: Path):
    vendor = workspace / "vendors" / "camb.yaml"
    text = vendor.read_text()
    vendor.write_text(text + "foo" + " " * 400_000 + "bar\nbaz: 1\n")
    proc, took = _timed("-C", str(workspace), "validate")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    line = text.count("\n") + 1
    assert re.search(rf"camb\.yaml:{line}:1: error: .*'foo {{10}}.*\.\.\.' is neither", proc.stderr), proc.stderr[:500]
    assert len(proc.stderr) < 2000
    assert took < BOUND, took


@pytest.mark.parametrize("shape", ["one long list", "many op entries"])
def test_a_file_of_too_many_values_is_refused_quickly(workspace: Path, shape: str):
    """Beyond yamlfile.MAX_NODES values a file is refused at the value that passes the bound,
    before the schema check, which took 35 s for 190,000 test names (2.7 MB)."""
    from deeplink_gen.yamlfile import MAX_NODES

    vendor = workspace / "vendors" / "droplet.yaml"
    text = vendor.read_text()
    if shape == "one long list":
        names = ", ".join(f'"test_n{i}"' for i in range(2 * MAX_NODES))
        vendor.write_text(text.replace('["test_conv.*"]', f"[{names}]", 1))
    else:
        ops = "".join(f"  op_{i}.out:\n    enabled: false\n    reason: r{i}\n" for i in range(MAX_NODES // 2))
        vendor.write_text(text.replace("ops:\n", "ops:\n" + ops, 1))
    proc, took = _timed("-C", str(workspace), "validate", "--vendor", "droplet")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert re.search(rf"droplet\.yaml:\d+:\d+: error: .*more than {MAX_NODES} values", proc.stderr), proc.stderr[:500]
    assert took < BOUND, took


def test_a_file_just_under_the_value_bound_is_checked_in_time(workspace: Path):
    """A file that the bound lets through is read and checked within the 20 s a command may take."""
    from deeplink_gen.yamlfile import MAX_NODES

    vendor = workspace / "vendors" / "droplet.yaml"
    names = ", ".join(f'"test_{i}_{"x" * 40}"' for i in range(MAX_NODES - 1000))
    vendor.write_text(vendor.read_text().replace('["test_conv.*"]', f"[{names}]", 1))
    proc, took = _timed("-C", str(workspace), "validate", "--vendor", "droplet")
    assert proc.returncode == 0, proc.stderr[-500:]
    assert took < 20, took


@pytest.mark.parametrize("line, where", [
    ("  add.out: {enabled: false}}", ":28: error: "),
    ('  name: "acme" x', ":16: error: "),
])
def test_a_syntax_error_inside_a_line_is_blamed_where_libyaml_points(workspace: Path, line: str, where: str):
    vendor = workspace / "vendors" / "camb.yaml"
    text = vendor.read_text()
    if "add.out" in line:
        vendor.write_text(text.replace("ops:\n", f"ops:\n{line}\n", 1))
        number = text[:text.index("ops:\n")].count("\n") + 2
    else:
        vendor.write_text(text.replace("  name: camb", line, 1))
        number = line_of(vendor, line)
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(f"camb.yaml:{number}{where}" in e for e in errors), errors
    assert not any("indented" in e for e in errors), errors


def test_an_impl_folder_of_blank_lines_is_scanned_quickly(workspace: Path, tmp_path: Path):
    impl = tmp_path / "impl"
    (impl / "functions").mkdir(parents=True)
    (impl / "functions" / "blank.cpp").write_text("\n" * 5000 + "diopiError_t diopiAbs(diopiContextHandle_t ctx)\n{\n}\n")
    proc, took = _timed("-C", str(workspace), "coverage", "--vendor", "camb", "--impl", f"camb={impl}",
                        "--format", "json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert took < BOUND, took


def _functions_h(tmp_path: Path, text: str) -> Path:
    include = tmp_path / "include"
    include.mkdir()
    (include / "functions.h").write_text(text)
    return include


def test_a_header_of_unclosed_attributes_is_read_quickly(workspace: Path, tmp_path: Path):
    include = _functions_h(tmp_path, "[[" * 100_000 + "\n/*" * 50_000 + "\n")
    proc, took = _timed("-C", str(workspace), "--diopi-include", str(include), "validate")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert took < BOUND, took


def test_a_header_of_many_declarations_is_read_quickly(workspace: Path, tmp_path: Path):
    """Each declaration's line, and each unknown function's did-you-mean among them."""
    decls = "".join(f"DIOPI_API diopiError_t diopiZz{i}(diopiContextHandle_t ctx);\n" for i in range(40_000))
    include = _functions_h(tmp_path, decls + "DIOPI_API diopiError_t diopiLast(int x);\nDIOPI_API diopiError_t diopiLast(int x);\n")
    proc, took = _timed("-C", str(workspace), "--diopi-include", str(include), "validate")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert re.search(r"functions\.h:40002:1: error: diopiLast: declared twice \(first at .*functions\.h:40001:1\)",
                     proc.stderr), proc.stderr[:2000]
    assert took < 2 * BOUND, took


ENTRY = ('  schema: "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"\n'
         "  interface: diopiAdd(ctx, out, self, other, alpha)\n")


def test_an_op_file_of_aliases_imports_in_linear_time(tmp_path: Path):
    path = tmp_path / "diopi_functions.yaml"
    path.write_text("- &add\n" + ENTRY + "- *add\n" * 40_000)
    proc, took = _timed("import-dipu", "--functions", str(path), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    again = [line for line in proc.stderr.splitlines() if "defined again" in line]
    assert len(again) == 40_000 and "diopi_functions.yaml:4:1: warning: 'add.out' is defined again (first at line 1)" \
        in again[0], again[:2]
    assert took < 2 * BOUND, took


def test_an_op_file_of_megabytes_imports_quickly(tmp_path: Path):
    # Op files are read by libyaml, as workspace files are: PyYAML's own scanner took about
    # 0.8 s a megabyte (10 s for this file, 2.8 s now), whatever the entries were.
    custom = "".join(f"    at::Tensor t{i} = at::empty({{{i}}}, self.options());  // keeps the scanner busy\n"
                     for i in range(40))
    path = tmp_path / "diopi_functions.yaml"
    path.write_text(("- schema: " + ENTRY.split("schema: ", 1)[1].split("\n", 1)[0] + "\n"
                     "  custom_code_at_the_beginning: |\n" + custom + ENTRY.split("\n", 1)[1]) * 3_600)
    assert path.stat().st_size > 10 << 20
    proc, took = _timed("import-dipu", "--functions", str(path), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    again = [line for line in proc.stderr.splitlines() if "defined again" in line]
    assert len(again) == 3_599 and f"diopi_functions.yaml:{3 + 40 + 1}:1: warning: 'add.out' is defined again " \
        "(first at line 1)" in again[0], again[:2]
    assert took < BOUND, took


def test_a_duplicated_entry_is_reported_once_as_a_duplicate(tmp_path: Path):
    path = tmp_path / "diopi_functions.yaml"
    path.write_text(("- device: [camb]\n" + ENTRY) * 3)
    result = run_cli("import-dipu", "--functions", str(path), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if ": warning: " in line]
    assert [w.split(": warning: ")[0].rsplit(":", 2)[-2] for w in warnings] == ["4", "7"], warnings
    assert all("is defined again (first at line 1)" in w for w in warnings), warnings


@pytest.mark.parametrize("char", ["\u202e", "\u2066"])
def test_bidirectional_controls_in_pasted_cpp_are_refused(workspace: Path, char: str):
    catalog = workspace / "catalog" / "loss.yaml"
    line = line_of(catalog, "// diopiNLLLoss does not produce total_weight")
    text = catalog.read_text()
    catalog.write_text(text.replace("// diopiNLLLoss does", f"// diopiNLLLoss{char} does", 1))
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(re.search(rf"loss\.yaml:{line}:\d+: error: .*U\+{ord(char):04X}", e) for e in errors), errors


@pytest.mark.parametrize("escape", ["\\u202e", "\\u2066", "\\U0000202E"])
def test_bidirectional_controls_written_as_escapes_are_refused(workspace: Path, escape: str):
    """The same characters written as YAML escapes in a double-quoted value (which the file's text
    does not show), refused at the value's line."""
    catalog = workspace / "catalog" / "loss.yaml"
    catalog.write_text(catalog.read_text() + f'  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n'
                       f'    code:\n      beginning: "// a {escape} b"\n')
    line = line_of(catalog, "beginning: \"// a")
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(re.search(rf"loss\.yaml:{line}:\d+: error: .*U\+202E|loss\.yaml:{line}:\d+: error: .*U\+2066", e)
               for e in errors), errors


def test_conditional_groups_among_open_brackets_are_read_quickly(workspace: Path):
    """Each #if copied the stack of open brackets, and each #endif compared it: 40,000 open
    brackets and 4,000 groups took 5 s in the lexer, 60 s in a render of 500 KB; here 20,000."""
    catalog = workspace / "catalog" / "pointwise.yaml"
    text = "{" * 40_000 + "\n" + "#if 1\n#endif\n" * 20_000 + "}" * 40_000
    catalog.write_text(catalog.read_text() + "  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n    code:\n"
                       "      beginning: |\n" + "".join(f"        {line}\n" for line in text.splitlines()))
    proc, took = _timed("-C", str(workspace), "validate")
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert took < BOUND, took


def test_a_long_cpp_call_is_read_quickly(workspace: Path):
    """A call's arguments split in linear time: each '<' used to look back over all the text before it."""
    catalog = workspace / "catalog" / "pointwise.yaml"
    line = line_of(catalog, "call: diopiAdd(ctx, out, self, other, alpha)")
    text = catalog.read_text()
    catalog.write_text(text.replace("call: diopiAdd(ctx, out, self, other, alpha)",
                                    "call: 'diopiAdd(ctx, out, self, other, " + "a::b<" * 40_000 + ")'", 1))
    proc, took = _timed("-C", str(workspace), "validate")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert re.search(rf"pointwise\.yaml:{line}:\d+: error: ", proc.stderr), proc.stderr[:2000]
    assert took < BOUND, took


@pytest.mark.parametrize("header", ["template <" * 20_000, "template <class T> f" + "(" * 100_000,
                                    "template <class T> void f(T) {}\n" * 20_000 + "template <class T> void g(T);\n"])
def test_dipu_link_snapshot_reads_template_heads_in_linear_time(tmp_path: Path, header: str):
    """dipu-link-snapshot finds the function templates DIPU's kernel headers define by balancing
    brackets; unbalanced or repeated heads cost each head a lookup, not a scan to the file's end
    (the first header took minutes)."""
    from deeplink_gen.commands.dipu_link_snapshot import header_templates

    path = tmp_path / "kernels.h"
    path.write_text(header)
    start = time.monotonic()
    found = header_templates([path])
    assert time.monotonic() - start < BOUND
    assert found == ({"f"} if header.endswith(";\n") else set())


def test_a_long_op_name_is_quoted_in_part():
    """explain's op comes from the command line, not a file: its message quotes a bounded excerpt."""
    result = run_cli("explain", "a" * 100_000, "--vendor", "camb", cwd=Path(__file__).resolve().parent.parent)
    assert result.exit_code == 1
    assert "'aaaa" in result.output and "...' is neither in the op catalog" in result.output
    assert len(result.output) < 1000


@pytest.mark.parametrize("op, shown", [("add.out\n", "add.out\\n"), ("add.out\t", "add.out\\t"),
                                       ("add.out ", "add.out "), ("add.out\x1b]0;T\x07", "add.out\\x1b]0;T\\x07")])
def test_an_op_argument_that_is_no_op_name_is_shown_as_typed(op: str, shown: str):
    """A trailing newline was cut from the name shown, which then suggested itself: did you mean 'add.out'?"""
    result = run_cli("explain", op, "--vendor", "camb", cwd=Path(__file__).resolve().parent.parent)
    assert result.exit_code == 2
    assert f"'{shown}' is not an op name: NAME or NAME.OVERLOAD, such as add.out" in result.output
    assert "did you mean" not in result.output and "\x1b" not in result.output


def test_only_what_a_vendor_reads_is_an_input(tmp_path: Path, monkeypatch):
    """A folder of vendors/ that no vendor file names (vendors/junk/ beside no junk.yaml) is
    not read, however full: here it holds a pipe that would block a read, and the render's
    results are still stored under its inputs' key. A vendor's own hand-written folder of
    more files than any vendor's sources is an error at its vendor file, read no further."""
    import os

    monkeypatch.setenv("DEEPLINK_GEN_CACHE_DIR", str(tmp_path / "cache"))
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    junk = ws / "vendors" / "junk"
    junk.mkdir()
    os.mkfifo(junk / "pipe")
    assert run_cli("render", "--vendor", "droplet", cwd=ws).exit_code == 0
    assert list((tmp_path / "cache").glob("store-*/stamps/*/*"))
    many = ws / "vendors" / "droplet"
    many.mkdir()
    for i in range(10_001):
        (many / f"f{i}.cpp").touch()
    errors = error_lines(run_cli("validate", cwd=ws))
    assert any("vendors/droplet.yaml:1:1: error:" in e and "vendors/droplet/ holds more than 10000 files" in e
               for e in errors), errors


def test_a_long_name_in_a_file_is_quoted_in_part(tmp_path: Path):
    """An op name of a megabyte (an explicit key, which YAML does not bound) is named in
    part: the message keeps its place, the start of the name and the quotes around it."""
    ws = copy_workspace(tmp_path / "ws", own_catalog=False)
    name = "b" * (1 << 20)
    edit(ws / "vendors" / "camb.yaml", "\nops:\n", f"\nops:\n  ? {name}\n  : {{enabled: false}}\n")
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 1
    assert len(result.output) < 1000, result.output[:1000]
    [error] = error_lines(result)
    assert f"{Path('vendors', 'camb.yaml')}:{line_of(ws / 'vendors' / 'camb.yaml', '? bbb')}:5: error:" in error
    assert "ops.bbbb" in error and "bbb' is not in the op catalog" in error


@pytest.mark.parametrize("escape", ["\\e]0;title\\a", "\\0", "\\x9b2J"])
def test_control_characters_written_as_escapes_are_refused(workspace: Path, escape: str):
    """A control character written as a YAML escape reached messages, reports and rendered
    files (an OSC sequence retitles the terminal that shows it): refused at the value's line."""
    catalog = workspace / "catalog" / "loss.yaml"
    catalog.write_text(catalog.read_text() + f'  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n'
                       f'    code:\n      beginning: "// a {escape} b"\n')
    line = line_of(catalog, "beginning: \"// a")
    result = run_cli("validate", cwd=workspace)
    assert any(re.search(rf"loss\.yaml:{line}:\d+: error: .*holds the control character U\+00", e)
               for e in error_lines(result)), result.output
    assert "\x1b" not in result.output and "\x9b" not in result.output


@pytest.mark.parametrize("written, value, how", [("1:30", 90, "base 60"), ("0777", 511, "octal"),
                                                 ("-1:00:00", -3600, "base 60")])
def test_numbers_yaml_1_1_reads_in_base_60_or_octal_are_refused(workspace: Path, written: str, value: int, how: str):
    """`atol: 1:30` rendered atol=90, and 0777 rendered 511: a number no reader of the file
    expects is refused at its value, saying what YAML made of it."""
    vendor = workspace / "vendors" / "droplet.yaml"
    vendor.write_text(vendor.read_text() + f"x_number: {written}\n")
    result = run_cli("validate", cwd=workspace)
    line = line_of(vendor, "x_number:")
    assert any(f"droplet.yaml:{line}:11: error: x_number: YAML 1.1 reads {written} as the number {value} ({how})"
               in e for e in error_lines(result)), result.output


@pytest.mark.parametrize("written, value", [('!!bool "off"', "false"), ("!!bool yes", "true"), ("!!bool ON", "true")])
def test_a_boolean_tag_takes_only_true_or_false(workspace: Path, written: str, value: str):
    """Plain `off` is not a boolean here; `!!bool "off"` disabled the op all the same."""
    vendor = workspace / "vendors" / "droplet.yaml"
    vendor.write_text(vendor.read_text() + f"x_flag: {written}\n")
    result = run_cli("validate", cwd=workspace)
    line = line_of(vendor, "x_flag:")
    word = written.split()[-1].strip('"')
    assert any(f"droplet.yaml:{line}:9: error: x_flag: YAML 1.1 reads '{word}' as {value}: write {value}" in e
               for e in error_lines(result)), result.output
