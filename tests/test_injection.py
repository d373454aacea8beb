"""Free-form strings of a vendor file never become code in what is rendered: a value
with a newline (or another control character) is refused at validate with its
file:line, or rendered so that the newline cannot start a statement."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest

from deeplink_gen import cpplex
from helpers import DIPU_TORCH, REPO, copy_workspace, edit, error_lines, line_of, run_cli

MARKER = "PWNED"
PY_PAYLOAD = "\\n'_x': __import__('os').system('touch PWNED'),\\n#"
CMAKE_PAYLOAD = "/opt\\nexecute_process(COMMAND touch PWNED)\\n#"


def _workspace(tmp_path):
    return copy_workspace(tmp_path / "ws", own_catalog=False)


def _refused(ws, vendor, needle, key):
    """validate and render both stop at the hostile value, at its line, writing nothing."""
    path = ws / "vendors" / f"{vendor}.yaml"
    line = line_of(path, needle)
    for args in (("validate",), ("render", "--vendor", vendor)):
        errors = error_lines(run_cli(*args, cwd=ws))
        assert any(f"vendors/{vendor}.yaml:{line}:" in e and f": error: {key}" in e for e in errors), errors
    assert not (ws / "generated").exists()


def test_diopi_reason_cannot_run_code(tmp_path):
    ws = _workspace(tmp_path)
    edit(ws / "vendors" / "droplet.yaml", "reason: convolution is not implemented on droplet yet.",
         f'reason: "convolution{PY_PAYLOAD}"')
    assert run_cli("render", "--vendor", "droplet", cwd=ws).exit_code == 0
    found = sorted((ws / "generated" / "droplet").rglob("device_configs.py"))
    assert len(found) == 1, found
    run = tmp_path / "run"
    run.mkdir()
    (run / "skip.py").write_text("class Skip:\n    def __init__(self, value):\n        self.value = value\n")
    shutil.copy(found[0], run / "device_configs.py")
    proc = subprocess.run([sys.executable, "-c", "import device_configs; print(sorted(device_configs.device_configs))"],
                          cwd=run, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not (run / MARKER).exists()
    assert "_x" not in proc.stdout and "conv_2d" in proc.stdout


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
@pytest.mark.parametrize("root", [CMAKE_PAYLOAD, "/opt\\rexecute_process(COMMAND touch PWNED)"])
def test_default_root_with_control_character_is_refused(tmp_path, root):
    ws = _workspace(tmp_path)
    edit(ws / "vendors" / "droplet.yaml", "default_roots: [/usr/local/tangrt]", f'default_roots: ["{root}"]')
    _refused(ws, "droplet", "default_roots:", "build.toolkit.default_roots")


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_default_roots_cannot_break_out_of_cmake_strings(tmp_path):
    """A backslash would escape the closing quote of one root, so that the next one is CMake code."""
    ws = _workspace(tmp_path)
    edit(ws / "vendors" / "droplet.yaml", "default_roots: [/usr/local/tangrt]",
         "default_roots: ['/a\\', '/b) execute_process(COMMAND touch PWNED) #']")
    _refused(ws, "droplet", "default_roots:", "build.toolkit.default_roots")


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_find_module_keeps_odd_roots_as_data(tmp_path):
    """A root that is refused nothing (parentheses, #, spaces) stays a quoted string and a comment word:
    the rendered Find module runs under cmake -P without running it."""
    ws = _workspace(tmp_path)
    edit(ws / "vendors" / "droplet.yaml", "default_roots: [/usr/local/tangrt]",
         "default_roots: ['/opt/x) execute_process(COMMAND touch PWNED) #']")
    assert run_cli("render", "--vendor", "droplet", cwd=ws).exit_code == 0
    found = sorted((ws / "generated" / "droplet").rglob("FindTangRT.cmake"))
    assert len(found) == 1, found
    run = tmp_path / "run"
    run.mkdir()
    subprocess.run(["cmake", "-P", str(found[0])], cwd=run, capture_output=True, text=True, timeout=60)
    assert not (run / MARKER).exists()


@pytest.mark.parametrize("vendor, old, new, needle, key", [
    # single-line names matched by a pattern: Python's $ matches before a trailing newline
    ("droplet", "headers: [tang_runtime.h]", 'headers: ["tang_runtime.h\\n"]', "headers: [\"tang", "build.toolkit.headers"),
    ("droplet", "name: TangRT", 'name: "TangRT\\n"', 'name: "TangRT', "build.toolkit.name"),
    ("droplet", "root_vars: [DROPLET_INSTALL, TANGRT_ROOT]", 'root_vars: ["DROPLET_INSTALL\\n"]', "root_vars:",
     "build.toolkit.root_vars"),
    ("droplet", '["test_conv.*"]', '["test_conv\\nimport os"]', "test_conv", "tests.pytorch.disabled"),
    ("camb", "description: Cambricon MLU", 'description: "Cambricon\\nMLU"', "description:", "vendor.description"),
])
def test_control_characters_refused(tmp_path, vendor, old, new, needle, key):
    ws = _workspace(tmp_path)
    edit(ws / "vendors" / f"{vendor}.yaml", old, new)
    _refused(ws, vendor, needle, key)


def test_any_file_name_makes_a_line_directive_that_compiles(tmp_path):
    """A catalog file's name goes into the #line directives of the code pasted from it: characters
    beyond the BMP, non-ASCII letters, a question mark (no trigraph) and quotes still give a
    directive g++ takes, naming the file byte for byte."""
    ws = copy_workspace(tmp_path / "ws")
    name = 'loss_😀_é_??=_"q".yaml'
    (ws / "catalog" / "loss.yaml").rename(ws / "catalog" / name)
    assert run_cli("render", "--vendor", "droplet", cwd=ws).exit_code == 0
    pasted = "".join(p.read_text() for p in sorted((ws / "generated" / "droplet").rglob("AutoGenedKernels*.pasted.inc")))
    directive = next(line for line in pasted.splitlines() if line.startswith("#line") and "loss_" in line)
    source = tmp_path / "line.cpp"
    source.write_text(f"{directive}\n#error here\n")
    done = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", str(source)], capture_output=True)
    assert f"catalog/{name}:".encode() in done.stderr, done.stderr
    assert done.stderr.count(b": error:") == 1 and b"error: #error here" in done.stderr, done.stderr


PASTED_REFUSED = [
    ("code:\n      beginning: |\n        /* never closed", "code.beginning", "comment opened at line 1 column 1"),
    ("code:\n      before_call: |\n        }\n        void injected() {", "code.before_call", "'}' at line 1"),
    ("code:\n      before_return: |\n        auto s = \"no end;", "code.before_return", "string literal"),
    ("code:\n      beginning: |\n        auto r = R\"x(no end", "code.beginning", "raw string"),
    ("alloc:\n      out: 'at::empty_like(self); } void injected() {'", "alloc.out", "';' at line 1 column 21"),
    # Read as the compiler reads them: alternative tokens, joined lines, CR line breaks,
    # names with $ before a raw-string prefix, a literal's suffix.
    ("code:\n      beginning: |\n        return out; %>\n        void injected() <%", "code.beginning",
     "'%>' at line 1"),
    ("code:\n      beginning: |\n        // a comment \\\n        {\n        }", "code.beginning", "'}' at line 3"),
    ('code:\n      beginning: "return out; // c\\r}\\nvoid injected() // c\\r{\\n"', "code.beginning",
     "'}' at line 1"),
    ("code:\n      beginning: |\n        (void)$R\"(\" } \")\";", "code.beginning", "'}' at line 1"),
    ("code:\n      beginning: |\n        (void)\"a\"R\"(\" } \")\";", "code.beginning", "'}' at line 1"),
    ("code:\n      beginning: |\n        auto s = R\"@(x)@\";", "code.beginning", "no delimiter of basic"),
    ("code:\n      beginning: |\n        char c = '';", "code.beginning", "is empty"),
    ("code:\n      beginning: \"int x = 0; \\\\\"", "code.beginning", "ends in a backslash"),
    ('code:\n      beginning: "\\uFEFFint x = 0;"', "code.beginning", "U+FEFF"),
    # Preprocessor lines: only conditional groups, each branch closing what it opens.
    ("code:\n      beginning: |\n        #endif\n        printf(\"everywhere\");\n        #ifdef NEVER",
     "code.beginning", "#endif at line 1 column 1 has no #if"),
    ("code:\n      beginning: |\n        #if 0\n        {\n        #endif\n        }", "code.beginning",
     "the branch before #endif at line 3"),
    ("code:\n      beginning: |\n        #if 1\n        int x = 0;", "code.beginning", "has no #endif"),
    ("code:\n      beginning: |\n        /* a */ #define ctx nullptr", "code.beginning", "#define at line 1 column 9"),
    ("code:\n      beginning: |\n        _Pragma(\"GCC poison ctx\")", "code.beginning", "_Pragma at line 1"),
    ("alloc:\n      out: 'at::empty_like(self) // see above'", "alloc.out", "// comment at line 1 column 22"),
    # A number reads letters beyond ASCII and \u escapes whole, as does a directive's line; NUL and
    # other control characters (which g++ reads as spaces), @ and ` are no C++; a macro made of
    # _Pragma; a group of the wrong shape; a second declaration after an alloc's.
    ('code:\n      beginning: "(void)C10_STRINGIZE(1\\u00e9\'a); return out; } void f() { //\');"', "code.beginning",
     "'}' at line 1"),
    ("code:\n      beginning: |\n        #if 0\n        #endif 1'0 '/*'\n        return out; }\n        /* */",
     "code.beginning", "'}' at line 3"),
    ('code:\n      beginning: "\\0#define diopiLog2 diopiNeg"', "code.beginning", "control character U+0000"),
    ("code:\n      beginning: |\n        int a = 0; (void)a; @", "code.beginning", "U+0040"),
    ("code:\n      beginning: |\n        _C10_PRAGMA_(redefine_extname diopiNeg diopiAbs)", "code.beginning",
     "_C10_PRAGMA_ at line 1"),
    ("code:\n      beginning: |\n        #if 0\n        #else\n        #else\n        #endif", "code.beginning",
     "#else at line 3 column 1 comes after the group's #else"),
    ("code:\n      beginning: |\n        #ifdef\n        #endif", "code.beginning", "#ifdef at line 1 column 1 has no name"),
    # A condition the preprocessor does not take.
    ("code:\n      beginning: |\n        int v = 0;\n        #if DIPU_TORCH_VERSION >=\n        #endif", "code.beginning",
     "the condition of #if at line 2 column 1 ends where an operand belongs"),
    ("code:\n      beginning: |\n        #ifdef 1\n        #endif", "code.beginning",
     "the condition of #ifdef at line 1 column 1 does not start with a macro name"),
    ("code:\n      beginning: |\n        #ifdef and\n        #endif", "code.beginning",
     "the condition of #ifdef at line 1 column 1 names 'and', which is an operator in C++"),
    ("code:\n      beginning: |\n        #if DIPU_TORCH_VERSION > 2.1\n        #endif", "code.beginning",
     "has '2.1', which is no integer constant"),
    ("code:\n      beginning: |\n        #if 09\n        #endif", "code.beginning", "has '09', which is no integer"),
    ("code:\n      beginning: |\n        #if 0\n        #elif defined(A) B\n        #endif", "code.beginning",
     "the condition of #elif at line 2 column 1 has 'B' where an operator"),
    ("alloc:\n      out: 'at::empty_like(self), injected = self'", "alloc.out", "',' at line 1 column 21"),
    # Read as pasted: the memory-format placeholder filled with its default text.
    ('code:\n      beginning: "/* *${PREFERRED_MEMORY_FORMAT_PLACEHOLDER:-}/ return out; } void f() { /* */"',
     "code.beginning", "'}' at line 1"),
]


@pytest.mark.parametrize("text, key, why", PASTED_REFUSED, ids=[k for _, k, _ in PASTED_REFUSED])
def test_pasted_cpp_that_would_leave_its_place_is_refused(tmp_path, text, key, why):
    """C++ from a catalog entry is pasted as it is, inside a generated function: what would
    open a comment or literal over the code after it, or close that function, is refused at
    the text's line, and nothing is written."""
    ws = copy_workspace(tmp_path / "ws")
    catalog = ws / "catalog" / "x.yaml"
    catalog.write_text(f"ops:\n  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n    {text}\n")
    errors = error_lines(run_cli("render", "--vendor", "droplet", cwd=ws))
    assert any(e.startswith(f"{catalog}:") and f"log1p.out].{key}: " in e and why in e for e in errors), errors
    assert not (ws / "generated").exists()


def test_pasted_cpp_the_compiler_reads_whole_passes(tmp_path):
    """What a compiler reads as closed passes: raw strings holding quotes and brackets, digit
    separators, character literals, comments holding brackets, letters and digits beyond ASCII,
    `<::` (not the alternative token `<:`), alternative tokens, a conditional group and a line
    joined to the next by a backslash, as DIPU's own op file writes them."""
    ws = copy_workspace(tmp_path / "ws")
    (ws / "catalog" / "x.yaml").write_text(
        "ops:\n  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n    code:\n      beginning: |\n"
        "        const char* s = R\"d(a \") } ( \" b)d\";  // a } in a comment\n"
        "        /* { [ ( */ int64_t n = 1'000'000; char c = '\\'';\n"
        "        (void)s; (void)n; (void)c; int \u00c0x = 1; (void)\u00c0x;  // non-ASCII: \u00b2 \u0663\n"
        "        auto r = static_cast<::diopiReduction_t>(0); int a<:2:> = <%1, 2%>; (void)r; (void)a;\n"
        "        #if defined(DIPU_TORCH_VERSION) && DIPU_TORCH_VERSION >= 20100  // a group, each branch closed\n"
        "        #elif __has_include(<cmath>) || (defined X ? -1 : ~'a') /* a call, defined X, ?: */\n"
        "        int v = 2;\n"
        "        int v = (1 +\\\n          2);\n"
        "        #else\n"
        "        int v = 3;\n"
        "        #endif\n"
        "        (void)v;\n")
    assert run_cli("validate", cwd=ws).exit_code == 0


# Custom code whose tokens g++ 12 reads apart from a looser reading, each of which hid the } that
# closes the wrapper (g++ then puts the rest at namespace scope, a static initialiser included).
GXX_TOKENS = [
    # A digit separator goes before an ASCII letter, digit or _ only: 'é' is a character literal.
    ("(void)C10_STRINGIZE(1'\u00e9'); return out; } void f() { //')", "'}' at line 1 column 40"),
    ("(void)C10_STRINGIZE(0'\u00e9'); return out; } void f() { //')", "'}' at line 1 column 40"),
    ("(void)C10_STRINGIZE(1.'\u00e9'); return out; } void f() { //')", "'}' at line 1 column 41"),
    ("(void)C10_STRINGIZE(1'_'a'\u00e9'); return out; } void f() { //')", "'}' at line 1 column 44"),
    # A literal's suffix is a name, which starts with no digit: 0'1 is a number.
    ("(void)C10_STRINGIZE('a'0'1); return out; } void f() { //')", "'}' at line 1 column 42"),
    ("(void)C10_STRINGIZE(\"a\"0'1); return out; } void f() { //')", "'}' at line 1 column 42"),
    # A backslash that joined lines leaves one before a line's end, which ends the literal.
    ('#if 0\n"a\\\\\n\n" /*\n#endif\nreturn out; } void injected() {\n#if 0\n*/\n#endif',
     'the string literal opened at line 2 column 1 is not closed on its line'),
    # __has_include's operand is a header name where the condition is computed, tokens elsewhere.
    ("#if __has_include(<a/*>)\n#endif\nreturn out; } void injected() {\n#if 0 //*/ )\n#endif",
     "the header name at line 1 column 19 holds /* or //"),
    # A # after a comment that follows code on its line opens no directive; #elifdef is C++23's.
    ("int v = 0; /*\n*/ #if 0\n#endif", "#endif at line 3 column 1 has no #if"),
    ("#if 0\n#elifdef X\n#endif", "#elifdef at line 2 column 1 would change the code around the text"),
]


@pytest.mark.parametrize("text, why", GXX_TOKENS, ids=[str(k) for k in range(len(GXX_TOKENS))])
def test_pasted_cpp_is_read_as_gxx_reads_its_tokens(tmp_path, text, why):
    """Where a number, a literal's suffix, a literal or a header name ends, and what opens a
    directive, is read as g++ 12 reads it in C++17: what would leave the wrapper is an error
    at the text's line."""
    ws = copy_workspace(tmp_path / "ws")
    catalog = ws / "catalog" / "x.yaml"
    catalog.write_text("ops:\n  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n    code:\n      beginning: |\n"
                       + "".join(f"        {line}\n" for line in text.splitlines()))
    errors = error_lines(run_cli("render", "--vendor", "droplet", cwd=ws))
    assert any(e.startswith(f"{catalog}:6:") and "log1p.out].code.beginning: " in e and why in e
               for e in errors), errors
    assert not (ws / "generated").exists()


@pytest.mark.parametrize("template, why", [
    ('tangSetDevice({devId}); system("touch PWNED")', "';' at line 1"),
    ('tangSetDevice("{devId})', "string literal"),
    ("tangSetDevice({devId}) + tangGetDevice(0)", "not one call"),
    ("tangSetDevice({devId}) }}", "closes a bracket it did not open"),   # }} is a brace once rendered
])
def test_a_runtime_call_is_one_call(tmp_path, template, why):
    ws = _workspace(tmp_path)
    edit(ws / "vendors" / "droplet.yaml", "setDevice: tangSetDevice({devId})", f"setDevice: '{template}'")
    errors = error_lines(run_cli("render", "--vendor", "droplet", cwd=ws))
    line = line_of(ws / "vendors" / "droplet.yaml", "setDevice:")
    assert any(f"vendors/droplet.yaml:{line}:" in e and why in e for e in errors), errors
    assert not (ws / "generated").exists()


def test_a_call_is_quoted_in_its_failure_message_whatever_it_holds(tmp_path):
    """The DIOPI call is quoted in the wrapper's failure message as an escaped C string, so a
    string literal among its arguments cannot end that message early (as `)DIPU"` ended the
    raw string it once was)."""
    from helpers import kernels

    ws = copy_workspace(tmp_path / "ws")
    (ws / "catalog" / "x.yaml").write_text('ops:\n  log1p.out:\n    call: \'diopiLog1p(ctx, out, ")DIPU")\'\n')
    result = run_cli("render", "--vendor", "droplet", cwd=ws)
    assert result.exit_code == 0, result.output
    text = kernels(ws / "generated" / "droplet", pasted=False)
    start = text.index('TORCH_CHECK(ret == ::diopiSuccess, diopi_call_failure(__FILE__ ":" C10_STRINGIZE(__LINE__) "::diopiLog1p(')
    check = text[start:text.index(";", start) + 1]
    assert cpplex.problem(check) is None, check
    assert '"::diopiLog1p(ctx, outDiopiTensorHandle, \\")DIPU\\")"' in check, check


@pytest.mark.parametrize("text, why", [
    ("#define HOSTSIM_TRACE 0\n", None),                # a macro of the vendor's own runtime file
    ("#define HOSTSIM_CALL(x) do { (void)(x); } while (0)\n", None),
    ("int n = 0; %>\nint escaped() <%\n", "'%>' at line 1"),
    ("#if HOSTSIM_TRACE\nvoid f() {\n#endif\n", "the branch before #endif at line 3"),
    ("#define HOSTSIM_CLOSE }\n", "the macro #define at line 1 column 1 cannot be pasted as it is"),
    # Read as g++ reads them: a number before a quote, an #include line's header names (in a
    # group skipped or not), a directive's name after a comment, %:%: at a line's start, a raw
    # string on a directive's line.
    ("#define HOSTSIM_STR(x) #x\n#define HOSTSIM_CLOSE HOSTSIM_STR(1'\u00e9') } //')\n",
     "the macro #define at line 2 column 1 cannot be pasted as it is"),
    ("#if 0\n#include <a/*>\n#endif\n}\n#if 0\n*/\n#endif\n", "'}' at line 4 column 1 closes a bracket"),
    ('#if 0\n#include "a\\"/*"\n#endif\n{\n#if 0\n*/\n#endif\n}\n', "'}' at line 8 column 1 closes a bracket"),
    ("#/**/if 0\n{\n#/**/endif\n}\n", "the branch before #endif at line 3"),
    ("%:%: }\n", "'}' at line 1 column 6 closes a bracket"),        # the paste operator, no directive
    ('#define HOSTSIM_TEXT R"(a\nb)"\n', "the raw string at line 1 column 22 in a directive is not closed"),
])
def test_runtime_code_may_hold_directives_but_not_leave_its_place(tmp_path, text, why):
    """A runtime prelude is pasted into the vendor's own source file, so its macros are its
    own; it still cannot close the code around it, alternative tokens included."""
    ws = _workspace(tmp_path)
    vendor = ws / "vendors" / "hostsim.yaml"
    edit(vendor, "    prelude: |\n", "    prelude: |\n" + "".join(f"      {line}\n" for line in text.splitlines()))
    result = run_cli("validate", cwd=ws)
    if why is None:
        assert result.exit_code == 0, result.output
    else:
        line = line_of(vendor, "prelude: |") + 1          # where the text starts
        assert any(f"hostsim.yaml:{line}:" in e and why in e for e in error_lines(result)), result.output


# #if conditions of the right shape that g++ still refuses, and ones it takes; FOO is a macro.
CONDITIONS = [
    ("1/0", "divides by zero (the divisor of '/' is 0)"),
    ("1 % (2 - 2)", "divides by zero (the divisor of '%' is 0)"),
    ("1 && (0 || 1/(1 << 64))", "divides by zero (the divisor of '/' is 0)"),
    ("1/(-1 < 0u)", "divides by zero (the divisor of '/' is 0)"),
    ("__has_include()", "has __has_include without a header name in parentheses after it"),
    ("__has_cpp_attribute", "has __has_cpp_attribute without an attribute name in parentheses after it"),
    ("sizeof(int) == 4", "has sizeof(, but sizeof is no preprocessor operator"),
    ("0 && 1/0", None),
    ("1 || 1%0", None),
    ("1 ? 1 : 1/0", None),
    ("1/(-1 >> 70)", None),
    ("1/FOO", None),
    ("__has_include(<cmath>) && sizeof + 1", None),
    # C++ reads its alternative tokens as operators, true and false as 1 and 0, and takes a comma.
    ("defined(FOO) and not defined(BAR) or FOO bitand 1 bitor 2 xor compl 3 not_eq 4", None),
    ("1 and_eq 2", "has 'and_eq' where an operator or the line's end belongs"),
    ("(1, 2) && (0 ? 1 : (2, 0))", None),
    ("1 ? 0 : 2, 1/0", "divides by zero (the divisor of '/' is 0)"),
    ("1 / false", "divides by zero (the divisor of '/' is 0)"),
    # Values known whatever the macros: a literal cut to 64 bits, a character, a short circuit.
    ("1 / 18446744073709551616", "divides by zero (the divisor of '/' is 0)"),
    ("1 / ('\\0' + L'a' - L'a')", "divides by zero (the divisor of '/' is 0)"),
    ("u8'ab'", "has a u8 character literal of more than one character"),
    ("(1 || X) && 1 / 0", "divides by zero (the divisor of '/' is 0)"),
    ("1 / (0 && X)", "divides by zero (the divisor of '/' is 0)"),
    ("1 || X && 1 / 0", None),
    ("__has_include(1)", "has __has_include without a header name in parentheses after it"),
    ("__has_builtin(1)", "has __has_builtin without a name in parentheses after it"),
]


@pytest.mark.parametrize("condition, why", CONDITIONS, ids=[c for c, _ in CONDITIONS])
def test_a_condition_is_refused_where_gxx_refuses_it(tmp_path, condition, why):
    """The preprocessor computes a #if condition: a division by zero in it (where no macro decides
    the divisor or whether it is computed), a __has_include without its header or a sizeof
    fails the compile, so validation refuses them at the text's line, as g++ -E does."""
    if shutil.which("g++"):
        source = tmp_path / "condition.cpp"
        source.write_text(f"#if {condition}\n#endif\n")
        gxx = subprocess.run(["g++", "-std=c++17", "-E", "-DFOO=2", str(source)], capture_output=True, text=True)
        assert (gxx.returncode != 0) == (why is not None), gxx.stderr
    ws = copy_workspace(tmp_path / "ws")
    catalog = ws / "catalog" / "x.yaml"
    catalog.write_text("ops:\n  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n    code:\n      beginning: |\n"
                       f"        int v = 0;\n        #if {condition}\n        v = 1;\n        #endif\n"
                       "        (void)v;\n")
    result = run_cli("validate", cwd=ws)
    if why is None:
        assert result.exit_code == 0, result.output
    else:
        errors = error_lines(result)
        assert any(e.startswith(f"{catalog}:6:") and "log1p.out].code.beginning: " in e
                   and f"the condition of #if at line 2 column 1 {why}" in e for e in errors), errors


@pytest.mark.parametrize("text, why", [
    ("#if 1\n#elif 1 / 0\n#elif\n#endif", None),          # after a branch taken: never read
    ("#if 0\n#if sizeof(int) > 4\n#elif\n#endif\n#ifdef 1\n#endif\n#endif", None),      # a group skipped
    ("#ifdef FOO BAR\n#endif", None),                   # only a warning of the tokens after the name
    ("#if FOO\n#elif 1 / 0\n#endif", "the condition of #elif at line 2 column 1 divides by zero"),
    ("#if 0\n#else\n#if 1 / 0\n#endif\n#endif", "the condition of #if at line 3 column 1 divides by zero"),
    ("#if 0\n#elif 1\n#else\n#ifdef\n#endif\n#endif", None),
])
def test_a_condition_is_checked_where_gxx_reads_it(tmp_path, text, why):
    """g++ reads no condition in a group it skips, nor an #elif's after a branch it took: those
    are not checked; one that a macro may make it read is."""
    if shutil.which("g++"):
        source = tmp_path / "group.cpp"
        source.write_text(text + "\n")
        gxx = subprocess.run(["g++", "-std=c++17", "-E", str(source)], capture_output=True, text=True)
        assert (gxx.returncode != 0) == (why is not None), gxx.stderr
    ws = copy_workspace(tmp_path / "ws")
    catalog = ws / "catalog" / "x.yaml"
    body = "".join(f"        {line}\n" for line in text.splitlines())
    catalog.write_text(f"ops:\n  log1p.out:\n    call: diopiLog1p(ctx, out, self)\n    code:\n      beginning: |\n{body}")
    result = run_cli("validate", cwd=ws)
    if why is None:
        assert result.exit_code == 0, result.output
    else:
        assert any(e.startswith(f"{catalog}:6:") and why in e for e in error_lines(result)), result.output


GPULIKE = REPO / "tests" / "fixtures" / "dipu_vendors" / "gpulike"


def _import_runtime(tmp_path, inserted: str, at: str | None):
    """import-dipu of the gpulike runtime with *inserted* put into its deviceimpl.cpp before *at*
    (at its end when None): the file and the run."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    source = rt / "deviceimpl.cpp"
    text = source.read_text()
    where = len(text) if at is None else text.index(at)
    source.write_text(text[:where] + inserted + text[where:])
    result = run_cli("import-dipu", "--functions", str(REPO / "tests" / "fixtures" / "dipu" / "diopi_functions.yaml"),
                     "--vendors", "gpulike", "--torch-version", DIPU_TORCH, "--out", str(tmp_path / "ws"),
                     "--runtime", f"gpulike={rt}")
    return source, text[:where].count("\n") + 1, result


# The runtime reader blanks what a literal holds, so a character's value is not known there.
@pytest.mark.parametrize("condition, why", [(c, w) for c, w in CONDITIONS if w is not None and "'\\0'" not in c])
def test_a_runtime_condition_gxx_refuses_is_an_error_at_its_line(tmp_path, condition, why):
    source, line, result = _import_runtime(tmp_path, f"#if {condition}\n#endif\n", "void syncDevice()")
    [error] = error_lines(result)
    assert error.startswith(f"{source}:{line}:1: error: --runtime: the condition of #if {why}"), error
    assert not (tmp_path / "ws").exists()


def test_a_runtime_macro_is_read_as_gxx_reads_its_numbers(tmp_path):
    """A runtime file's #define whose `1'é'` hid the } its body closes: an error at its line."""
    macros = "#define GPL_STR(x) #x\n#define GPL_CLOSE GPL_STR(1'\u00e9') } //')\n"
    source, line, result = _import_runtime(tmp_path, macros, "void syncDevice()")
    [error] = error_lines(result)
    assert error.startswith(f"{source}:{line + 1}:1: error: --runtime: ") and "the macro #define" in error, error
    assert not (tmp_path / "ws").exists()


def _helpers(count: int) -> str:
    return "".join(f"static int gplHelper{i}(int x) {{ return x + {i}; }}\n" for i in range(count))


def _fewest_seconds(*texts: str) -> list[float]:
    """The fewest seconds problem() took on each of *texts*, read in turn three times over (so
    that a busy moment of the machine slows each of them alike)."""
    took = [float("inf")] * len(texts)
    for _ in range(3):
        for k, text in enumerate(texts):
            start = time.perf_counter()
            assert cpplex.problem(text, directives=True) is None
            took[k] = min(took[k], time.perf_counter() - start)
    return took


BOUND = 8       # seconds: 240,000 helpers took about 14 s when each token was read on its own


def test_a_large_runtime_file_is_read_in_linear_time():
    """A runtime file of many one-line helpers (13 MB) is read many tokens at a time: four times
    the text takes about four times as long, and well under BOUND seconds."""
    small, large = _fewest_seconds(_helpers(60_000), _helpers(240_000))
    assert large < 8 * small, (small, large)        # 16 times as long where it is quadratic
    assert large < BOUND, large


def test_a_runtime_file_ending_in_a_backslash_is_an_error_at_the_backslash(tmp_path):
    """The place of what cannot be read is where the reader found it, also when its message
    names no line: the backslash that would join the file's last line (a macro's) to the code after it."""
    source, line, result = _import_runtime(tmp_path, "#define GPL_TRAILING 1 \\\n", None)
    [error] = error_lines(result)
    assert error.startswith(f"{source}:{line}:24: error: --runtime: ") and "ends in a backslash" in error, error
