"""The DIOPI side against DIOPI's own adaptor generator, on data extracted
from DIOPI 02f03c6a (tests/fixtures/diopi_adaptor/<vendor>.json: each
vendor's convert_config.yaml as DIOPI reads it, the functions its impl
folders define as DIOPI's generator finds them, and, per function the
generator wraps, the namespace it calls and per tensor the dtype rules and
memory formats it converts with).

A DIOPI tree is rebuilt from that data, imported with import-dipu
--convert-config --impl, and rendered; then
- the rendered convert_config.yaml means what DIOPI's did (read with DIOPI's
  precedence: a level replaces the one below);
- the rendered adaptor wraps the functions DIOPI's wraps, calling the same
  namespace, converting the same tensors with the same rules and formats,
  but for the differences listed in DELIBERATE (and in docs/diopi-adaptor.md)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from deeplink_gen.translate.conversion import READ_WRITE
from helpers import REPO, coverage_report, diopi_include, dipu_checkout, git_apply, run_cli

DATA = REPO / "tests" / "fixtures" / "diopi_adaptor"
FUNCTIONS = REPO / "tests" / "fixtures" / "dipu" / "diopi_functions.yaml"
VENDORS = ("camb", "ascend", "kunlunxin", "topsrider", "muxi")
FORMATS = {"NCHW": "Contiguous", "NCL": "Contiguous", "NCDHW": "Contiguous", "NHWC": "ChannelsLast",
           "NLC": "ChannelsLast1d", "NDHWC": "ChannelsLast3d", "ND": "Preserve"}
# Functions DIOPI's adaptor forwards without converting anything.
PRIMITIVES = ("diopiCastDtype", "diopiCopyInp")


def _data(vendor: str) -> dict:
    return json.loads((DATA / f"{vendor}.json").read_text())


def _diopi_tree(root: Path, vendor: str, data: dict) -> Path:
    """impl/<vendor>/ (and impl/ascend_npu/) with the config and one definition per function found."""
    impl = root / "impl"
    (impl / vendor).mkdir(parents=True)
    (impl / vendor / "convert_config.yaml").write_text(yaml.safe_dump(data["convert_config"], sort_keys=False))
    for folder, functions in data["defined"].items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "defined.cpp").write_text("".join(f"diopiError_t {f}() {{\n}}\n" for f in functions))
    if "ascend_config" in data:
        (impl / "ascend_npu" / "ascend_config.yaml").write_text(yaml.safe_dump(data["ascend_config"]))
    return impl / vendor


def _impl_folder(vendor: str, data: dict) -> str:
    """The DIOPI folder whose functions DIOPI's generator wraps for the vendor's build: its own,
    or another one the build compiles (muxi: impl/torch, through diopi_use_adapter's "torch")."""
    return data.get("impl", f"impl/{vendor}")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """vendor -> (workspace, data)."""
    out = {}
    for vendor in VENDORS:
        tmp = tmp_path_factory.mktemp(vendor)
        data = _data(vendor)
        folder = _diopi_tree(tmp / "DIOPI", vendor, data)
        ws = tmp / "ws"
        result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", vendor,
                         "--convert-config", f"{vendor}={folder / 'convert_config.yaml'}",
                         "--impl", f"{vendor}={tmp / 'DIOPI' / _impl_folder(vendor, data)}",
                         "--out", str(ws), "--torch-version", "2.2.2")
        assert result.exit_code == 0, result.output
        result = run_cli("render", "--vendor", vendor, cwd=ws)
        assert result.exit_code == 0, result.output
        out[vendor] = (ws, data)
    return out


# ---- DIOPI's reading of a convert_config.yaml (gen.py analysis_configs / deal_dtype)

def _rules(text: str) -> dict[str, str]:
    out = {}
    for m in re.finditer(r"\(([^()]*)\)->(\w*)", text.replace(" ", "").lower()):
        out.update({s: m.group(2) for s in m.group(1).split(",")})
    return out


