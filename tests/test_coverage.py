"""coverage: how every ATen op of a torch reaches each bundled vendor's device,
checked against hand-verified facts of torch's native_functions.yaml, against
manifest.json and explain, and with DIOPI libraries, workloads and baselines."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from deeplink_gen.interfaces.aten import installed_torch_version
from helpers import BUNDLED_VENDORS, REPO, coverage_report, drop_section, edit, error_lines, native_functions_yaml, run_cli, run_subprocess

VENDORS = BUNDLED_VENDORS
# The bundled workspace renders for DIPU's torch (deeplink-gen.yaml); most tests here look at
# the installed torch, whose native_functions.yaml they read.
HERE = ("--torch-version", str(installed_torch_version()))


@pytest.fixture(scope="module")
def report() -> dict:
    """The bundled workspace's coverage of the installed torch (2.13.0), as JSON."""
    return coverage_report(REPO, *HERE)


@pytest.fixture(scope="module")
def target_report() -> dict:
    """The bundled workspace's coverage of the torch it renders for, as its manifests and explain see it."""
    return coverage_report(REPO)


def _cell(report: dict, op: str, vendor: str) -> dict:
    return next(o for o in report["ops"] if o["op"] == op)["vendors"][vendor]


def _func(yaml_text: str, op: str) -> str:
    """The native_functions.yaml entry of *op* (its func: line and the keys below it)."""
    name, _, overload = op.partition(".")
    head = re.escape(name) + (re.escape("." + overload) if overload else "")
    found = re.search(rf"^- func: {head}\(.*?(?=^- func:|\Z)", yaml_text, re.M | re.S)
    assert found, op
    return found.group(0)


def test_every_op_of_the_installed_torch_is_a_row(report: dict):
    from deeplink_gen.interfaces.aten import installed_table

    assert report["torch_version"] == "2.13.0"
    names = [o["op"] for o in report["ops"]]
    assert names == sorted(installed_table().ops) and len(names) == 3101
    assert [v["name"] for v in report["vendors"]] == list(VENDORS)
    for v in report["vendors"]:
        assert sum(v["reach"].values()) == 3101


def test_composite_implicit_ops_are_inherited(report: dict):
    """linear and matmul have a CompositeImplicitAutograd kernel in 2.13 (and
    no catalog entry): every vendor inherits them through the decomposition."""
    table = native_functions_yaml()
    for op in ("linear", "matmul"):
        assert "    CompositeImplicitAutograd: " + op + "\n" in _func(table, op)
        for vendor in VENDORS:
            assert _cell(report, op, vendor) == {"reach": "composite-implicit", "runs": "composite-implicit"}


def test_a_disabled_op_falls_back_to_the_cpu(report: dict):
    """ascend disables _log_softmax.out (vendors/ascend.yaml); it is structured
    with CPU/CUDA kernels only, so ascend sends it to DIPU's CPU fallback while
    camb registers it."""
    entry = _func(native_functions_yaml(), "_log_softmax.out")
    assert "structured: True" in entry and "Composite" not in entry
    assert "_log_softmax.out:\n    enabled: false" in (REPO / "vendors/ascend.yaml").read_text()
    assert _cell(report, "_log_softmax.out", "ascend") == {"reach": "cpu-fallback", "runs": "cpu-fallback"}
    camb = _cell(report, "_log_softmax.out", "camb")
    assert camb["reach"] == "registered" and camb["diopi"] == "diopiLogSoftmax"


def test_ops_dipu_registers_itself_and_composite_explicit_ones(report: dict):
    # empty.memory_format: RegisterDIPU.cpp's own kernel; ones_like: CompositeExplicitAutograd
    # (empty_like, then fill_), not in the catalog.
    assert _cell(report, "empty.memory_format", "camb")["reach"] == "dipu"
    assert "    CompositeExplicitAutograd: ones_like\n" in _func(native_functions_yaml(), "ones_like")
    assert _cell(report, "ones_like", "droplet")["reach"] == "composite-explicit"


