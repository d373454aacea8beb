"""Call and expression templates: C++ text with {placeholder} holes named
after the DIPU function's parameters (plus a few provided names). `{{` and
`}}` stand for literal braces. A template is checked once, at validation,
and expanded by plain substitution at render time; the user's text is kept
byte for byte otherwise."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen.errors import Loc

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUALIFIED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
C_TYPE = re.compile(r"^(const\s+)?((unsigned|signed|long|short)\s+)*[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\s*\*)*$")
_HOLE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_CALL = re.compile(r"^\s*([^\s(]+)\s*\((.*)\)\s*$", re.S)


@dataclass(frozen=True)
class Template:
    text: str
    loc: Loc
    is_call: bool = False

    def placeholders(self) -> tuple[str, ...]:
        return tuple(m.group(1) for m in _HOLE.finditer(self.text) if m.group(1) is not None)

    def expand(self, values: dict[str, str]) -> str:
        def sub(m: re.Match) -> str:
            if m.group(0) == "{{":
                return "{"
            if m.group(0) == "}}":
                return "}"
            return values[m.group(1)]
        return _HOLE.sub(sub, self.text)

    @property
    def callee(self) -> str:
        m = _CALL.match(self.text)
        return m.group(1) if m else ""


def problems(t: Template, allowed: set[str]) -> list[str]:
    """Why *t* is not acceptable, given the placeholder names it may use."""
    out = []
    stripped = _HOLE.sub(lambda m: "x", t.text)
    depth = 0
    for ch in stripped:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            break
    if depth != 0:
        out.append(f"unbalanced parentheses in '{t.text}'")
    if "{" in stripped or "}" in stripped:
        out.append(f"stray brace in '{t.text}' (write {{{{ or }}}} for a literal brace)")
    if t.is_call:
        m = _CALL.match(t.text)
        if not m:
            out.append(f"'{t.text}' is not a call (expected name(arguments))")
        elif not QUALIFIED.match(m.group(1)):
            out.append(f"call name '{m.group(1)}' is not a C identifier")
    for name in t.placeholders():
        if not IDENT.match(name):
            out.append(f"'{{{name}}}' is not a placeholder (placeholders are C identifiers)")
        elif name not in allowed:
            from deeplink_gen.errors import did_you_mean
            out.append(f"unknown parameter '{{{name}}}'{did_you_mean(name, allowed)}"
                       f" (available: {', '.join(sorted(allowed)) or 'none'})")
    return out
