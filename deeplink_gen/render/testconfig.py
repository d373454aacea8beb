"""Test configurations from the vendor's tests section: diopi_test's
device_configs.py (skips by dtype, parameter value and tensor dtype/shape,
and tolerance overrides) and DIPU's dipu/tests/pytorch_config_<type>.py
(disabled tests per class, exact names or regexes, and per-test precision)."""

from __future__ import annotations

import math
from typing import Any

from deeplink_gen import output_paths
from deeplink_gen.model.testconfig import NUMPY
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import render as render_template


def py(value: Any, *, tuples: bool = False) -> str:
    """A Python expression for a YAML value (lists become tuples when *tuples*); YAML's .nan
    and .inf, which repr() writes as names Python does not know, as float("nan") and float("inf")."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    items = [py(v, tuples=tuples) for v in value]
    if tuples:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return f"[{', '.join(items)}]"


def np_dtype(name: str) -> str:
    return f"np.{NUMPY[name]}"


def render(job: Job) -> dict[str, str]:
    ctx = dict(source=job.source, vendor=job.vendor, spec=job.vendor.tests, py=py, np_dtype=np_dtype)
    return {
        output_paths.device_configs(job.vendor): render_template("testconfig/device_configs.py.j2", **ctx),
        output_paths.pytorch_config(job.vendor): render_template("testconfig/pytorch_config.py.j2", **ctx),
    }
