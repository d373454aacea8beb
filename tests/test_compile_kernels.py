"""The rendered AutoGenedKernels.cpp of every bundled vendor compiles against
torch's headers and our DIPU/DIOPI declaration headers, without warnings, and
a wrong DIOPI call is caught by the same check."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import KERNELS, REPO, syntax_check

VENDORS = ("ascend", "camb", "droplet")
STRICT = ["-Wall", "-Wextra", "-Werror"]


@pytest.fixture(scope="module")
def compiled():
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {v: pool.submit(syntax_check, REPO / "generated" / v / KERNELS, warnings=STRICT) for v in VENDORS}
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
    result = syntax_check(path, warnings=STRICT)
    assert result.returncode != 0
    assert "diopiMm" in result.stderr