def _formats(layout) -> list[str]:
    tokens = [layout] if isinstance(layout, str) else list(layout)
    out = []
    for t in (x for token in tokens for x in token.replace(" ", "").split(",") if x):
        if FORMATS[t] not in out:
            out.append(FORMATS[t])
    return out


def diopi_effective(config: list, function: str, tensor: str) -> tuple[dict, list]:
    """The rules and memory formats DIOPI's generator converts *tensor* of *function* with."""
    common, ops = {}, {}
    for item in config:
        (name, body), = item.items()
        if name == "common_config":
            common = body
        else:
            ops[name] = body        # the last entry wins
    cast = _rules(common.get("dtype", ""))
    formats = _formats(common.get("layout", []))
    op = ops.get(function)
    if op is not None:
        if "dtype" in op:
            cast = _rules(op["dtype"])
        if tensor in (op.get("tensor_dtype") or {}):
            cast = _rules(op["tensor_dtype"][tensor])
        formats = _formats(op.get("layout", "")) or formats
    return cast, formats


def _prototypes():
    from deeplink_gen.interfaces.diopi import load_snapshot
    return load_snapshot()


@pytest.mark.parametrize("vendor", VENDORS)
def test_imported_convert_config_renders_back_to_the_same_conversions(imported, vendor):
    ws, data = imported[vendor]
    rendered, = (ws / "generated" / vendor / "dipu" / "third_party" / "DIOPI" / "impl").glob("*/convert_config.yaml")
    rendered = yaml.safe_load(rendered.read_text())
    protos = _prototypes()
    original = data["convert_config"]
    named = {n for item in original + rendered for n in item} - {"common_config"}
    compared = 0
    for fn in sorted(named | {"diopiAdd"}):       # diopiAdd: a function only the common rules reach
        p = protos.get(fn)
        if fn in PRIMITIVES or p.allocates:
            continue                               # forwarded unconverted by DIOPI's generator
        for tensor in p.tensor_names():
            assert diopi_effective(rendered, fn, tensor) == diopi_effective(original, fn, tensor), (fn, tensor)
            compared += 1
    assert compared > 0


# ---- the adaptor against DIOPI's generator

# Differences kept on purpose (listed in docs/diopi-adaptor.md).
# Functions the library defines that only functions_mmcv.h declares: DIOPI's generator does not
# read that header and drops them from the library's exports; deeplink-gen wraps them.
MMCV = {"diopiDynamicVoxelizeMmcv", "diopiHardVoxelizeMmcv", "diopiModulatedDeformConvBackwardMmcv",
        "diopiModulatedDeformConvMmcv", "diopiNmsMmcv", "diopiNmsRotatedMmcv", "diopiRoiAlignBackwardMmcv",
        "diopiRoiAlignMmcv", "diopiSigmoidFocalLossBackwardMmcv", "diopiSigmoidFocalLossMmcv"}
DELIBERATE = {
    "topsrider": {"only_ours": {"diopiNmsMmcv"}},
    # muxi's build wraps impl/torch's functions (impl::cuda), mmcv's among them.
    "muxi": {"only_ours": MMCV},
}


def _copy_in(tensors: dict) -> dict:
    return {name: t.pop("copy_in") for name, t in tensors.items() if "copy_in" in t}


def _ours(ws: Path, vendor: str) -> dict:
    from deeplink_gen import pipeline
    from deeplink_gen.model import TorchVersion
    from deeplink_gen.options import Options, Torch
    from deeplink_gen.plan.adaptor import plan_adaptor

    options = Options()
    loaded = pipeline.load(ws)
    rv = pipeline.resolve(loaded, loaded.vendor(vendor), Torch(TorchVersion.parse("2.2.2"), snapshot=True), options)
    plan = plan_adaptor(rv, options.prototypes())
    out = {}
    for f in plan.functions:
        tensors = {}
        for t in f.tensors:
            cast = dict(next((c.rules for c in plan.casts if c.name == t.cast), ()))
            tensors[t.name] = {"kind": "output" if t.kind.value == "output" else "input", "cast": cast,
                               "formats": list(t.formats), **({"copy_in": t.copy_in} if t.kind.value == "output" else {})}
        out[f.name] = {"calls": f.namespace, "tensors": tensors}
    return out


