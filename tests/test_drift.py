"""drift: what moving a workspace from torch 2.1.1 to 2.13 changes, on the
bundled workspace, on hand-made entries for real schema changes, and on a
workspace imported from DIPU's op config, whose breaking variant g++ confirms."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from helpers import REPO, edit, line_of, native_functions_yaml, run_cli, syntax_check_kernels

FIXTURES = REPO / "tests" / "fixtures" / "dipu"
DATA = REPO / "deeplink_gen" / "interfaces" / "data"


def _drift(root: Path, *args: str) -> tuple[int, dict]:
    result = run_cli("drift", "--from", "2.1.1", "--to", "2.13", "--format", "json", *args, cwd=root)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _op(report: dict, op: str, definition: str = "catalog") -> dict:
    return next(o for o in report["ops"] if o["op"] == op and o["definition"] == definition)


def _snapshot_schema(version: str, op: str) -> str:
    return json.loads(gzip.decompress((DATA / f"torch-{version}.json.gz").read_bytes()))["ops"][op][0]


def test_the_bundled_workspace_survives_2_13():
    """convolution_overrideable's int[] arguments became SymInt[] (torch 2.1.1's
    native_functions.yaml says int[] stride, 2.13's SymInt[] stride); the
    catalog's schema: keeps them int, so nothing breaks."""
    assert "int[] stride, int[] padding" in _snapshot_schema("2.1.1", "convolution_overrideable")
    assert ("- func: convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
            "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups)"
            in native_functions_yaml())
    code, report = _drift(REPO)
    assert code == 0 and report["breaking"] == 0
    assert (report["from"], report["to"], report["checked"]) == ("2.1.1", "2.13.0", 274)
    conv = _op(report, "convolution_overrideable")
    assert {"kind": "retyped", "name": "stride", "old": "int[]", "new": "SymInt[]"} in conv["changes"]
    assert {"kind": "retyped", "name": "groups", "old": "int", "new": "SymInt"} in conv["changes"]
    assert conv["pinned"] is True and conv["breaks"] == []
    alloc = next(u for u in conv["uses"] if u["where"] == "alloc.out")
    assert alloc["names"] == ["dilation", "padding", "stride"]
    assert sorted(o["op"] for o in report["ops"]) == sorted([
        "convolution_overrideable", "convolution_backward_overrideable", "convolution_backward",
        "tril.out", "tril", "triu.out", "triu", "triu_"])
    overloads = {o["base"]: o for o in report["overloads"]}
    assert overloads["addmm"]["added"] == ["addmm.dtype", "addmm.dtype_out"]
    assert overloads["cat"]["removed"] == ["cat.names", "cat.names_out"]
    text = run_cli("drift", "--from", "2.1", "--to", "2.13", cwd=REPO).output
    assert "8 of their ops changed, 0 would break" in text
    assert "  retyped   stride: int[] -> SymInt[]\n" in text


def test_code_naming_a_retyped_argument_breaks(workspace: Path):
    """Without its schema:, convolution_overrideable's code and alloc (custom C++)
    see SymInt[] stride on 2.13: the entry breaks from 2.2, the first version with
    the new schema (2.2.2's snapshot already has it)."""
    conv = workspace / "catalog" / "conv.yaml"
    text = conv.read_text()
    schema = re.search(r"^    schema: \"convolution_overrideable\(.*\n", text, re.M)
    conv.write_text(text.replace(schema.group(0), ""))
    assert "SymInt[] stride" in _snapshot_schema("2.2.2", "convolution_overrideable")
    code, report = _drift(workspace)
    assert code == 1 and report["breaking"] == 1
    entry = _op(report, "convolution_overrideable")
    code_at, alloc = line_of(conv, "    code:") + 2, line_of(conv, "    alloc:") + 1
    named = (("dilation", "SymInt[]"), ("groups", "SymInt"), ("output_padding", "SymInt[]"), ("padding", "SymInt[]"),
             ("stride", "SymInt[]"))
    assert entry["breaks"] == [
        *(f"code.beginning (catalog/conv.yaml:{code_at}:1) names '{n}', which is {t} in torch 2.13.0 "
          f"(was {t.replace('SymInt', 'int')})" for n, t in named),
        *(f"alloc.out (catalog/conv.yaml:{alloc}:7) names '{n}', which is {t} in torch 2.13.0 "
          f"(was {t.replace('SymInt', 'int')})" for n, t in named if n in ("dilation", "padding", "stride"))]
    assert entry["gate"] == {"torch": "<2.2", "first_changed": "2.2", "exact": True, "last_unchanged": "2.1.1"}
    assert entry["pin"] == _snapshot_schema("2.1.1", "convolution_overrideable")
    # The bare call arguments are converted by type: listed, not a break.
    call = next(u for u in entry["uses"] if u["where"] == "call")
    assert call["bare_call"] is True
    result = run_cli("drift", "--from", "2.1.1", "--to", "2.13", cwd=workspace)
    assert result.exit_code == 1
    assert 'gate      torch: "<2.2" for this definition, and define convolution_overrideable again for ">=2.2"' \
        in result.output


