"""The rendered AutoGenedKernels.cpp of every bundled vendor compiles against
torch's headers and our DIPU/DIOPI declaration headers, without warnings, and
a wrong DIOPI call is caught by the same check. The committed tree is rendered
for DIPU's torch (deeplink-gen.yaml), so it compiles against that torch's headers;
the workspaces the other tests render target the installed torch."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import BUNDLED_VENDORS, KERNELS, REPO, dipu_torch_python, run_cli, syntax_check

VENDORS = BUNDLED_VENDORS
STRICT = ["-Wall", "-Wextra", "-Werror"]


@pytest.fixture(scope="module")
def compiled():
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {v: pool.submit(syntax_check, REPO / "generated" / v / KERNELS, warnings=STRICT,
                               python=dipu_torch_python()) for v in VENDORS}
        return {v: job.result() for v, job in jobs.items()}


@pytest.mark.parametrize("vendor", VENDORS)
def test_bundled_kernels_compile_without_warnings(compiled, vendor: str):
    result = compiled[vendor]
    assert result.returncode == 0, result.stderr[-6000:]
    assert "warning:" not in result.stderr


def test_wrong_diopi_arity_fails_to_compile(tmp_path: Path):
    source = (REPO / "generated" / "camb" / KERNELS).read_text()
    broken = source.replace("::diopiMm(ctx, outDiopiTensorHandle, selfDiopiTensorHandle, mat2DiopiTensorHandle)",
                            "::diopiMm(ctx, outDiopiTensorHandle, selfDiopiTensorHandle)", 1)
    assert broken != source
    path = tmp_path / "broken.cpp"
    path.write_text(broken)
    result = syntax_check(path, warnings=STRICT, python=dipu_torch_python())
    assert result.returncode != 0
    assert "diopiMm" in result.stderr


def test_a_broken_snippet_is_reported_at_its_yaml_line(workspace: Path):
    """Pasted C++ carries #line directives: g++ reports a mistake in a catalog entry's custom code
    at the catalog file and line, and errors after it at the generated file's own lines again."""
    catalog = workspace / "catalog" / "pointwise.yaml"
    text = catalog.read_text()
    needle = "          return dipu_add_scalar_out(self, other.item(), alpha, out);\n"
    assert needle in text
    catalog.write_text(text.replace(needle, needle + "          undeclared_thing += 1;\n", 1))
    line = next(i for i, l in enumerate(catalog.read_text().splitlines(), 1) if "undeclared_thing" in l)
    result = run_cli("render", "--vendor", "camb", cwd=workspace)
    assert result.exit_code == 0, result.output
    kernels = workspace / "generated" / "camb" / KERNELS
    compiled = syntax_check(kernels, warnings=STRICT)
    errors = [l for l in compiled.stderr.splitlines() if ": error: " in l]
    assert errors and all(e.startswith(f"catalog/pointwise.yaml:{line}:") for e in errors), compiled.stderr[-3000:]
    # The line after each pasted block is numbered as in the generated file.
    lines = kernels.read_text().splitlines()
    resumes = [(i, l) for i, l in enumerate(lines, 1) if l.startswith("#line ") and KERNELS in l]
    assert resumes and all(l == f'#line {i + 1} "{KERNELS}"' for i, l in resumes)
