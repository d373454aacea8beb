"""import-dipu --runtime: a DIPU vendor runtime folder becomes the vendor's runtime: and
build: sections and its hand-written files. Read through the CLI on the fixture folders
(tests/fixtures/dipu_vendors: our own code in the shapes DIPU's eight folders use), the
result validates and renders; every function DIPU's folder defines is rendered and makes
the SDK calls its source makes (error reporting aside); the rendered runtime compiles
against our DIPU declaration headers and the fixture SDK's; each defect a fixture's README
plants is reported at its file and line; the files that are not part of the contract are
carried byte for byte."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import DIPU_CHECKOUT, DIPU_TORCH, REPO, error_lines, run_cli, sdk_include_flags, syntax_check, vendor_dir
from sdk_calls import function_bodies, macro_names, sdk_calls

FIXTURES = REPO / "tests" / "fixtures" / "dipu_vendors"
FUNCTIONS = DIPU_CHECKOUT / "dipu" / "scripts" / "autogen_diopi_wrapper" / "diopi_functions.yaml"
# (fixture, --variant or None) -> the fixture sources DIPU's CMake compiles for that choice
CASES = {
    ("gpulike", None): ["deviceimpl.cpp", "communicatorimpl.cpp"],
    ("tablelike", None): ["basedeviceimpl.hpp", "rt_2.x/deviceimpl.cpp", "rt_2.x/communicatorimpl.cpp"],
    ("tablelike", "rt_1.x"): ["basedeviceimpl.hpp", "rt_1.x/deviceimpl.cpp"],
    ("statuslike", None): ["deviceimpl.cpp", "commimpl.cpp"],
}
CONTRACT = {"devapis", "dicl"}


def _import(tmp: Path, fixture: str, variant: str | None):
    out = tmp / f"ws-{fixture}-{variant or 'default'}"
    args = ["import-dipu", "--functions", str(FUNCTIONS), "--runtime", f"{fixture}={FIXTURES / fixture}",
            "--vendors", fixture, "--torch-version", DIPU_TORCH, "--out", str(out)]
    if variant:
        args += ["--variant", f"{fixture}={variant}"]
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    return out, result


@pytest.fixture(scope="module", params=list(CASES), ids=lambda c: f"{c[0]}-{c[1] or 'default'}")
def imported(request, tmp_path_factory):
    fixture, variant = request.param
    tmp = tmp_path_factory.mktemp("import-runtime")
    ws, result = _import(tmp, fixture, variant)
    assert run_cli("validate", cwd=ws).exit_code == 0
    rendered = run_cli("render", "--all", cwd=ws)
    assert rendered.exit_code == 0, rendered.output
    return fixture, variant, ws, result


def _contract_bodies(fixture: str, variant: str | None) -> dict[tuple[str, int], str]:
    """The fixture's own definitions of DIPU's functions, by (name, parameter count)."""
    from deeplink_gen.interfaces.dipu import FUNCTIONS as CONTRACT_FUNCTIONS

    known = {(f.name, len(f.params)) for f in CONTRACT_FUNCTIONS.values()}
    out = {}
    for rel in CASES[(fixture, variant)]:
        out.update({k: v for k, v in function_bodies(FIXTURES / fixture / rel).items() if k in known})
    return out


def test_every_function_is_rendered_with_the_sdk_calls_of_its_source(imported):
    fixture, variant, ws, _ = imported
    vdir = vendor_dir(ws / "generated", fixture)
    rendered = {**function_bodies(vdir / "deviceimpl.cpp"), **function_bodies(vdir / "communicatorimpl.cpp")}
    sources = _contract_bodies(fixture, variant)
    macros = macro_names(*(p.read_text() for p in (FIXTURES / fixture).rglob("*") if p.suffix in (".h", ".hpp", ".cpp")),
                         (vdir / "vendorapi.h").read_text())
    assert len(sources) >= 30
    missing = sorted(k for k in sources if k not in rendered)
    assert not missing
    differ = {k: (sdk_calls(src, macros), sdk_calls(rendered[k], macros)) for k, src in sources.items()
              if sdk_calls(src, macros) != sdk_calls(rendered[k], macros)}
    assert not differ
    # the comparison sees the SDK: most functions make at least one call
    assert sum(bool(sdk_calls(src, macros)) for src in sources.values()) >= len(sources) // 2


def test_the_runtime_compiles(imported, tmp_path):
    fixture, variant, ws, _ = imported
    vdir = vendor_dir(ws / "generated", fixture)
    overlay = tmp_path / "overlay"
    (overlay / "csrc_dipu" / "vendor").mkdir(parents=True)
    shutil.copy(vdir / "vendorapi.h", overlay / "csrc_dipu" / "vendor" / "vendorapi.h")
    # the configuration the import resolved statuslike's `#ifdef STL_NEW_API` for (the newest SDK)
    defines = ["-DSTL_NEW_API"] if fixture == "statuslike" else []
    for name in ("deviceimpl.cpp", "communicatorimpl.cpp"):
        result = syntax_check(vdir / name, overlay=overlay,
                              extra=[*defines, f"-I{vdir}", *sdk_include_flags(fixture)],
                              warnings=["-Werror=return-type"])
        assert result.returncode == 0, (name, result.stderr[-4000:])


def test_planted_defects_are_reported_at_their_line(imported):
    fixture, variant, _, result = imported
    readme = (FIXTURES / fixture / "README.md").read_text()
    planted = re.findall(r"^- `([^`:]+):(\d+)`", readme.split("## Planted defects", 1)[1], re.M)
    compiled = CASES[(fixture, variant)]
    planted = [(f, n) for f, n in planted if f in compiled]
    if fixture != "tablelike" or variant is None:
        assert planted
    for file, line in planted:
        where = f"dipu_vendors/{fixture}/{file}:{line}:1: warning:"
        assert where in result.stderr, (where, result.stderr)


def test_the_hand_written_files_are_carried(imported):
    fixture, variant, ws, _ = imported
    doc = yaml.safe_load((ws / "vendors" / f"{fixture}.yaml").read_text())
    carried = doc["build"].get("hand_written", [])
    runtime_sources = set(CASES[(fixture, variant)])
    for rel in carried:
        assert rel not in runtime_sources
        source = FIXTURES / fixture / rel
        assert (ws / "vendors" / fixture / rel).read_bytes() == source.read_bytes()
        assert (vendor_dir(ws / "generated", fixture) / rel).read_bytes() == source.read_bytes()
    expected = {"gpulike": {"GplCopyInplace.cpp", "GplExtras.h", "patch/GplPatch.cpp"},
                "tablelike": {"TblActivity.cpp", "TblActivity.h", "TblCopyInplace.cpp"},
                "statuslike": set()}[fixture]
    assert expected <= set(carried)


def test_the_version_picked_folder_is_said_and_chosen(tmp_path):
    for variant, other in (("rt_1.x", "rt_2.x"), ("rt_2.x", "rt_1.x")):
        ws, result = _import(tmp_path / variant, "tablelike", variant)
        assert f"imported {variant}" in result.stderr
        assert f"--variant tablelike={other}" in result.stderr
        text = (ws / "vendors" / "tablelike.yaml").read_text()
        own = {"rt_1.x": "tblCreateQueue(", "rt_2.x": "tblQueueCreate("}
        assert own[variant] in text and own[other] not in text


def test_sdk_conditions_are_resolved_with_a_warning_and_build_defines_are_known(tmp_path):
    ws, result = _import(tmp_path, "gpulike", None)      # gpulike holds the #if shapes
    assert re.search(r"communicatorimpl\.cpp:\d+:1: warning: `#elif defined\(", result.stderr)
    comm = yaml.safe_load((ws / "vendors" / "gpulike.yaml").read_text())["runtime"]["comm"]
    assert "BFloat16" in comm["dtypes"] and "AVG" in comm["reduce_ops"]
    # USE_GPLX is a build define the build does not set for this vendor: its branch is not taken, silently
    assert "USE_GPLX" not in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--runtime", "gpulike=/nonexistent"], "no folder /nonexistent"),
    (["--runtime", f"gpulike={FIXTURES / 'tablelike'}", "--variant", "gpulike=rt_9.x"], "not rt_9.x"),
    (["--runtime", f"gpulike={DIPU_CHECKOUT}"], "defines none of DIPU's device or communicator functions"),
    (["no vendorapi.h"], "vendorapi.h: error: --runtime: is missing: a DIPU vendor runtime folder's vendorapi.h names"),
])
def test_a_folder_that_is_not_a_runtime_is_an_error(tmp_path, args, message):
    if args == ["no vendorapi.h"]:
        folder = shutil.copytree(FIXTURES / "gpulike", tmp_path / "gpulike")
        (folder / "vendorapi.h").unlink()
        args = ["--runtime", f"gpulike={folder}"]
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "gpulike",
                     "--torch-version", DIPU_TORCH, "--out", str(tmp_path / "ws"), *args)
    assert result.exit_code == 1
    assert message in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize("name", ["deviceimpl.cpp", "notes.txt", "CMakeLists.txt"])
def test_a_huge_file_in_a_runtime_folder_is_never_read_whole(tmp_path, name):
    """An 8 GB sparse file among a runtime's sources, carried files or CMake: refused by size, at the file."""
    from helpers import run_subprocess

    folder = shutil.copytree(FIXTURES / "gpulike", tmp_path / "gpulike")
    (folder / name).unlink(missing_ok=True)
    with open(folder / name, "wb") as fh:
        fh.truncate(8 << 30)
    proc = run_subprocess("import-dipu", "--functions", str(FUNCTIONS), "--runtime", f"gpulike={folder}",
                          "--vendors", "gpulike", "--torch-version", DIPU_TORCH, "--out", str(tmp_path / "ws"),
                          timeout=120, memory=2 << 30)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert re.search(rf"{re.escape(name)}:1:1: error: --runtime: file is larger than", proc.stderr), proc.stderr[-2000:]


