"""Bad runtime sections exit 1 with file:line:col, key path and a message."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import REPO, edit, line_of, run_cli

from deeplink_gen.model.patterns import PATTERNS, Pattern


def _errors(ws: Path) -> str:
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 1, result.output
    return result.stderr


def test_bundled_vendors_validate(workspace: Path):
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 0, result.output


def test_missing_strong_function(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "      syncStream: tangStreamSynchronize({stream})\n", "")
    err = _errors(workspace)
    assert re.search(r"vendors/droplet\.yaml:\d+:\d+: error: runtime\.device\.functions: "
                     r"strong DIPU function 'syncStream'", err), err


def test_missing_weak_function_is_fine(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "      initializeVendor:\n        locals: {count: int}\n"
                                "        call: tangGetDeviceCount(&{count})\n", "")
    assert run_cli("validate", cwd=workspace).exit_code == 0


def test_unknown_parameter(workspace: Path):
    path = edit(workspace / "vendors" / "droplet.yaml", "setDevice: tangSetDevice({devId})", "setDevice: tangSetDevice({device})")
    err = _errors(workspace)
    line = line_of(path, "tangSetDevice({device})")
    assert f"vendors/droplet.yaml:{line}:" in err
    assert "runtime.device.functions.setDevice: unknown parameter '{device}'" in err
    assert "(available: devId)" in err


def test_reduce_uses_header_parameter_names(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "pcclReduce({sendbuf}", "pcclReduce({sendBuf}")
    assert "unknown parameter '{sendBuf}'; did you mean 'sendbuf'" in _errors(workspace)


def test_call_name_not_identifier(workspace: Path):
    path = edit(workspace / "vendors" / "droplet.yaml", "syncDevice: tangDeviceSynchronize()", "syncDevice: tang-DeviceSync()")
    err = _errors(workspace)
    assert f"vendors/droplet.yaml:{line_of(path, 'tang-DeviceSync')}:" in err
    assert "call name 'tang-DeviceSync' is not a C identifier" in err


def test_type_not_identifier(workspace: Path):
    path = edit(workspace / "vendors" / "droplet.yaml", "    stream: tangStream_t\n", "    stream: tang Stream_t!\n")
    err = _errors(workspace)
    assert f"vendors/droplet.yaml:{line_of(path, 'tang Stream_t!')}:" in err
    assert "runtime.types.stream" in err and "C type name" in err


def test_undefined_checker(workspace: Path):
    path = edit(workspace / "vendors" / "droplet.yaml", "  device:\n    checker: tang\n", "  device:\n    checker: tnag\n")
    err = _errors(workspace)
    assert f"vendors/droplet.yaml:{line_of(path, 'checker: tnag')}:" in err
    assert "checker 'tnag' is not defined under runtime.checkers; did you mean 'tang'" in err


def test_unknown_function_key(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "      releaseStream: noop\n", "      releaseStream: noop\n      relaseStream: noop\n")
    assert "unknown key 'relaseStream'; did you mean 'releaseStream'" in _errors(workspace)


def test_pattern_on_wrong_function(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "syncStream: tangStreamSynchronize({stream})",
          "syncStream: {pattern: malloc, call: \"tangStreamSynchronize({stream})\"}")
    assert "pattern 'malloc' applies to mallocDevice, not syncStream" in _errors(workspace)


def test_value_function_needs_return(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "        return: \"{count}\"\n", "")
    assert "getDeviceCount returns int: add return:" in _errors(workspace)


def test_unsupported_stub_renders_torch_check(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "syncStream: tangStreamSynchronize({stream})", "syncStream: unsupported")
    assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    text = (workspace / "generated/droplet/dipu/torch_dipu/csrc_dipu/vendor/droplet/deviceimpl.cpp").read_text()
    assert 'TORCH_CHECK(false, "droplet: syncStream is not supported");' in text


def test_typos_inside_a_function_mapping_are_named_at_their_key(workspace: Path):
    """A misspelt key, an unknown pattern and a wrongly shaped field inside one runtime function
    are each reported at their own line and key, with a did-you-mean, not as one generic error."""
    path = edit(workspace / "vendors" / "droplet.yaml", '        return: "{count}"', '        retrun: "{count}"')
    edit(path, "      mallocDevice: {pattern: malloc,", "      mallocDevice: {pattern: mallocc,")
    edit(path, "        locals: {count: int}\n        call: tangGetDeviceCount", "        locals: [count]\n        call: tangGetDeviceCount")
    err = _errors(workspace)
    where = "vendors/droplet.yaml"
    assert re.search(rf"{where}:{line_of(path, 'retrun:')}:\d+: error: runtime\.device\.functions\.getDeviceCount\.retrun: "
                     r"unknown key 'retrun'; did you mean 'return'\?", err), err
    assert re.search(rf"{where}:{line_of(path, 'pattern: mallocc')}:\d+: error: runtime\.device\.functions\.mallocDevice\.pattern: "
                     r"'mallocc' is not one of: .*; did you mean 'malloc'\?", err), err
    assert re.search(rf"{where}:{line_of(path, 'locals: [count]')}:\d+: error: runtime\.device\.functions\.initializeVendor\.locals: "
                     r"expected a mapping of local names to C types", err), err
    assert "is not valid here" not in err


# ---------------------------------------------------------------- a vendor without an SDK (hostsim)

def test_status_values_are_identifiers_or_integers(workspace: Path):
    path = edit(workspace / "vendors" / "hostsim.yaml", 'success: ["0"]', 'success: ["0; abort()"]')
    err = _errors(workspace)
    line = line_of(path, "0; abort()")
    assert f"vendors/hostsim.yaml:{line}:" in err and "runtime.checkers.libc.success" in err, err
    assert "an integer literal" in err


def test_version_fields_are_major_minor_patch(workspace: Path):
    path = edit(workspace / "vendors" / "hostsim.yaml", "getDriverVersion: {pattern: version, fields: {major: \"1\"}}",
                "getDriverVersion: {pattern: version, fields: {mayor: \"1\"}}")
    err = _errors(workspace)
    line = line_of(path, "mayor")
    assert f"vendors/hostsim.yaml:{line}:" in err, err
    assert "runtime.device.functions.getDriverVersion.fields.mayor: a version has no field 'mayor'" in err
    assert "did you mean 'major'" in err


def test_version_pattern_needs_a_call_or_fields(workspace: Path):
    edit(workspace / "vendors" / "hostsim.yaml", "getDriverVersion: {pattern: version, fields: {major: \"1\"}}",
         "getDriverVersion: {pattern: version}")
    err = _errors(workspace)
    assert "runtime.device.functions.getDriverVersion: pattern 'version' needs 'call or fields'" in err, err


def test_struct_pattern_needs_fields(workspace: Path):
    text = (workspace / "vendors" / "hostsim.yaml").read_text()
    start = text.index("      getDeviceStatus:\n")
    end = text.index("      setDevice: noop\n")
    (workspace / "vendors" / "hostsim.yaml").write_text(
        text[:start] + "      getDeviceStatus: {pattern: struct}\n" + text[end:])
    err = _errors(workspace)
    assert "runtime.device.functions.getDeviceStatus: pattern 'struct' needs 'fields'" in err, err


def test_struct_set_names_a_declared_local(workspace: Path):
    path = edit(workspace / "vendors" / "camb.yaml", "set: {memory.version: CNDEV_VERSION_5}",
                "set: {memroy.version: CNDEV_VERSION_5}")
    err = _errors(workspace)
    line = line_of(path, "memroy.version")
    assert f"vendors/camb.yaml:{line}:" in err, err
    assert ("runtime.device.functions.getDeviceStatus.set[memroy.version]: 'memroy' is not a local of "
            "getDeviceStatus; did you mean 'memory'?") in err, err


def test_set_belongs_to_the_struct_pattern(workspace: Path):
    edit(workspace / "vendors" / "droplet.yaml", "      current_device:\n        locals: {device: int}\n",
         "      current_device:\n        locals: {device: int}\n        set: {device.x: '1'}\n")
    err = _errors(workspace)
    assert "runtime.device.functions.current_device.set: 'set' belongs to a pattern" in err, err


def test_a_misspelt_section_checker_is_one_error_where_it_is_written(workspace: Path):
    """diopi_test and the query/malloc functions use the device section's checker: a typo there is
    reported once, at its line, not again for each of them."""
    path = workspace / "vendors" / "camb.yaml"
    edit(path, "\n    checker: cnrt\n", "\n    checker: cnrtt\n")
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    line = line_of(path, "checker: cnrtt")
    assert len(lines) == 1 and re.search(rf"camb\.yaml:{line}:\d+: error: runtime\.device\.checker: checker 'cnrtt' "
                                         r"is not defined under runtime\.checkers; did you mean 'cnrt'\?", lines[0]), lines


def test_a_key_of_another_pattern_is_an_error(workspace: Path):
    """ready: is read by query_status only; on not_null it would be ignored."""
    path = edit(workspace / "vendors" / "camb.yaml", "streamNotNull: {pattern: not_null}",
                "streamNotNull: {pattern: not_null, ready: [cnrtSuccess]}")
    err = _errors(workspace)
    assert re.search(rf"vendors/camb\.yaml:{line_of(path, 'streamNotNull:')}:\d+: error: "
                     r"runtime\.device\.functions\.streamNotNull\.ready: ready: belongs to the query_status pattern",
                     err), err


def test_the_schema_offers_every_pattern():
    """The vendor schema's pattern tags are the table's."""
    schema = json.loads((REPO / "schemas" / "vendor.schema.json").read_text(encoding="utf-8"))
    tags = schema["definitions"]["runtime_function"]["anyOf"][1]["properties"]["pattern"]["enum"]
    assert tags == [p.value for p in Pattern] == [p.value for p in PATTERNS]


EMPTY_EXPRESSIONS = {
    "empty return": ('getDeviceCount: {return: "1"}', 'getDeviceCount: {return: ""}', "getDeviceCount:",
                     "getDeviceCount.return"),
    "comment-only return": ('getDeviceCount: {return: "1"}', 'getDeviceCount: {return: "/**/"}', "getDeviceCount:",
                            "getDeviceCount.return"),
    "empty field": ('major: "1"', 'major: ""', 'major: ""', r"getDeviceProperties\.fields\.major"),
}


@pytest.mark.parametrize("case", sorted(EMPTY_EXPRESSIONS))
def test_an_expression_field_needs_an_expression(workspace: Path, case: str):
    """return: "" rendered `int getDeviceCount() {}`, and fields.major: "" `result.major = ;`."""
    old, new, needle, key = EMPTY_EXPRESSIONS[case]
    path = edit(workspace / "vendors" / "hostsim.yaml", old, new)
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    assert len(lines) == 1 and re.search(rf"hostsim\.yaml:{line_of(path, needle)}:\d+: error: runtime\.device\."
                                         rf"functions\.{key}: an expression is required", lines[0]), lines


@pytest.mark.parametrize("macro, why", [("if", "is a C/C++ keyword"), ("TORCH_CHECK", "is named like torch's"),
                                        ("C10_LIKELY", "is named like torch's"), ("EOF", "is a standard C macro"),
                                        ("DIPU_API", "is a macro DIPU defines itself")])
def test_a_checker_macro_is_no_name_taken(workspace: Path, macro: str, why: str):
    """`#define if(Expr)` or a TORCH_CHECK of the vendor's own would break every file that includes vendorapi.h:
    reported at the macro's line."""
    path = edit(workspace / "vendors" / "cuda.yaml", "macro: DIPU_CALLCUDA", f"macro: {macro}")
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    assert len(lines) == 1 and re.search(rf"cuda\.yaml:{line_of(path, f'macro: {macro}')}:\d+: error: "
                                         rf"runtime\.checkers\.cuda\.macro: macro '{macro}' {re.escape(why)}",
                                         lines[0]), lines