def _converted(tensors: dict) -> dict:
    """The tensors a wrapper really converts (DIOPI also emits no-op conversions)."""
    return {name: t for name, t in tensors.items() if t["cast"] or t["formats"]}


@pytest.mark.parametrize("vendor", VENDORS)
def test_adaptor_wraps_what_diopis_generator_wraps(imported, vendor):
    ws, data = imported[vendor]
    ours, theirs = _ours(ws, vendor), data["wrappers"]
    deliberate = DELIBERATE.get(vendor, {})
    assert set(theirs) - set(ours) == deliberate.get("only_diopi", set())
    assert set(ours) - set(theirs) == deliberate.get("only_ours", set())
    protos = _prototypes()
    assert {protos.get(fn).header for fn in deliberate.get("only_ours", ())} <= {"functions_mmcv.h"}
    for fn in sorted(set(ours) & set(theirs)):
        assert ours[fn]["calls"] == theirs[fn]["calls"], fn
        mine, upstream = _converted(ours[fn]["tensors"]), _converted(theirs[fn]["tensors"])
        mine_in, upstream_in = _copy_in(mine), _copy_in(upstream)
        assert mine == upstream, fn
        # Read-write arguments DIOPI's table lacks (an optimizer's param and state) are copied in
        # before the call; DIOPI hands the implementation an uninitialised temporary.
        for tensor in mine_in:
            if mine_in[tensor] != upstream_in[tensor]:
                assert mine_in[tensor] and tensor in READ_WRITE.get(fn, ()), (fn, tensor)


def test_import_of_a_folder_whose_adaptor_wraps_another_says_which(tmp_path):
    """--impl muxi=<DIOPI>/impl/muxi: DIOPI's muxi CMakeLists.txt has the generator wrap
    impl/torch's functions (diopi_use_adapter "torch"); import-dipu says so at that line."""
    data = _data("muxi")
    folder = _diopi_tree(tmp_path / "DIOPI", "muxi", data)
    excerpt = REPO / "tests/fixtures/dipu_checkout/dipu/third_party/DIOPI/impl/muxi/CMakeLists.txt"
    shutil.copy(excerpt, folder / "CMakeLists.txt")
    (folder / "functions").mkdir()
    (folder / "functions" / "functions.cpp").write_text("diopiError_t diopiCat() {\n}\n")   # impl::muxi's one
    line = excerpt.read_text().splitlines().index(
        '    diopi_use_adapter(${ADAPTOR_DIR} ${DIOPI_IMPL_DIR} "torch" "" REAL_IMPL_SRC)') + 1
    torch = tmp_path / "DIOPI" / "impl" / "torch"
    for impl, warned in ((folder, True), (torch, False)):
        result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "muxi",
                         "--convert-config", f"muxi={folder / 'convert_config.yaml'}", "--impl", f"muxi={impl}",
                         "--out", str(tmp_path / f"ws-{impl.name}"), "--torch-version", "2.2.2")
        assert result.exit_code == 0, result.output
        message = (f"{folder / 'CMakeLists.txt'}:{line}:1: warning: this build's adaptor wraps the functions of "
                   f"{torch} (diopi_use_adapter \"torch\", impl::cuda), not {folder}'s")
        assert (message in result.output) == warned, result.output


# ---- import-dipu on convert_config constructs no vendor uses at 02f03c6a

def _import(tmp_path: Path, config: str):
    (tmp_path / "convert_config.yaml").write_text(config)
    return run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "camb", "--convert-config",
                   f"camb={tmp_path / 'convert_config.yaml'}", "--out", str(tmp_path / "ws"),
                   "--torch-version", "2.2.2")