def test_a_bidirectional_control_character_in_a_runtime_source_is_refused_at_its_line(tmp_path):
    """The function bodies go into the vendor file, which refuses such characters: the import says
    where the source holds one instead of writing a workspace that does not validate."""
    folder = shutil.copytree(FIXTURES / "gpulike", tmp_path / "gpulike")
    source = folder / "deviceimpl.cpp"
    lines = source.read_text().splitlines(keepends=True)
    lines.insert(3, "// \u202e reversed\n")
    source.write_text("".join(lines))
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--runtime", f"gpulike={folder}",
                     "--vendors", "gpulike", "--torch-version", DIPU_TORCH, "--out", str(tmp_path / "ws"))
    assert result.exit_code == 1 and not (tmp_path / "ws").exists()
    assert re.search(r"deviceimpl\.cpp:4:4: error: --runtime: holds the bidirectional control character U\+202E",
                     result.stderr), result.stderr


# ---------------------------------------------------------------- the cudalike folder, edited

CUDALIKE = FIXTURES / "cudalike"
SYNC = "void syncDevice() { CUDALIKE_CHECK(cudaDeviceSynchronize()); }"


def _cudalike(tmp: Path, edits: dict[str, list[tuple[str, str]]] | None = None, cmake: str | None = None) -> Path:
    """A copy of the cudalike fixture with each file's (old, new) edits made, and its CMakeLists.txt replaced."""
    from helpers import edit

    folder = shutil.copytree(CUDALIKE, tmp / "cudalike")
    for name, pairs in (edits or {}).items():
        for old, new in pairs:
            edit(folder / name, old, new)
    if cmake is not None:
        (folder / "CMakeLists.txt").write_text(cmake)
    return folder


