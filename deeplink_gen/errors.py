"""Locations and diagnostics, and the one error hierarchy.

Every problem in user input becomes a Diagnostic (``file:line:col: error:
key.path: message``); a command that meets an error raises UserError and the
CLI exits with code 1. A warning (``warning:`` in place of ``error:``) is
input that is valid but cannot do what it says; it is printed and the run
goes on (exit 1 only with --strict). Low-level readers raise ParseError,
which the stage that called them turns into a Diagnostic at the right place."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Iterable

_IDENT_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, order=True)
class Loc:
    """A position in an input file; line and column are 1-based (0: the whole file)."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        shown = _source_path(self.file)
        if self.line <= 0:
            return shown
        return f"{shown}:{self.line}:{self.col}"

    @classmethod
    def at(cls, file: str, data: bytes | str, offset: int) -> Loc:
        """Where the character (or byte, in *data* as bytes) at 0-based *offset* of *data* is."""
        newline = b"\n" if isinstance(data, bytes) else "\n"
        before = data[:offset]
        return cls(file, before.count(newline) + 1, offset - (before.rfind(newline) + 1) + 1)


# This package's folder: a file that ships with deeplink-gen (its op catalog,
# its op tables) is shown as deeplink_gen/..., wherever it is installed.
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _below(path: str, base: str) -> str | None:
    """*path* relative to *base* when below it."""
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return None
    return None if rel.startswith("..") else rel


def display_path(path: str, root: str | os.PathLike | None = None) -> str:
    """Paths are shown relative to the current directory when below it, else,
    when below the workspace *root* (as given on the command line, -C DIR),
    as DIR/...: what can be pasted from where the user stands. Printable."""
    rel = _below(path, os.curdir)
    if rel is None and root is not None and (inside := _below(os.path.abspath(path), os.path.abspath(root))):
        rel = os.path.normpath(os.path.join(root, inside)) if inside != os.curdir else str(root)
    return printable(path if rel is None else rel)


def _source_path(path: str) -> str:
    """Where an input is, as a location shows it: as display_path, but a file
    of this package as deeplink_gen/..., not as a site-packages path 170
    characters wide."""
    if _below(path, os.curdir) is None and (inside := _below(path, _PACKAGE)) is not None:
        return printable(os.path.join(os.path.basename(_PACKAGE), inside))
    return display_path(path)


def printable(text: str) -> str:
    """*text* with what a terminal would not show as written escaped: the
    bytes of a file name that are not UTF-8 (Python decodes them as lone
    surrogates; shown as \\xff), control characters and line breaks (so a
    diagnostic stays on its line)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else
                   f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else
                   c.encode("unicode_escape").decode("ascii") for c in text)


_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """*text*, lines of files shown as they are (a diff), with every control character but
    tab and newline written as an escape (\\x1b): a file's bytes never drive the terminal."""
    return _TERMINAL_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


EXCERPT = 60    # the most characters of an input's text a message quotes


def excerpt(text: str, length: int = EXCERPT) -> str:
    """*text* as a message quotes it: its first *length* characters, marked when cut
    (a line of an input may be megabytes long)."""
    text = text.strip()
    return text if len(text) <= length else text[:length - 3] + "..."


LONGEST_WORD = 320    # the most characters of one word (a name, a key, a path) a message shows
_LONG_WORD = re.compile(r"\S{%d,}" % (LONGEST_WORD + 1))


def clip_words(text: str) -> str:
    """*text* with every word over LONGEST_WORD characters cut in its middle (its ends
    keep the quotes and colons around it): a message echoes the names and keys it is
    about, and an input's name may be megabytes long."""
    return _LONG_WORD.sub(lambda m: f"{m.group()[:LONGEST_WORD - 12]}...{m.group()[-9:]}", text)


