"""Bodies that test a call's status themselves. DIPU's getEventStatus
(success: READY; not-ready codes: clear the error, PENDING; else fail) and
mallocDevice (success; out-of-memory without throwExcepion: clear, ERR_NOMEM;
else fail) are the query and malloc patterns, whose codes live on the
checker: such a body becomes the pattern and says what the checker must hold
(its not_ready codes, out_of_memory code, clear_error function). The folder
then grants those where every function agrees, else the body stays custom."""

from __future__ import annotations

import re

from deeplink_gen.commands.import_dipu.runtime.cxx import calls

_DECL = r"\s*(?:const\s+)?(?:::)?(?P<type>[\w:]+)\s+(?P<var>\w+)\s*=\s*(?P<call>(?:::)?\w+\s*\([^;]*\))\s*;"
_OK = r"\s*if\s*\(\s*(?P=var)\s*==\s*(?:::)?(?P<ok>\w+)\s*\)\s*\{?\s*return\s+(?:devapis::)?{ready}\s*;\s*\}?"
_THEN = r"\s*\{{\s*(?:(?P<clear>(?:::)?\w+)\s*\(\s*\)\s*;\s*)?return\s+(?:devapis::)?{pending}\s*;\s*\}}"
_FAIL = r"\s*(?:else\s*\{)?(?P<fail>.*?)\}?\s*"
QUERY = re.compile(_DECL + _OK.replace("{ready}", r"EventStatus::READY")
                   + r"\s*(?:else\s+)?if\s*\((?P<cond>[^)]*)\)" + _THEN.format(pending=r"EventStatus::PENDING") + _FAIL,
                   re.S)
MALLOC = re.compile(_DECL + _OK.replace("{ready}", r"OpStatus::SUCCESS")
                    + r"\s*(?:else\s+)?if\s*\((?P<cond>[^)]*)\)" + _THEN.format(pending=r"OpStatus::ERR_NOMEM") + _FAIL,
                    re.S)
# What a failure path may call: reporting only.
_REPORTING = frozenset(("TORCH_CHECK", "AT_ERROR", "printf", "fprintf", "fflush", "runtime_error", "to_string", "string"))


def status_pattern(key: str, code: str) -> tuple[str, re.Match, dict] | None:
    """(pattern, match, what the checker must hold) when masked body *code* of *key* is
    the query or malloc shape; None otherwise."""
    shape = {"getEventStatus": ("query", QUERY), "mallocDevice": ("malloc", MALLOC)}.get(key)
    m = shape[1].fullmatch(code) if shape else None
    if m is None or not set(calls(m.group("fail"))) <= _REPORTING or not re.search(r"\b(?:TORCH_CHECK|throw|AT_ERROR)\b",
                                                                                   m.group("fail")):
        return None
    codes = re.findall(rf"\b{m.group('var')}\s*==\s*(?:::)?(\w+)", m.group("cond"))
    rest = re.sub(rf"\b{m.group('var')}\s*==\s*(?:::)?\w+|\|\||\s", "", m.group("cond"))
    if shape[0] == "query":
        if not codes or rest:
            return None
        needs = {"not_ready": tuple(codes)}
    else:
        if len(codes) != 1 or not re.fullmatch(r"&&!\w+|!\w+&&", rest):
            return None
        needs = {"out_of_memory": codes[0]}
    needs["clear_error"] = m.group("clear").removeprefix("::") if m.group("clear") else None
    return shape[0], m, needs
