"""Comparing an entry's own schema: text with torch's."""

from __future__ import annotations

import re


def _normalise(schema: str) -> str:
    """Ignore return names, SymInt vs int and spacing."""
    text = schema.strip().removeprefix("aten::")
    head, _, ret = text.partition("->")
    ret = re.sub(r"(Tensor(?:\([a-z]!?\))?(?:\[\])?)\s+[A-Za-z_]\w*", r"\1", ret)
    return re.sub(r"\s+", "", (head + "->" + ret).replace("SymInt", "int"))


def schemas_agree(written: str, torch_schema: str) -> bool:
    return _normalise(written) == _normalise(torch_schema)