def test_replacing_levels_become_rules_that_keep_a_dtype(tmp_path):
    config = ("- common_config:\n    dtype: (int64)->int32, (float64)->float32\n    layout: NCHW\n"
              "- diopiMm:\n    dtype: (float64)->float32\n    layout: NHWC\n"
              "- diopiMm:\n    dtype: (float64)->float16\n    layout: ND\n"
              "- diopiRMSNorm:\n    tensor_dtype:\n      inv_rms: (float16)->float32\n"
              "- diopiAdd:\n    dtype: (int64)->int32, (complex128)->complex64\n    contiguous: input\n")
    result = _import(tmp_path, config)
    assert result.exit_code == 0, result.output
    vendor = yaml.safe_load((tmp_path / "ws" / "vendors" / "camb.yaml").read_text())
    d = vendor["dtypes"]
    assert d["convert"] == {"int64": "int32", "float64": "float32"}
    assert "int64" not in d["supported"] and "float64" not in d["supported"] and "float16" in d["supported"]
    assert d["functions"]["diopiMm"] == {"convert": {"int64": "int64", "float64": "float16"}}   # the last entry
    assert d["functions"]["diopiRMSNorm"] == {"tensors": {"inv_rms": {"int64": "int64", "float16": "float32",
                                                                       "float64": "float64"}}}
    assert vendor["layouts"] == {"default": "NCHW", "functions": {"diopiMm": ["ND"]}}
    assert "convert_config.yaml:7:1: warning: diopiMm is configured again (first at line 4)" in result.output
    assert "convert_config.yaml:15:1: warning: diopiAdd: contiguous has no effect" in result.output
    # rendered back, each level states what DIOPI's levels state
    assert run_cli("render", "--vendor", "camb", cwd=tmp_path / "ws").exit_code == 0
    rendered = yaml.safe_load((tmp_path / "ws" / "generated" / "camb" / "dipu" / "third_party" / "DIOPI" / "impl"
                               / "camb" / "convert_config.yaml").read_text())
    original = yaml.safe_load(config)
    for fn, tensor in (("diopiMm", "input"), ("diopiRMSNorm", "inv_rms"), ("diopiRMSNorm", "input"),
                       ("diopiAdd", "other"), ("diopiSub", "input")):
        assert diopi_effective(rendered, fn, tensor) == diopi_effective(original, fn, tensor), (fn, tensor)


@pytest.mark.parametrize("config,line,message", [
    ("- common_config:\n    dtype: (int128)->int32\n", 2, r"common_config.dtype: 'int128' is not a DIOPI dtype"),
    ("- diopiConv2d:\n    layout: NHWC\n", 1, r"diopiConv2d: not a DIOPI function"),
    ("- diopiMm:\n    layout: NHCW\n", 2, r"diopiMm.layout: 'NHCW' is not a layout"),
    ("- diopiMm:\n    tensor_dtype:\n      mat3: (float64)->float32\n", 2, r"'mat3' is not a tensor argument"),
    ("- common_config:\n    layout: [NCHW, NHWC]\n", 2, r"expected one layout"),
    ("- diopiAdd:\n", 1, r"expected a mapping"),
])
def test_convert_config_errors_name_the_line(tmp_path, config, line, message):
    result = _import(tmp_path, config)
    assert result.exit_code == 1, result.output
    assert re.search(rf"convert_config\.yaml:{line}:1: error: .*{message}", result.output), result.output
    assert "Traceback" not in result.output


def test_coverage_impl_and_the_adaptor_agree(imported, tmp_path):
    """coverage reads the functions the adaptor wraps from the vendor file; given the DIOPI folder
    they were imported from (--impl), it finds the same ones defined."""
    ws, data = imported["camb"]
    folder = _diopi_tree(tmp_path / "DIOPI", "camb", data)
    reports = []
    for extra in ((), ("--impl", f"camb={folder}")):
        result = run_cli("coverage", "--vendor", "camb", "--format", "json", *extra, cwd=ws)
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        reports.append({row["op"]: row["vendors"]["camb"].get("implemented") for row in doc["ops"]})
    assert reports[0] == reports[1]
    assert any(v is True for v in reports[0].values()) and any(v is False for v in reports[0].values())


