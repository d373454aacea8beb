"""A vendor's test section: what diopi_test skips or loosens (rendered into
DIOPI's impl/<vendor>/device_configs.py) and which DIPU PyTorch tests are
disabled or get another precision (dipu/tests/pytorch_config_<type>.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from deeplink_gen.errors import Diagnostics, Loc, key_path
from deeplink_gen.yamlload import Document

# DIOPI dtype name -> numpy attribute used in device_configs.py.
NUMPY = {
    "int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16", "int32": "int32",
    "uint32": "uint32", "int64": "int64", "uint64": "uint64", "float16": "float16",
    "float32": "float32", "float64": "float64", "bool": "bool_", "complex64": "complex64",
    "complex128": "complex128",
}
TOLERANCES = ("atol", "rtol", "atol_half", "rtol_half", "mismatch_ratio_threshold")


@dataclass(frozen=True)
class TensorSkip:
    tensors: tuple[str, ...]
    dtypes: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    loc: Loc


@dataclass(frozen=True)
class DiopiTestRule:
    key: str
    loc: Loc
    names: tuple[str, ...]
    tolerances: tuple[tuple[str, float], ...] = ()
    skip_all: bool = False
    skip_dtypes: tuple[str, ...] = ()
    skip_params: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    skip_tensors: tuple[TensorSkip, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class DisabledClass:
    name: str
    loc: Loc
    tests: tuple[str, ...]


@dataclass(frozen=True)
class TestSpec:
    diopi: tuple[DiopiTestRule, ...] = ()
    disabled: tuple[DisabledClass, ...] = ()
    precision: tuple[tuple[str, float], ...] = ()


EMPTY = TestSpec()


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def parse_tests(doc: Document) -> TestSpec:
    raw = doc.data.get("tests") or {}
    rules = []
    for key, body in sorted((raw.get("diopi") or {}).items()):
        where = ("tests", "diopi", key)
        tensor_skips = tuple(
            TensorSkip(tuple(item["tensors"]), tuple(item.get("dtypes") or ()),
                       tuple(tuple(s) for s in item.get("shapes") or ()),
                       doc.loc(where + ("skip_tensors", i)))
            for i, item in enumerate(body.get("skip_tensors") or ()))
        rules.append(DiopiTestRule(
            key=key, loc=doc.loc(where, key=True), names=tuple(body.get("names") or (key,)),
            tolerances=tuple((t, body[t]) for t in TOLERANCES if t in body),
            skip_all=bool(body.get("skip_all", False)),
            skip_dtypes=tuple(body.get("skip_dtypes") or ()),
            skip_params=tuple((p, tuple(_freeze(v) for v in values))
                              for p, values in sorted((body.get("skip_params") or {}).items())),
            skip_tensors=tensor_skips, reason=body.get("reason", ""),
        ))
    pt = raw.get("pytorch") or {}
    disabled = tuple(DisabledClass(cls, doc.loc(("tests", "pytorch", "disabled", cls), key=True), tuple(tests))
                     for cls, tests in sorted((pt.get("disabled") or {}).items()))
    precision = tuple(sorted((pt.get("precision") or {}).items()))
    return TestSpec(tuple(rules), disabled, precision)


def check_tests(doc: Document, spec: TestSpec, diags: Diagnostics) -> None:
    # Names are unique per key (schema: uniqueItems) and keys per mapping, so no
    # key::name can be configured twice, which diopi_test would reject.
    for rule in spec.diopi:
        where = ("tests", "diopi", rule.key)
        dtypes = [(("skip_dtypes", i), d) for i, d in enumerate(rule.skip_dtypes)]
        for n, ts in enumerate(rule.skip_tensors):
            dtypes += [(("skip_tensors", n, "dtypes", i), d) for i, d in enumerate(ts.dtypes)]
        for sub, d in dtypes:
            if d not in NUMPY:
                diags.add(doc.loc(where + sub), key_path(where + sub),
                          f"{d} has no numpy type, so diopi_test cannot skip it "
                          f"(use one of: {', '.join(NUMPY)})")
    for cls in spec.disabled:
        for i, test in enumerate(cls.tests):
            if re.match(r"\w+$", test):
                continue
            try:
                re.compile(test)
            except re.error as exc:
                where = ("tests", "pytorch", "disabled", cls.name, i)
                diags.add(doc.loc(where), key_path(where), f"not a valid regular expression: {exc}")