def _import_folder(tmp: Path, folder: Path):
    return run_cli("import-dipu", "--functions", str(FUNCTIONS), "--runtime", f"cudalike={folder}",
                   "--vendors", "cudalike", "--torch-version", DIPU_TORCH, "--out", str(tmp / "ws"))


def _runtime(tmp: Path) -> dict:
    return yaml.safe_load((tmp / "ws" / "vendors" / "cudalike.yaml").read_text())


def test_relative_cmake_source_names_are_read_from_the_cmake_folder_not_the_cwd(tmp_path, monkeypatch):
    folder = _cudalike(tmp_path, cmake=(
        'find_package(CUDA "11.0" REQUIRED)\n'
        "set(SRC_FILES deviceimpl.cpp)\n"
        "list(APPEND SRC_FILES communicatorimpl.cpp CudalikeGeneratorImpl.cpp)\n"
        "set(VENDOR_FILES ${SRC_FILES} PARENT_SCOPE)\n"))
    # the process's cwd holds other files of the same names: never read
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for p in folder.glob("*.cpp"):
        shutil.copy(p, cwd / p.name)
    edit_cwd = cwd / "deviceimpl.cpp"
    edit_cwd.write_text(edit_cwd.read_text().replace("cudaDeviceSynchronize()", "cudaWrongSynchronize()"))
    monkeypatch.chdir(cwd)
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "ws" / "vendors" / "cudalike.yaml").read_text()
    assert "cudaDeviceSynchronize()" in text and "cudaWrongSynchronize" not in text
    assert "ncclAllReduce" in text           # communicatorimpl.cpp, through list(APPEND)