def key_path(parts: Iterable[object]) -> str:
    """Render a path into a YAML document: ``ops[add.out].call``, ``runtime.device[0]``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT_KEY.match(str(part)):
            out += ("." if out else "") + str(part)
        else:
            out += f"[{part}]"
    return out or "(top level)"


@dataclass(frozen=True, eq=False)
class Suggestion:
    """``; did you mean 'X'?`` for *word* among *candidates*, then *after*:
    worked out only when its diagnostic is printed, so that thousands of
    unknown names cost no more than the few shown (see MAX_SHOWN)."""

    word: str
    candidates: Iterable[str]        # a list, set or dict (its keys), not an iterator
    after: str = ""
    aliases: tuple[tuple[str, str], ...] = ()   # other spellings of candidates: (alias, candidate)

    def __str__(self) -> str:
        meant = dict(self.aliases).get(self.word.lower())
        return (f"; did you mean '{meant}'?" if meant else did_you_mean(self.word, self.candidates)) + self.after


@dataclass(frozen=True)
class Diagnostic:
    """One problem: where (loc), which key (a path into the document as a
    tuple, a label such as ``--vendor``, or None), what (the message, then
    the hint when printed). A warning never stops a run."""

    loc: Loc | None
    key: tuple | str | None
    message: str
    severity: str = "error"          # "error" | "warning"
    hint: Suggestion | None = field(default=None, compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    @property
    def path(self) -> str:
        if self.key is None:
            return ""
        return self.key if isinstance(self.key, str) else key_path(self.key)

    @property
    def text(self) -> str:
        """The message with its hint."""
        return self.message if self.hint is None else f"{self.message}{self.hint}"

    def __str__(self) -> str:
        where = f"{self.loc}: " if self.loc is not None else ""
        what = f"{self.path}: " if self.key is not None else ""
        return printable(f"{where}{self.severity}: {clip_words(what + self.text)}")


class DeeplinkGenError(Exception):
    """Base of every error the tool raises on purpose."""


class UserError(DeeplinkGenError):
    """Bad input: carries every diagnostic found, printed without a traceback
    (the first MAX_SHOWN of them)."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = sorted(set(diagnostics), key=sort_key)
        super().__init__()

    def __str__(self) -> str:
        return "\n".join(shown(self.diagnostics))


def fail(message: str, loc: Loc | None = None, key: tuple | str | None = None) -> UserError:
    """A UserError with one diagnostic."""
    return UserError([Diagnostic(loc, key, message)])


class ParseError(DeeplinkGenError, ValueError):
    """A low-level reader could not read a piece of text (a call, a version,
    a parameter list); the caller knows where that text came from."""


def sort_key(d: Diagnostic) -> tuple:
    return (d.loc or Loc(""), d.path, d.message, d.severity)


class Diagnostics:
    """Collects problems so that one run reports as many as it can."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, loc: Loc | None, key: tuple | str | None, message: str, hint: Suggestion | None = None) -> None:
        self.items.append(Diagnostic(loc, tuple(key) if isinstance(key, list) else key, message, hint=hint))

    def warn(self, loc: Loc | None, key: tuple | str | None, message: str) -> None:
        self.items.append(Diagnostic(loc, tuple(key) if isinstance(key, list) else key, message, "warning"))

    def extend(self, items: Iterable[Diagnostic]) -> None:
        self.items.extend(items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise UserError(self.items)


def split(items: Iterable[Diagnostic]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors, warnings), each sorted as printed."""
    ordered = sorted(set(items), key=sort_key)
    return [d for d in ordered if d.is_error], [d for d in ordered if not d.is_error]


def count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


MAX_SHOWN = 100      # diagnostics printed per run; the rest are counted
MAX_COMPARED = 2000  # candidates one did-you-mean compares a name with


def shown(items: list[Diagnostic]) -> list[str]:
    """The lines that print *items* (sorted): the first MAX_SHOWN, then how many more there are."""
    lines = [str(d) for d in items[:MAX_SHOWN]]
    rest = items[MAX_SHOWN:]
    if rest:
        errors = sum(d.is_error for d in rest)
        more = [count(n, f"more {word}") for n, word in ((errors, "error"), (len(rest) - errors, "warning")) if n]
        lines.append(f"... and {' and '.join(more)} not shown")
    return lines


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``; did you mean 'X'?`` for the candidate closest to *word*, if one is close. Among more
    than MAX_COMPARED candidates, only the MAX_COMPARED nearest to *word* in sorted order are
    compared: each comparison is costly, and a header or a list can hold a million names."""
    import bisect
    import difflib

    names = list(dict.fromkeys(sorted(candidates)))     # candidates often come sorted: linear
    if len(names) > MAX_COMPARED:
        at = bisect.bisect_left(names, word)
        low = min(max(at - MAX_COMPARED // 2, 0), len(names) - MAX_COMPARED)
        names = names[low:low + MAX_COMPARED]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
