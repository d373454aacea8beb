"""Checks of the import's own on each imported runtime function and check
macro: shapes that are wrong whatever the SDK does. Each finding is a warning
at the DIPU file and line, saying what is wrong and what the import did: kept
it as is (custom code is carried verbatim), or fixed it because the entry it
became does it right (a table lookup through operator[] became {dtype}/{op},
which throws on a miss; a status pattern's checker clears the error on every
failure). Every check is one function over one body (or macro), so a new
kind of defect is one more function in CHECKS."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.runtime.checkers import Macro
from deeplink_gen.commands.import_dipu.runtime.cxx import Item, SourceFile, calls
from deeplink_gen.errors import Diagnostic
from deeplink_gen.interfaces.dipu import FUNCTIONS

CONTRACT = frozenset(f.name for f in FUNCTIONS.values())
_CLEAR = re.compile(r"(?i)getlasterror|clearerror|peekatlasterror")
_RAISE = re.compile(r"\b(?:TORCH_CHECK\s*\(\s*false|AT_ERROR\s*\(|throw\b)")
_GIVE_UP = re.compile(r"\breturn\s+(?:devapis::)?(?:EventStatus::PENDING|OpStatus::ERR_\w+)")
_LIBC = frozenset(("free", "malloc", "calloc", "realloc", "memcpy", "memset", "memmove", "printf", "fprintf", "fflush",
                   "abort", "exit"))
_MAP = re.compile(r"\bmap\s*<[^;{}]*?>\s+(\w+)\s*[={;(]")
# Parameters a body must use, whatever the SDK: which device, which stream, what to copy or set.
_MUST_USE = {"deviceStream_t", "deviceId_t", "int32_t", "void*", "const void*", "void**", "int", "size_t"}
_MAY_IGNORE = {"localDeviceId"}      # diclCommInitRank's hint, which most libraries do not take


@dataclass(frozen=True)
class Context:
    success: frozenset[str]          # every checker's success values
    library_prefixes: frozenset[str]  # prefixes of the calls the folder checks through a checker
    macros: frozenset[str]           # every macro of the folder
    maps: frozenset[str]             # every std::map variable the runtime files declare
    widened: frozenset[str]          # dtype tables mapping dtypes of different sizes onto one type


@dataclass(frozen=True)
class Body:
    key: str
    file: SourceFile
    item: Item
    code: str                        # masked body
    kind: str                        # what it became: call, pattern, noop, custom
    bracket_lookups: tuple[str, ...]

    def at(self, offset: int, message: str) -> Diagnostic:
        return warning(self.file.path, self.file.line_of(self.item.body[0] + max(offset, 0)), message)


def _prefix(name: str) -> str | None:
    m = re.match(r"[a-z]+|[A-Z][a-z]+", name)
    return m.group(0) if m else None


def _lookups(b: Body, ctx: Context) -> list[Diagnostic]:
    out = []
    for name in sorted(set(b.bracket_lookups) | {n for n in ctx.maps if re.search(rf"(?<![\w.]){n}\s*\[", b.code)}):
        fixed = name in b.bracket_lookups and b.kind in ("call", "pattern")
        out.append(b.at(b.code.find(name), (
            f"{b.key} looks {name} up with operator[], which inserts a default value on a miss (an unsupported "
            "dtype or reduce op silently becomes the first enumerator, AVG becomes SUM): "
            + ("fixed: the entry's {dtype}/{op} throws on a miss" if fixed else "kept as is"))))
    return out


def _async_error(b: Body, ctx: Context) -> list[Diagnostic]:
    m = re.search(r"if\s*\(\s*(\w+)\s*!=\s*(?:::)?(\w+)\s*\)\s*\{?\s*return\s+DICL_SUCCESS", b.code)
    if b.key != "diclGetCommAsyncError" or m is None or m.group(2) not in ctx.success:
        return []
    return [b.at(m.start(), "diclGetCommAsyncError returns DICL_SUCCESS when the communicator HAS an asynchronous "
                            "error (the test is inverted): kept as is; DICL_SUCCESS should mean no error")]


def _null_free(b: Body, ctx: Context) -> list[Diagnostic]:
    m = re.search(r"if\s*\(\s*(?:!\s*(\w+)|(\w+)\s*==\s*(?:nullptr|NULL|0))\s*\)\s*(?:\{\s*)?(?:\w+\s*\()?\s*(?:::)?\w+"
                  r"\s*\(\s*\1?\2?\s*\)", b.code)
    return [b.at(m.start(), f"{b.key} frees its pointer only when the pointer is null (the test is inverted): every "
                            "real pointer leaks: kept as is")] if m else []


def _swallowed_query(b: Body, ctx: Context) -> list[Diagnostic]:
    """A query that compares with success and answers 'not done' for anything else, raising for nothing."""
    q = re.search(r"(?:return|if)\s*\(?\s*(?:\w+|(?:::)?\w+\s*\([^;]*\))\s*==\s*(?:::)?(\w+)\s*\)?", b.code)
    if b.key not in ("isStreamEmpty", "getEventStatus") or not q or b.kind != "custom" or _RAISE.search(b.code) \
            or any(name in ctx.macros for name in calls(b.code)):
        return []
    return [b.at(q.start(), f"{b.key} treats every status but success as 'not done', so a real error is swallowed "
                            "and the not-ready status may stay as the sticky last error: kept as is")]


def _constant_status(b: Body, ctx: Context) -> list[Diagnostic]:
    if b.key not in ("isStreamEmpty", "getEventStatus") or calls(b.code) or not b.code.strip():
        return []
    return [b.at(0, f"{b.key} answers without asking the device, so work still running counts as done "
                    "(the caching allocator reuses memory in use): kept as is")]


def _pending_failure(b: Body, ctx: Context) -> list[Diagnostic]:
    """An event query whose failure path answers PENDING instead of raising."""
    if b.key != "getEventStatus" or b.kind != "custom" or _RAISE.search(b.code) or not calls(b.code):
        return []
    pending = list(re.finditer(r"\breturn\s+(?:devapis::)?EventStatus::PENDING", b.code))
    if not pending or len(re.findall(r"\breturn\b", b.code)) < 2:
        return []
    return [b.at(pending[-1].start(), "getEventStatus answers PENDING when the query fails, so a failed event "
                                      "stays pending for ever instead of raising: kept as is")]


def _inverted_check(b: Body, ctx: Context) -> list[Diagnostic]:
    return [b.at(m.start(), f"{b.key} checks that {m.group(1)} is NOT {m.group(2)}, so it raises when the call "
                            "succeeds and passes when it fails (the test is inverted): kept as is")
            for m in re.finditer(r"\b(?:TORCH_CHECK|TORCH_INTERNAL_ASSERT)\s*\(\s*(\w+)\s*!=\s*(?:::)?(\w+)\s*,", b.code)
            if m.group(2) in ctx.success]


def _widened_reduction(b: Body, ctx: Context) -> list[Diagnostic]:
    if not any(p.type == "const ReduceOp&" for p in FUNCTIONS[b.key].params):
        return []
    return [b.at(use.start(), f"{b.key} reduces through {name}, which widens dtypes to a vendor type of another "
                              "element size, so it combines bytes, not elements (widening is sound only for "
                              "collectives that move data unchanged): kept as is")
            for name in sorted(ctx.widened) if (use := re.search(rf"(?<![\w.]){re.escape(name)}\b", b.code))]


def _sticky(b: Body, ctx: Context) -> list[Diagnostic]:
    """A path that raises or gives up without clearing the error another path clears."""
    clears = [c for c in calls(b.code) if _CLEAR.search(c)]
    if not clears:
        return []
    out = []
    cleared_at = [m.start() for m in re.finditer(r"(?<![\w.])(?:::)?(?:" + "|".join(map(re.escape, clears)) + r")\s*\(",
                                                  b.code)]
    for m in list(_RAISE.finditer(b.code)) + list(_GIVE_UP.finditer(b.code)):
        if not any(_encloses(b.code, at, m.start()) for at in cleared_at):
            fixed = b.kind == "pattern" and _RAISE.match(b.code, m.start())
            out.append(b.at(m.start(), (
                f"{b.key} clears the failed call's error ({clears[0]}) on one path but "
                + ("raises" if _RAISE.match(b.code, m.start()) else "returns") + " without clearing it on another, "
                "so the error stays as the sticky last error and the next checkLastError() fails: "
                + ("fixed: its checker clears the error on every failure" if fixed else "kept as is"))))
    return out


def _encloses(code: str, first: int, then: int) -> bool:
    """Whether code at *then* runs after code at *first* on every path: *first* comes
    earlier and no block closes between them below its own depth."""
    if first >= then:
        return False
    depth = lowest = 0
    for c in code[first:then]:
        depth += (c == "{") - (c == "}")
        lowest = min(lowest, depth)
    return lowest >= 0


def _reset_by_check(b: Body, ctx: Context) -> list[Diagnostic]:
    m = re.search(r"\bcheckLastError\s*\(\s*\)\s*;[^{}]*?" + _GIVE_UP.pattern, b.code)
    return [b.at(m.start(), f"{b.key} calls checkLastError() to clear the error before giving up, but "
                            "checkLastError() raises on that very error: kept as is")] if m else []


def _quiet_check(b: Body, ctx: Context) -> list[Diagnostic]:
    if b.key != "checkLastError" or b.kind != "custom" or _RAISE.search(b.code) or not calls(b.code):
        return []
    if any(name in ctx.macros for name in calls(b.code)):
        return []
    return [b.at(0, "checkLastError only reports the last error and never raises, though DIPU calls it to "
                    "throw on a failed launch: kept as is")]


def _ignored_parameter(b: Body, ctx: Context) -> list[Diagnostic]:
    text = b.file.body(b.item)
    if b.kind == "noop" or not calls(b.code) or re.match(r"\s*TORCH_CHECK\s*\(\s*false", b.code) \
            or re.search(r"(?i)not (?:be )?(?:implemented|supported)|unsupported", text):
        return []
    out = []
    for param, contract in zip(b.item.params, FUNCTIONS[b.key].params):
        if param.name and contract.type in _MUST_USE and contract.name not in _MAY_IGNORE and not re.search(rf"(?<![\w.]){param.name}\b", b.code):
            out.append(b.at(0, f"{b.key} ignores its parameter {contract.name} ({contract.type}): "
                               + {"deviceStream_t": "the work is not ordered on the caller's stream",
                                  "deviceId_t": "it acts on the current device, not the one asked for",
                                  "int32_t": "it answers for the current device, not the one asked for"}.get(
                                   contract.type, "the caller's value is lost")
                               + ": kept as is"))
    return out


def _unchecked(b: Body, ctx: Context) -> list[Diagnostic]:
    out = []
    for m in re.finditer(r"(?:^|[;{}])\s*((?:::)?([A-Za-z_]\w*))\s*\([^;]*\)\s*;", b.code):
        callee = m.group(2)
        if callee in ctx.macros or callee in CONTRACT or callee in _LIBC or _CLEAR.search(callee) \
                or _prefix(callee) not in ctx.library_prefixes:
            continue
        out.append(b.at(m.start(1), f"{b.key} calls {callee} without checking its status, while the folder "
                                    "checks the other calls of that library: kept as is"))
    return out


CHECKS = (_lookups, _async_error, _null_free, _swallowed_query, _constant_status, _pending_failure, _inverted_check, _widened_reduction,
          _sticky, _reset_by_check, _quiet_check, _ignored_parameter, _unchecked)


def _macro_defects(macros: dict[str, Macro]) -> list[Diagnostic]:
    out = []
    for name, m in sorted(macros.items()):
        code = m.file.code[m.item.start:m.item.end]
        if len(re.findall(r"\breturn\b", code)) >= 2 and re.search(r"\breturn\s+\w*SUCCESS", code):
            out.append(warning(m.file.path, m.item.line, (
                f"{name} returns success from its caller as soon as the call succeeds, so nothing after it runs "
                "(a result the function meant to examine is never looked at): kept as is")))
        if m.checker is not None and m.checker.get("on_failure") == "print":
            out.append(warning(m.file.path, m.item.line, (
                f"{name} only prints a failed call and carries on, so every error it checks is ignored: "
                "kept as is (its checker's on_failure: print)")))
    return out


def check(translated: dict, checkers: dict[str, dict], macros: dict[str, Macro], widened: set[str],
          files: list[SourceFile]) -> list[Diagnostic]:
    """The defects of the imported functions and the folder's check macros; *widened*
    names the dtype tables that map dtypes of different sizes onto one vendor type,
    *files* are the runtime files (for the maps they declare)."""
    checked = {c["macro"] for c in checkers.values()}
    ctx = Context(
        success=frozenset(s for c in checkers.values() for s in c["success"]),
        library_prefixes=frozenset(
            [p for _, _, t in translated.values() if t.kind in ("call", "pattern") and t.checker not in (None, "none")
             for name in calls(str(t.entry)) if (p := _prefix(name))]
            + [p for f, item, _ in translated.values() for m in re.finditer(
                r"\b(\w+)\s*\(\s*(?:::)?(\w+)\s*\(", f.body_code(item))
               if m.group(1) in checked and (p := _prefix(m.group(2)))]),
        macros=frozenset(macros), maps=frozenset(n for f in files for n in _MAP.findall(f.code)),
        widened=frozenset(widened))
    out = _macro_defects(macros)
    for key, (file, item, t) in translated.items():
        body = Body(key, file, item, file.body_code(item), t.kind, t.bracket_lookups)
        for rule in CHECKS:
            out += rule(body, ctx)
    return out
