"""A new vendor's first mistakes, in the file `new-vendor` scaffolds: YAML
indentation slips are reported at the line that holds them with a plain
hint, and a file with several mistakes of different kinds has them all
reported in one run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import copy_workspace, edit, error_lines, line_of, run_cli


@pytest.fixture
def vendor_file(tmp_path: Path) -> Path:
    """vendors/acme.yaml as `init` and `new-vendor acme` write it, in a fresh workspace."""
    root = tmp_path / "ws"
    root.mkdir()
    for args in (("init",), ("new-vendor", "acme")):
        result = run_cli(*args, cwd=root)
        assert result.exit_code == 0, result.output
    return root / "vendors" / "acme.yaml"


# Each case: text to replace, its replacement, the text of the line to be reported, the hint.
INDENTATION = {
    "key indented more than the key above": (
        "  device_type: ACME", "    device_type: ACME", "    device_type: ACME",
        r"this line is indented more than the key above it \('name: acme'"),
    "key indented less than the keys around it": (
        "  print_op_args: true", " print_op_args: true", " print_op_args: true",
        r"this line \(1 space\) is indented less than the key above it"),
    "key at the left edge between two indented keys": (
        "  device_type: ACME", "device_type: ACME", "device_type: ACME",
        r"this line \(0 spaces\) is indented less than the lines around it \(lines 12 and 14: 2 spaces\)"),
    "first key indented more than the keys after it": (
        "  name: acme", "   name: acme", "   name: acme",
        r"this line is indented more than the lines after it \(3 spaces; 'device_type: ACME'"),
    "tab": ("  profiler: true", "\tprofiler: true", "\tprofiler: true",
            r"tabs are not allowed for indentation"),
    "unquoted ': ' in a value": (
        '  description: "acme accelerator"', "  description: acme: the accelerator", "description: acme: the",
        r"""a value containing ': ' must be quoted: description: "acme: the accelerator\""""),
    "list item out of line": (
        "  cmake_aliases: [ACME, acme]", "  cmake_aliases:\n    - ACME\n   - acme", "   - acme",
        r"this list item is indented less than the item above it"),
    "key without ': '": (
        "  autocompare: false", "  autocompare false", "  autocompare false",
        r"'autocompare false' is neither 'key: value' nor a list item; a key needs ': ' after it"),
}


@pytest.mark.parametrize("case", sorted(INDENTATION))
def test_indentation_mistake_is_reported_where_it_is(vendor_file: Path, case: str):
    old, new, needle, hint = INDENTATION[case]
    edit(vendor_file, old, new)
    errors = error_lines(run_cli("validate", cwd=vendor_file.parent.parent))
    assert len(errors) == 1, errors
    line = line_of(vendor_file, needle)
    assert re.search(rf"acme\.yaml:{line}:\d+: error: (?:\(top level\): )?YAML syntax error: {hint}", errors[0]), (line, errors[0])


# An unquoted {...} or [...] where text belongs: text to replace, replacement, reported line, message.
UNQUOTED = {
    "runtime call written as a bare placeholder": (
        "      setDevice: unsupported", "      setDevice: {devId}", "setDevice: {devId}",
        r"runtime\.device\.functions\.setDevice: unquoted \{devId\} is a YAML mapping, not text: a runtime "
        r"function is a call template with the placeholders as arguments, such as "
        r"setDevice: acmeSetDevice\(\{devId\}\)"),
    "call: of a mapping": (
        "      createStream: unsupported", "      createStream: {pattern: stream_priority, plain: {stream}}",
        "createStream:", r"runtime\.device\.functions\.createStream\.plain: unquoted \{stream\} is a YAML mapping, not text: .*"
                         r"plain: acmeCreateStream\(\{stream\}\)"),
    "text written as a list": (
        '  description: "acme accelerator"', "  description: [acme accelerator]", "description:",
        r"vendor\.description: unquoted \[acme accelerator\] is a YAML list, not text: quote the value, "
        r"as in description: \"\[acme accelerator\]\""),
}


@pytest.mark.parametrize("case", sorted(UNQUOTED))
def test_unquoted_braces_are_explained(vendor_file: Path, case: str):
    old, new, needle, pattern = UNQUOTED[case]
    edit(vendor_file, old, new)
    errors = error_lines(run_cli("validate", cwd=vendor_file.parent.parent))
    line = line_of(vendor_file, needle)
    assert len(errors) == 1 and re.search(rf"acme\.yaml:{line}:\d+: error: {pattern}", errors[0]), (line, errors)
    assert "unknown key" not in errors[0]