def test_a_key_given_twice_in_a_map_table_keeps_its_first_value_with_a_warning(tmp_path):
    """std::map's initializer-list constructor keeps the first of two equal keys (insert never overwrites)."""
    folder = _cudalike(tmp_path, {"communicatorimpl.cpp": [
        ("{ReduceOp::SUM, ncclSum},", "{ReduceOp::SUM, ncclSum},\n    {ReduceOp::SUM, ncclProd},")]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    assert _runtime(tmp_path)["runtime"]["comm"]["reduce_ops"]["SUM"] == "ncclSum"
    line = (folder / "communicatorimpl.cpp").read_text().split("\n").index("    {ReduceOp::SUM, ncclProd},") + 1
    assert re.search(rf"communicatorimpl\.cpp:{line}:1: warning: \w+ gives ReduceOp::SUM again \(to ncclProd\): "
                     r"the map keeps its first value, ncclSum", result.stderr), result.stderr


def test_a_line_comment_ending_in_a_backslash_comments_out_the_next_line(tmp_path):
    """Translation phase 2 splices the lines before comments are seen: the definition after the
    backslash is part of the comment, and the one after it is the function."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, (
        "// old version, disabled: \\\n"
        "void syncDevice() { CUDALIKE_CHECK(cudaStreamSynchronize(0)); }\n" + SYNC))]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    sync = _runtime(tmp_path)["runtime"]["device"]["functions"]["syncDevice"]
    assert "cudaDeviceSynchronize" in str(sync) and "cudaStreamSynchronize" not in str(sync)


def test_a_digit_separator_is_no_character_literal():
    from deeplink_gen.commands.import_dipu.runtime.cxx import mask

    assert mask("int n = 1'000; long m = 0xFF'FF; double d = .5'0; char c = 'a';") == \
        "int n = 1'000; long m = 0xFF'FF; double d = .5'0; char c = 'x';"
    assert mask("auto a = L'a', b = u8'b';") == "auto a = L'x', b = u8'x';"


def test_a_digit_separator_in_a_runtime_body_is_imported(tmp_path):
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, (
        "void syncDevice() { int n = 1'000; (void)n; CUDALIKE_CHECK(cudaDeviceSynchronize()); }"))]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    assert "1'000" in str(_runtime(tmp_path)["runtime"]["device"]["functions"]["syncDevice"])


def test_a_cxx17_nested_namespace_is_its_namespaces(tmp_path):
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [("namespace dipu {\nnamespace devapis {", "namespace dipu::devapis {"),
                                                     ("}  // namespace devapis\n}  // namespace dipu",
                                                      "}  // namespace dipu::devapis")]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    assert _runtime(tmp_path)["runtime"]["device"]["functions"]["syncDevice"] == "cudaDeviceSynchronize()"
    from deeplink_gen.commands.import_dipu.runtime.cxx import Config, read

    items = read("x.cpp", "namespace a::inline b { void f() {} }\nnamespace { void g() {} }", Config()).functions()
    assert [i.namespace for i in items] == [("a", "b"), ("",)]


@pytest.mark.parametrize("body", [
    "CUDALIKE_CHECK(/* x */ cudaDeviceSynchronize());",
    "CUDALIKE_CHECK(cudaDeviceSynchronize() /* x */) /* y */;",
    "/* x */ CUDALIKE_CHECK(cudaDeviceSynchronize()); // y",
])
def test_a_comment_at_the_edge_of_a_checked_call_is_cut_with_it(tmp_path, body):
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, f"void syncDevice() {{ {body}\n}}")]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    assert _runtime(tmp_path)["runtime"]["device"]["functions"]["syncDevice"] == "cudaDeviceSynchronize()"


def test_the_rendered_generator_is_named_in_build_sources_not_globbed(tmp_path):
    """DIPU's own generator file (KLXGeneratorImpl.cpp for kunlunxin) stays beside the rendered one when
    rendered --into its checkout: a `*GeneratorImpl.cpp` source would compile both (two vendorMakeGenerator)."""
    from fnmatch import fnmatch

    folder = _cudalike(tmp_path)
    (folder / "CudalikeGeneratorImpl.cpp").rename(folder / "CLGeneratorImpl.cpp")
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    sources = _runtime(tmp_path)["build"]["sources"]
    assert "CudalikeGeneratorImpl.cpp" in sources
    assert not [s for s in sources if fnmatch("CLGeneratorImpl.cpp", s)], sources
    assert run_cli("validate", cwd=tmp_path / "ws").exit_code == 0


def test_a_comm_dtype_no_collective_carries_is_left_out_with_a_warning(tmp_path):
    """c10::kQInt8 in the dtype table made a comm.dtypes key the vendor schema refuses: the
    import failed, naming the vendor file it would have written."""
    folder = _cudalike(tmp_path, {"communicatorimpl.cpp": [("{at::kBool, ncclUint8},",
                                                            "{at::kBool, ncclUint8}, {c10::kQInt8, ncclInt8},")]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    assert "maps QInt8, which no collective carries" in result.output
    dtypes = _runtime(tmp_path)["runtime"]["comm"]["dtypes"]
    assert "QInt8" not in dtypes and dtypes["Bool"] == "ncclUint8"
    assert run_cli("validate", cwd=tmp_path / "ws").exit_code == 0


def test_a_default_stream_continued_on_the_next_line_is_read_whole(tmp_path):
    """`#define deviceDefaultStreamLiteral \\` with its value on the next line was imported as
    a backslash and a line break, and the workspace did not validate."""
    folder = _cudalike(tmp_path, {"vendorapi.h": [("#define deviceDefaultStreamLiteral cudaStreamLegacy",
                                                   "#define deviceDefaultStreamLiteral \\\n    cudaStreamLegacy")]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    assert _runtime(tmp_path)["runtime"]["types"]["default_stream"] == "cudaStreamLegacy"


def test_a_compiled_source_build_sources_cannot_name_is_an_error_at_it(tmp_path):
    """A compiled file named `h#sh.cpp` made a build.sources entry the vendor schema refuses:
    the import failed, naming the vendor file it would have written."""
    folder = _cudalike(tmp_path)
    (folder / "h#sh.cpp").write_text("int odd_v = 1;\n")
    result = _import_folder(tmp_path, folder)
    [error] = error_lines(result)
    assert error.startswith(f"{folder / 'h#sh.cpp'}: error: --runtime: DIPU compiles this file"), error


# ---------------------------------------------------------------- what the top level of a runtime file holds

def _device_section(tmp: Path) -> dict:
    return _runtime(tmp)["runtime"]["device"]


def _refused_at(tmp: Path, folder: Path, name: str, needle: str) -> str:
    """The one error of importing *folder*, which must be at the line of *name* holding *needle*."""
    from helpers import line_of

    [error] = error_lines(_import_folder(tmp, folder))
    assert error.startswith(f"{folder / name}:{line_of(folder / name, needle)}:1: error: --runtime: "), error
    return error


def test_the_forms_a_contract_function_may_take_are_read_and_what_stands_beside_them_is_carried(tmp_path):
    """noexcept(false), a trailing return type, a function-try-block and a definition qualified
    after its namespace closed define DIPU's function; a macro use with no `;`, a local file
    included inside the namespace and an extern "C" block are the vendor's code, carried where
    they stand. The rendered runtime compiles, and its C function is linked by its C name."""
    from helpers import compile_runtime_objects

    checked = "void checkLastError() { CUDALIKE_CHECK(::cudaGetLastError()) }"
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [
        (SYNC, "#define DEF_HELPER(name) static int name() { return 7; }\n"
               "DEF_HELPER(myHelper)\n"
               "#include \"helper.inc\"\n"
               "extern \"C\" {\nint cudalikeCHelper(void);\n}\n"
               "void syncDevice() noexcept(false) try { CUDALIKE_CHECK(cudaDeviceSynchronize()); } "
               "catch (...) { throw; }\n"
               "int useIt() { return myHelper() + helperInc() + cudalikeCHelper(); }"),
        ("int getDeviceCount() {", "auto getDeviceCount() -> int {"),
        (checked, ""),
        ("}  // namespace dipu",
         "}  // namespace dipu\n\n" + checked.replace("checkLastError", "dipu::devapis::checkLastError"))]})
    (folder / "helper.inc").write_text("static int helperInc() { return 3; }\n")
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    device = _device_section(tmp_path)
    assert device["functions"]["syncDevice"]["custom"].strip() == \
        "try { CUDALIKE_CHECK(cudaDeviceSynchronize()); } catch (...) { throw; }"
    assert device["functions"]["getDeviceCount"] == {"locals": {"devices": "int"},
                                                    "call": "cudaGetDeviceCount(&{devices})", "return": "{devices}"}
    assert device["functions"]["checkLastError"] == "cudaGetLastError()"
    prelude = device["prelude"]
    assert "DEF_HELPER(myHelper)" in prelude and "helperInc() { return 3; }" in prelude
    assert 'extern "C" {\n\nint cudalikeCHelper(void);\n\n}  // extern "C"' in prelude
    assert "syncDevice" not in prelude and "checkLastError" not in prelude
    assert "helper.inc" not in _runtime(tmp_path)["build"].get("hand_written", [])
    assert run_cli("render", "--all", cwd=tmp_path / "ws").exit_code == 0
    generated = tmp_path / "ws" / "generated"
    out = tmp_path / "objects"
    [(_, built)] = compile_runtime_objects(generated, "cudalike", out, ("deviceimpl.cpp",), ["-Werror=return-type"],
                                           extra=[f"-I{vendor_dir(generated, 'cudalike')}"]).items()
    assert built.returncode == 0, built.stderr[-4000:]
    undefined = subprocess.run(["nm", "-u", str(out / "deviceimpl.cpp.o")], capture_output=True, text=True).stdout
    assert re.search(r"^\s*U cudalikeCHelper$", undefined, re.M), undefined


@pytest.mark.parametrize("closing, defined", [
    ("}  // namespace devapis\n}  // namespace dipu", "void dipu::devapis::syncDevice()"),
    ("}  // namespace devapis\n}  // namespace dipu", "void ::dipu::devapis::syncDevice()"),
    ("}  // namespace devapis", "void devapis::syncDevice()"),
], ids=["qualified", "from-the-global-namespace", "from-namespace-dipu"])
def test_a_contract_function_defined_by_its_qualified_name_is_read(tmp_path, closing, defined):
    """Defined after its namespace closed, it was carried as the vendor's code (inside namespace
    dipu::devapis, where its qualified name does not compile) and written unsupported beside it."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [
        (SYNC, ""), (closing, closing + "\n\n" + SYNC.replace("void syncDevice()", defined))]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    device = _device_section(tmp_path)
    assert device["functions"]["syncDevice"] == "cudaDeviceSynchronize()"
    assert "syncDevice" not in device.get("prelude", "")