def test_renamed_and_removed(workspace: Path):
    """can_cast's 'from' is 'from_' in 2.13; cumsum.dimname_out is gone in 2.13
    (2.2.2 still has it, so the change lies somewhere after 2.2.2)."""
    (workspace / "catalog" / "drift.yaml").write_text(
        "ops:\n"
        "  can_cast:\n"
        "    call: diopiCanCast(ctx, out, static_cast<int>(from), to)\n"
        "    locals: [out]\n"
        "    code:\n"
        "      beginning: |\n"
        "        bool out = from == to;\n"
        "  cumsum.dimname_out:\n"
        "    torch: \">=2.0\"\n"
        "    call: diopiCumsum(ctx, out, self, 0)\n")
    vendor = workspace / "vendors" / "droplet.yaml"
    edit(vendor, "ops:\n", "ops:\n  can_cast:\n    torch: \">=2.1\"\n    replace:\n"
                           "      call: diopiCanCast(ctx, out, from, to)\n")
    assert "can_cast(ScalarType from_, ScalarType to)" in native_functions_yaml()
    code, report = _drift(workspace)
    assert code == 1
    cast = _op(report, "can_cast")
    assert cast["changes"] == [{"kind": "renamed", "name": "from", "old": "from", "new": "from_"}]
    assert cast["breaks"] == [
        "call (catalog/drift.yaml:3:11) names 'from', which torch 2.13.0 calls 'from_'",
        "code.beginning (catalog/drift.yaml:7:1) names 'from', which torch 2.13.0 calls 'from_'"]
    assert cast["pin"] == "can_cast(ScalarType from, ScalarType to) -> bool"
    mine = _op(report, "can_cast", "vendor droplet")
    assert mine["breaks"] == [f"call (vendors/droplet.yaml:{line_of(vendor, 'diopiCanCast')}:13) names 'from', "
                              "which torch 2.13.0 calls 'from_'"]
    gone = _op(report, "cumsum.dimname_out")
    assert gone["removed"] is True and gone["breaks"] == ["torch 2.13.0 has no op cumsum.dimname_out"]
    assert gone["gate"] == {"torch": ">=2.0,<2.13", "first_changed": "2.13", "exact": False,
                            "last_unchanged": "2.2.2"}
    text = run_cli("drift", "--from", "2.1.1", "--to", "2.13", cwd=workspace).output
    assert "(changed after 2.2.2, by 2.13: no op table in between, so the bound may be lower)" in text


def test_usage_errors():
    assert run_cli("drift", "--from", "2.13", "--to", "2.1", cwd=REPO).exit_code == 2
    result = run_cli("drift", "--from", "1.13", "--to", "2.13", cwd=REPO)
    assert result.exit_code == 2 and "snapshots are shipped for 2.0.0, 2.1.1, 2.2.2, 2.13.0" in result.output


