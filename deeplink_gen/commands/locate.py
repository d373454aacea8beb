"""`deeplink-gen locate [LOG...]`: compiler output with every place in an op's
pasted C++ written as a line of its YAML file. A rendered .pasted.inc numbers
each op's C++ from the op's entry ("catalog/x.yaml:add.out:3" is the third line
counted from add.out's own), so that an edit elsewhere renumbers nothing; this
turns such a place into the file's line ("catalog/x.yaml:57"), as the
workspace's files are now."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import IO, Iterable, Iterator

from deeplink_gen.commands import stored, torch_choice
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.input_paths import workspace_name
from deeplink_gen.model import CatalogEntry, Workspace
from deeplink_gen.request import Request


def _entries(ws: Workspace) -> Iterable[CatalogEntry]:
    """Every entry that can paste C++: the catalog's, and the vendors' replacements."""
    yield from ws.catalog.entries
    for vendor in ws.vendors:
        yield from (o.replace for o in vendor.overrides if o.replace is not None)


def anchors(ws: Workspace, root: Path) -> dict[str, int]:
    """The line of each op entry, by the name its pasted C++'s #line gives it ("<file>:<op>")."""
    return {f"{workspace_name(e.loc.file, root)}:{e.op}": e.loc.line for e in _entries(ws)}


# A line longer than this is passed on in pieces of this size, as they are: compiler output
# is read in bounded pieces, whatever comes in (an endless line is never held whole).
LINE_LIMIT = 1 << 20


def pieces(stream: IO[str]) -> Iterator[str]:
    """The lines of *stream*, each of at most LINE_LIMIT characters (a longer one in pieces)."""
    while True:
        piece = stream.readline(LINE_LIMIT)
        if not piece:
            return
        yield piece


def rewrite(lines: Iterable[str], found: dict[str, int], out: IO[str]) -> None:
    """Write *lines* with each "<file>:<op>:<n>" of *found* as "<file>:<line>"."""
    if not found:
        out.writelines(lines)
        return
    # Longest names first, so that a name that another one begins with never cuts it short.
    pattern = re.compile("(" + "|".join(map(re.escape, sorted(found, key=len, reverse=True))) + r"):(\d+)")

    def place(m: re.Match) -> str:
        label = m.group(1)
        if len(m.group(2)) > 9:         # no file has that many lines (and int() refuses 4300 digits)
            return m.group(0)
        return f"{label.rsplit(':', 1)[0]}:{found[label] + int(m.group(2)) - 1}"

    for line in lines:
        out.write(pattern.sub(place, line))


def main(request: Request, logs: tuple[Path, ...]) -> None:
    ws = stored.checked(request, torch_choice.of_request(request)).ws
    found = anchors(ws, request.root)
    if not logs and sys.stdin is None:      # Python's stand-in for a closed standard input (<&-)
        raise UserError([Diagnostic(None, "standard input",
                                    "is closed: pipe compiler output to it, or name LOG files")])
    # Bytes that are not UTF-8 (a file name in another encoding) pass through as they are.
    sys.stdout.reconfigure(errors="surrogateescape")
    if not logs:
        sys.stdin.reconfigure(errors="surrogateescape")
        rewrite(pieces(sys.stdin), found, sys.stdout)
        return
    for log in logs:
        if not log.is_file():       # a pipe or device would be read without end: it goes to standard input
            raise UserError([Diagnostic(None, str(log), "is not a regular file; pipe compiler output that is "
                                                        "still being written to standard input instead")])
        with open(log, encoding="utf-8", errors="surrogateescape") as f:
            rewrite(pieces(f), found, sys.stdout)
