"""Checks of a vendor's tests section."""

from __future__ import annotations

import re

from deeplink_gen.errors import Diagnostics
from deeplink_gen.model import Vendor
from deeplink_gen.model.testconfig import NUMPY


def check_tests(vendor: Vendor, diags: Diagnostics) -> None:
    # Names are unique per key (schema: uniqueItems) and keys per mapping, so no
    # key::name can be configured twice, which diopi_test would reject.
    spec = vendor.tests
    for rule in spec.diopi:
        for sub, dtype, loc in rule.dtype_items:
            if dtype not in NUMPY:
                diags.add(loc, ("tests", "diopi", rule.key) + sub,
                          f"{dtype} has no numpy type, so diopi_test cannot skip it (use one of: {', '.join(NUMPY)})")
    for cls in spec.disabled:
        for i, disabled in enumerate(cls.tests):
            test, loc = disabled.name.value, disabled.name.loc
            if re.match(r"\w+$", test):
                continue
            try:
                re.compile(test)
            except re.error as exc:
                diags.add(loc, ("tests", "pytorch", "disabled", cls.name, i), f"not a valid regular expression: {exc}")
