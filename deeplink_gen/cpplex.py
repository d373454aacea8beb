"""Whether a piece of C++ from a YAML file can stand where it is pasted: read
as the compiler's lexer reads it, in one pass, so that a comment, a string or
a bracket left open there cannot swallow or end the generated code around it
(an unclosed `/*` that comments out the rest of the file, a `}` that ends the
generated function and starts code of its own)."""

from __future__ import annotations

import re

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
# A pp-number (a `'` in it is C++14's digit separator, no quote) and an identifier, each read whole.
_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.]|'(?=[A-Za-z0-9_]))*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIGITS = frozenset("0123456789")
_IDENT_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_RAW_PREFIXES = frozenset({"R", "u8R", "uR", "UR", "LR"})
# A raw string's delimiter and opening parenthesis, after its quote.
_RAW_OPEN = re.compile(r'"([^()\\\s]{0,16})\(')


def problem(text: str, *, expression: bool = False) -> str | None:
    """Why *text* cannot be pasted as it is, or None: an unclosed comment, string, raw
    string or character literal, a bracket closed that it did not open or left open, and,
    with *expression*, a ';' outside its brackets (which would end the statement it is in)."""
    stack: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return f"the comment opened at {_where(text, i)} is not closed (*/)"
            i = end + 2
        elif ch in _DIGITS or (ch == "." and i + 1 < n and text[i + 1] in _DIGITS):
            i = _NUMBER.match(text, i).end()
        elif ch in _IDENT_START:
            word = _IDENT.match(text, i)
            i = word.end()
            if word.group() in _RAW_PREFIXES and text.startswith('"', i):
                opened = _RAW_OPEN.match(text, i)
                if opened is None:
                    return f"the raw string at {_where(text, word.start())} has no delimiter and '(' after its quote"
                close = f"){opened.group(1)}\""
                end = text.find(close, opened.end())
                if end < 0:
                    return f"the raw string opened at {_where(text, word.start())} is not closed ({close})"
                i = end + len(close)
        elif ch in "\"'":
            end = _literal(text, i, ch)
            if end < 0:
                what = "string" if ch == '"' else "character"
                return f"the {what} literal opened at {_where(text, i)} is not closed on its line ({ch})"
            i = end
        elif ch in _OPEN:
            stack.append((ch, i))
            i += 1
        elif ch in _CLOSE:
            if not stack or stack[-1][0] != _CLOSE[ch]:
                return f"'{ch}' at {_where(text, i)} closes a bracket it did not open"
            stack.pop()
            i += 1
        elif ch == ";" and expression and not stack:
            return f"';' at {_where(text, i)} would end the statement the expression is pasted into"
        else:
            i += 1
    if stack:
        ch, at = stack[-1]
        return f"'{ch}' at {_where(text, at)} is not closed ({_OPEN[ch]})"
    return None


def _literal(text: str, i: int, quote: str) -> int:
    """Where the literal opened by the *quote* at *i* ends (past its closing quote), or -1
    when a line break or the end of the text comes first."""
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == quote:
            return j + 1
        elif ch == "\n":
            return -1
        else:
            j += 1
    return -1


def _where(text: str, i: int) -> str:
    """Line and column of offset *i* in *text*, both counted from 1."""
    line = text.count("\n", 0, i) + 1
    return f"line {line} column {i - (text.rfind(chr(10), 0, i) + 1) + 1}"
