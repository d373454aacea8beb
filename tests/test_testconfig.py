"""diopi_test device_configs.py and DIPU pytorch_config_<type>.py rendered
from the vendors' tests sections, imported with stand-in Skip/common_utils."""

from __future__ import annotations

import re
import runpy
import sys

import numpy as np
import pytest

from helpers import replace_section, run_cli

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
]


@pytest.mark.parametrize("name,text,line,message", CASES, ids=[c[0] for c in CASES])
def test_tests_section_errors(workspace, name, text, line, message):
    base = replace_section(workspace / "vendors" / "droplet.yaml", text)
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 1, result.output
    assert re.search(rf"vendors/droplet\.yaml:{base + line - 1}:\d+: error: {message}", result.output), result.output