def test_a_contract_function_in_a_nested_namespace_is_the_vendors_own(tmp_path):
    """dipu::devapis::detail::syncDevice is another function than DIPU's: carried, and DIPU's written unsupported."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, "namespace detail {\n" + SYNC + "\n}")]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    device = _device_section(tmp_path)
    assert device["functions"]["syncDevice"] == "unsupported"
    assert "namespace detail {\n\n" + SYNC + "\n\n}  // namespace detail" in device["prelude"]


@pytest.mark.parametrize("written, needle, why", [
    ("static " + SYNC, "static void syncDevice", "is defined as `static void syncDevice(...)`, where DIPU declares"),
    ("inline " + SYNC, "inline void syncDevice", "is defined as `inline void syncDevice(...)`"),
    ('extern "C" ' + SYNC, 'extern "C" void', 'is defined as `extern "C" void syncDevice(...)`'),
    ("auto syncDevice() { CUDALIKE_CHECK(cudaDeviceSynchronize()); }", "auto syncDevice", "as `auto syncDevice(...)`"),
    (SYNC.replace("()", "() noexcept", 1), "noexcept", "without `noexcept`"),
    ("#define DEF_HELPER(name) static int name() { return 7; }\nDEF_HELPER(myHelper)\n" + SYNC, "DEF_HELPER(myHelper)",
     "is defined as `DEF_HELPER(myHelper) void syncDevice(...)`"),
    ("inline namespace v1 {\n" + SYNC + "\n}", SYNC, "defined inside `inline namespace v1`"),
    ("namespace {\n" + SYNC + "\n}", SYNC, "defined inside `namespace`"),
    ('extern "C" {\n' + SYNC + "\n}", SYNC, 'defined inside `extern "C"`'),
    ("#define DEF_SYNC(name, call) void name() { CUDALIKE_CHECK(call()); }\n"
     "DEF_SYNC(syncDevice, cudaDeviceSynchronize)",
     "DEF_SYNC(syncDevice", "the macro use `DEF_SYNC(...)` at the top level names syncDevice"),
    ("#define SYNC_DEF " + SYNC + "\nSYNC_DEF;", "SYNC_DEF;",
     "the macro SYNC_DEF, used here at the top level, expands"),
    (SYNC.replace("syncDevice", "sync\\\nDevice"), "sync\\", "a backslash ends this line outside a #define"),
    (SYNC.replace("cudaDeviceSynchronize", "cudaDevice\\\nSynchronize"), "cudaDevice\\", "a backslash ends this line"),
    (SYNC + "\nvoid syncDevice() { CUDALIKE_CHECK(cudaStreamSynchronize(0)); }", "cudaStreamSynchronize(0)",
     "syncDevice is defined again here (first at "),
], ids=["static", "inline", "extern-C", "auto", "noexcept", "macro-before-it", "inline-namespace",
        "anonymous-namespace", "extern-C-block", "macro-arguments", "macro-expansion", "splice-in-its-name",
        "splice-in-a-call", "twice"])
def test_a_contract_function_the_import_cannot_take_as_dipus_is_refused_at_its_line(tmp_path, written, needle, why):
    """Each was carried as the vendor's code while DIPU's function was written again beside it
    (unsupported, or read from the second definition), or gave an error naming the vendor file
    the import would have written."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, written)]})
    assert why in _refused_at(tmp_path, folder, "deviceimpl.cpp", needle)


def test_a_contract_function_defined_again_in_another_compiled_file_is_refused_there(tmp_path):
    folder = _cudalike(tmp_path)
    with (folder / "CudalikeCopyInplace.cpp").open("a") as fh:
        fh.write("namespace dipu {\nnamespace devapis {\n" + SYNC + "\n}  // namespace devapis\n}  // namespace dipu\n")
    error = _refused_at(tmp_path, folder, "deviceimpl.cpp", SYNC)
    assert f"syncDevice is defined again here (first at {folder / 'CudalikeCopyInplace.cpp'}:" in error


@pytest.mark.parametrize("written, needle, why", [
    ("using deviceStream_t = cudaStream_t;\nusing deviceStream_t = int*;", "int*",
     "deviceStream_t is declared again here, as int*, where line"),
    ("using deviceStream_t = cudaStream_t;\n#undef CUDALIKE_CHECK\n#define CUDALIKE_CHECK(Expr) { (void)(Expr); }",
     "(void)(Expr)", "CUDALIKE_CHECK is defined again here, otherwise than at "),
], ids=["type", "check-macro"])
def test_a_second_declaration_in_vendorapi_h_is_refused_at_its_line(tmp_path, written, needle, why):
    """The last type and the first macro definition were imported, silently."""
    folder = _cudalike(tmp_path, {"vendorapi.h": [("using deviceStream_t = cudaStream_t;", written)]})
    assert why in _refused_at(tmp_path, folder, "vendorapi.h", needle)