# ---- the bundled camb and ascend vendor files, whose adaptor sections list what DIOPI 02f03c6a's
# impl folders define

BUNDLED = ("camb", "ascend")


def _rendered_wrappers(vendor: str) -> dict[str, set[str]]:
    """Per wrapper of the committed adaptor, the namespaces (impl::<ns>) it calls its function in."""
    source = REPO / "generated" / vendor / "dipu" / "third_party" / "DIOPI" / "impl" / vendor / "adaptor"
    text = (source / "diopi_adaptor.cpp").read_text()
    return {m.group(1): set(re.findall(rf"::impl::(\w+)::{m.group(1)}\(", m.group(0)))
            for m in re.finditer(r'^extern "C" diopiError_t (\w+)\(.*?^}\n', text, re.M | re.S)}


@pytest.mark.parametrize("vendor", BUNDLED)
def test_bundled_adaptor_wraps_what_diopis_generator_wraps(vendor):
    theirs = {fn: {w["calls"]} for fn, w in _data(vendor)["wrappers"].items()}
    assert _rendered_wrappers(vendor) == theirs
    listed = yaml.safe_load((REPO / "vendors" / f"{vendor}.yaml").read_text())["adaptor"]["implemented"]
    assert {fn: {ns} for ns, functions in listed.items() for fn in functions} == theirs
    assert set(_ours(REPO, vendor)) == set(theirs)


@pytest.mark.parametrize("vendor", BUNDLED)
def test_bundled_coverage_and_coverage_impl_agree(vendor, tmp_path):
    """coverage reads the bundled vendor file's list as what the library defines; given the DIOPI
    folder (--impl, rebuilt from the extracted data) it finds the same registered ops defined."""
    data = _data(vendor)
    folder = _diopi_tree(tmp_path / "DIOPI", vendor, data)
    listed = coverage_report(REPO, "--vendor", vendor)
    scanned = coverage_report(REPO, "--vendor", vendor, "--impl", f"{vendor}={folder}")

    def cells(report: dict) -> dict:
        return {row["op"]: row["vendors"][vendor].get("implemented") for row in report["ops"]}

    assert cells(listed) == cells(scanned)
    assert any(v is True for v in cells(listed).values()) and any(v is False for v in cells(listed).values())
    assert listed["vendors"][0]["library"]["functions"] == len(data["wrappers"])
    # --impl scans the folder it is given (functions/ and functions_ext/); the functions that
    # impl/ascend_npu's diopi_impl/ alone defines are outside it, and no bundled kernel calls them.
    own = set().union(*(fs for folder_, fs in data["defined"].items() if folder_.startswith(f"impl/{vendor}/")))
    assert scanned["vendors"][0]["library"]["functions"] == len(own)


# The DIOPI folder each vendor's build uses (IMPL_OPT ascend builds impl/ascend_npu) and the
# source list its adaptor rule appends to.
BUILT = {"camb": ("camb", "IMPL_SRC"), "ascend": ("ascend_npu", "IMPL_SRC"), "kunlunxin": ("kunlunxin", "IMPL_SRC"),
         "topsrider": ("topsrider", "IMPL_SRC"), "muxi": ("muxi", "REAL_IMPL_SRC")}


