"""DIPU's own torch (2.2.2, the newest DIPU 9dd38082 builds with) is a
first-class target: the bundled vendors and an import of the DIPU fixture are
rendered by deeplink-gen running with that torch, and their kernels compile
against that torch's headers with our DIPU/DIOPI declaration headers."""

from __future__ import annotations

import json
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import linkcheck
from helpers import BUNDLED_VENDORS, DIPU_TORCH, KERNELS, REPO, copy_workspace, dipu_torch_python, kernels, syntax_check

VENDORS = BUNDLED_VENDORS
STRICT = ["-Wall", "-Wextra", "-Werror"]
FIXTURES = REPO / "tests" / "fixtures" / "dipu"


def deeplink_gen(python: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([str(python), "-m", "deeplink_gen", *args], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def python() -> Path:
    return dipu_torch_python()


@pytest.fixture(scope="module")
def bundled(python: Path, tmp_path_factory) -> Path:
    ws = copy_workspace(tmp_path_factory.mktemp("dipu-torch") / "ws")
    # one kernels file a vendor: one object file for the link contract
    deeplink_gen(python, "-C", str(ws), "render", "--all", "--shards", "1")
    return ws / "generated"


@pytest.fixture(scope="module")
def imported(python: Path, tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("dipu-torch-import") / "ws"
    deeplink_gen(python, "import-dipu", "--functions", str(FIXTURES / "diopi_functions.yaml"),
                 "--convert-config", f"camb={FIXTURES / 'camb_convert_config.yaml'}",
                 "--vendors", ",".join(VENDORS), "--out", str(ws))
    for vendor in VENDORS:
        deeplink_gen(python, "-C", str(ws), "render", "--vendor", vendor, "--autocompare", "--shards", "1")
    return ws / "generated"


def _compile_all(python: Path, generated: Path) -> dict[str, subprocess.CompletedProcess]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {v: pool.submit(syntax_check, generated / v / KERNELS, warnings=STRICT, python=python)
                for v in VENDORS}
        return {v: job.result() for v, job in jobs.items()}


@pytest.fixture(scope="module")
def bundled_objects(python: Path, bundled: Path, tmp_path_factory) -> dict[str, Path]:
    """Each bundled vendor's kernels compiled to an object file, as DIPU's build compiles them."""
    out = tmp_path_factory.mktemp("kernel-objects")

    def build(vendor: str) -> Path:
        obj = out / f"{vendor}.o"
        result = linkcheck.compile_object(bundled / vendor / KERNELS, python, obj, warnings=STRICT)
        assert result.returncode == 0, (vendor, result.stderr[-6000:])
        assert "warning:" not in result.stderr, vendor
        return obj

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(VENDORS, pool.map(build, VENDORS)))


def test_the_dipu_torch_is_the_one_rendered_for(bundled: Path):
    for vendor in VENDORS:
        manifest = json.loads((bundled / vendor / "manifest.json").read_text())
        assert manifest["torch_version"] == DIPU_TORCH


def test_bundled_kernels_keep_dipus_link_contract(python: Path, bundled_objects: dict[str, Path]):
    """What loading libtorch_dipu.so needs from the kernels: DIPU core's dipu_wrap_diopi_* are
    defined, every other reference is to DIPU core, DIOPI (weakly), torch or the C/C++ runtime."""
    for vendor, obj in bundled_objects.items():
        report = linkcheck.check(obj, python)
        assert report.ok, (vendor, report)


def test_custom_fallback_of_copy_links(python: Path, bundled_objects: dict[str, Path]):
    """copy_ registers DIPU's custom_fallback_dipu_copy_, which DIPU core defines."""
    for vendor, obj in bundled_objects.items():
        undefined = linkcheck.object_symbols(obj).undefined
        fallback = [s for s in undefined if "custom_fallback_dipu_copy_" in s]
        assert len(fallback) == 1, vendor
        assert fallback[0] in linkcheck.contract().provided, vendor


def test_imported_kernels_compile_with_dipus_torch(python: Path, imported: Path):
    for vendor, result in _compile_all(python, imported).items():
        assert result.returncode == 0, (vendor, result.stderr[-6000:])


def _declaration(generated: Path, wrapper: str) -> str:
    text = kernels(generated / "camb", pasted=False)
    return next(line for line in text.splitlines() if f" {wrapper}(" in line and line.endswith(") {"))


def test_signatures_follow_the_torch_in_use(bundled: Path):
    """An op without schema: is declared from the schema of the torch in use (2.2's
    native_layer_norm takes a SymInt list)."""
    assert "c10::SymIntArrayRef normalized_shape" in _declaration(bundled, "dipu_native_layer_norm")


def test_an_entry_schema_fixes_integer_types(bundled: Path, python: Path):
    """torch 2.2 says SymInt[] for convolution_overrideable; the catalog entry's schema: says int[],
    and the wrapper takes int64_t values, as its custom code expects, on this torch too."""
    native = Path(subprocess.run([str(python), "-c", "import torchgen, os; print(os.path.dirname(torchgen.__file__))"],
                                 capture_output=True, text=True, check=True).stdout.strip())
    table = (native / "packaged" / "ATen" / "native" / "native_functions.yaml").read_text()
    assert "func: convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride" in table
    decl = _declaration(bundled, "dipu_convolution_overrideable")
    assert "at::IntArrayRef stride" in decl and "int64_t groups" in decl, decl


def test_the_shipped_snapshot_of_dipus_torch_is_what_it_records(python: Path, tmp_path: Path):
    """torch-snapshot run with torch 2.2.2 writes exactly the shipped 2.2.2 snapshot,
    and that torch's torchgen reads the 2.13.0 snapshot to validate the workspace for 2.13."""
    import gzip

    out = tmp_path / "torch.json.gz"
    result = deeplink_gen(python, "torch-snapshot", "--out", str(out))
    assert result.stdout.endswith(f": torch {DIPU_TORCH}, 3066 ops\n"), result.stdout
    shipped = REPO / "deeplink_gen" / "interfaces" / "data" / f"torch-{DIPU_TORCH}.json.gz"
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(shipped.read_bytes())
    result = deeplink_gen(python, "-C", str(REPO), "validate", "--torch-version", "2.13")
    assert result.stdout.startswith("ok: ")


def test_link_contract_catches_kernels_without_dipus_copy_helper(python: Path, tmp_path: Path):
    """A kernels file without dipu_wrap_diopi_copy_inp (a catalog without its entry) links, but
    libtorch_dipu.so would not load: the check must say so."""
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "tests" / "fixtures" / "kernels" / "features", ws)
    deeplink_gen(python, "-C", str(ws), "render", "--vendor", "droplet")
    obj = tmp_path / "features.o"
    result = linkcheck.compile_object(ws / "generated" / "droplet" / KERNELS, python, obj)
    assert result.returncode == 0, result.stderr[-6000:]
    report = linkcheck.check(obj, python)
    assert "dipu::native::dipu_wrap_diopi_copy_inp(at::Tensor&, at::Tensor const&, bool)" in report.missing, report
    assert report.unresolved == () and report.strong_diopi == (), report


def test_link_contract_catches_a_call_nothing_defines(python: Path, tmp_path: Path):
    """Custom code calling a function that neither DIPU core nor its headers define compiles, and is caught."""
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "tests" / "fixtures" / "kernels" / "features", ws)
    catalog = ws / "catalog" / "ops.yaml"
    text = catalog.read_text()
    kept = '      before_return: "  // before return; kept\\n"\n'
    assert kept in text
    catalog.write_text(text.replace(kept, "      before_return: |\n        at::Tensor& helper_nobody_defines(at::Tensor&);\n"
                                          "        helper_nobody_defines(out);\n", 1))
    deeplink_gen(python, "-C", str(ws), "render", "--vendor", "droplet")
    obj = tmp_path / "features.o"
    result = linkcheck.compile_object(ws / "generated" / "droplet" / KERNELS, python, obj)
    assert result.returncode == 0, result.stderr[-6000:]
    assert linkcheck.check(obj, python).unresolved == ("dipu::native::helper_nobody_defines(at::Tensor&)",)