def test_six_mistakes_of_every_kind_in_one_run(vendor_file: Path):
    """Schema errors (an unknown key, a wrong type, an unknown dtype, an unquoted placeholder)
    and semantic ones (an override of an unknown op, a call naming an unknown parameter) all
    come out of one run: the semantic checks run on what the schema accepted, and the
    rejected syncDevice is not reported a second time as missing."""
    edit(vendor_file, '  description: "acme accelerator"', '  description: "acme accelerator"\n  colour: red')
    edit(vendor_file, "  profiler: true ", "  profiler: yes ")
    edit(vendor_file, "# ops:\n", "ops:\n  addmn.out: {enabled: false}\n")
    edit(vendor_file, "# dtypes:\n#   supported: [bool, int8, uint8, int32, float16, float32]\n",
         "dtypes:\n  supported: [bool, int8, uint8, int32, float16, float32]\n  convert: {int64: int33}\n")
    edit(vendor_file, "      setDevice: unsupported", "      setDevice: acmeSetDevice({devid})")
    edit(vendor_file, "      syncDevice: unsupported", "      syncDevice: {devId}")
    result = run_cli("validate", cwd=vendor_file.parent.parent)
    errors = error_lines(result)
    expected = [
        ("colour: red", r"vendor\.colour: unknown key 'colour'"),
        ("profiler: yes", r"defaults\.profiler: expected true or false, got 'yes'"),
        ("addmn.out", r"ops\[addmn\.out\]: 'addmn\.out' is not in the op catalog; did you mean 'addmm\.out'\?"),
        ("int33", r"dtypes\.convert\.int64: 'int33' is not one of: .*did you mean 'int32'\?"),
        ("{devid}", r"runtime\.device\.functions\.setDevice: unknown parameter '\{devid\}'; did you mean 'devId'\?"),
        ("syncDevice: {devId}", r"runtime\.device\.functions\.syncDevice: unquoted \{devId\} is a YAML mapping"),
    ]
    assert len(errors) == len(expected), errors
    for (needle, pattern), error in zip(expected, errors):
        line = line_of(vendor_file, needle)
        assert re.search(rf"acme\.yaml:{line}:\d+: error: {pattern}", error), (needle, line, error)
    assert result.stderr.splitlines()[-1] == "6 errors"


def test_a_byte_count_that_cannot_compile_is_refused(vendor_file: Path):
    text = vendor_file.read_text()
    line = next(n for n, s in enumerate(text.splitlines(), 1) if s.strip().startswith("unique_id_bytes:"))
    vendor_file.write_text(re.sub(r"(?m)^(\s*unique_id_bytes:).*$", r"\1 99999999999999999999999", text))
    errors = error_lines(run_cli("validate", cwd=vendor_file.parent.parent))
    assert len(errors) == 1 and re.search(rf"acme\.yaml:{line}:\d+: error: runtime\.comm\.unique_id_bytes: expected a C "
                                          r"identifier or a byte count from 1 to 65536", errors[0]), errors


@pytest.mark.parametrize("impl", ["namespace", "class", "int"])
def test_a_diopi_impl_that_is_a_keyword_is_refused(vendor_file: Path, impl: str):
    """It names DIOPI's folder and the C++ namespace: impl/namespace rendered ::impl::namespace::diopiAbs."""
    edit(vendor_file, "  diopi_impl: acme", f"  diopi_impl: {impl}")
    errors = error_lines(run_cli("validate", cwd=vendor_file.parent.parent))
    line = line_of(vendor_file, f"diopi_impl: {impl}")
    assert len(errors) == 1 and re.search(rf"acme\.yaml:{line}:\d+: error: vendor\.diopi_impl: '{impl}' is a C/C\+\+ "
                                          r"keyword: it names DIOPI's folder", errors[0]), errors


@pytest.mark.parametrize("device_type", ["EOF", "BUFSIZ", "INT_MAX", "SIZE_MAX", "ERANGE"])
def test_a_device_type_that_is_a_standard_macro_is_refused(vendor_file: Path, device_type: str):
    """As new-vendor --device-type EOF is: `EOF,` in DIPU's VendorDeviceType would be `-1,`."""
    edit(vendor_file, "  device_type: ACME", f"  device_type: {device_type}")
    errors = error_lines(run_cli("validate", cwd=vendor_file.parent.parent))
    line = line_of(vendor_file, f"device_type: {device_type}")
    assert len(errors) == 1 and re.search(rf"acme\.yaml:{line}:\d+: error: vendor\.device_type: device type "
                                          rf"'{device_type}' is a standard C macro name", errors[0]), errors


@pytest.mark.parametrize("impl, folder", [("torch", "torch"), ("tops", "topsrider"), ("ascend", "ascend")])
def test_a_rendered_diopi_library_keeps_out_of_diopis_own_folders(tmp_path: Path, impl: str, folder: str):
    """hostsim renders its own DIOPI library into impl/<diopi_impl>: with torch, render --into --force
    overwrote DIOPI's impl/torch. cuda's diopi_impl: torch uses that implementation, and stays valid."""
    root = copy_workspace(tmp_path / "ws")
    path = edit(root / "vendors" / "hostsim.yaml", "diopi_impl: hostsim", f"diopi_impl: {impl}")
    errors = error_lines(run_cli("validate", cwd=root))
    line = line_of(path, f"diopi_impl: {impl}")
    assert len(errors) == 1 and re.search(rf"hostsim\.yaml:{line}:\d+: error: vendor\.diopi_impl: '{impl}' selects "
                                          rf"DIOPI's own impl/{folder}, which the DIOPI library", errors[0]), errors
