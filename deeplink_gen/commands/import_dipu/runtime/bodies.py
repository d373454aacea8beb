"""One DIPU runtime function as a vendor-file entry. A body that is only
checked calls, plain locals and a final return becomes call templates (its
parameters as {placeholders}, its table lookups as {dtype} and {op}); an
empty body is noop; anything else is `custom:`, the body verbatim with the
vendor's parameter names renamed to the contract's and a `;` after each
check macro that had none (the checker macros are expressions)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen.commands.import_dipu.runtime.cxx import Item, SourceFile, match_close
from deeplink_gen.commands.import_dipu.runtime.statuses import status_pattern
from deeplink_gen.interfaces.dipu import PROVIDED
from deeplink_gen.model.interfaces import DipuFunction

_IDENT = re.compile(r"(?<![\w.])(?<!->)(?<!::)([A-Za-z_]\w*)\b")
_LOCAL = re.compile(r"^((?:const\s+)?(?:::)?[A-Za-z_][\w:]*(?:\s*\*)?)\s+([A-Za-z_]\w*)\s*(?:=\s*(-?\w+)|\{\s*\})?$")
_SUCCESS = {"diclResult_t": "DICL_SUCCESS", "OpStatus": "OpStatus::SUCCESS"}


@dataclass(frozen=True)
class Tables:
    """The comm tables found in the folder: their names, each read as {dtype} or {op}."""

    dtype: frozenset[str] = frozenset()
    op: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Statement:
    start: int                   # offsets into the body
    end: int
    macro: str | None = None     # a check macro's name when the statement is one invocation
    inner: tuple[int, int] = (0, 0)   # the macro's argument


_INVOCATION = re.compile(r"(?:::)?([A-Za-z_]\w*)\s*\(")
_SPACE_THEN_SEMICOLON = re.compile(r"\s*;")
_NAME_AFTER = re.compile(r"\s*[A-Za-z_]")


def statements(code: str, macros: set[str]) -> list[Statement] | None:
    """The top-level statements of masked body *code*; None when it has blocks
    (if, loops, braces), which only `custom:` can say."""
    out, i, n = [], 0, len(code)
    while i < n:
        if code[i].isspace() or code[i] == ";":
            i += 1
            continue
        m = _INVOCATION.match(code, i)
        if m and m.group(1) in macros:
            open_ = m.end() - 1
            close = match_close(code, open_)
            if close < 0:
                return None
            end = close + 1
            semicolon = _SPACE_THEN_SEMICOLON.match(code, end)
            if semicolon:
                end = semicolon.end()
            out.append(Statement(i, end, m.group(1), (open_ + 1, close)))
            i = end
            continue
        depth, j = 0, i
        while j < n:
            c = code[j]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
                if depth == 0 and _NAME_AFTER.match(code, j + 1):
                    return None     # `M(x) return y;`: a macro's use without its `;`, then another statement
            elif c in "{}" and depth == 0:
                return None
            elif c == ";" and depth == 0:
                break
            j += 1
        if j >= n:
            return None
        out.append(Statement(i, j + 1))
        i = j + 1
    return out


def rename(text: str, code: str, names: dict[str, str]) -> str:
    """*text* with each identifier in *names* (outside comments and literals,
    not after `.`, `->` or `::`) replaced."""
    if not names:
        return text
    out, last = [], 0
    for m in _IDENT.finditer(code):
        if m.group(1) in names:
            out += [text[last:m.start()], names[m.group(1)]]
            last = m.end()
    return "".join(out) + text[last:]


def _template(text: str, code: str, holes: dict[str, str], call: bool = True) -> str:
    """A template of DIPU's *text*: braces doubled, each name in *holes* as {hole}, the
    table lookups _lookups marked as {dtype}/{op}, line breaks as one space, and for a
    call (not a return expression) its leading `::` dropped, the global C function
    being implied. Comments are dropped (*code* blanks them): once the lines are joined, a
    // comment would swallow the rest."""
    text = "".join(c if k != " " or c.isspace() else " " for c, k in zip(text, code))
    escaped_text = text.replace("{", "\x00").replace("}", "\x01")
    out = rename(escaped_text, code, {k: "{" + v + "}" for k, v in holes.items()})
    out = out.replace("\x00", "{{").replace("\x01", "}}").replace("__dtype__", "{dtype}").replace("__op__", "{op}")
    out = re.sub(r"\s*\n\s*", " ", out)
    return out.removeprefix("::") if call else out