def test_a_contract_function_in_a_file_included_inside_the_namespace_is_read(tmp_path):
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, '#include "syncpart.inc"')]})
    (folder / "syncpart.inc").write_text(SYNC + "\n")
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    device = _device_section(tmp_path)
    assert device["functions"]["syncDevice"] == "cudaDeviceSynchronize()"
    assert "syncDevice" not in device.get("prelude", "")


@pytest.mark.parametrize("edits, name, needle, why", [
    ({"deviceimpl.cpp": [(SYNC, "#include <vector>\n" + SYNC)]}, "deviceimpl.cpp", "<vector>",
     "#include <vector> sits inside `namespace dipu { namespace devapis {`, and the rendered runtime includes"),
    ({"deviceimpl.cpp": [("#include <cuda_runtime.h>", 'extern "C" {\n#include <cuda_runtime.h>\n}')]},
     "deviceimpl.cpp", "<cuda_runtime.h>", '#include <cuda_runtime.h> sits inside `extern "C" {`'),
    ({"deviceimpl.cpp": [(SYNC, '#include "part.inc"\n' + SYNC)],
      "communicatorimpl.cpp": [("#include <nccl.h>", '#include <nccl.h>\n#include "part.inc"')]},
     "deviceimpl.cpp", "part.inc", "includes \"part.inc\" inside `namespace dipu { namespace devapis {`, and "),
], ids=["sdk-header", "extern-C", "two-places"])
def test_an_include_inside_a_block_the_import_cannot_keep_there_is_refused_at_its_line(tmp_path, edits, name, needle,
                                                                                        why):
    folder = _cudalike(tmp_path, edits)
    (folder / "part.inc").write_text("static int partHelper() { return 3; }\n")
    assert why in _refused_at(tmp_path, folder, name, needle)


# ---------------------------------------------------------------- C++ the reader must take as the compiler does

def test_a_raw_string_holding_a_quote_and_a_brace_is_one_literal(tmp_path):
    """The mask knew no raw strings: the `"` inside one opened a literal the rest of the line, so its `}`
    ended the body, and the functions after it were lost (or the import stopped with its own '(a bug)')."""
    from deeplink_gen.commands.import_dipu.runtime.cxx import mask

    assert mask('f(R"x(")})x", u8R"(a)")') == 'f(R"xxxxxxx", u8R"xxx")'
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, (
        'void syncDevice() {\n  CUDALIKE_CHECK(cudaDeviceSynchronize());\n  const char* why = R"x(")}{)x";\n'
        "  (void)why;\n}"))]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    functions = _device_section(tmp_path)["functions"]
    assert 'R"x(")}{)x"' in functions["syncDevice"]["custom"]
    assert functions["getDriverVersion"] == "cudaDriverGetVersion({version})"     # defined after it
    assert "unsupported" not in functions.values()


def test_a_function_written_with_digraphs_is_read(tmp_path):
    """`<% %>` were no braces to the reader: syncDevice was misread into the next definition's head."""
    from deeplink_gen.commands.import_dipu.runtime.cxx import mask

    assert mask("a<:1:> = std::vector<::x>(); %:define Q <%%>") == "a [1]  = std::vector<::x>(); # define Q  {} "
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [
        (SYNC, "void syncDevice() <% CUDALIKE_CHECK(cudaDeviceSynchronize()); %>"),
        ("#include <cuda_runtime.h>", "%:include <cuda_runtime.h>\n%:include <vector>")]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    device = _device_section(tmp_path)
    assert device["functions"]["syncDevice"] == "cudaDeviceSynchronize()"
    assert "vector" in device["includes"]


# ---------------------------------------------------------------- macros and what the rendered file moves

VERSION = "void getRuntimeVersion(int* out) { CUDALIKE_CHECK(cudaRuntimeGetVersion(out)); }"
SCALED_VERSION = "void getRuntimeVersion(int* out) { CUDALIKE_CHECK(cudaRuntimeGetVersion(out)); *out *= SCALE; }"


@pytest.mark.parametrize("edits, needle, why", [
    ([(VERSION, "#define SCALE 1000\n" + SCALED_VERSION + "\n#undef SCALE\n#define SCALE 7")], "#define SCALE 7",
     "SCALE is defined again here, otherwise than at line "),
    ([(VERSION, "#define SCALE 1000\n" + SCALED_VERSION + "\n#undef SCALE")], "#undef SCALE",
     "`#undef SCALE` here would reach getRuntimeVersion ("),
    ([(VERSION, "constexpr int SCALE = 1;\n" + SCALED_VERSION + "\n#define SCALE 1000")], "#define SCALE 1000",
     "this definition of SCALE would reach getRuntimeVersion ("),
    ([(VERSION, VERSION + "\n#undef CUDALIKE_CHECK")], "#undef CUDALIKE_CHECK", "CUDALIKE_CHECK is a check macro"),
    ([("#include <cuda_runtime.h>", "#define CUDALIKE_FEATURE 1\n#include <cuda_runtime.h>")],
     "#include <cuda_runtime.h>", "#include <cuda_runtime.h> comes after `#define CUDALIKE_FEATURE` (line 2)"),
], ids=["redefined-after-undef", "undefined-after-use", "defined-after-use", "check-macro-undefined",
        "include-after-define"])