def test_two_checkers_do_not_share_a_macro(workspace: Path):
    """Both were defined, and the second silently won."""
    path = edit(workspace / "vendors" / "cuda.yaml", "macro: NCCL_THROW", "macro: DIPU_CALLCUDA")
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    second = [n for n, line in enumerate(path.read_text().splitlines(), 1) if "macro: DIPU_CALLCUDA" in line][1]
    assert len(lines) == 1 and re.search(rf"cuda\.yaml:{second}:\d+: error: runtime\.checkers\.nccl\."
                                         rf"macro: macro 'DIPU_CALLCUDA' is also the macro of checker 'cuda' \(\S*cuda\.yaml:"
                                         rf"{line_of(path, '    cuda:')}:\d+\)", lines[0]), lines


@pytest.mark.parametrize("old, new, key, what", [
    ("default_stream: cudaStreamLegacy", "default_stream: delete", "default_stream", "'delete' is a C++ keyword"),
    ("stream: cudaStream_t", "stream: void", "stream", "'void' is no handle type"),
    ("event: cudaEvent_t", "event: const void", "event", "'const void' is no handle type"),
    ("comm: ncclComm_t", "comm: new*", "comm", "'new' in 'new*' is a C++ keyword"),
])
def test_a_handle_type_is_a_type(workspace: Path, old: str, new: str, key: str, what: str):
    """`#define deviceDefaultStreamLiteral delete` and `using deviceStream_t = void;` cannot compile.
    Reported at the type's line."""
    path = edit(workspace / "vendors" / "cuda.yaml", old, new)
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    assert len(lines) == 1 and re.search(rf"cuda\.yaml:{line_of(path, new)}:\d+: error: runtime\.types\.{key}: {re.escape(what)}",
                                         lines[0]), lines