def test_the_summary_counts(report: dict):
    counts = {v["name"]: v["reach"] for v in report["vendors"]}
    # camb and cuda register all 275 catalog ops; ascend and droplet each disable one (_log_softmax.out, ...).
    assert counts["cuda"] == counts["camb"]
    assert counts["camb"] == {"registered": 275, "dipu": 19, "composite-explicit": 1076, "composite-implicit": 742,
                              "cpu-fallback": 989}
    assert counts["ascend"]["registered"] == 274 and counts["ascend"]["cpu-fallback"] == 990
    result = run_cli("coverage", *HERE, cwd=REPO)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Coverage of torch 2.13.0's 3101 ATen ops (the installed torch)")
    # columns: ascend, camb, cuda, droplet, hostsim
    assert re.search(r"^registered\s+274\s+8\.8%\s+275\s+8\.9%\s+275\s+8\.9%\s+274\s+8\.8%\s+275\s+8\.9%$",
                     result.output, re.M), result.output
    assert re.search(r"^cpu-fallback\s+990\s+31\.9%\s+989\s+31\.9%\s+989\s+31\.9%\s+990\s+31\.9%\s+989\s+31\.9%$",
                     result.output, re.M)
    # ascend and camb list what their DIOPI libraries define (adaptor.implemented); the others do not,
    # and without --impl nothing says what theirs define.
    assert re.search(r"^DIOPI function defined\s+252\s+263\s+unknown\s+unknown\s+unknown$", result.output, re.M)
    assert re.search(r"^DIOPI function missing\s+22\s+12\s+unknown\s+unknown\s+unknown$", result.output, re.M)
    for vendor, count in (("camb", 301), ("ascend", 283)):
        assert re.search(rf"^  {vendor}: DIOPI functions from \S*vendors/{vendor}\.yaml adaptor\.implemented "
                         rf"\(vendor file: {count} functions\)$", result.output, re.M), result.output
    for v in report["vendors"]:
        yes, no, unknown = (v["implemented"][k] for k in ("yes", "no", "unknown"))
        assert yes + no + unknown == v["reach"]["registered"], v["name"]
        assert (unknown == 0) == (v["name"] in ("ascend", "camb")), v["name"]


def test_coverage_agrees_with_the_manifests(target_report: dict):
    """Registered ops and their DIOPI functions are exactly what render registers."""
    report = target_report
    for vendor in VENDORS:
        manifest = json.loads((REPO / "generated" / vendor / "manifest.json").read_text())
        rendered = {o["op"]: o["diopi"] for o in manifest["ops"] if o["enabled"] and o["flags"]["register"]}
        covered = {o["op"]: o["vendors"][vendor]["diopi"] for o in report["ops"]
                   if o["vendors"][vendor]["reach"] == "registered"}
        assert covered == rendered, vendor
        flags = {o["op"]: o["flags"] for o in manifest["ops"]}
        for op in covered:
            cell = _cell(report, op, vendor)
            assert (cell["autocompare"] == "on") == flags[op]["autocompare"], (vendor, op)
            assert (cell["fallback_to_cpu"] == "on") == flags[op]["fallback_to_cpu"], (vendor, op)


# A registration; an op that reaches several DIOPI functions registers under the name of them all
# (diopiAdd_and_diopiAddScalar), the first being its own.
_REGISTRATION = re.compile(r'^ +(?:NO|WITH)_CUSTOMFALLBACK_(NO|WITH)_AUTOCOMPARE_REGISTER\("([^"]+)", (?:::)?(\w+?)(?:_and_\w+)?,', re.M)


@pytest.mark.parametrize("vendor", VENDORS)
def test_kernels_explain_and_coverage_agree_on_every_op(target_report: dict, vendor: str):
    """Every op of the vendor: the kernels file registers it (with its DIOPI function, and with an
    autocompare twin or not) exactly as coverage reports it and as `explain --vendor` lists it."""
    kernels = "".join(p.read_text() for p in sorted((REPO / "generated" / vendor).rglob("AutoGenedKernels*.cpp")))
    registered = {op: (function, twin == "WITH") for twin, op, function in _REGISTRATION.findall(kernels)}
    covered = {o["op"]: (o["vendors"][vendor]["diopi"], o["vendors"][vendor]["autocompare"] == "on")
               for o in target_report["ops"] if o["vendors"][vendor]["reach"] == "registered"}
    listing = run_cli("explain", "--vendor", vendor, cwd=REPO)
    assert listing.exit_code == 0, listing.output
    listed = {m.group(1): m.group(3) for m in re.finditer(r"^  (\S+) +(registered) +(\S+) ", listing.stdout, re.M)}
    assert registered and registered == covered, vendor
    assert listed == {op: function for op, (function, _) in registered.items()}, vendor


