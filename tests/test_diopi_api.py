"""DIOPI prototypes: the header parser, the snapshot and its refresh command,
and the check of catalog calls against the prototypes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from helpers import REPO, diopi_include, run_cli, run_subprocess

SNAPSHOT = REPO / "deeplink_gen" / "interfaces" / "data" / "diopi_prototypes.yaml"

TRICKY = """\
#ifndef X_H
#define X_H
#include <diopi/diopirt.h>
#if defined(__cplusplus)
extern "C" {
#endif

/**
 * @brief Adds. type = [float32, float16]
 * DIOPI_API diopiError_t diopiInComment(diopiContextHandle_t ctx);
 */
DIOPI_API diopiError_t diopiWrapped(diopiContextHandle_t ctx, diopiTensorHandle_t out,   // trailing
                                    const diopiConstTensorHandle_t input, /* inline */ const diopiScalar_t *alpha);
DIOPI_API diopiError_t diopiAllocates(diopiContextHandle_t ctx, diopiTensorHandle_t *out,
    diopiConstTensorHandle_t* tensors, int64_t num);
DIOPI_API diopiError_t diopiNoArgs(diopiContextHandle_t ctx);
DIOPI_RT_API DIOPI_ATTR_WEAK const char* diopiGetVendorName();
typedef int32_t (*create_stream_func_t)(diopiStreamHandle_t*);

#if defined(__cplusplus)
}
#endif
#endif
"""


def _snapshot_functions(path: Path) -> dict:
    return yaml.safe_load(path.read_text())["functions"]


def test_headers_written_from_the_snapshot_read_back_to_it(tmp_path):
    """The test headers are written from the snapshot; reading them back gives the snapshot again,
    so the header reader and the headers the compile checks use agree with the data."""
    out = tmp_path / "snap.yaml"
    result = run_cli("diopi-snapshot", "--include", str(diopi_include()), "--out", str(out),
                     "--commit", "02f03c6a")
    assert result.exit_code == 0, result.output
    assert "486 functions" in result.output
    bundled, again = yaml.safe_load(SNAPSHOT.read_text()), yaml.safe_load(out.read_text())
    for key in ("functions", "runtime_functions", "runtime_header"):
        assert again[key] == bundled[key], key
    # The snapshot states DIOPI's real interface: diopiStd takes a correction scalar, not a bool.
    assert bundled["functions"]["diopiStd"]["params"].endswith("diopiSize_t dim, const diopiScalar_t* correction")
    assert {"diopiFusedAdamW", "diopiSubInp"} <= set(bundled["functions"])
    # deterministic and only-if-changed
    first = out.read_bytes()
    again = run_cli("diopi-snapshot", "--include", str(diopi_include()), "--out", str(out),
                    "--commit", "02f03c6a")
    assert "unchanged" in again.output and out.read_bytes() == first
    names = list(_snapshot_functions(out))
    assert names == sorted(names)


def test_parser_reads_the_whole_declaration_style(tmp_path):
    inc = tmp_path / "inc" / "diopi"
    inc.mkdir(parents=True)
    (inc / "functions.h").write_text(TRICKY)
    out = tmp_path / "snap.yaml"
    result = run_cli("diopi-snapshot", "--include", str(tmp_path / "inc"), "--out", str(out))
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(out.read_text())
    assert sorted(data["functions"]) == ["diopiAllocates", "diopiNoArgs", "diopiWrapped"]
    assert data["functions"]["diopiWrapped"]["params"] == (
        "diopiContextHandle_t ctx, diopiTensorHandle_t out, const diopiConstTensorHandle_t input, "
        "const diopiScalar_t* alpha")
    assert data["functions"]["diopiAllocates"]["params"] == (
        "diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiConstTensorHandle_t* tensors, int64_t num")
    assert data["functions"]["diopiNoArgs"]["params"] == "diopiContextHandle_t ctx"
    assert data["runtime_functions"] == {
        "diopiGetVendorName": {"header": "functions.h", "returns": "const char*", "params": ""}}


def test_snapshot_refresh_reports_bad_declarations_with_location(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "functions.h").write_text("// x\n\nDIOPI_API diopiError_t diopiBad(diopiContextHandle_t ctx, int);\n")
    result = run_cli("diopi-snapshot", "--include", str(inc), "--out", str(tmp_path / "s.yaml"))
    assert result.exit_code == 1
    assert re.search(r"functions\.h:3:1: error: diopiBad: cannot read parameter 'int'", result.output)


def test_a_declaration_the_header_ends_in_is_reported(tmp_path):
    """A header cut short inside its last declaration: that declaration is an error at its line,
    not dropped without a word."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "functions.h").write_text("DIOPI_API diopiError_t diopiA(diopiContextHandle_t ctx);\n\n"
                                     "DIOPI_API diopiError_t diopiCut(diopiContextHandle_t ctx,\n")
    result = run_cli("diopi-snapshot", "--include", str(inc), "--out", str(tmp_path / "s.yaml"))
    assert result.exit_code == 1
    assert re.search(r"functions\.h:3:1: error: functions\.h: this declaration has no ';'", result.output), result.output


def test_missing_include_directory_is_a_user_error(tmp_path):
    result = run_cli("--diopi-include", str(tmp_path), "validate", cwd=REPO)
    assert result.exit_code == 1
    assert "no functions.h" in result.output