def _lookups(text: str, code: str, tables: Tables) -> tuple[str, str, list[str]]:
    """Table lookups `T.at(datatype)` / `T[datatype]` as the identifiers __dtype__ / __op__;
    the lookups through operator[] are returned for the defect report."""
    brackets = []
    for kind, names in (("dtype", tables.dtype), ("op", tables.op)):
        for name in names:
            pattern = re.compile(rf"(?<![\w.]){re.escape(name)}\s*(\.at\s*\(\s*([\w.]+)\s*\)|\[\s*([\w.]+)\s*\])")
            while (m := pattern.search(code)) is not None:
                if m.group(1).startswith("["):
                    brackets.append(name)
                repl = f"__{kind}__"
                text = text[:m.start()] + repl + text[m.end():]
                code = code[:m.start()] + repl + code[m.end():]
    return text, code, brackets


@dataclass(frozen=True)
class Translated:
    entry: object                 # the vendor-file value: a string or a mapping, its checker not yet said
    kind: str                     # "call", "pattern", "noop", "custom"
    checker: str | None = None    # the checker of its calls ("none": unchecked)
    bracket_lookups: tuple[str, ...] = ()
    needs: tuple[tuple[str, object], ...] = ()   # what its checker must hold (a status pattern's codes)
    fallback: object = None       # the custom entry, where the checker cannot hold that

    def finish(self, section_checker: str | None) -> object:
        """The entry, naming its checker where it is not its section's."""
        if self.kind not in ("call", "pattern") or self.checker == section_checker:
            return self.entry
        entry = {"call": self.entry} if isinstance(self.entry, str) else dict(self.entry)
        return {"checker": self.checker, **entry}


def translate(fn: DipuFunction, file: SourceFile, item: Item, checkers: dict[str, str], tables: Tables,
              macros: set[str], by_status: dict[str, str]) -> Translated:
    """The entry for *fn*, defined by *item* of *file*; *checkers* maps each
    check macro that became a checker to the checker's name, *by_status* each
    checker's status type to it; *macros* are all the folder's macros (a call
    of one that is no checker stays custom code)."""
    dipu_names = [p.name for p in item.params]
    holes = {d: c for d, c in zip(dipu_names, fn.param_names) if d}
    renames = {d: c for d, c in holes.items() if d != c}
    body, code = file.body(item), file.body_code(item)
    body_l, code_l, brackets = _lookups(body, code, tables)
    # A parameter named like a provided placeholder ({op} in diclReduceScatter) cannot be a hole.
    templatable = not set(fn.param_names) & (set(PROVIDED) | {"kind"})
    custom = {"custom": custom_body(body, code, renames, set(checkers))}
    branched = _pattern(fn, body_l, code_l, checkers, holes) if templatable else None
    if branched is not None:
        return Translated(*branched, tuple(brackets))
    status = status_pattern(fn.key, code_l) if templatable else None
    if status is not None and status[1].group("type").removeprefix("::") in by_status:
        pattern, m, needs = status
        call = _template(body_l[m.start("call"):m.end("call")], code_l[m.start("call"):m.end("call")], holes)
        needs = {**needs, "success": m.group("ok")}
        return Translated({"pattern": pattern, "call": call}, "pattern", by_status[m.group("type").removeprefix("::")],
                          tuple(brackets), tuple(needs.items()), custom)
    parts = statements(code_l, set(checkers)) if templatable else None
    # a call of a macro that is no checker stays C++
    if parts is not None and any(st.macro is None and (m := re.match(r"\s*(?:::)?(\w+)\s*\(", code_l[st.start:st.end]))
                                 and m.group(1) in macros for st in parts):
        parts = None
    if parts is not None:
        translated = _as_calls(fn, body_l, code_l, parts, checkers, holes)
        if translated is not None:
            return Translated(*translated, tuple(brackets))
    return Translated(custom, "custom", None, tuple(brackets))


def custom_body(body: str, code: str, renames: dict[str, str], macros: set[str]) -> str:
    """The body verbatim, parameters renamed, each check macro statement ended with `;`."""
    # A contract name the body already uses for something else (a local named like the
    # parameter's contract name) is renamed out of the way first.
    used = {m.group(1) for m in _IDENT.finditer(code)}
    renames = dict(renames)
    for contract in list(renames.values()):
        if contract in used and contract not in renames:
            fresh = contract + "_"
            while fresh in used:
                fresh += "_"
            renames[contract] = fresh
    text = end_statements(rename(body, code, renames), rename(code, code, renames), macros)
    lines = text.strip("\n").split("\n")
    indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    return "\n".join("  " + l[indent:] if l.strip() else "" for l in lines).rstrip() + "\n"


def end_statements(text: str, code: str, macros: set[str]) -> str:
    """*text* with a `;` after each invocation of one of *macros* (checker macros, which
    are expressions) that DIPU's statement macros let stand without one."""
    inserts = []
    for m in re.finditer(r"(?<![\w.])(?:::)?([A-Za-z_]\w*)\s*\(", code):
        if m.group(1) in macros:
            close = match_close(code, m.end() - 1)
            if close > 0 and not code[close + 1:].lstrip().startswith((";", ")", ",")):
                inserts.append(close + 1)
    for at in reversed(inserts):
        text = text[:at] + ";" + text[at:]
    return text


