"""Reading small pieces of C++ text: argument lists, a DIOPI call such as
``diopiAdd(ctx, out, self, other, alpha)``, the names an expression refers
to, and the wrappers custom code mentions. Raises ParseError."""

from __future__ import annotations

import re

from deeplink_gen.errors import ParseError
from deeplink_gen.model import CallArg

_CALL = re.compile(r"^\s*(?:::)?([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*;?\s*$", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WRAPPER = re.compile(r"\bdipu_\w+")
_DIOPI_CALLED = re.compile(r"\b(diopi[A-Z]\w*)\s*\(")
# C0 control characters, DEL and the Unicode line breaks (YAML reads these as newlines): in a
# comment or a statement of generated text, each would end it.
CONTROL = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]+")
# Unicode's bidirectional embeddings, overrides and isolates: they reorder how text is shown,
# so pasted C++ can show one thing and compile to another (g++ warns about them).
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_COMMENT_START = re.compile(r"/[*/]")
_NOT_NEWLINE = re.compile(r"[^\n]")

CPP_WORDS = frozenset("""
alignof and auto bool char const const_cast constexpr decltype double dynamic_cast false float
int int32_t int64_t long new not nullptr or reinterpret_cast short signed sizeof static_cast
this true uint8_t unsigned void size_t
""".split())


_SPLITTING = re.compile(r"[()\[\]{}<>,]")


def split_args(text: str) -> list[str]:
    """Split on commas that are not nested in (), [], {} or the <> of a cast
    or qualified template; string literals are opaque."""
    args: list[str] = []
    start = depth = 0
    masked = _STRING.sub(lambda m: "_" * len(m.group()), text)
    for m in _SPLITTING.finditer(masked):
        ch, i = m.group(), m.start()
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                raise ParseError("unbalanced ')'")
        elif ch == "<":
            if re.search(r"(_cast|\w::\w+)\s*$", masked[:i]):
                depth += 1
        elif ch == ">":
            if depth > 0 and "<" in text[start:i]:
                depth -= 1
        elif depth == 0:
            args.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise ParseError("unbalanced brackets")
    tail = text[start:]
    if tail.strip() or args:
        args.append(tail)
    return [a.strip() for a in args]


def parse_call(text: str) -> tuple[str, tuple[CallArg, ...]]:
    m = _CALL.match(text)
    if not m:
        raise ParseError("expected a call such as 'diopiAdd(ctx, out, self, other, alpha)'")
    args = split_args(m.group(2))
    if any(not a for a in args):
        raise ParseError("empty argument")
    return m.group(1), tuple(CallArg(a) for a in args)


def referenced_names(expr: str) -> list[str]:
    """Identifiers in *expr* that must name a variable: not members, qualified
    names, called functions, template names, C++ words or DIOPI enumerators."""
    masked = _STRING.sub(lambda m: " " * len(m.group()), expr)
    names = []
    for m in IDENT.finditer(masked):
        word = m.group()
        before = masked[: m.start()].rstrip()
        after = masked[m.end():].lstrip()
        if before.endswith(("::", ".", "->")) or after.startswith(("::", "(", "<")):
            continue
        if word in CPP_WORDS or word.startswith(("diopi", "Reduction", "RoundMode")) or word.isupper():
            continue
        names.append(word)
    return names


def mentioned_wrappers(text: str) -> set[str]:
    """The dipu_<op> wrapper names that C++ text mentions."""
    return set(_WRAPPER.findall(text or ""))


def called_diopi(text: str) -> set[str]:
    """The diopi<Name> functions that C++ text calls (string literals aside)."""
    masked = _STRING.sub(lambda m: " " * len(m.group()), text or "")
    return set(_DIOPI_CALLED.findall(masked))


def blank_comments(text: str) -> str:
    """*text* with its C/C++ comments turned into spaces, every newline and column kept."""
    return blank_spans(text, comment_spans(text))


def remove_comments(text: str) -> str:
    """*text* without its C/C++ comments."""
    return _drop_spans(text, comment_spans(text))


def comment_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each C/C++ comment of *text*, the first `*/` closing a `/*`, in linear time:
    a lazy pattern from `/*` to `*/` scans to the end of the text from every unclosed `/*`."""
    spans, pos, unclosed = [], 0, False
    while (found := _COMMENT_START.search(text, pos)) is not None:
        start = found.start()
        if found.group() == "//":
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
        else:
            end = -1 if unclosed else text.find("*/", start + 2)
            if end < 0:
                unclosed, pos = True, start + 1
                continue
            end += 2
        spans.append((start, end))
        pos = end
    return spans


def delimited_spans(text: str, opening: str, closing: str) -> list[tuple[int, int]]:
    """(start, end) of each *opening* ... first *closing* of *text* (a lazy `.*?` between them,
    in linear time)."""
    spans, pos = [], 0
    while (start := text.find(opening, pos)) >= 0:
        end = text.find(closing, start + len(opening))
        if end < 0:
            break
        pos = end + len(closing)
        spans.append((start, pos))
    return spans


def blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """*text* with each of *spans* turned into spaces, every newline kept."""
    parts, pos = [], 0
    for start, end in spans:
        parts += [text[pos:start], _NOT_NEWLINE.sub(" ", text[start:end])]
        pos = end
    return "".join(parts) + text[pos:]


def _drop_spans(text: str, spans: list[tuple[int, int]]) -> str:
    parts, pos = [], 0
    for start, end in spans:
        parts.append(text[pos:start])
        pos = end
    return "".join(parts) + text[pos:]