def test_reports_start_with_the_header(tmp_path: Path):
    for fmt, first in (("json", '{"//": "@generated by deeplink-gen from '), ("markdown", "<!-- @generated by "),
                       ("text", "# @generated by ")):
        out = tmp_path / f"drift.{fmt}"
        result = run_cli("drift", "--from", "2.0", "--to", "2.2", "--format", fmt, "--out", str(out), cwd=REPO)
        assert result.exit_code == 0, result.output
        assert out.read_text().startswith(first) and "DO NOT EDIT" in out.read_text().splitlines()[0]


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """DIPU's op config fixture imported for torch 2.1.1 (its torch_ver filters
    and the 2.1.1 op table decide what is valid)."""
    ws = tmp_path_factory.mktemp("drift-import") / "ws"
    result = run_cli("import-dipu", "--functions", str(FIXTURES / "diopi_functions.yaml"),
                     "--vendors", "camb,ascend,droplet", "--out", str(ws), "--torch-version", "2.1.1")
    assert result.exit_code == 0, result.output
    assert run_cli("validate", "--torch-version", "2.1.1", cwd=ws).exit_code == 0
    return ws


def test_the_imported_workspace_keeps_its_integer_types(imported: Path):
    """conv_transpose2d.input's custom code uses stride, dilation and groups,
    which torch 2.13 makes SymInt; the schema: the import kept from DIPU
    (int[2] stride, int groups, ...) keeps them int, so it still compiles
    (test_import_dipu compiles the 2.13 import)."""
    code, report = _drift(imported)
    assert code == 0
    conv = _op(report, "conv_transpose2d.input")
    assert [c["name"] for c in conv["changes"]] == ["stride", "groups", "dilation"]
    assert conv["pinned"] is True and conv["breaks"] == []
    beginning = next(u for u in conv["uses"] if u["where"] == "code.beginning")
    assert beginning["names"] == ["dilation", "groups", "stride"]


def test_the_imported_workspace_without_its_schema_breaks_on_2_13(imported: Path, tmp_path: Path):
    """Written for torch 2.1.1's own schema instead (no schema:, so padding and
    output_padding are SymInt there and the code asks for their ints), the
    custom code compiles on 2.1 but not on 2.13, where stride, dilation and
    groups are SymInt too: drift names exactly those, and g++ agrees."""
    ws = tmp_path / "ws"
    shutil.copytree(imported, ws)
    catalog = ws / "catalog" / "dipu.yaml"
    text = catalog.read_text()
    pinned = re.search(r"^    schema: conv_transpose2d\.input\(.*\n", text, re.M).group(0)
    text = text.replace(pinned, "")
    for name in ("padding", "output_padding"):
        text = re.sub(rf"\b(?<!_){name}\[(\d)\]", rf"{name}[\1].expect_int()", text)
    catalog.write_text(text)
    assert "2 * padding[0].expect_int() + dilation[0]" in text
    code, report = _drift(ws)
    assert code == 1
    conv = _op(report, "conv_transpose2d.input")
    named = sorted({re.search(r"names '(\w+)'", why).group(1) for why in conv["breaks"]})
    assert named == ["dilation", "groups", "stride"]
    assert all(why.startswith("code.beginning ") for why in conv["breaks"])
    assert conv["gate"]["torch"] == "<2.2"
    # Moved to torch 2.13 (the import recorded 2.1.1) and compiled against its headers: the
    # custom code fails where drift said.
    edit(ws / "deeplink-gen.yaml", "torch: 2.1.1", "torch: 2.13.0")
    result = run_cli("render", "--vendor", "camb", cwd=ws)
    assert result.exit_code == 0, result.output
    compiled = syntax_check_kernels(ws / "generated" / "camb", warnings=["-w"])
    assert compiled.returncode != 0
    errors = [line for line in compiled.stderr.splitlines() if ": error: " in line]
    assert errors and all("SymInt" in line or "int64_t" in line for line in errors[:3]), compiled.stderr[-3000:]
    # #line directives put the errors in the custom code's op entries; locate gives their catalog lines.
    log = ws / "build.log"
    log.write_text(compiled.stderr)
    located = run_cli("locate", str(log), cwd=ws)
    assert located.exit_code == 0, located.output
    lines = catalog.read_text().splitlines()
    failing = {int(m.group(1)) for m in (re.search(r"catalog/dipu\.yaml:(\d+):\d+: error:", line)
                                         for line in located.output.splitlines()) if m}
    assert any("const int64_t h = " in lines[n - 1] or "const int64_t w = " in lines[n - 1] for n in failing)
