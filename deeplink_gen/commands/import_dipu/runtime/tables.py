"""The comm tables of a DIPU runtime folder: `std::map<at::ScalarType, T>`
and `std::map<ReduceOp::RedOpType, T>` initialisers become comm.dtypes and
comm.reduce_ops, wherever the folder declares them. An entry that maps
dtypes of different element sizes onto one vendor type is a defect: the
collective would read the wrong number of bytes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen.errors import Diagnostic

from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.runtime.cxx import SourceFile, match_close, split_top

_MAP = re.compile(r"(?:std::)?(?:unordered_)?map\s*<\s*((?:::)?(?:at|c10|c10d)?:*[\w:]*?(ScalarType|RedOpType))\s*,"
                  r"\s*([\w:]+)\s*>\s*([A-Za-z_]\w*)\s*=?\s*\{")
_SCALAR = re.compile(r"(?:at|c10)::(?:ScalarType::|k)(\w+)")
_REDUCE = re.compile(r"ReduceOp::(\w+)")
# Element sizes of the ScalarTypes a collective can carry.
SIZES = {"Bool": 1, "Byte": 1, "Char": 1, "Short": 2, "Int": 4, "Long": 8, "Half": 2, "BFloat16": 2, "Float": 4,
         "Double": 8, "ComplexHalf": 4, "ComplexFloat": 8, "ComplexDouble": 16, "UInt16": 2, "UInt32": 4,
         "UInt64": 8}


@dataclass(frozen=True)
class Table:
    file: SourceFile
    line: int
    name: str
    kind: str                            # "dtype" or "op"
    value_type: str
    entries: tuple[tuple[str, str], ...]   # (ScalarType or RedOpType name, vendor value)


def find_tables(file: SourceFile, notes: list[Diagnostic] | None = None) -> list[Table]:
    """The tables of *file*; a key given twice keeps its first value, as std::map's
    initializer-list constructor does (insert never overwrites), with a warning in *notes*."""
    out = []
    for m in _MAP.finditer(file.code):
        open_ = m.end() - 1
        close = match_close(file.code, open_)
        if close < 0:
            continue
        kind = "dtype" if m.group(2) == "ScalarType" else "op"
        key_re = _SCALAR if kind == "dtype" else _REDUCE
        entries = []
        for s, e in split_top(file.code[open_ + 1:close]):
            raw = file.text[open_ + 1 + s:open_ + 1 + e]
            part = raw.strip()
            inner = re.fullmatch(r"\{\s*([^,]+?)\s*,\s*(.+?)\s*\}", part, re.S)
            key = key_re.search(inner.group(1)) if inner else None
            if key is None:
                continue
            value = inner.group(2).removeprefix("::")
            first = next((v for k, v in entries if k == key.group(1)), None)
            if first is None:
                entries.append((key.group(1), value))
            elif notes is not None:
                notes.append(warning(file.path, file.line_of(open_ + 1 + s + len(raw) - len(raw.lstrip())), (
                    f"{m.group(4)} gives {key.group(0)} again (to {value}): the map keeps its first value, "
                    f"{first}, as C++ does; imported so")))
        out.append(Table(file, file.line_of(m.start()), m.group(4), kind, m.group(3).removeprefix("::"),
                         tuple(entries)))
    return out


def size_clashes(table: Table) -> list[str]:
    """Messages for vendor types that dtypes of different element sizes share."""
    by_value: dict[str, list[str]] = {}
    for name, value in table.entries:
        by_value.setdefault(value, []).append(name)
    out = []
    for value, names in by_value.items():
        sizes = {SIZES.get(n) for n in names}
        if len(sizes) > 1:
            out.append(f"{' and '.join(names)} all map to {value}, though their elements differ in size "
                       f"({', '.join(f'{n}: {SIZES.get(n)}' for n in names)} bytes)")
    return out
