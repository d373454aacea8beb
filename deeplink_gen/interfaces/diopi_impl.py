"""Which DIOPI functions a vendor's DIOPI library defines.

From implementation sources (a DIOPI impl/<vendor>/ folder): the rule of
DIOPI's adaptor generator (adaptor/codegen/gen.py at 02f03c6a,
get_all_impl_functions / obtain_impl_func), which decides what the adaptor
forwards: every file below <dir>/functions and <dir>/functions_ext, whatever
its extension, read as text and searched for a definition at the start of a
line, ``[DIOPI_API] diopiError_t diopiName(params) {``, whose parameter list
holds no parenthesis. Comments are not skipped (neither does the generator).

From a library: its defined dynamic symbols named diopi*, read from a text
file (``nm -D`` output, or one name per line) or from the shared library
itself with ``nm -D --defined-only``. (The adaptor exports exactly the
functions it forwards, as extern "C" symbols.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, Loc, UserError
from deeplink_gen.model import DiopiLibrary

# DIOPI's generator: the folders it scans below the impl folder. Its pattern,
# (?:^|\n)\s*(?:DIOPI_API)?\s*diopiError_t\s+(diopi\w+)\(([^)]*)\)\s*{ , backtracks over
# every split of a run of blank lines between its two \s* (a file of blank lines takes cubic
# time), and [^)]* rescans to the same ')' from every head that lacks one. The same matches,
# in linear time: a head that starts after the last newline of its blanks, then the next ')'
# (found once for all the heads before it) and the '{' after it.
SOURCE_DIRS = ("functions", "functions_ext")
_HEAD = re.compile(r"(?:^|\n)[^\S\n]*(?:DIOPI_API\s*)?diopiError_t\s+(diopi\w+)\(")
_BODY = re.compile(r"\s*{")
# nm types of defined code symbols: text (global, local), weak defined, indirect function.
_DEFINED = frozenset("TtWi")
_SYMBOL = re.compile(r"^diopi\w+$")


def _fail(path: Path, message: str, *, folder: bool = False) -> UserError:
    """A problem with the whole file *path* (at its line 1), or with the *folder* path."""
    return UserError([Diagnostic(Loc(str(path)) if folder else Loc(str(path), 1, 1), "--impl", message)])


def _text(path: Path) -> str:
    return inputfile.read(path, key="--impl").decode("utf-8", errors="replace")


def from_sources(folder: Path) -> frozenset[str]:
    dirs = [folder / d for d in SOURCE_DIRS if (folder / d).is_dir()]
    if not dirs:
        raise _fail(folder, f"no {' or '.join(d + '/' for d in SOURCE_DIRS)} here: DIOPI's adaptor generator "
                            "finds a vendor's functions there (give DIOPI's impl/<vendor> folder)", folder=True)
    return frozenset().union(*(scan(d) for d in dirs))


def scan(folder: Path) -> frozenset[str]:
    """The functions defined by the files below *folder*, found as DIOPI's generator finds them."""
    found: set[str] = set()
    for root, subdirs, files in os.walk(folder):
        subdirs.sort()
        for name in sorted(files):
            found.update(definitions(_text(Path(root, name))))
    return frozenset(found)


def definitions(text: str) -> list[str]:
    """The names of the functions *text* defines, as re.findall with DIOPI's pattern finds them."""
    names, pos, close = [], 0, -1
    while (head := _HEAD.search(text, pos)) is not None:
        if close < head.end():
            close = text.find(")", head.end())
            if close < 0:
                break
            body = _BODY.match(text, close + 1)
        if body is None:
            pos = head.start() + 1
            continue
        names.append(head.group(1))
        pos = body.end()
    return names


def symbols_from_text(text: str) -> frozenset[str]:
    """Defined diopi* names of ``nm`` output (``[address] TYPE name``), or of a
    list with one name per line."""
    found = set()
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        name = parts[-1].split("@", 1)[0]
        if not _SYMBOL.match(name):
            continue
        kind = parts[-2] if len(parts) >= 2 else None
        if kind is None or (len(kind) == 1 and kind in _DEFINED):
            found.add(name)
    return frozenset(found)


def _nm(path: Path) -> str:
    nm = shutil.which("nm")
    if nm is None:
        raise _fail(path, "reading a shared library needs nm (binutils); or give a text file of `nm -D` output")
    proc = subprocess.run([nm, "-D", "--defined-only", "--", str(path)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise _fail(path, f"nm cannot read it: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
    return proc.stdout


def read_library(path: Path) -> DiopiLibrary:
    """The functions defined by the sources in folder *path*, or the symbols of
    library or symbol list *path*; UserError when there is nothing to read."""
    if path.is_dir():
        return DiopiLibrary(from_sources(path), str(path), "sources")
    if inputfile.read(path, key="--impl", head=4) == b"\x7fELF":
        text = _nm(path)      # a shared library, of any size
    else:
        text = _text(path)
    functions = symbols_from_text(text)
    if not functions:
        raise _fail(path, "no defined diopi* symbol in it (expected `nm -D` output, one name per line, "
                          "or a shared library)")
    return DiopiLibrary(functions, str(path), "symbols")