@pytest.mark.parametrize("macro, why", [
    ("defined", "is a name the preprocessor reserves"), ("__has_include", "is a name the preprocessor reserves"),
    ("__has_include_next", "is a name the preprocessor reserves"), ("_Pragma", "is a name the preprocessor reserves"),
    ("__VA_ARGS__", "is a name the preprocessor reserves"),
    ("__has_cpp_attribute", "is a name the preprocessor reserves"),
    ("__DIPU_CALLCUDA", "is a reserved identifier"), ("_DIPU_CALLCUDA", "is a reserved identifier"),
    ("DIPU__CALLCUDA", "is a reserved identifier"),
])
def test_a_checker_macro_is_no_name_of_the_preprocessor_or_the_compiler(workspace: Path, macro: str, why: str):
    """`#define defined(Expr)` is refused by g++ ("defined" cannot be used as a macro name); the preprocessor's
    operators and the identifiers the standard reserves are the compiler's: reported at the macro's line."""
    path = edit(workspace / "vendors" / "cuda.yaml", "macro: DIPU_CALLCUDA", f"macro: {macro}")
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    assert len(lines) == 1 and re.search(rf"cuda\.yaml:{line_of(path, f'macro: {macro}')}:\d+: error: "
                                         rf"runtime\.checkers\.cuda\.macro: macro '{macro}' {re.escape(why)}",
                                         lines[0]), lines


