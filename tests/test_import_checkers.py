"""import-dipu reads a DIPU check macro as a checker only where the checker says all the macro
does: its success values, from TORCH_CHECK(ret == OK || ...) or if (ret != OK && ...), and a
failure that raises or prints. Any other macro stays C++, with a warning that says why. Built
from the gpulike fixture (tests/fixtures/dipu_vendors/gpulike), whose GPL_CALL is edited."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from helpers import DIPU_TORCH, REPO, run_cli

FUNCTIONS = REPO / "tests" / "fixtures" / "dipu" / "diopi_functions.yaml"
GPULIKE = REPO / "tests" / "fixtures" / "dipu_vendors" / "gpulike"
CHECK = 'TORCH_CHECK(ret == gplSuccess, "gpl runtime call failed: ", #Expr,'


def _imported(tmp_path: Path, check: str) -> tuple[dict, str]:
    """The checkers of gpulike imported with GPL_CALL's TORCH_CHECK line replaced by *check*, and the warnings."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    api = rt / "vendorapi.h"
    assert CHECK in api.read_text()
    api.write_text(api.read_text().replace(CHECK, check, 1))
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "gpulike", "--torch-version",
                     DIPU_TORCH, "--runtime", f"gpulike={rt}", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 0, result.output
    vendor = yaml.safe_load((tmp_path / "ws" / "vendors" / "gpulike.yaml").read_text())
    return vendor["runtime"]["checkers"], result.stderr


@pytest.mark.parametrize("check, success", [
    ('TORCH_CHECK(ret == gplSuccess || gplNotReady == ret, "gpl runtime call failed: ", #Expr,',
     ["gplSuccess", "gplNotReady"]),
    ('TORCH_CHECK((ret == ::gplSuccess), "gpl runtime call failed: ", #Expr,', ["gplSuccess"]),
])
def test_the_success_values_of_a_check_are_read(tmp_path: Path, check: str, success: list[str]):
    checkers, _ = _imported(tmp_path, check)
    found = [c for c in checkers.values() if c["macro"] == "GPL_CALL"]
    assert [c["success"] for c in found] == [success]


@pytest.mark.parametrize("check, why", [
    # only gplErrorInvalidValue fails: a checker's success list cannot say that (it would invert it)
    ('TORCH_CHECK(ret != gplErrorInvalidValue, "gpl runtime call failed: ", #Expr,', "does not test its status"),
    ('TORCH_CHECK(ret == gplSuccess || getenv("GPL_LAX"), "gpl runtime call failed: ", #Expr,',
     "does not test its status"),
    ('if (ret != gplSuccess) { fprintf(stderr, "failed"); std::exit(1); } TORCH_CHECK(true, "", #Expr,',
     "a failure ends the process"),
])
def test_a_macro_a_checker_cannot_say_stays_cpp(tmp_path: Path, check: str, why: str):
    checkers, warnings = _imported(tmp_path, check)
    assert all(c["macro"] != "GPL_CALL" for c in checkers.values())
    assert any("the check macro GPL_CALL has no checker form" in line and why in line
               for line in warnings.splitlines()), warnings


MACRO = """#define GPL_CALL(Expr)                                                  \\
  {                                                                     \\
    gplError_t ret = Expr;                                              \\
    TORCH_CHECK(ret == gplSuccess, "gpl runtime call failed: ", #Expr,  \\
                " returned ", ret, " (", gplGetErrorString(ret), ")");  \\
  }"""


@pytest.mark.parametrize("body, why", [
    ("gplError_t ret = Expr; if (ret == gplErrorNotReady) { ret = Expr; } "
     "TORCH_CHECK(ret == gplSuccess, #Expr);", "it tests its status ret more than once"),
    ("gplError_t ret = Expr; TORCH_CHECK(ret == gplSuccess || ret == gplErrorNotReady, #Expr); "
     "TORCH_CHECK(ret != gplErrorNotReady, #Expr);", "it tests its status ret more than once"),
    ("gplError_t ret = Expr; if (ret != gplSuccess) { if (std::getenv(\"GPL_STRICT\") != nullptr) { "
     "TORCH_CHECK(false, #Expr); } }", "a failure happens only under a further condition"),
    ("gplError_t ret = Expr; if (ret != gplSuccess) { gplLogFailure(ret); "
     "TORCH_CHECK(false, gplGetErrorString(ret)); }", "it calls gplLogFailure(...), which a checker would drop"),
])
def test_a_macro_that_does_more_than_check_stays_cpp(tmp_path: Path, body: str, why: str):
    """A retry, a second check, a failure under a further condition and a logger call were each dropped
    from the checker (the logger was even taken as its message function, which did not compile)."""
    rt = shutil.copytree(GPULIKE, tmp_path / "rt")
    api = rt / "vendorapi.h"
    assert MACRO in api.read_text()
    api.write_text(api.read_text().replace(MACRO, f"inline void gplLogFailure(gplError_t) {{}}\n"
                                                  f"#define GPL_CALL(Expr) {{ {body} }}", 1))
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "gpulike", "--torch-version",
                     DIPU_TORCH, "--runtime", f"gpulike={rt}", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 0, result.output
    checkers = yaml.safe_load((tmp_path / "ws" / "vendors" / "gpulike.yaml").read_text())["runtime"]["checkers"]
    assert all(c["macro"] != "GPL_CALL" for c in checkers.values())
    assert any("the check macro GPL_CALL has no checker form" in line and why in line
               for line in result.stderr.splitlines()), result.stderr