@pytest.mark.parametrize("vendor", sorted(BUILT))
def test_imported_adaptor_compiles_and_diopi_builds_it(imported, vendor, tmp_path):
    ws, _data = imported[vendor]
    out = ws / "generated" / vendor
    source, = (out / "dipu" / "third_party" / "DIOPI" / "impl").glob("*/adaptor/diopi_adaptor.cpp")
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                           f"-I{diopi_include()}", str(source)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    patch = out / "onboarding" / "diopi.patch"
    folder, sources = BUILT[vendor]
    cmake = f"impl/{folder}/CMakeLists.txt"
    assert re.findall(r"^diff --git a/(\S+)", patch.read_text(), re.M)[-1] == cmake
    diopi = dipu_checkout(tmp_path / "dipu") / "dipu" / "third_party" / "DIOPI"
    subprocess.run(["git", "init", "-q"], cwd=diopi, check=True)
    assert git_apply(patch, diopi).returncode == 0
    rel = source.relative_to(out / "dipu" / "third_party" / "DIOPI" / "impl").as_posix()
    assert f"list(APPEND {sources} ${{DIOPI_IMPL_DIR}}/{rel})" in (diopi / cmake).read_text()
    # The rendered files go where DIOPI keeps the vendor's convert_config.yaml, the folder it was
    # imported from (topsrider's DIOPI_IMPL_OPT is tops, but DIOPI's folder impl/topsrider).
    assert rel.split("/")[0] == vendor


# ---- DIOPI's CMake build of the patched folder, from the excerpt the checkout fixture keeps

def _balanced(lines: list[str]) -> list[str]:
    """The excerpt's lines that CMake can read on their own: without the tail of a command begun
    before it (muxi's starts inside file(GLOB ...)) nor a block it ends inside of (ascend_npu's
    and topsrider's end in an if())."""
    depth, start = 0, 0
    for i, line in enumerate(lines):
        depth += line.count("(") - line.count(")")
        if depth < 0:
            depth, start = 0, i + 1
    lines = lines[start:]
    opened = []
    for i, line in enumerate(lines):
        word = line.strip().split("(")[0].lower()
        if word == "if":
            opened.append(i)
        elif word == "endif" and opened:
            opened.pop()
    return lines[:opened[0]] if opened else lines


HARNESS = """cmake_minimum_required(VERSION 3.14)
project(diopi_impl CXX)
# What DIOPI's impl/CMakeLists.txt sets before add_subdirectory(<vendor folder>).
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
include_directories(SYSTEM "{include}")
set(DIOPI_IMPL_DIR "${{PROJECT_SOURCE_DIR}}")
set(ADAPTOR_DIR "${{DIOPI_IMPL_DIR}}/../adaptor")
set(DEVICEIMPL diopi_impl)
set(DYLOAD OFF)
# Stand-ins: the vendor SDKs' library rules, and ImplHelper.cmake's diopi_use_adapter (a target
# running DIOPI's generator, whose output the library compiles).
macro(BANG_ADD_LIBRARY)
  add_library(${{ARGN}})
endmacro()
macro(cuda_add_library)
  add_library(${{ARGN}})
endmacro()
function(diopi_use_adapter adaptor_dir impl_dir config_device base_device sources)
  add_custom_target(adaptor_code_gen COMMAND python3 ${{adaptor_dir}}/codegen/gen.py --config_device=${{config_device}})
  set(${{sources}} ${{${{sources}}}} ${{adaptor_dir}}/csrc/diopi_adaptor.cpp PARENT_SCOPE)
endfunction()
add_subdirectory({folder})
"""


