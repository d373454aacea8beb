"""The rendered AutoGenedKernels.cpp of every bundled vendor compiles against
torch's headers and our DIPU/DIOPI declaration headers, without warnings, and
a wrong DIOPI call is caught by the same check. The committed tree is rendered
for DIPU's torch (deeplink-gen.yaml), so it compiles against that torch's headers;
the workspaces the other tests render target the installed torch."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import BUNDLED_VENDORS, KERNELS, REPO, dipu_torch_python, kernel_files, run_cli, syntax_check

VENDORS = BUNDLED_VENDORS
STRICT = ["-Wall", "-Wextra", "-Werror"]


@pytest.fixture(scope="module")
def compiled():
    """Every kernel file of every bundled vendor, compiled: {vendor: [result of each file]}."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {v: [pool.submit(syntax_check, f, warnings=STRICT, python=dipu_torch_python())
                    for f in kernel_files(REPO / "generated" / v)] for v in VENDORS}
        return {v: [job.result() for job in files] for v, files in jobs.items()}


@pytest.mark.parametrize("vendor", VENDORS)
def test_bundled_kernels_compile_without_warnings(compiled, vendor: str):
    assert compiled[vendor]
    for result in compiled[vendor]:
        assert result.returncode == 0, result.stderr[-6000:]
        assert "warning:" not in result.stderr


def test_wrong_diopi_arity_fails_to_compile(tmp_path: Path):
    """A mistake in the generated part is reported at the generated file's own line, though the
    wrappers above it include pasted C++ from YAML files under #line directives of their own."""
    call = "::diopiMm(ctx, outDiopiTensorHandle, selfDiopiTensorHandle, mat2DiopiTensorHandle)"
    rendered = next(f for f in kernel_files(REPO / "generated" / "camb") if call in f.read_text())
    source = rendered.read_text()
    broken = source.replace(call, "::diopiMm(ctx, outDiopiTensorHandle, selfDiopiTensorHandle)", 1)
    assert broken != source and source.index(call) > source.index("#include DEEPLINK_GEN_PASTED")
    line = broken[:broken.index("::diopiMm(ctx, outDiopiTensorHandle, selfDiopiTensorHandle)")].count("\n") + 1
    path = tmp_path / rendered.name
    path.write_text(broken)
    shutil.copy(rendered.with_suffix(".pasted.inc"), tmp_path)
    result = syntax_check(path, warnings=STRICT, python=dipu_torch_python())
    assert result.returncode != 0
    errors = [e for e in result.stderr.splitlines() if ": error: " in e and "diopiMm" in e]
    assert errors and all(e.startswith(f"{path}:{line}:") for e in errors), result.stderr[-3000:]


def test_a_broken_snippet_is_reported_at_its_op_entry_and_located_in_its_file(workspace: Path):
    """Pasted C++ is compiled from the .pasted.inc under a #line that names the op's entry and
    counts from it (so that an edit elsewhere renumbers nothing); `locate` turns what g++ reports
    into the catalog file's line. The generated file itself carries no #line."""
    catalog = workspace / "catalog" / "pointwise.yaml"
    text = catalog.read_text()
    needle = "          return dipu_add_scalar_out(self, other.item(), alpha, out);\n"
    assert needle in text
    catalog.write_text(text.replace(needle, needle + "          undeclared_thing += 1;\n", 1))
    lines = catalog.read_text().splitlines()
    line = next(i for i, l in enumerate(lines, 1) if "undeclared_thing" in l)
    entry = max(i for i, l in enumerate(lines[:line], 1) if l == "  add.out:")
    result = run_cli("render", "--vendor", "camb", "--shards", "1", cwd=workspace)
    assert result.exit_code == 0, result.output
    kernels = workspace / "generated" / "camb" / KERNELS
    assert "#line" not in kernels.read_text()
    compiled = syntax_check(kernels, warnings=STRICT)
    errors = [l for l in compiled.stderr.splitlines() if ": error: " in l]
    relative = f"catalog/pointwise.yaml:add.out:{line - entry + 1}:"
    assert errors and all(e.startswith(relative) for e in errors), compiled.stderr[-3000:]
    log = workspace / "build.log"
    log.write_text(compiled.stderr)
    located = run_cli("locate", str(log), cwd=workspace)
    assert located.exit_code == 0, located.output
    errors = [l for l in located.output.splitlines() if ": error: " in l]
    assert errors and all(e.startswith(f"catalog/pointwise.yaml:{line}:") for e in errors), located.output[-3000:]