def test_a_macro_change_the_rendered_file_would_move_before_a_use_is_refused_at_its_line(tmp_path, edits, needle, why):
    """The rendered file writes the vendor's #define and #undef before all of DIPU's functions, and its
    #includes above them: the #undef was dropped (the macro stayed defined), a function saw a definition
    made after it, a header did not see one made before it."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": edits})
    assert why in _refused_at(tmp_path, folder, "deviceimpl.cpp", needle)


def test_an_undef_no_function_before_it_needs_is_carried_in_place(tmp_path):
    """It was dropped, silently: its macro then stayed defined for the code after it."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, (
        "#define STEP 3\nstatic int step() { return STEP; }\n#undef STEP\n#pragma GCC diagnostic push\n"
        "#pragma GCC diagnostic pop\n" + SYNC))]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    prelude = _device_section(tmp_path)["prelude"]
    assert re.search(r"#define STEP 3\s+static int step\(\) \{ return STEP; \}\s+#undef STEP\s+"
                     r"#pragma GCC diagnostic push\s+#pragma GCC diagnostic pop", prelude), prelude


# ---------------------------------------------------------------- includes

def test_a_quoted_include_of_a_header_on_the_include_path_is_kept(tmp_path):
    """A quoted include the folder does not hold (an SDK's header, DIPU's) was dropped, silently."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [("#include <cuda_runtime.h>", (
        '#include <cuda_runtime.h>\n#include "cuda_profiler_api.h"\n#include "csrc_dipu/runtime/core/DIPUStream.h"\n'
        '#include "csrc_dipu/runtime/device/basedef.h"'))]})
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    includes = _device_section(tmp_path)["includes"]
    assert "cuda_profiler_api.h" in includes and "csrc_dipu/runtime/core/DIPUStream.h" in includes
    assert "csrc_dipu/runtime/device/basedef.h" not in includes      # deviceapis.h, which it includes anyway


@pytest.mark.parametrize("how", ["by-dot-dot", "by-link", "from-a-header"])
def test_a_header_outside_the_runtime_folder_is_refused_at_its_include(tmp_path, how):
    """`#include "../x.h"` was read from outside the folder and pasted into the vendor file (and a file
    such as ../../etc/os-release vanished); reached by a link, it was refused at the link, not the line."""
    folder = _cudalike(tmp_path)
    (tmp_path / "outside.h").write_text("static int outsideHelper() { return 1; }\n")
    name = {"by-dot-dot": "../outside.h", "by-link": "linked.h", "from-a-header": "inner.h"}[how]
    (folder / "linked.h").symlink_to(tmp_path / "outside.h")
    (folder / "inner.h").write_text('#pragma once\n#include "../outside.h"\n')
    edit_file = folder / "deviceimpl.cpp"
    edit_file.write_text(edit_file.read_text().replace("#include <cuda_runtime.h>",
                                                       f'#include <cuda_runtime.h>\n#include "{name}"'))
    at, needle = ("inner.h", '"../outside.h"') if how == "from-a-header" else ("deviceimpl.cpp", f'"{name}"')
    error = _refused_at(tmp_path, folder, at, needle)
    assert f'includes "{"../outside.h" if how == "from-a-header" else name}" (' in error
    assert "a file outside the runtime folder" in error


def test_a_quoted_include_by_a_path_the_vendor_file_cannot_list_is_refused_at_its_line(tmp_path):
    """It went into runtime.device.includes, and the import stopped with its own '(a bug)' error."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [("#include <cuda_runtime.h>",
                                                       '#include <cuda_runtime.h>\n#include "../nowhere/x.h"')]})
    error = _refused_at(tmp_path, folder, "deviceimpl.cpp", "nowhere")
    assert 'names a header that is no file of the runtime folder, by a path the vendor file cannot list' in error


def test_dipus_own_header_reached_by_dot_dot_is_included_by_its_path(tmp_path):
    """In a DIPU checkout, ../../runtime/... is DIPU's header, on DIPU's include path: included as such."""
    folder = tmp_path / "torch_dipu" / "csrc_dipu" / "vendor" / "cudalike"
    shutil.copytree(CUDALIKE, folder)
    core = tmp_path / "torch_dipu" / "csrc_dipu" / "runtime" / "core"
    core.mkdir(parents=True)
    (core / "DIPUStream.h").write_text("#pragma once\nnamespace dipu { int dipuStreamHelper(); }\n")
    edit_file = folder / "deviceimpl.cpp"
    edit_file.write_text(edit_file.read_text().replace(
        "#include <cuda_runtime.h>", '#include <cuda_runtime.h>\n#include "../../runtime/core/DIPUStream.h"'))
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    device = _device_section(tmp_path)
    assert "csrc_dipu/runtime/core/DIPUStream.h" in device["includes"]
    assert "dipuStreamHelper" not in device.get("prelude", "")


# ---------------------------------------------------------------- where the vendor's own code goes

HELPERS = (
    "template <typename T, int N = 2>\nstatic T scaled(T v) { return v * N / N; }\n"
    "static bool operator<(const Version& a, const Version& b) { return a.major < b.major; }\n"
    '#include "scale.inc"\n'
    "void syncDevice() {\n  CUDALIKE_CHECK(cudaDeviceSynchronize());\n"
    "  (void)scaledTwice(cudalikeCHelper());\n  (void)(Version{1, 0} < Version{0, 1});\n}")
GLOBAL_HELPERS = ("static int cudalikeScale() { return 1000; }\nnamespace {\nstruct Version { int major; int minor; };\n}\n"
                  'extern "C" int cudalikeCHelper(void);\n\nnamespace dipu {')


def test_helpers_are_carried_in_the_order_the_compiler_reads_them_and_compile(tmp_path):
    """A local header's code went before the code of the file including it (here, before `scaled`, which
    it uses), and a header a header includes was not read at all (its #include dropped). A template with
    a default argument and an operator overload are helpers; code of the global scope with internal or C
    linkage means the same inside namespace dipu::devapis."""
    from helpers import compile_runtime_objects

    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, HELPERS), ("namespace dipu {", GLOBAL_HELPERS)]})
    (folder / "scale.inc").write_text('#include "level.inc"\n'
                                      "static int scaledTwice(int v) { return scaled(v) * cudalikeScale() + level(); }\n")
    (folder / "level.inc").write_text("static int level() { return 1; }\n")
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    prelude = _device_section(tmp_path)["prelude"]
    assert prelude.index("static T scaled(T v)") < prelude.index("static int level()") \
        < prelude.index("static int scaledTwice")
    assert run_cli("render", "--all", cwd=tmp_path / "ws").exit_code == 0
    generated = tmp_path / "ws" / "generated"
    [(_, built)] = compile_runtime_objects(generated, "cudalike", tmp_path / "objects", ("deviceimpl.cpp",),
                                           ["-Werror=return-type"]).items()
    assert built.returncode == 0, built.stderr[-4000:]