def _configure(root: Path, vendor: str, excerpt: str, rendered: Path) -> tuple[set[str], bool]:
    """Configure DIOPI's impl/ (a harness around the vendor folder's *excerpt*, with the rendered
    DIOPI files in place): the sources the library compiles, and whether any build file runs
    DIOPI's generator."""
    folder, sources = BUILT[vendor]
    impl = root / "impl"
    shutil.copytree(rendered, impl)
    for name in ("convert.cpp", "composite_ops.cpp", "diopi_adaptor.cpp"):     # the generator's, unpatched
        (root / "adaptor" / "csrc").mkdir(parents=True, exist_ok=True)
        (root / "adaptor" / "csrc" / name).write_text("")
    (impl / folder / "functions/functions_ext/flash-attention").mkdir(parents=True, exist_ok=True)
    (impl / folder / "functions/functions_ext/flash-attention/CMakeLists.txt").write_text("")
    body = _balanced(excerpt.splitlines()[1:])          # below the fixture's own comment line
    for name in re.findall(r"(?<![\w/${}.-])([\w/-]+\.cpp)\b", "\n".join(body)):  # the vendor's own sources
        source = impl / folder / name
        if not source.exists():
            source.parent.mkdir(parents=True, exist_ok=True)
            source.write_text("")
    (impl / folder / "CMakeLists.txt").write_text(
        f"project({folder}_impl CXX)\n" + "\n".join(body)
        + f"\nif(NOT TARGET ${{DEVICEIMPL}})\n  add_library(${{DEVICEIMPL}} SHARED ${{{sources}}})\nendif()\n")
    (impl / "CMakeLists.txt").write_text(HARNESS.format(include=diopi_include(), folder=folder))
    build = root / "build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    proc = subprocess.run(["cmake", *generator, "-S", str(impl), "-B", str(build)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    compiled = {Path(c["file"]).resolve().relative_to(root.resolve()).as_posix()
                for c in json.loads((build / "compile_commands.json").read_text())}
    runs_generator = any("codegen/gen.py" in p.read_text(errors="replace")
                         for p in build.rglob("*") if p.is_file() and p.suffix not in (".bin", ".o", ".out"))
    return compiled, runs_generator


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
@pytest.mark.parametrize("vendor", sorted(BUILT))
def test_diopis_cmake_build_compiles_the_rendered_adaptor(imported, vendor, tmp_path):
    """The vendor folder's CMakeLists.txt as DIOPI 02f03c6a has it (the excerpt the checkout
    fixture keeps), configured with CMake under DIOPI's impl/CMakeLists.txt settings: unpatched,
    the library compiles the generator's adaptor and a build file runs gen.py; with diopi.patch
    applied, it compiles the rendered adaptor, nothing else, and no build file runs gen.py."""
    ws, _data = imported[vendor]
    out = ws / "generated" / vendor
    folder, _sources = BUILT[vendor]
    rendered = out / "dipu" / "third_party" / "DIOPI" / "impl"
    diopi = dipu_checkout(tmp_path / "dipu") / "dipu" / "third_party" / "DIOPI"
    cmake = diopi / "impl" / folder / "CMakeLists.txt"

    def adaptor(compiled: set[str]) -> set[str]:
        own = {f for f in compiled if f.startswith(f"impl/{folder}/") and "/adaptor/" not in f}
        return compiled - own

    compiled, runs_generator = _configure(tmp_path / "unpatched", vendor, cmake.read_text(), rendered)
    assert "adaptor/csrc/diopi_adaptor.cpp" in adaptor(compiled) and runs_generator

    subprocess.run(["git", "init", "-q"], cwd=diopi, check=True)
    assert git_apply(out / "onboarding" / "diopi.patch", diopi).returncode == 0
    compiled, runs_generator = _configure(tmp_path / "patched", vendor, cmake.read_text(), rendered)
    assert adaptor(compiled) == {f"impl/{vendor}/adaptor/diopi_adaptor.cpp"}
    assert not runs_generator


