"""The `${...}` placeholders of custom code, checked as DIPU's generator
reads them: it replaces `${PREFERRED_MEMORY_FORMAT_PLACEHOLDER:-default}` and
`${PREFERRED_MEMORY_FORMAT_PLACEHOLDER_3D:-default}` (op_memory_format_converter.py)
and copies anything else into the C++ as written, where it cannot compile.
Until 2023-12-19 (DIPU 68333758) file and generator both spelled it PREFERED:
that spelling is read as meant."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from deeplink_gen.commands.import_dipu.read import Upstream, warning
from deeplink_gen.errors import Diagnostic

KNOWN = ("PREFERRED_MEMORY_FORMAT_PLACEHOLDER", "PREFERRED_MEMORY_FORMAT_PLACEHOLDER_3D")
OLDER = {"PREFERED_MEMORY_FORMAT_PLACEHOLDER": KNOWN[0], "PREFERED_MEMORY_FORMAT_PLACEHOLDER_3D": KNOWN[1]}
# `${NAME:-default}` on one line, as DIPU's pattern; anything else starting with `${` is caught by START.
PLACEHOLDER = re.compile(r"\$\{(\w+):-[^}\n]*\}")
START = re.compile(r"\$\{[^}\n]{0,60}")


@dataclass
class Checked:
    text: str                                   # the text with older spellings read as meant
    notes: list[Diagnostic] = field(default_factory=list)
    unreadable: bool = False                    # a placeholder DIPU's generator does not replace


def check_placeholders(up: Upstream, key: str, path: str) -> Checked:
    """The string value of *key*, its placeholders checked; warnings name the line of each."""
    text = up.data[key]
    out = Checked(text)
    if "${" not in text:
        return out
    readable = set()
    for m in PLACEHOLDER.finditer(text):
        name = m.group(1)
        if name in KNOWN:
            readable.add(m.start())
        elif name in OLDER:
            readable.add(m.start())
            out.notes.append(warning(path, up.line_in(key, m.start()),
                                     f"'${{{name}' is the spelling DIPU's generator read until 2023-12-19;"
                                     f" read as '${{{OLDER[name]}' (fixed)"))
    for m in START.finditer(text):
        if m.start() not in readable:
            out.unreadable = True
            out.notes.append(warning(path, up.line_in(key, m.start()),
                                     f"'{m.group()}' in {key} is not a placeholder DIPU's generator replaces"
                                     f" (${{{KNOWN[0]}[_3D]:-default}}); it would reach the C++ as written"))
    for old, new in sorted(OLDER.items(), key=lambda kv: -len(kv[0])):
        out.text = out.text.replace("${" + old + ":-", "${" + new + ":-")
    return out
