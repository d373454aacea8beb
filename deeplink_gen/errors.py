"""Locations and diagnostics: every problem in user input is reported as
``file:line:col: key.path: message`` and the CLI exits with code 1."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable

_IDENT_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, order=True)
class Loc:
    """A position in an input file; line and column are 1-based."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        shown = display_path(self.file)
        if self.line <= 0:
            return shown
        return f"{shown}:{self.line}:{self.col}"


def display_path(path: str) -> str:
    """Paths are shown relative to the current directory when below it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


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


@dataclass(frozen=True, order=True)
class Diagnostic:
    loc: Loc
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.path}: {self.message}"


class UserError(Exception):
    """Bad input: carries every diagnostic found, printed without a traceback."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = sorted(set(diagnostics))
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class Diagnostics:
    """Collects problems so that one run reports as many as it can."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, loc: Loc, path: str, message: str) -> None:
        self.items.append(Diagnostic(loc, path, message))

    def extend(self, items: Iterable[Diagnostic]) -> None:
        self.items.extend(items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise UserError(self.items)


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