@pytest.mark.parametrize("op, vendor, autocompare, fallback", [
    ("where.self_out", "camb", "off", "on"),     # the vendor turns autocompare off for it: still possible
    ("rsqrt.out", "camb", "off", "off"),         # the vendor turns the fallback block off
    ("addmm.out", "ascend", "on", "on"),         # the vendor turns autocompare on
    ("addmm.out", "droplet", "on", "on"),        # droplet's default
])
def test_coverage_agrees_with_explain(target_report: dict, op: str, vendor: str, autocompare: str, fallback: str):
    cell = _cell(target_report, op, vendor)
    lines = run_cli("explain", op, "--vendor", vendor, cwd=REPO).output
    call = re.search(r"^  DIOPI call\s+(\w+)\(", lines, re.M).group(1)
    assert cell["diopi"] == call
    assert (cell["autocompare"], cell["fallback_to_cpu"]) == (autocompare, fallback)
    for key, state in (("autocompare", autocompare), ("fallback_to_cpu", fallback)):
        assert re.search(rf"^  {key}\s+{'true' if state == 'on' else 'false'} ", lines, re.M), lines


def test_autocompare_never_when_the_catalog_says_so(report: dict):
    facts = [o["op"] for o in report["ops"] if o["vendors"]["droplet"].get("autocompare") == "never"]
    assert facts, "the catalog marks random ops as not comparable"
    for op in facts[:3]:
        out = run_cli("explain", op, "--vendor", "droplet", cwd=REPO).output
        assert re.search(r"^  autocompare\s+false from (catalog|vendor replace) \(", out, re.M), out


def test_dtypes_after_the_vendor_rules(report: dict):
    # camb supports [bool, int8, uint8, int16, int32, float16, float32, complex64] and converts
    # int64 -> int32, float64 -> float32, complex128 -> complex64 for every function.
    assert _cell(report, "add.out", "camb")["dtypes"] == ["int8", "uint8", "int16", "int32", "int64", "float16",
                                                          "float32", "float64", "bool", "complex64", "complex128"]
    # ascend converts float64 only for diopiMm; droplet keeps float16 for diopiMm by converting it to float32.
    assert "float64" in _cell(report, "mm.out", "ascend")["dtypes"]
    assert "float64" not in _cell(report, "add.out", "ascend")["dtypes"]
    assert _cell(report, "mm.out", "droplet")["dtypes"] == ["int8", "uint8", "int32", "int64", "float16", "float32",
                                                            "float64", "bool", "bfloat16"]


def _impl_tree(root: Path) -> Path:
    """A DIOPI impl/<vendor> folder with the cases DIOPI's adaptor generator decides."""
    (root / "functions" / "sub").mkdir(parents=True)
    (root / "functions_ext").mkdir()
    (root / "functions" / "add.cpp").write_text(
        "extern \"C\" {\n"
        "DIOPI_API diopiError_t diopiAdd(diopiContextHandle_t ctx, diopiTensorHandle_t out,\n"
        "                                diopiConstTensorHandle_t input, diopiConstTensorHandle_t other,\n"
        "                                const diopiScalar_t* alpha) {\n"
        "    return diopiMul(ctx, out, input, other);  // a call, not a definition\n}\n"
        "diopiError_t diopiAddInp(diopiContextHandle_t ctx, diopiTensorHandle_t input) { return 0; }\n"
        "diopiError_t diopiSub(diopiContextHandle_t ctx);  // a declaration\n"
        "    diopiError_t diopiDiv(diopiContextHandle_t ctx, void (*f)(int)) {\n}\n}\n")
    (root / "functions" / "sub" / "relu.mlu").write_text("diopiError_t diopiRelu(diopiContextHandle_t ctx) {\n}\n")
    (root / "functions_ext" / "rms.cpp").write_text("diopiError_t diopiRMSNorm(diopiContextHandle_t ctx) {}\n")
    (root / "helpers.cpp").write_text("diopiError_t diopiLogSoftmax(diopiContextHandle_t ctx) {}\n")
    return root