def test_validate_with_headers_instead_of_snapshot(workspace):
    result = run_cli("--diopi-include", str(diopi_include()), "validate", cwd=workspace)
    assert result.exit_code == 0, result.output


def _mutate_call(workspace: Path, old: str, new: str) -> tuple[Path, int]:
    for path in sorted((workspace / "catalog").glob("*.yaml")):
        text = path.read_text()
        if old in text:
            path.write_text(text.replace(old, new, 1))
            line = text[: text.index(old)].count("\n") + 1
            return path, line
    raise AssertionError(f"{old} not in the catalog")


def test_catalog_call_with_wrong_arity_is_reported_at_the_call(workspace):
    path, line = _mutate_call(workspace, "call: diopiMm(ctx, out, self, mat2)", "call: diopiMm(ctx, out, self)")
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 1
    assert re.search(rf"{path.name}:{line}:\d+: error: ops\[mm.out\]\.call: diopiMm takes 4 arguments "
                     r"\(diopiContextHandle_t ctx, .*\); the call passes 3", result.output), result.output


def test_catalog_call_to_unknown_function_is_reported(workspace):
    path, line = _mutate_call(workspace, "call: diopiMm(ctx, out, self, mat2)", "call: diopiMatMull(ctx, out, self, mat2)")
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 1
    assert re.search(rf"{path.name}:{line}:\d+: error: ops\[mm.out\]\.call: 'diopiMatMull' is not a DIOPI operator",
                     result.output), result.output


def test_deprecated_declarations_are_read():
    """DIOPI 02f03c6a marks four functions_ext.h declarations [[deprecated(...)]]; they are
    still declared (and implemented by camb), so the reader keeps them."""
    from deeplink_gen.interfaces.diopi import parse_header

    text = ('/** doc */\n[[deprecated("use diopiFlashAttention instead")]]\n'
            "DIOPI_API diopiError_t diopiOld(diopiContextHandle_t ctx,\n    diopiTensorHandle_t out);\n")
    found, problems = parse_header(text, "functions_ext.h", "functions_ext.h")
    assert not problems
    assert [(p.name, p.loc.line, operator) for p, operator in found] == [("diopiOld", 3, True)]
    assert "diopiMultiHeadAttention" in _snapshot_functions(SNAPSHOT)


def test_snapshot_commands_write_the_package_only_when_asked_from_a_source_checkout(tmp_path):
    """Without --out nothing is written (the package's data is not a default target); and
    --into-package from an installed copy of the package (no source checkout around it)
    is refused, leaving that copy's data as it was."""
    inc = tmp_path / "inc" / "diopi"
    inc.mkdir(parents=True)
    (inc / "functions.h").write_text(TRICKY)
    shipped = SNAPSHOT.read_bytes()
    for command in (("diopi-snapshot", "--include", str(tmp_path / "inc")), ("torch-snapshot",)):
        result = run_cli(*command)
        assert result.exit_code == 1, result.output
        assert "error: --out: give --out FILE (or --into-package" in result.stderr
        assert "Traceback" not in result.output
    assert SNAPSHOT.read_bytes() == shipped
    result = run_cli("diopi-snapshot", "--include", str(tmp_path / "inc"), "--out", "x.yaml", "--into-package")
    assert result.exit_code == 1 and "not both" in result.stderr
    site = tmp_path / "site"
    shutil.copytree(REPO / "deeplink_gen", site / "deeplink_gen")
    installed = site / "deeplink_gen" / "interfaces" / "data" / "diopi_prototypes.yaml"
    result = run_subprocess("diopi-snapshot", "--include", str(tmp_path / "inc"), "--into-package",
                            cwd=tmp_path, env={"PYTHONPATH": str(site)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "runs from an installed package (site/deeplink_gen), not a source checkout" in result.stderr
    assert installed.read_bytes() == shipped


def test_snapshot_out_is_only_ever_a_regular_file_and_the_commit_only_a_name(tmp_path):
    """--out naming a pipe or a device is refused before anything is read or
    written (a pipe would block the read, a device would be replaced); --commit, written into
    the YAML as it is, is a git name or refused."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    device = tmp_path / "null"
    device.symlink_to("/dev/null")
    for out in (fifo, device):
        for command in (("diopi-snapshot", "--include", str(diopi_include())), ("torch-snapshot",)):
            result = run_subprocess(*command, "--out", str(out), timeout=60)
            assert result.returncode == 1, (command, out, result.stderr)
            assert "is not a regular file" in result.stderr and "Traceback" not in result.stderr
    assert fifo.is_fifo() and os.readlink(device) == "/dev/null"
    out = tmp_path / "s.yaml"
    for commit in ("abc\ninjected: 1", "a # b", "-x", ""):
        result = run_cli("diopi-snapshot", "--include", str(diopi_include()), "--out", str(out), "--commit", commit)
        assert result.exit_code == 1 and "--commit" in result.stderr and not out.exists(), commit
    result = run_cli("diopi-snapshot", "--include", str(diopi_include()), "--out", str(out), "--commit", "v1.2/rc-3")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(out.read_text())["diopi_commit"] == "v1.2/rc-3"