@pytest.mark.parametrize("macro, file", [("getDeviceCount", "deviceimpl.cpp"), ("destroyStream", "deviceimpl.cpp"),
                                         ("diclAllReduce", "communicatorimpl.cpp")])
def test_a_checker_macro_is_no_dipu_runtime_function(workspace: Path, macro: str, file: str):
    """vendorapi.h's `#define getDeviceCount(Expr) ...` expanded deviceimpl.cpp's `int getDeviceCount() {`."""
    path = edit(workspace / "vendors" / "cuda.yaml", "macro: DIPU_CALLCUDA", f"macro: {macro}")
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    assert len(lines) == 1 and re.search(rf"cuda\.yaml:{line_of(path, f'macro: {macro}')}:\d+: error: "
                                         rf"runtime\.checkers\.cuda\.macro: macro '{macro}' is the name of DIPU's "
                                         rf"runtime function {macro}, which the rendered {re.escape(file)}",
                                         lines[0]), lines


@pytest.mark.parametrize("old, new, key, what", [
    ("stream: cudaStream_t", 'stream: "NULL"', "stream", "'NULL' in 'NULL' is a standard C macro name"),
    ("event: cudaEvent_t", "event: EOF*", "event", "'EOF' in 'EOF*' is a standard C macro name"),
    ("comm: ncclComm_t", "comm: __ncclComm_t", "comm", "'__ncclComm_t' in '__ncclComm_t' is a reserved identifier"),
    ("unique_id: ncclUniqueId", "unique_id: const _Unique*", "unique_id",
     "'_Unique' in 'const _Unique*' is a reserved identifier"),
    ("stream: cudaStream_t", "stream: DIPU_API", "stream", "'DIPU_API' in 'DIPU_API' is a macro DIPU defines itself"),
])
def test_a_handle_type_is_no_macro_or_reserved_name(workspace: Path, old: str, new: str, key: str, what: str):
    """`using deviceStream_t = NULL;` cannot compile: reported at the type's line."""
    path = edit(workspace / "vendors" / "cuda.yaml", old, new)
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    assert len(lines) == 1 and re.search(rf"cuda\.yaml:{line_of(path, new)}:\d+: error: runtime\.types\.{key}: "
                                         rf"{re.escape(what)}", lines[0]), lines