def test_impl_sources_are_read_as_diopis_generator_reads_them(tmp_path: Path):
    impl = _impl_tree(tmp_path / "impl" / "camb")
    report = coverage_report(REPO, *HERE, "--vendor", "camb", "--impl", str(impl))
    library = report["vendors"][0]["library"]
    # diopiAdd, diopiAddInp, diopiRelu (any extension, any depth) and diopiRMSNorm (functions_ext);
    # not the call, the declaration, the definition whose parameters hold parentheses, or outside functions*/.
    assert library == {"source": str(impl), "how": "sources", "functions": 4}
    assert _cell(report, "relu", "camb")["implemented"] is True
    assert _cell(report, "sub.out", "camb")["implemented"] is False
    assert _cell(report, "_log_softmax.out", "camb")["implemented"] is False
    # add.out's code takes diopiAddScalar for a CPU scalar, which this library lacks: the kernel
    # registers only when every DIOPI function it can reach is there.
    assert _cell(report, "add.out", "camb")["implemented"] is False
    # At run time DIPU does not register a kernel whose DIOPI function is missing.
    assert _cell(report, "_log_softmax.out", "camb")["runs"] == "cpu-fallback"
    assert _cell(report, "add.out", "camb")["runs"] == "cpu-fallback"
    assert _cell(report, "relu", "camb")["runs"] == "registered"
    summary = report["vendors"][0]["implemented"]
    assert summary["yes"] >= 2 and summary["yes"] + summary["no"] == 275 and summary["unknown"] == 0


def test_impl_symbol_lists_and_libraries(tmp_path: Path):
    symbols = tmp_path / "nm.txt"
    symbols.write_text("0000000000012340 T diopiAdd\n                 U diopiMul\n0000000000012350 W diopiRelu\n"
                       "0000000000012360 T _ZN4impl4camb3addEv\ndiopiSub@@DIOPI_1.0\n")
    report = coverage_report(REPO, *HERE, "--impl", f"camb={symbols}")
    camb = next(v for v in report["vendors"] if v["name"] == "camb")
    assert camb["library"] == {"source": str(symbols), "how": "symbols", "functions": 3}
    assert _cell(report, "mul.out", "camb")["implemented"] is False      # undefined (U)
    assert "implemented" not in _cell(report, "linear", "camb")
    assert _cell(report, "add.out", "ascend")["implemented"] is True       # no --impl: ascend's vendor file lists it
    assert _cell(report, "add.out", "cuda")["implemented"] is None         # no --impl, no list: unknown
    if shutil.which("gcc") and shutil.which("nm"):
        source = tmp_path / "lib.c"
        source.write_text("int diopiAdd(void) { return 0; }\nint diopiRelu(void) { return 0; }\n"
                          "extern int diopiMul(void);\nint use(void) { return diopiMul(); }\n")
        library = tmp_path / "libdiopi_impl.so"
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
        report = coverage_report(REPO, *HERE, "--vendor", "camb", "--impl", str(library))
        assert report["vendors"][0]["library"]["functions"] == 2
        assert _cell(report, "relu", "camb")["implemented"] is True


def test_impl_mistakes(tmp_path: Path):
    result = run_cli("coverage", *HERE, "--impl", str(tmp_path), cwd=REPO)
    assert result.exit_code == 2 and "VENDOR=PATH" in result.output
    errors = error_lines(run_cli("coverage", *HERE, "--impl", f"camb={tmp_path}", cwd=REPO))
    assert errors == [f"{tmp_path}: error: --impl: no functions/ or functions_ext/ here: DIOPI's adaptor generator "
                      "finds a vendor's functions there (give DIOPI's impl/<vendor> folder)"]
    empty = tmp_path / "empty.txt"
    empty.write_text("nothing here\n")
    assert "no defined diopi* symbol" in error_lines(run_cli("coverage", *HERE, "--impl", f"camb={empty}", cwd=REPO))[0]
    result = run_cli("coverage", *HERE, "--impl", f"acme={empty}", cwd=REPO)
    assert result.exit_code == 1 and "'acme' is not a vendor of this report" in result.stderr