def _cut(text: str, code: str, start: int, end: int, semicolon: bool = False) -> tuple[str, str]:
    """text[start:end] and its mask less what the mask shows as blank at either end (whitespace and
    comments), and less a trailing `;` where *semicolon*: the two cut at the same offsets, as
    templating needs, where stripping each alone would leave a comment in one only."""
    while start < end and code[start].isspace():
        start += 1
    while end > start and (code[end - 1].isspace() or (semicolon and code[end - 1] == ";")):
        end -= 1
    return text[start:end], code[start:end]


def _as_calls(fn: DipuFunction, body: str, code: str, parts: list[Statement], checkers: dict[str, str],
              holes: dict[str, str]) -> tuple[object, str, str | None] | None:
    """(entry, kind, checker) when the statements are checked calls, locals and a return; else None."""
    locals_: dict[str, str] = {}
    calls: list[str] = []
    used_checkers: set[str | None] = set()
    ret = None
    success = _SUCCESS.get(fn.returns)
    for k, st in enumerate(parts):
        text, scode = _cut(body, code, st.start, st.end, semicolon=True)
        if st.macro is not None:
            inner = _cut(body, code, *st.inner)
            calls.append(inner)
            used_checkers.add(checkers[st.macro])
            continue
        stmt = scode
        if re.match(r"return\b", stmt):
            if k != len(parts) - 1:
                return None
            value, vcode = _cut(text, stmt, len("return"), len(stmt))
            if value and value != success:
                ret = (value, vcode)
            continue
        local = _LOCAL.match(stmt)
        if local and local.group(1) not in ("return", "delete", "throw") and not calls:
            locals_[local.group(2)] = " ".join(local.group(1).split()).removeprefix("::")
            continue
        if re.fullmatch(r"(?:::)?[A-Za-z_][\w:]*\s*\(.*\)", stmt, re.S):
            calls.append((text, stmt))
            used_checkers.add("none")
            continue
        return None
    if not calls and ret is None:
        return ("noop", "noop", None)
    if not calls:
        return None
    if len(used_checkers) > 1:
        return None
    holes = {**holes, **{name: name for name in locals_}}
    templates = [_template(t, c, holes) for t, c in calls]
    entry: dict = {}
    if locals_:
        entry["locals"] = locals_
    if len(templates) == 1:
        entry["call"] = templates[0]
    else:
        entry["calls"] = templates
    if ret is not None:
        entry["return"] = _template(ret[0], ret[1], holes, call=False)
    checker = next(iter(used_checkers))
    return (entry["call"] if list(entry) == ["call"] else entry, "call", checker)


# Patterns whose body is one if/else choosing between two checked calls: the condition
# (on the contract's parameter names) and the parts the two calls become.
_CHOICES = {
    "createStream": (("prior",), "stream_priority", ("with_priority", "plain")),
    "memCopyD2D": (("dstDevId == srcDevId", "srcDevId == dstDevId"), "peer_copy", ("same_device", "peer")),
    "memCopyD2DAsync": (("dstDevId == srcDevId", "srcDevId == dstDevId"), "peer_copy", ("same_device", "peer")),
}
_IF_ELSE = re.compile(r"\s*if\s*\((.*?)\)\s*\{(.*)\}\s*else\s*\{(.*)\}\s*", re.S)


def _pattern(fn: DipuFunction, body: str, code: str, checkers: dict[str, str],
             holes: dict[str, str]) -> tuple[object, str, str | None] | None:
    """The pattern entry of a body that is `if (<its condition>) { A } else { B }`, A and B one
    checked call each, of one checker; None otherwise."""
    choice = _CHOICES.get(fn.key)
    m = _IF_ELSE.fullmatch(code)
    if choice is None or m is None:
        return None
    condition = " ".join(rename(m.group(1), m.group(1), holes).split())
    if condition not in choice[0]:
        return None
    parts, used = [], set()
    for g in (2, 3):
        inner_code, inner = code[m.start(g):m.end(g)], body[m.start(g):m.end(g)]
        sts = statements(inner_code, set(checkers))
        if not sts or len(sts) != 1 or sts[0].macro is None:
            return None
        st = sts[0]
        used.add(checkers[st.macro])
        parts.append(_template(*_cut(inner, inner_code, *st.inner), holes))
    if len(used) != 1:
        return None
    entry = {"pattern": choice[1], choice[2][0]: parts[0], choice[2][1]: parts[1]}
    return entry, "pattern", used.pop()