HOSTSIM_INIT_RANK = re.compile(r"(      diclCommInitRank:\n        custom: )\|\n(?:          .*\n)+")
EMPTY_BODIES = {
    "empty": '""',
    "blank": '"\\n  \\n"',
    "comment-only": '"// nothing to do"',
    "return in a comment": '"/* return DICL_SUCCESS; */"',
    "return in a continued // comment": '"// done \\\\\\nreturn DICL_SUCCESS;"',
    "null statements": '"; {} /* none */ ;"',
}


def _init_rank_body(workspace: Path, body: str) -> Path:
    path = workspace / "vendors" / "hostsim.yaml"
    text, count = HOSTSIM_INIT_RANK.subn(lambda m: m.group(1) + body + "\n", path.read_text())
    assert count == 1
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", sorted(EMPTY_BODIES))
def test_a_custom_body_returning_a_value_is_not_empty(workspace: Path, case: str):
    """An empty or comment-only custom body of diclCommInitRank (diclResult_t) rendered a function flowing off its
    end: reported at the custom: value."""
    path = _init_rank_body(workspace, EMPTY_BODIES[case])
    lines = [line for line in _errors(workspace).splitlines() if ": error: " in line]
    assert len(lines) == 1 and re.search(rf"hostsim\.yaml:{line_of(path, '        custom: ')}:\d+: error: "
                                         r"runtime\.comm\.functions\.diclCommInitRank\.custom: diclCommInitRank returns "
                                         r"diclResult_t, but this custom body is empty \(or only comments\)", lines[0]), lines


@pytest.mark.parametrize("body", [
    # DIPU's supa returns through its own macro, as the import copies it: no `return` written.
    '"#define INIT_CALL(Expr) { if ((Expr) != 0) return DICL_ERR_UNDEF; else return DICL_SUCCESS; }\\n'
    'INIT_CALL(posix_memalign(comm, 64, 64))\\n#undef INIT_CALL"',
    '"throw std::runtime_error(\\"hostsim: no communicator\\");"',
    '"// a communicator of one rank\\nreturn DICL_SUCCESS;"',
])
def test_a_custom_body_returning_a_value_may_return_its_own_way(workspace: Path, body: str):
    """Only a body with no code at all is refused: a macro of the vendor's may return, as DIPU's supa SUCCL_CALL does."""
    _init_rank_body(workspace, body)
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("old, new", [
    ("      syncDevice: noop\n", '      syncDevice: {custom: ""}\n'),
    ("      syncDevice: noop\n", '      syncDevice: {custom: "// nothing"}\n'),
])
def test_an_empty_custom_body_of_a_void_function_is_fine(workspace: Path, old: str, new: str):
    """A void function needs no return (its empty custom body was accepted before, and still is)."""
    edit(workspace / "vendors" / "hostsim.yaml", old, new)
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 0, result.output