def test_a_workload_sent_to_the_cpu(tmp_path: Path):
    """DIPU's op capture CSV names device ops as DIPU prints them and CPU
    fallbacks as c10 does (aten::...)."""
    capture = tmp_path / "dipu_ops.csv"
    capture.write_text('aten_name,diopi_fun,args\n'
                       'add.out,diopiAdd,"[\'self:[numel: 4 ...] \']"\n'
                       'add.out,diopiAdd,"[\'self:[numel: 8 ...] \']"\n'
                       'aten::_log_softmax.out,fallback,no\n'
                       'aten::matmul,fallback,no\n'
                       'aten::_fft_r2c,fallback,no\n'
                       'aten::no_such_op,fallback,no\n')
    report = coverage_report(REPO, *HERE, "--against", str(capture))
    workload = report["workload"]
    assert workload["ops"] == ["_fft_r2c", "_log_softmax.out", "add.out", "matmul"]
    assert workload["unknown"] == [{"op": "no_such_op", "line": 7}]
    assert workload["vendors"]["ascend"]["to_cpu"] == ["_fft_r2c", "_log_softmax.out"]
    assert workload["vendors"]["camb"]["to_cpu"] == ["_fft_r2c"]
    assert workload["vendors"]["camb"]["runs"]["registered"] == 2
    text = run_cli("coverage", *HERE, "--against", str(capture), cwd=REPO).output
    assert "  ascend: sends 2 to the CPU: _fft_r2c, _log_softmax.out\n" in text
    assert re.search(r"dipu_ops\.csv:7:1: no_such_op: not an op of torch 2\.13\.0", text), text
    plain = tmp_path / "ops.txt"
    plain.write_text("# ops of one model\nadd.out\n\naten::_log_softmax.out  # falls back on ascend\n")
    assert coverage_report(REPO, *HERE, "--against", str(plain))["workload"]["ops"] == ["_log_softmax.out", "add.out"]
    plain.write_text("add.out\nnot an op\n")
    errors = error_lines(run_cli("coverage", *HERE, "--against", str(plain), cwd=REPO))
    assert any(re.search(r"ops\.txt:2:1: error: 'not an op' is not an op name", e) for e in errors), errors


def test_baseline_regressions_fail_the_run(workspace: Path, tmp_path: Path):
    impl = _impl_tree(tmp_path / "impl")
    baseline = tmp_path / "baseline.json"
    result = run_cli("coverage", "--vendor", "camb", "--impl", str(impl), "--format", "json", "--out", str(baseline),
                     cwd=workspace)
    assert result.exit_code == 0, result.output
    same = run_cli("coverage", "--vendor", "camb", "--impl", str(impl), "--baseline", str(baseline),
                   "--fail-on-regression", cwd=workspace)
    assert same.exit_code == 0, same.output
    assert "Compared with " + str(baseline) + ": 0 regressions." in same.output
    # camb stops registering add.out, and its library loses diopiRelu.
    edit(workspace / "vendors/camb.yaml", "  rsqrt.out:\n", "  add.out:\n    enabled: false\n  rsqrt.out:\n")
    (impl / "functions" / "sub" / "relu.mlu").unlink()
    worse = run_cli("coverage", "--vendor", "camb", "--impl", str(impl), "--baseline", str(baseline),
                    "--fail-on-regression", cwd=workspace)
    assert worse.exit_code == 1
    assert "  camb: add.out is no longer registered\n" in worse.output
    assert "  camb: diopiRelu is no longer defined by the DIOPI library\n" in worse.output
    assert f"2 regressions against {baseline}" in worse.stderr
    # Without --fail-on-regression the report says so and the run succeeds.
    assert run_cli("coverage", "--vendor", "camb", "--impl", str(impl), "--baseline", str(baseline),
                   cwd=workspace).exit_code == 0
    # Without --impl the vendor file's adaptor.implemented says what the library defines: compared with it.
    report = coverage_report(workspace, "--baseline", str(baseline))
    assert report["baseline"]["regressions"] == [{"vendor": "camb", "kind": "unregistered", "name": "add.out"}]
    edit(workspace / "vendors/camb.yaml", " diopiRelu,", "")
    report = coverage_report(workspace, "--baseline", str(baseline))
    assert report["baseline"]["regressions"] == [{"vendor": "camb", "kind": "unregistered", "name": "add.out"},
                                                 {"vendor": "camb", "kind": "unimplemented", "name": "diopiRelu"}]
    # Without either the functions cannot be compared: said, not counted.
    drop_section(workspace / "vendors/camb.yaml", "adaptor")
    report = coverage_report(workspace, "--baseline", str(baseline))
    assert report["baseline"]["regressions"] == [{"vendor": "camb", "kind": "unregistered", "name": "add.out"}]
    assert "camb: DIOPI functions not compared (no --impl for camb)" in report["baseline"]["notes"]
    result = run_cli("coverage", "--fail-on-regression", cwd=workspace)
    assert result.exit_code == 2 and "--fail-on-regression goes with --baseline" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    assert "not a coverage report" in error_lines(run_cli("coverage", "--baseline", str(bad), cwd=workspace))[0]


