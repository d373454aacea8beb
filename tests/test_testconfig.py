"""diopi_test device_configs.py and DIPU pytorch_config_<type>.py rendered
from the vendors' tests sections, imported with stand-in Skip/common_utils."""

from __future__ import annotations

import re
import runpy
import sys

import numpy as np
import pytest

from helpers import error_lines, line_of, replace_section, run_cli

STANDIN_SKIP = """\
class Skip:
    def __init__(self, value):
        self._value = value

    def value(self):
        return self._value
"""
STANDIN_COMMON_UTILS = """\
import re


class MatchSet:
    def __init__(self):
        self.exact = set()
        self.regex = set()


def prepare_match_set(s):
    out = {}
    for cls, names in s.items():
        m = MatchSet()
        for n in names:
            (m.exact if re.match(r"\\w+$", n) else m.regex).add(n)
        out[cls] = m
    return out
"""


@pytest.fixture
def standins(tmp_path, monkeypatch):
    (tmp_path / "skip.py").write_text(STANDIN_SKIP)
    pkg = tmp_path / "torch_dipu" / "testing" / "_internal"
    pkg.mkdir(parents=True)
    for d in (tmp_path / "torch_dipu", tmp_path / "torch_dipu" / "testing", pkg):
        (d / "__init__.py").write_text("")
    (pkg / "common_utils.py").write_text(STANDIN_COMMON_UTILS)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("skip", "torch_dipu", "torch_dipu.testing", "torch_dipu.testing._internal",
                 "torch_dipu.testing._internal.common_utils"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def _skips(values) -> list:
    return [v.value() for v in values]


def test_device_configs_structure(rendered, standins):
    ns = runpy.run_path(str(rendered / "camb" / "dipu/third_party/DIOPI/impl/camb/device_configs.py"))
    cfg = ns["device_configs"]
    assert sorted(cfg) == ["batch_norm", "cdist", "conv_2d", "pow", "sort"]
    assert all(isinstance(v["name"], list) for v in cfg.values())
    assert cfg["batch_norm"] == {"name": ["batch_norm"], "atol": 0.01, "rtol": 0.001}
    cdist = cfg["cdist"]
    assert cdist["atol"] == 0.001 and _skips(cdist["para"]["p"]) == [0]
    [args] = cdist["tensor_para"]["args"]
    assert args["ins"] == ["x1"] and _skips(args["dtype"]) == [np.float64]
    assert cfg["pow"]["name"] == ["pow", "pow_tensor"]
    assert _skips(cfg["pow"]["dtype"]) == [np.int16, np.uint8]
    [shape] = cfg["sort"]["tensor_para"]["args"]
    assert _skips(shape["shape"]) == [(), (0,)]
    assert _skips(cfg["sort"]["para"]["stable"]) == [True]
    ascend = runpy.run_path(str(rendered / "ascend" / "dipu/third_party/DIOPI/impl/ascend/device_configs.py"))
    assert ascend["device_configs"]["cdist"]["skip_all"] is True
    assert ascend["device_configs"]["topk"]["name"] == ["topk_nonzero", "topk_zero"]


def test_pytorch_config_structure(rendered, standins):
    ns = runpy.run_path(str(rendered / "camb" / "dipu/tests/pytorch_config_mlu.py"))
    assert ns["TEST_PRECISIONS"] == {"test_pow_dipu_float32": 0.0035, "test_pow_dipu_float64": 0.0045,
                                     "test_sum_dipu_bfloat16": 0.1}
    disabled = ns["DISABLED_TESTS"]
    assert sorted(disabled) == ["TestBinaryUfuncsDIPU", "TestConvolutionNNDeviceTypeDIPU", "TestViewOpsDIPU"]
    assert disabled["TestViewOpsDIPU"].exact == {"test_contiguous_nonview"}
    assert disabled["TestViewOpsDIPU"].regex == {"test_.*_view_copy$"}
    droplet = runpy.run_path(str(rendered / "droplet" / "dipu/tests/pytorch_config_droplet.py"))
    assert droplet["TEST_PRECISIONS"] == {}
    assert droplet["DISABLED_TESTS"]["TestConvolutionNNDeviceTypeDIPU"].regex == {"test_conv.*"}
    assert (rendered / "ascend" / "dipu/tests/pytorch_config_npu.py").is_file()


CASES = [
    ("bad regex", "tests:\n  pytorch:\n    disabled:\n      TestX: [\"test_(\"]\n", 4,
     r"tests\.pytorch\.disabled\.TestX\[0\]: not a valid regular expression"),
    ("dtype without numpy type", "tests:\n  diopi:\n    add:\n      skip_dtypes: [bfloat16]\n", 4,
     r"tests\.diopi\.add\.skip_dtypes\[0\]: bfloat16 has no numpy type"),
    ("unknown option", "tests:\n  diopi:\n    add:\n      skipall: true\n", 4,
     r"tests\.diopi\.add\.skipall: unknown key 'skipall'; did you mean 'skip_all'"),
    ("duplicate case name", "tests:\n  diopi:\n    add:\n      names: [add, add]\n", 4,
     r"tests\.diopi\.add\.names: list items must be unique"),
    ("negative tolerance", "tests:\n  diopi:\n    add:\n      atol: -1.0\n", 4, r"tests\.diopi\.add\.atol"),
    # YAML 1.1 reads a float only with a '.' and a signed exponent, and octal as 017: these are text.
    ("exponent without a dot", "tests:\n  diopi:\n    add:\n      skip_params:\n        p: [0.5, 1e-3]\n", 5,
     r"tests\.diopi\.add\.skip_params\.p\[1\]: YAML 1\.1 reads 1e-3 as text, .*: write 1\.0e-3 "),
    ("exponent without a sign", "tests:\n  diopi:\n    add:\n      skip_params:\n        p: [[1, 2E5]]\n", 5,
     r"tests\.diopi\.add\.skip_params\.p\[0\]\[1\]: YAML 1\.1 reads 2E5 as text, .*: write 2\.0e\+5 "),
    ("octal 0o", "tests:\n  diopi:\n    add:\n      skip_params:\n        p:\n          - 0o17\n", 6,
     r"tests\.diopi\.add\.skip_params\.p\[0\]: YAML 1\.1 reads 0o17 as text, .*: write 15 "),
    ("exponent quoted", "tests:\n  diopi:\n    add:\n      skip_params:\n        p: ['-.5e3']\n", 5,
     r"tests\.diopi\.add\.skip_params\.p\[0\]: YAML 1\.1 reads -\.5e3 as text, .*: write -0\.5e\+3 "),
    ("nan tolerance", "tests:\n  diopi:\n    add:\n      atol: .nan\n", 4,
     r"tests\.diopi\.add\.atol: expected a tolerance \(a finite number > 0\), got \.nan"),
    ("infinite tolerance", "tests:\n  diopi:\n    add:\n      mismatch_ratio_threshold: .inf\n", 4,
     r"tests\.diopi\.add\.mismatch_ratio_threshold: expected a tolerance \(a finite number > 0\), got \.inf"),
    ("nan precision", "tests:\n  pytorch:\n    precision:\n      test_pow_dipu_float32: .NaN\n", 4,
     r"tests\.pytorch\.precision\.test_pow_dipu_float32: expected a tolerance \(a finite number > 0\), got \.NaN"),
    ("infinite precision", "tests:\n  pytorch:\n    precision:\n      test_x:\n        value: .Inf\n", 5,
     r"tests\.pytorch\.precision\.test_x\.value: expected a tolerance \(a finite number > 0\), got \.Inf"),
]


@pytest.mark.parametrize("name,text,line,message", CASES, ids=[c[0] for c in CASES])
def test_tests_section_errors(workspace, name, text, line, message):
    base = replace_section(workspace / "vendors" / "droplet.yaml", text)
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 1, result.output
    assert re.search(rf"vendors/droplet\.yaml:{base + line - 1}:\d+: error: {message}", result.output), result.output


def _half(*shape):
    return lambda: __import__("torch").randn(*shape).half()


def test_hostsim_skips_only_cases_torchs_cpu_cannot_compute(rendered, standins):
    """hostsim runs diopi_test's ops on ATen CPU and diopi_test's reference comes from the same
    kernels: each case its device_configs.py skips, with its reason, is one those kernels refuse;
    the float16 ones are gated to torch before 2.3 (rendered for the installed torch), which later
    torch computes."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    path = rendered / "hostsim" / "dipu/third_party/DIOPI/impl/hostsim/device_configs.py"
    cfg = runpy.run_path(str(path))["device_configs"]
    grad = torch.ones(()).half()
    refused = {
        "adaptive_max_pool3d": lambda: F.adaptive_max_pool3d(_half(1, 2, 4, 4, 4)(), 2),
        "adaptive_max_pool3d_return_indices": lambda: F.adaptive_max_pool3d(_half(1, 2, 4, 4, 4)(), 2, True),
        "avg_pool2d": lambda: F.avg_pool2d(_half(1, 2, 4, 4)(), 2),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(torch.rand(4).half(), torch.rand(4).half()),
        "cross_entropy": lambda: F.cross_entropy(_half(3, 5)(), torch.tensor([0, 1, 2])),
        "layer_norm": lambda: F.layer_norm(_half(2, 4)(), [4]),
        "mse_loss": lambda: torch.ops.aten.mse_loss_backward(grad, _half(4)(), _half(4)(), 1),
        "nll_loss": lambda: F.nll_loss(_half(3, 5)(), torch.tensor([0, 1, 2])),
        "nll_loss_empty_tensor": lambda: F.nll_loss(_half(1, 5, 2, 2)(), torch.zeros(1, 2, 2, dtype=torch.int64)),
        "nll_loss_v2": lambda: F.nll_loss(_half(3, 5)(), torch.tensor([0, 1, 2])),
        "smooth_l1_loss": lambda: torch.ops.aten.smooth_l1_loss_backward(grad, _half(4)(), _half(4)(), 1, 1.0),
        "pointwise_op_bool": lambda: torch.abs(torch.tensor([True, False])),
        "remainder_self_bool": lambda: torch.remainder(torch.tensor([1]), torch.tensor([0])),
        "remainder_tensor_zero": lambda: torch.remainder(torch.tensor([3], dtype=torch.int8),
                                                         torch.tensor([0], dtype=torch.int8)),
        "remainder_self_scalar": lambda: torch.remainder(2, torch.tensor([1, 0], dtype=torch.uint8)),
        "remainder_other_scalar": lambda: torch.remainder(torch.tensor([True, False]), 0),
    }
    half = {"adaptive_max_pool3d", "adaptive_max_pool3d_return_indices", "avg_pool2d", "binary_cross_entropy",
            "cross_entropy", "layer_norm", "mse_loss", "nll_loss", "nll_loss_empty_tensor", "nll_loss_v2",
            "smooth_l1_loss"}
    old = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 3)
    assert sorted(cfg) == sorted(k for k in refused if old or k not in half)
    for key, call in refused.items():
        if key in half and not old:
            call()                                   # later torch computes float16: the rule is gated
            continue
        with pytest.raises((RuntimeError, ZeroDivisionError, NotImplementedError)):
            call()
    text = path.read_text()
    for key in cfg:
        before = text.split(f"    '{key}': dict(")[0].rstrip().splitlines()[-1]
        assert before.startswith("    # torch's CPU"), key        # each rule says why
    assert cfg["pointwise_op_bool"]["name"] == ["abs"] and cfg["pointwise_op_bool"]["skip_all"] is True
    assert not old or _skips(cfg["avg_pool2d"]["dtype"]) == [np.float16]
    [other] = cfg["remainder_self_bool"]["tensor_para"]["args"]
    assert other["ins"] == ["other"] and np.int64 in _skips(other["dtype"])


def test_skip_values_yaml_writes_as_inf_are_python(workspace, standins):
    """YAML's .inf and -.inf among skip_params are written so that device_configs.py imports and
    holds those floats (repr() writes them as names Python does not define)."""
    import math

    vendor = workspace / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("        p: [0]\n", "        p: [.inf, -.inf, 2.5]\n", 1))
    assert run_cli("render", "--vendor", "camb", cwd=workspace).exit_code == 0
    ns = runpy.run_path(str(workspace / "generated/camb/dipu/third_party/DIOPI/impl/camb/device_configs.py"))
    assert _skips(ns["device_configs"]["cdist"]["para"]["p"]) == [math.inf, -math.inf, 2.5]


@pytest.mark.parametrize("written, says", [
    (".nan", "NaN equals no parameter, not even NaN, so it would skip nothing: leave it out"),
    ("1.0e+400", "1.0e+400 is beyond the largest float and reads as infinity: write .inf if infinity is meant"),
    ("1e999", "1e999 is beyond the largest float, and YAML 1.1 reads it as text, which never equals a numeric "
              "parameter: write .inf if infinity is meant"),
])
def test_a_skip_value_that_can_match_nothing_meant_is_refused(workspace, written: str, says: str):
    vendor = workspace / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("        p: [0]\n", f"        p: [2.5, {written}]\n", 1))
    result = run_cli("validate", cwd=workspace)
    line = line_of(vendor, f"p: [2.5, {written}]")
    assert any(re.search(rf"camb\.yaml:{line}:\d+: error: .*skip_params.*: {re.escape(says)}", e)
               for e in error_lines(result)), result.output


def test_skip_values_written_as_the_error_says_are_numbers(workspace, standins):
    """The spellings the error for 1e-3, 2E5 and 0o17 gives are numbers in device_configs.py, and text
    that only looks a bit like a number (a word, a quoted integer) stays text."""
    vendor = workspace / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("        p: [0]\n",
                                                 "        p: [1.0e-3, 2.0e+5, 15, -0.5e+3, mean, '7']\n", 1))
    result = run_cli("render", "--vendor", "camb", cwd=workspace)
    assert result.exit_code == 0, result.output
    ns = runpy.run_path(str(workspace / "generated/camb/dipu/third_party/DIOPI/impl/camb/device_configs.py"))
    assert _skips(ns["device_configs"]["cdist"]["para"]["p"]) == [0.001, 200000.0, 15, -500.0, "mean", "7"]
