"""torch: gates on vendor op overrides and on test settings: outside its gate
an override does not exist (the catalog's definition and settings apply), and
a gated test setting is rendered only for the torch versions it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import edit, error_lines, kernels, line_of, run_cli

PYTORCH_CONFIG = "dipu/tests/pytorch_config_mlu.py"
DEVICE_CONFIGS = "dipu/third_party/DIOPI/impl/camb/device_configs.py"


def _flags(generated: Path, vendor: str, op: str) -> dict:
    manifest = json.loads((generated / vendor / "manifest.json").read_text())
    return next(o for o in manifest["ops"] if o["op"] == op)


def test_a_gated_override_applies_only_inside_its_gate(workspace: Path):
    edit(workspace / "vendors/ascend.yaml", "  _log_softmax.out:\n    enabled: false\n",
         "  _log_softmax.out:\n    torch: \"<2.2\"\n    enabled: false\n")
    assert run_cli("render", "--vendor", "ascend", cwd=workspace).exit_code == 0
    # torch 2.13 is outside '<2.2': the catalog's entry applies, so ascend registers the op.
    assert _flags(workspace / "generated", "ascend", "_log_softmax.out")["enabled"] is True
    assert '"_log_softmax.out"' in kernels(workspace / "generated/ascend", pasted=False)
    now = run_cli("explain", "_log_softmax.out", "--vendor", "ascend", cwd=workspace).output
    line = line_of(workspace / "vendors/ascend.yaml", 'torch: "<2.2"')
    assert re.search(r"enabled\s+true  from built-in default", now), now
    assert re.search(rf"override\s+not applied: torch 2\.13\.0 is outside '<2\.2' \(.*ascend\.yaml:{line}:\d+\)", now), now
    # For torch 2.1 (the shipped op table) it applies.
    old = run_cli("explain", "_log_softmax.out", "--vendor", "ascend", "--torch-version", "2.1", cwd=workspace)
    assert old.exit_code == 0, old.output
    assert re.search(r"enabled\s+false from vendor op override", old.output), old.output
    assert "not applied" not in old.output


def test_gated_test_settings_render_for_their_torch(workspace: Path):
    vendor = workspace / "vendors/camb.yaml"
    edit(vendor, "    pow:\n      names: [pow, pow_tensor]\n", "    pow:\n      torch: \"<2.2\"\n      names: [pow, pow_tensor]\n")
    edit(vendor, "    sort:\n", "    sort:\n      torch: \">=2.13\"\n")
    edit(vendor, '      TestViewOpsDIPU: [test_contiguous_nonview, "test_.*_view_copy$"]\n',
         '      TestViewOpsDIPU: [test_contiguous_nonview, {test: "test_.*_view_copy$", torch: "<2.2", reason: fixed}]\n'
         '      TestNew: [{test: test_new_only, torch: ">=2.13"}]\n'
         '      TestOld: [{test: test_old_only, torch: "<2.1"}]\n')
    edit(vendor, "      test_pow_dipu_float32: 0.0035\n", "      test_pow_dipu_float32: {value: 0.0035, torch: \"<2.2\"}\n"
                                                        "      test_pow_dipu_int32: {value: 0.5, torch: \">=2.13\"}\n")
    assert run_cli("validate", cwd=workspace).exit_code == 0
    assert run_cli("render", "--vendor", "camb", cwd=workspace).exit_code == 0
    out = workspace / "generated/camb"
    ns: dict = {}
    pytorch = (out / PYTORCH_CONFIG).read_text()
    exec(compile(pytorch.replace("common_utils.prepare_match_set(", "dict(")
                 .replace("from torch_dipu.testing._internal import common_utils\n", ""), "cfg", "exec"), ns)
    assert ns["TEST_PRECISIONS"] == {"test_pow_dipu_int32": 0.5, "test_pow_dipu_float64": 0.0045,
                                     "test_sum_dipu_bfloat16": 0.1}
    assert ns["DISABLED_TESTS"]["TestViewOpsDIPU"] == {"test_contiguous_nonview"}
    assert ns["DISABLED_TESTS"]["TestNew"] == {"test_new_only"}
    assert "TestOld" not in ns["DISABLED_TESTS"]
    device = (out / DEVICE_CONFIGS).read_text()
    assert "'pow': dict(" not in device and "'sort': dict(" in device


def test_gate_mistakes_are_located(workspace: Path):
    vendor = workspace / "vendors/camb.yaml"
    edit(vendor, "  where.self_out:\n", "  where.self_out:\n    torch: \"<2.x\"\n")
    edit(vendor, '      TestBinaryUfuncsDIPU: [test_add_with_tail]\n',
         '      TestBinaryUfuncsDIPU: [{test: test_add_with_tail, torch: "2.1", why: x}, 3]\n')
    edit(vendor, "      test_pow_dipu_float32: 0.0035\n", "      test_pow_dipu_float32: {vlaue: 0.0035}\n")
    errors = error_lines(run_cli("validate", cwd=workspace))
    gate = line_of(vendor, 'torch: "<2.x"')
    item = line_of(vendor, "TestBinaryUfuncsDIPU")
    precision = line_of(vendor, "test_pow_dipu_float32")
    expected = [
        rf"camb\.yaml:{gate}:\d+: error: ops\[where\.self_out\]\.torch: expected a torch version condition",
        rf"camb\.yaml:{item}:\d+: error: tests\.pytorch\.disabled\.TestBinaryUfuncsDIPU\[0\]\.torch: expected a torch "
        r"version condition such as '>=2\.1,<2\.3', got '2\.1'",
        rf"camb\.yaml:{item}:\d+: error: tests\.pytorch\.disabled\.TestBinaryUfuncsDIPU\[0\]\.why: unknown key 'why'",
        rf"camb\.yaml:{item}:\d+: error: tests\.pytorch\.disabled\.TestBinaryUfuncsDIPU\[1\]: expected a test name or "
        r"regex, or a mapping",
        rf"camb\.yaml:{precision}:\d+: error: tests\.pytorch\.precision\.test_pow_dipu_float32\.vlaue: unknown key "
        r"'vlaue'; did you mean 'value'\?",
    ]
    for pattern in expected:
        assert any(re.search(pattern, e) for e in errors), (pattern, errors)


def test_a_gated_out_override_must_still_name_a_catalog_op(workspace: Path):
    vendor = workspace / "vendors/camb.yaml"
    edit(vendor, "  rsqrt.out:\n", "  rsqrt_typo.out:\n    torch: \"<2.0\"\n    enabled: false\n  rsqrt.out:\n")
    line = line_of(vendor, "rsqrt_typo.out:")
    errors = error_lines(run_cli("validate", cwd=workspace))
    assert any(re.search(rf"camb\.yaml:{line}:3: error: ops\[rsqrt_typo\.out\]: 'rsqrt_typo\.out' is not in the op "
                         r"catalog; did you mean 'rsqrt\.out'\?", e) for e in errors), errors