def test_an_older_torch_from_its_snapshot(tmp_path: Path):
    report = coverage_report(REPO, "--torch-version", "2.1", "--vendor", "camb")
    assert report["torch_version"] == "2.1.1" and report["op_table"] == "the shipped snapshot torch-2.1.1.json.gz"
    assert len(report["ops"]) == 3039
    # torch 2.1 has no addmm.dtype (added later): not a row.
    assert "addmm.dtype" not in {o["op"] for o in report["ops"]}
    assert run_cli("coverage", "--torch-version", "1.13", cwd=REPO).exit_code == 2


def test_every_document_starts_with_the_header_and_is_deterministic(tmp_path: Path):
    firsts = {"json": '{"//": "@generated by deeplink-gen from vendors/ascend.yaml',
              "markdown": "<!-- @generated by deeplink-gen from ", "html": "<!-- @generated by deeplink-gen from ",
              "text": "# @generated by deeplink-gen from "}
    for fmt, first in firsts.items():
        out = tmp_path / f"report.{fmt}"
        assert run_cli("coverage", *HERE, "--format", fmt, "--out", str(out), cwd=REPO).exit_code == 0
        text = out.read_text()
        assert text.startswith(first) and "DO NOT EDIT" in text.splitlines()[0], text[:200]
        if fmt in ("json", "html"):
            # The same bytes under other hash seeds and locales.
            for seed, locale in (("0", "C"), ("4242", "C.UTF-8")):
                again = tmp_path / f"again-{seed}.{fmt}"
                proc = run_subprocess("-C", str(REPO), "coverage", *HERE, "--format", fmt, "--out", str(again),
                                      env={"PYTHONHASHSEED": seed, "LC_ALL": locale})
                assert proc.returncode == 0, proc.stderr
                assert again.read_bytes() == out.read_bytes(), fmt
    json.loads((tmp_path / "report.json").read_text())
    # Printed (not written), the terminal summary has no header.
    assert not run_cli("coverage", *HERE, "--vendor", "camb", cwd=REPO).output.startswith("#")


@pytest.mark.parametrize("field, value", [("op", "x`\n# Injected heading\n<script>alert(2)</script>"), ("op", 5),
                                          ("diopi", "diopiAdd`\n# heading"),
                                          ("name", "camb<img src=x onerror=alert(1)>\n# Injected heading\n"),
                                          ("twice", "camb")])
def test_a_baseline_names_only_ops_and_functions(workspace: Path, tmp_path: Path, field: str, value):
    """The names a baseline holds are quoted back in every format, Markdown included: an op
    that is not an op name, a DIOPI function that is not a C name, or a vendor that is not a
    vendor's name, is refused at its key."""
    baseline = tmp_path / "baseline.json"
    assert run_cli("coverage", "--vendor", "camb", "--format", "json", "--out", str(baseline),
                   cwd=workspace).exit_code == 0
    data = json.loads(baseline.read_text())
    i, row = next((i, r) for i, r in enumerate(data["ops"]) if r["vendors"]["camb"].get("implemented") is True)
    if field == "name":
        data["vendors"][0]["name"] = value
    elif field == "twice":
        data["vendors"].append(dict(data["vendors"][0]))
    else:
        (row if field == "op" else row["vendors"]["camb"])[field] = value
    baseline.write_text(json.dumps(data))
    result = run_cli("coverage", "--vendor", "camb", "--baseline", str(baseline), "--format", "markdown",
                     cwd=workspace)
    where = {"op": f"ops[{i}].op", "diopi": f"ops[{i}].vendors.camb.diopi", "name": "vendors[0].name",
             "twice": f"vendors[{len(data['vendors']) - 1}].name"}[field]
    what = "'camb' is listed twice" if field == "twice" else "expected"
    assert any(f"{baseline}:1:1: error: --baseline {where}: {what}" in e for e in error_lines(result)), result.output
    assert "Injected" not in result.output


def test_a_report_is_the_same_from_any_directory(workspace: Path, tmp_path: Path):
    """What a report says it read is named from the workspace, so a committed report does not
    change with the directory coverage ran from, nor hold its absolute path."""
    reports = []
    for cwd, where in ((workspace, "."), (workspace.parent, workspace.name), (Path("/"), str(workspace))):
        out = tmp_path / f"{len(reports)}.json"
        proc = run_subprocess("-C", where, "coverage", "--vendor", "camb", "--format", "json", "--out", str(out),
                              cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        reports.append(out.read_bytes())
    assert reports[0] == reports[1] == reports[2]
    assert str(workspace).encode() not in reports[0]
