"""A workload's ATen ops, for `coverage --against`: a list with one op name
per line (``#`` starts a comment), or the CSV that DIPU's op capture tool
writes (dipu/scripts/op_capture/op_capture.py at 9dd38082: a header
``aten_name,diopi_fun,args``, one row per op and argument set; ops DIPU ran
are named as DIPU prints them, ``add.out``, ops that fell back to the CPU as
c10 names them, ``aten::add.out``)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, Loc, UserError, excerpt

CAPTURE_HEADER = ("aten_name", "diopi_fun", "args")
OP_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$")


def _name(text: str) -> str:
    return text.strip().removeprefix("aten::")


def read_workload(path: Path) -> tuple[tuple[str, Loc], ...]:
    """Each op the workload names, once, in the order first named, with where."""
    text = inputfile.read(path, key="--against").decode("utf-8", errors="replace")
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), "")
    found: dict[str, Loc] = {}
    problems = []
    if tuple(c.strip() for c in first.split(",")[:3]) == CAPTURE_HEADER:
        reader = csv.reader(io.StringIO(text))
        for row in reader:
            if not row or tuple(c.strip() for c in row[:3]) == CAPTURE_HEADER:
                continue
            loc = Loc(str(path), reader.line_num, 1)
            name = _name(row[0])
            if not OP_NAME.match(name):
                problems.append(Diagnostic(loc, "aten_name", f"'{excerpt(row[0])}' is not an ATen op name"))
            found.setdefault(name, loc)
    else:
        for number, line in enumerate(lines, 1):
            name = _name(line.split("#", 1)[0])
            if not name:
                continue
            loc = Loc(str(path), number, 1)
            if not OP_NAME.match(name):
                problems.append(Diagnostic(loc, None, f"'{excerpt(line)}' is not an op name such as add.out "
                                                      "(one per line, or DIPU's op capture CSV)"))
            found.setdefault(name, loc)
    if problems:
        raise UserError(problems)
    if not found:
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "--against", "names no op")])
    return tuple(found.items())