def _adaptor_block(text: str) -> list[str]:
    """The lines of a DIOPI impl CMakeLists.txt from '# adaptor' to the next blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# adaptor"))
    return lines[start:lines.index("", start)]


def test_muxi_hands_diopi_use_adapter_over(imported, tmp_path):
    """DIOPI's muxi folder generates its adaptor through ImplHelper.cmake's diopi_use_adapter
    (which needs convert_config.yaml and adds adaptor_code_gen, a dependency of the library):
    diopi.patch compiles the rendered adaptor instead, skips that dependency, and still stops
    configuring when no adaptor is there; render --into applies it once."""
    ws, _data = imported["muxi"]
    out = ws / "generated" / "muxi"
    patch = out / "onboarding" / "diopi.patch"
    assert re.findall(r"^diff --git a/(\S+)", patch.read_text(), re.M) == ["impl/muxi/CMakeLists.txt"]
    diopi = dipu_checkout(tmp_path / "dipu") / "dipu" / "third_party" / "DIOPI"
    subprocess.run(["git", "init", "-q"], cwd=diopi, check=True)
    assert git_apply(patch, diopi, "--check").returncode == 0
    assert git_apply(patch, diopi).returncode == 0
    text = (diopi / "impl/muxi/CMakeLists.txt").read_text()
    assert "diopi_use_adapter(" not in text and "gen.py --" not in text
    adaptor = "${DIOPI_IMPL_DIR}/muxi/adaptor/diopi_adaptor.cpp"
    assert [line for line in _adaptor_block(text) if not line.startswith("#")] == [
        "set(USE_ADAPTOR OFF)",
        f'if(NOT EXISTS "{adaptor}")',
        '    message(FATAL_ERROR "adaptor/diopi_adaptor.cpp doesn\'t exist: render the vendor with deeplink-gen.")',
        "endif()",
        f"list(APPEND REAL_IMPL_SRC {adaptor})",
    ]
    # The library's dependency on DIOPI's generator target stays behind USE_ADAPTOR, now OFF.
    assert "if(USE_ADAPTOR)\n    add_dependencies(${REAL_IMPL} adaptor_code_gen)\nendif()" in text
    assert text.index("set(USE_ADAPTOR OFF)") < text.index("cuda_add_library(${REAL_IMPL} SHARED ${REAL_IMPL_SRC})")
    assert (out / "dipu/third_party/DIOPI/impl/muxi/adaptor/diopi_adaptor.cpp").is_file()
    assert (out / "dipu/third_party/DIOPI/impl/muxi/convert_config.yaml").is_file()
    checklist = (out / "onboarding" / "ONBOARDING.md").read_text()
    assert "| 9 | DIOPI `impl/muxi/CMakeLists.txt` | DIOPI's adaptor rule (`diopi_use_adapter`" in checklist

    tree = dipu_checkout(tmp_path / "into")
    first = run_cli("render", "--vendor", "muxi", "--into", str(tree), cwd=ws)
    assert first.exit_code == 0, first.output
    cmake = tree / "dipu/third_party/DIOPI/impl/muxi/CMakeLists.txt"
    assert cmake.read_text() == text
    assert (tree / "dipu/third_party/DIOPI/impl/muxi/adaptor/diopi_adaptor.cpp").is_file()
    again = run_cli("render", "--vendor", "muxi", "--into", str(tree), cwd=ws)
    assert again.exit_code == 0 and "0 applied" in again.stdout, again.output
    assert cmake.read_text() == text


def test_a_torch_vendor_with_an_adaptor_hands_diopi_use_adapter_over(imported, tmp_path):
    """impl/torch uses diopi_use_adapter as muxi does: a vendor that converts and builds
    DIOPI's impl/torch gets the same hunk there, found from the upstream file, not the name."""
    ws = tmp_path / "ws"
    shutil.copytree(imported["muxi"][0], ws)
    vendor = ws / "vendors" / "muxi.yaml"
    vendor.write_text(vendor.read_text().replace("diopi_impl: muxi\n", "diopi_impl: torch\n", 1))
    result = run_cli("render", "--vendor", "muxi", cwd=ws)
    assert result.exit_code == 0, result.output
    patch = ws / "generated" / "muxi" / "onboarding" / "diopi.patch"
    assert re.findall(r"^diff --git a/(\S+)", patch.read_text(), re.M) == ["impl/torch/CMakeLists.txt"]
    diopi = dipu_checkout(tmp_path / "dipu") / "dipu" / "third_party" / "DIOPI"
    subprocess.run(["git", "init", "-q"], cwd=diopi, check=True)
    assert git_apply(patch, diopi).returncode == 0
    text = (diopi / "impl/torch/CMakeLists.txt").read_text()
    assert "diopi_use_adapter(" not in text
    assert "list(APPEND REAL_IMPL_SRC ${DIOPI_IMPL_DIR}/torch/adaptor/diopi_adaptor.cpp)" in text
