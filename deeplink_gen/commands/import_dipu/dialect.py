"""Which of DIPU's generators an op file was written for, and how that
generator reads registration and autocompare.

On 2024-10-10 (DIPU 0caf4c82) the file and its generator renamed two keys
together: `register_op` became `register_operator` and `autocompare: disable`
became `enable_autocompare: false`. Each generator reads only its own
spelling, so a file is read with the one whose spellings it uses: the newest
when it uses any of the newest keys (the older spellings are then ignored, as
that generator ignores them), the older one when it uses only older keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deeplink_gen.commands.import_dipu.read import Upstream

RENAMED = "2024-10-10"
# Keys only the generator since RENAMED reads, and the older spellings it replaced.
NEWEST_KEYS = ("register_operator", "enable_autocompare", "enable_fallback_to_cpu")
OLDER_KEYS = {"register_op": "register_operator: false", "autocompare": "enable_autocompare: false"}


@dataclass(frozen=True)
class Dialect:
    older: bool                           # written for the generator before RENAMED
    evidence: tuple[str, int] | None      # the first key (and its line) that decided it

    def describe(self) -> str:
        when = f"before {RENAMED}" if self.older else f"since {RENAMED}"
        if self.evidence is None:
            return f"DIPU's generator {when}"
        key, line = self.evidence
        return f"DIPU's generator {when} (the file's spelling, '{key}' at line {line})"

    def registered(self, d: dict) -> bool:
        """Whether DIPU registers the op: `register_operator` by truth (the string
        "false" is true), `register_op` only when True or "True"."""
        if self.older:
            return d.get("register_op", True) in (True, "True")
        return not ("register_operator" in d and not d["register_operator"])

    def compared(self, d: dict) -> bool:
        """Whether DIPU may compare the op with the CPU (its autocompare twin):
        `enable_autocompare` by truth; `autocompare` unless it is "disable"
        (or, before 2024-04-28, anything but True/"True")."""
        if self.older:
            return "autocompare" not in d or d["autocompare"] in (True, "True")
        return not ("enable_autocompare" in d and not d["enable_autocompare"])

    def odd_autocompare(self, d: dict) -> Any | None:
        """An older `autocompare:` value other than DIPU's own ("disable", True,
        "True"): the generator of 2024-04-28 on registers nothing for it."""
        if self.older and "autocompare" in d and d["autocompare"] not in ("disable", True, "True"):
            return d["autocompare"]
        return None


def dialect_of(ups: list[Upstream]) -> Dialect:
    newest = older = None
    for up in ups:
        if not isinstance(up.data, dict):
            continue
        for key, lines in up.key_lines.items():
            if newest is None and key in NEWEST_KEYS:
                newest = (key, lines[0])
            if older is None and key in OLDER_KEYS:
                older = (key, lines[0])
    if newest is not None or older is None:
        return Dialect(False, newest)
    return Dialect(True, older)
