"""Reading small pieces of C++ text: argument lists, a DIOPI call such as
``diopiAdd(ctx, out, self, other, alpha)``, the names an expression refers
to, and the wrappers custom code mentions. Raises ParseError."""

from __future__ import annotations

import bisect
import re

from deeplink_gen.errors import Diagnostic, Loc, ParseError, UserError
from deeplink_gen.model import CallArg

# C++ text here comes from vendor files, pasted, of any length: every reading below is linear
# in it (no pattern retried from many starts over the same text, no slice of the text per token).
# A call, with the blanks around it stripped first (`\s*;?\s*$` tries every split of a run).
_CALL = re.compile(r"^(?:::)?([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*;?$", re.S)
_QUOTE = re.compile(r"[\"']")
_LITERAL = {'"': re.compile(r'"(?:\\.|[^"\\])*"'), "'": re.compile(r"'(?:\\.|[^'\\])*'")}
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


# DIPU's memory-format placeholder in custom code; the render fills it with the vendor's
# memory format, else with its default text (render/kernels.fill_placeholders).
MEMORY_FORMAT_PLACEHOLDER = re.compile(r"\$\{PREFERRED_MEMORY_FORMAT_PLACEHOLDER(_3D)?:-([^}]*)\}")


def as_filled(text: str) -> tuple[str, ...]:
    """*text* as the render may paste it: its placeholders with their default texts, and with
    a memory format (a name, here); just *text* when it has none."""
    if "PREFERRED_MEMORY_FORMAT_PLACEHOLDER" not in text:
        return (text,)
    return (MEMORY_FORMAT_PLACEHOLDER.sub(lambda m: m.group(2), text), MEMORY_FORMAT_PLACEHOLDER.sub("format", text))


def refuse_bidi(text: str, name: str, key: tuple | str = ()) -> None:
    """A UserError under *key* at the first bidirectional control character of *text* (file *name*)."""
    found = BIDI.search(text)
    if found is not None:
        raise UserError([Diagnostic(Loc.at(name, text, found.start()), key, bidi_message(found.group()))])


def bidi_message(char: str, how: str = "") -> str:
    """Why a text holding the bidirectional control character *char* is refused (*how*: how it was written)."""
    return (f"holds the bidirectional control character U+{ord(char):04X}{how}, which shows text in another "
            "order than it is read; remove it")


def split_args(text: str) -> list[str]:
    """Split on commas that are not nested in (), [], {} or the <> of a cast
    or qualified template; string literals are opaque."""
    args: list[str] = []
    start = depth = 0
    masked = mask_strings(text, "_")
    opened = [m.start() for m in re.finditer("<", text)]
    for m in _SPLITTING.finditer(masked):
        ch, i = m.group(), m.start()
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                raise ParseError("unbalanced ')'")
        elif ch == "<":
            if _opens_template(masked, i):
                depth += 1
        elif ch == ">":
            if depth > 0 and bisect.bisect_left(opened, start) < bisect.bisect_left(opened, i):
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


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _opens_template(masked: str, i: int) -> bool:
    """Whether the '<' at *i* follows a cast or a qualified name (`(_cast|\\w::\\w+)\\s*` ends there)."""
    end = i
    while end > 0 and masked[end - 1].isspace():
        end -= 1
    if masked.endswith("_cast", 0, end):
        return True
    word = end
    while word > 0 and _word_char(masked[word - 1]):
        word -= 1
    return word < end and word >= 3 and masked.endswith("::", 0, word) and _word_char(masked[word - 3])


def mask_strings(text: str, fill: str) -> str:
    """*text* with each string and character literal overwritten with *fill*. A quote that is
    never closed leaves every later quote of its kind unclosed too, so none is tried again."""
    parts, pos, unclosed = [], 0, set()
    for quote in _QUOTE.finditer(text):
        ch, start = quote.group(), quote.start()
        if start < pos or ch in unclosed:
            continue
        literal = _LITERAL[ch].match(text, start)
        if literal is None:
            unclosed.add(ch)
            continue
        parts += [text[pos:start], fill * (literal.end() - start)]
        pos = literal.end()
    return "".join(parts) + text[pos:]


def parse_call(text: str) -> tuple[str, tuple[CallArg, ...]]:
    m = _CALL.match(text.strip())
    if not m:
        raise ParseError("expected a call such as 'diopiAdd(ctx, out, self, other, alpha)'")
    args = split_args(m.group(2))
    if any(not a for a in args):
        raise ParseError("empty argument")
    return m.group(1), tuple(CallArg(a) for a in args)


def referenced_names(expr: str) -> list[str]:
    """Identifiers in *expr* that must name a variable: not members, qualified
    names, called functions, template names, C++ words or DIOPI enumerators."""
    masked = mask_strings(expr, " ")
    names = []
    for m in IDENT.finditer(masked):
        word = m.group()
        before, after = m.start(), m.end()
        while before > 0 and masked[before - 1].isspace():
            before -= 1
        while after < len(masked) and masked[after].isspace():
            after += 1
        if masked.endswith(("::", ".", "->"), 0, before) or masked.startswith(("::", "(", "<"), after):
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
    masked = mask_strings(text or "", " ")
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