@pytest.mark.parametrize("written, needle, why", [
    ("}  // namespace dipu\n\nint cudalikeHelper() { return 1; }", "int cudalikeHelper() {",
     "cudalikeHelper is defined at the global scope, outside namespace dipu::devapis"),
    ("}  // namespace dipu\n\nnamespace dipu {\nnamespace native {\nvoid copyInfo(void* p) { (void)p; }\n}\n}",
     "void copyInfo", "copyInfo is defined in namespace dipu::native, outside namespace dipu::devapis"),
    ("}  // namespace dipu\n\nint dipu::devapis::cudalikeHelper() { return 1; }", "int dipu::devapis::",
     "dipu::devapis::cudalikeHelper is defined by its qualified name at the global scope"),
    ("}  // namespace dipu\n\nint cudalikeCounter = 0;", "int cudalikeCounter",
     "this declaration sits at the global scope"),
], ids=["global-function", "other-namespace", "qualified-helper", "global-variable"])
def test_code_outside_dipu_devapis_that_would_mean_otherwise_inside_it_is_refused_at_its_line(tmp_path, written,
                                                                                             needle, why):
    """The prelude is pasted inside namespace dipu::devapis: such code was carried there, as
    dipu::devapis::dipu::native::copyInfo (so the function other files call stayed undefined), or as a
    qualified definition that does not compile there."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [
        ("}  // namespace dipu", written), (SYNC, "int cudalikeHelper();\n" + SYNC)]})
    assert why in _refused_at(tmp_path, folder, "deviceimpl.cpp", needle)


def test_reading_a_runtime_file_of_megabytes_takes_seconds():
    """60,000 one-line helpers (3 MB): the reader scanned its text a character at a time in Python."""
    import time

    from deeplink_gen.commands.import_dipu.runtime.cxx import Config, read

    text = "namespace dipu {\nnamespace devapis {\n" + "".join(
        f"static int helper{i}(int x) {{ return x + {i}; }}  // {i}\n" for i in range(60_000)) + "}\n}\n"
    start = time.process_time()
    file = read("deviceimpl.cpp", text, Config())
    took = time.process_time() - start
    assert len(file.functions()) == 60_000 and file.functions()[-1].line == 60_002
    assert took < 5, took


FAST = "#ifdef USE_CUDALIKE_FAST\nstatic int pace() { return 2; }\n#else\nstatic int pace() { return 1; }\n#endif\n"


def test_each_file_and_header_is_read_with_the_macros_defined_before_it(tmp_path):
    """One configuration served every file, and headers were read after all the files: a #define of
    another compiled file, or one after the #include, decided the #if of a file and of a header."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [(SYNC, (
        '#include "fast.inc"\n#define USE_CUDALIKE_FAST 1\n'
        "void syncDevice() {\n  CUDALIKE_CHECK(cudaDeviceSynchronize());\n  (void)pace();\n}\n"
        "#undef USE_CUDALIKE_FAST\n#ifdef USE_CUDALIKE_HOST\nvoid syncDevice2() {}\n#endif"))],
        "CudalikeCopyInplace.cpp": [("#include", "#define USE_CUDALIKE_HOST 1\n#include")]})
    (folder / "fast.inc").write_text(FAST)
    result = _import_folder(tmp_path, folder)
    assert result.exit_code == 0, result.output
    prelude = _device_section(tmp_path)["prelude"]
    assert "return 1;" in prelude and "return 2;" not in prelude and "syncDevice2" not in prelude


def test_a_header_two_files_read_otherwise_is_refused_at_the_second_include(tmp_path):
    folder = _cudalike(tmp_path, {
        "deviceimpl.cpp": [("#include <cuda_runtime.h>", '#include <cuda_runtime.h>\n#include "fast.inc"')],
        "communicatorimpl.cpp": [("#include <nccl.h>", '#include <nccl.h>\n#define USE_CUDALIKE_FAST 1\n'
                                                       '#include "fast.inc"')]})
    (folder / "fast.inc").write_text(FAST)
    first, second = ("communicatorimpl.cpp", "deviceimpl.cpp")
    error = _refused_at(tmp_path, folder, second, '#include "fast.inc"')
    assert f'includes "fast.inc", whose #if decide otherwise here than where {folder / first}:' in error


def test_an_include_next_is_refused_at_its_line(tmp_path):
    """It was carried into the prelude, inside namespace dipu::devapis, where it includes the header."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [("#include <cuda_runtime.h>",
                                                       "#include <cuda_runtime.h>\n#include_next <vector>")]})
    assert "#include_next includes a file where the import reads only #include" in \
        _refused_at(tmp_path, folder, "deviceimpl.cpp", "#include_next")


def test_an_include_of_a_compiled_source_is_refused_at_its_line(tmp_path):
    """Its #include was dropped, silently, with the code it pasted there."""
    folder = _cudalike(tmp_path, {"deviceimpl.cpp": [("#include <cuda_runtime.h>",
                                                       '#include <cuda_runtime.h>\n#include "CudalikeCopyInplace.cpp"')]})
    assert 'includes "CudalikeCopyInplace.cpp", a file DIPU\'s CMake also compiles on its own' in \
        _refused_at(tmp_path, folder, "deviceimpl.cpp", "CudalikeCopyInplace.cpp")
