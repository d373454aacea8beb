"""Test configurations from the vendor's tests section:

* diopi_test's ``device_configs.py`` (DIOPI impl/<vendor>/): skips by dtype,
  parameter value and tensor dtype/shape, and tolerance overrides;
* DIPU's ``dipu/tests/pytorch_config_<type>.py``: disabled tests per class
  (exact names or regexes) and per-test precision. The suffix is the
  lower-cased device type, which is how DIPU's test base picks the file.
"""

from __future__ import annotations

from typing import Any

from deeplink_gen.render.adaptor import impl_dir
from deeplink_gen.resolve import ResolvedVendor
from deeplink_gen.templating import render
from deeplink_gen.testspec import EMPTY, NUMPY


def py(value: Any, *, tuples: bool = False) -> str:
    """A Python literal for a YAML value (lists become tuples when *tuples*)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float, str)):
        return repr(value)
    items = [py(v, tuples=tuples) for v in value]
    if tuples:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return f"[{', '.join(items)}]"


def np_dtype(name: str) -> str:
    return f"np.{NUMPY[name]}"


def pytorch_config_path(rv: ResolvedVendor) -> str:
    return f"dipu/tests/pytorch_config_{rv.vendor.identity.device_type.lower()}.py"


def render_testconfig(rv: ResolvedVendor, source: str) -> dict[str, str]:
    spec = rv.vendor.tests or EMPTY
    ctx = dict(source=source, vendor=rv.vendor.identity, spec=spec, py=py, np_dtype=np_dtype)
    return {
        f"{impl_dir(rv)}/device_configs.py": render("testconfig/device_configs.py.j2", **ctx),
        pytorch_config_path(rv): render("testconfig/pytorch_config.py.j2", **ctx),
    }
