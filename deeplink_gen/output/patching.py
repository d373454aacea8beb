"""Apply the unified diffs deeplink-gen renders (onboarding/dipu.patch,
diopi.patch) to files, hunk by hunk, as `git apply` would, and say for
each hunk whether it applies, is already applied, or fits neither way.

Why not shell out to `git apply`: it silently skips every file when the
target is a plain folder inside another git repository, needs git, and
reports a whole patch, not which edit does not fit. A hunk is looked for
as git does: its exact lines, at the position its header names or, if the
file moved, the nearest other one. A hunk whose result ("+" and context
lines) is already there is applied; one whose original ("-" and context
lines) is there applies; anything else does not fit. So a tree patched for
another shard count, a half-applied tree and a pristine one all work, and
applying twice changes nothing."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from deeplink_gen.errors import ParseError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


@dataclass(frozen=True)
class Hunk:
    old_start: int                # 1-based
    new_start: int
    old: tuple[str, ...]          # the lines before (context and "-"), each with its newline
    new: tuple[str, ...]          # the lines after (context and "+")
    label: str                    # the text after the second @@: what the hunk does


@dataclass(frozen=True)
class FilePatch:
    path: str                     # as in the patch, without a/ or b/
    hunks: tuple[Hunk, ...]


class State(enum.Enum):
    APPLIES = "applies"
    APPLIED = "already applied"
    CONFLICT = "does not fit"


@dataclass(frozen=True)
class Result:
    hunk: Hunk
    state: State
    at: int | None = None         # APPLIES: 0-based index of the hunk's old lines in the file


def parse(text: str) -> list[FilePatch]:
    """The files and hunks of a unified diff; text before the first `diff --git`
    (our header comment) is ignored, as git does."""
    lines = text.splitlines(keepends=True)
    files: list[FilePatch] = []
    path, hunks, i = None, [], 0

    def close():
        if path is not None:
            files.append(FilePatch(path, tuple(hunks)))

    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            close()
            path, hunks = None, []
        elif line.startswith("+++ ") and not hunks:
            target = line[4:].rstrip("\n")
            path = target[2:] if target.startswith("b/") else target
        elif line.startswith("@@ "):
            m = _HUNK.match(line.rstrip("\n"))
            if m is None or path is None:
                raise ParseError(f"line {i + 1}: a hunk header without a file: {line.rstrip()}")
            old_len = int(m.group(2) if m.group(2) is not None else 1)
            new_len = int(m.group(4) if m.group(4) is not None else 1)
            old, new = [], []
            i += 1
            while len(old) < old_len or len(new) < new_len:
                if i >= len(lines):
                    raise ParseError(f"{path}: the hunk '{m.group(5)}' is cut short")
                body = lines[i]
                kind, rest = body[:1], body[1:]
                if kind == " " or body == "\n":
                    rest = rest or "\n"
                    old.append(rest)
                    new.append(rest)
                elif kind == "-":
                    old.append(rest)
                elif kind == "+":
                    new.append(rest)
                elif kind != "\\":
                    raise ParseError(f"{path}: line {i + 1} of the hunk '{m.group(5)}' is not a diff line")
                i += 1
            hunks.append(Hunk(int(m.group(1)), int(m.group(3)), tuple(old), tuple(new), m.group(5).strip()))
            continue
        i += 1
    close()
    return files


def _find(lines: list[str], block: tuple[str, ...], expected: int) -> int | None:
    """The index of *block* in *lines* nearest to *expected*, or None."""
    n, first = len(block), block[0] if block else None
    found = [i for i in range(len(lines) - n + 1) if lines[i] == first and tuple(lines[i:i + n]) == block]
    return min(found, key=lambda i: (abs(i - expected), i)) if found else None


def check(text: str | None, patch: FilePatch) -> list[Result]:
    """What each hunk of *patch* would do to a file holding *text* (None: no such file)."""
    if text is None:
        return [Result(h, State.CONFLICT) for h in patch.hunks]
    lines = text.splitlines(keepends=True)
    out, taken = [], []
    for h in patch.hunks:
        if _find(lines, h.new, h.new_start - 1) is not None:
            out.append(Result(h, State.APPLIED))
            continue
        at = _find(lines, h.old, h.old_start - 1)
        if at is None or any(at < end and start < at + len(h.old) for start, end in taken):
            out.append(Result(h, State.CONFLICT))
            continue
        taken.append((at, at + len(h.old)))
        out.append(Result(h, State.APPLIES, at))
    return out


def apply(text: str, results: list[Result]) -> str:
    """*text* with every hunk that APPLIES applied (the others left out)."""
    lines = text.splitlines(keepends=True)
    for r in sorted((r for r in results if r.state is State.APPLIES), key=lambda r: r.at, reverse=True):
        lines[r.at:r.at + len(r.hunk.old)] = list(r.hunk.new)
    return "".join(lines)
