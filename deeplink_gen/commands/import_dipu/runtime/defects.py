"""Checks of the import's own on each imported runtime function: shapes of
body that are wrong whatever the SDK. Each finding is a warning at the DIPU
file and line, saying what is wrong and what the import did: kept it as is
(custom code is carried verbatim), or fixed it because the entry it became
does it right (a table lookup through operator[] became {dtype}/{op}, which
throws on a miss)."""

from __future__ import annotations

import re

from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.runtime.cxx import SourceFile, calls
from deeplink_gen.errors import Diagnostic
from deeplink_gen.interfaces.dipu import FUNCTIONS

CONTRACT = frozenset(f.name for f in FUNCTIONS.values())


def _at(file: SourceFile, item, offset: int, message: str) -> Diagnostic:
    return warning(file.path, file.line_of(item.body[0] + offset), message)


def check(translated: dict, checkers: dict[str, dict], macros: set[str], widened: set[str]) -> list[Diagnostic]:
    """The defects of the imported functions; *widened* names the dtype tables that map
    dtypes of different element sizes onto one vendor type."""
    out: list[Diagnostic] = []
    success = {s for c in checkers.values() for s in c["success"]}
    checked_prefixes = {re.match(r"[a-z]+|[A-Z][a-z]+", name).group(0)
                        for _, _, t in translated.values() if t.kind == "call"
                        for name in calls(str(t.entry)) if re.match(r"[a-z]+|[A-Z][a-z]+", name)}
    for key, (file, item, t) in translated.items():
        code = file.body_code(item)
        kept = "kept as is" if t.kind == "custom" else "fixed: the entry checks it"
        for name in t.bracket_lookups:
            fixed = t.kind == "call"
            out.append(_at(file, item, code.find(name), (
                f"{key} looks {name} up with operator[], which inserts a default value on a miss "
                "(an unsupported dtype or reduce op silently becomes the first enumerator, AVG becomes SUM): "
                + ("fixed: the entry's {dtype}/{op} throws on a miss" if fixed else "kept as is"))))
        if key == "diclGetCommAsyncError":
            m = re.search(r"if\s*\(\s*(\w+)\s*!=\s*(?:::)?(\w+)\s*\)\s*\{?\s*return\s+DICL_SUCCESS", code)
            if m and m.group(2) in success:
                out.append(_at(file, item, m.start(), (
                    "diclGetCommAsyncError returns DICL_SUCCESS when the communicator HAS an asynchronous error "
                    "(the test is inverted): kept as is; DICL_SUCCESS should mean no error")))
        m = re.search(r"if\s*\(\s*(?:!\s*(\w+)|(\w+)\s*==\s*(?:nullptr|NULL|0))\s*\)\s*(?:\{\s*)?(?:\w+\s*\()?\s*(?:::)?\w+\s*\(\s*\1?\2?\s*\)",
                      code)
        if m:
            out.append(_at(file, item, m.start(), (
                f"{key} frees its pointer only when the pointer is null (the test is inverted): "
                "every real pointer leaks: kept as is")))
        if key in ("isStreamEmpty", "getEventStatus"):
            q = re.search(r"return\s*\(?\s*(?:\w+|(?:::)?\w+\s*\([^;]*\))\s*==\s*(?:::)?(\w+)\s*\)?\s*;", code)
            if q and q.group(1) in success and "TORCH_CHECK" not in code and t.kind == "custom":
                out.append(_at(file, item, q.start(), (
                    f"{key} treats every status but success as 'not done', so a real error is swallowed "
                    "and the not-ready status may stay as the sticky last error: kept as is")))
        for m in re.finditer(r"\b(?:TORCH_CHECK|TORCH_INTERNAL_ASSERT)\s*\(\s*(\w+)\s*!=\s*(?:::)?(\w+)\s*,", code):
            if m.group(2) in success:
                out.append(_at(file, item, m.start(), (
                    f"{key} checks that {m.group(1)} is NOT {m.group(2)}, so it raises when the call succeeds "
                    "and passes when it fails (the test is inverted): kept as is")))
        if any(p.type == "const ReduceOp&" for p in FUNCTIONS[key].params):
            for name in widened:
                use = re.search(rf"(?<![\w.]){re.escape(name)}\b", code)
                if use:
                    out.append(_at(file, item, use.start(), (
                        f"{key} reduces through {name}, which widens dtypes to a vendor type of another element "
                        "size, so it combines bytes, not elements (widening is sound only for collectives that "
                        "move data unchanged): kept as is")))
        clears = [c for c in calls(code) if re.search(r"(?i)getlasterror|clearerror|peekatlasterror", c)]
        fail = re.search(r"\b(?:TORCH_CHECK\s*\(\s*false|AT_ERROR\s*\(|throw\b)", code)
        if clears and fail and t.kind == "custom":
            segment = code[code.rfind("}", 0, fail.start()) + 1:fail.start()]
            if not any(c in segment for c in clears):
                out.append(_at(file, item, fail.start(), (
                    f"{key} clears the failed call's error ({clears[0]}) on one path but raises without "
                    "clearing it on another, so the error stays as the sticky last error and the next "
                    "checkLastError() fails: kept as is")))
        for name_match in re.finditer(r"(?:^|[;{}]\s*)((?:::)?([A-Za-z_]\w*))\s*\([^;]*\)\s*;", code):
            callee = name_match.group(2)
            prefix = re.match(r"[a-z]+|[A-Z][a-z]+", callee)
            if callee in macros or callee in CONTRACT or re.search(r"(?i)lasterror|clearerror", callee) or prefix is None or prefix.group(0) not in checked_prefixes:
                continue
            out.append(_at(file, item, name_match.start(1), (
                f"{key} calls {callee} without checking its status, while the folder checks the other calls "
                f"of that library: {kept if t.kind == 'custom' else 'kept as is (checker: none)'}")))
    return out
