"""Values shared by every part of the model: a value with the place it was
written, torch versions and torch-version gates."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Generic, TypeVar

from deeplink_gen.errors import Loc, ParseError, excerpt

# X.Y[.Z], then what PEP 440 and torch's builds add: a pre-release, .devN or .postN, +local.
_VERSION = re.compile(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?:(?:a|b|rc)[0-9]+)?(?:\.(?:dev|post)[0-9]+)?(?:\+[A-Za-z0-9._]+)?")

T = TypeVar("T")


@dataclass(frozen=True)
class Located(Generic[T]):
    """A value and the place it was written."""

    value: T
    loc: Loc


@dataclass(frozen=True, order=True)
class TorchVersion:
    major: int
    minor: int
    patch: int = 0

    @property
    def dipu_code(self) -> str:
        """DIPU's form of the version (DIPU_TORCH_VERSION): XYYZZ, 2.2.2 -> 20202."""
        return f"{self.major}{self.minor:02d}{self.patch:02d}"

    @staticmethod
    def parse(text: str) -> "TorchVersion":
        """``2.1``, ``2.1.1``, ``2.1.1+cpu`` or a pre-release such as ``2.4.0a0+git1234``
        (its release numbers); raises ParseError for anything else (``2.2.2.5``)."""
        m = _VERSION.fullmatch(text.strip())
        if m is None:
            raise ParseError(f"'{excerpt(text)}' is not a torch version such as 2.1 or 2.1.1")
        return TorchVersion(*(int(p) for p in m.groups() if p is not None))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


_COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")


@dataclass(frozen=True)
class TorchGate:
    """A conjunction of comparisons such as ``>=2.1,<2.3``."""

    text: str
    clauses: tuple[tuple[str, TorchVersion], ...]
    loc: Loc

    @staticmethod
    def parse(text: str, loc: Loc) -> "TorchGate":
        """Raises ParseError naming the clause that cannot be read."""
        clauses = []
        for part in text.split(","):
            part = part.strip()
            op = next((o for o in _COMPARISONS if part.startswith(o)), None)
            if op is None:
                raise ParseError(f"'{part}' does not start with one of {' '.join(_COMPARISONS)}")
            clauses.append((op, TorchVersion.parse(part[len(op):])))
        gate = TorchGate(text, tuple(clauses), loc)
        if not any(gate.admits(v) for v in gate._near_bounds()):
            raise ParseError(f"'{excerpt(text)}' admits no torch version")
        return gate

    def _near_bounds(self) -> list["TorchVersion"]:
        """Versions at, just above and just below each bound, and the extremes: where a
        conjunction of comparisons admits a version, it admits one of these."""
        big = 10 ** 9
        out = [TorchVersion(0, 0, 0), TorchVersion(big, 0, 0)]
        for _, (major, minor, patch) in ((op, (b.major, b.minor, b.patch)) for op, b in self.clauses):
            out += [TorchVersion(major, minor, patch), TorchVersion(major, minor, patch + 1)]
            if patch:
                out.append(TorchVersion(major, minor, patch - 1))
            if minor:
                out.append(TorchVersion(major, minor - 1, big))
            if major:
                out.append(TorchVersion(major - 1, big, big))
        return out

    def admits(self, version: TorchVersion) -> bool:
        have = (version.major, version.minor, version.patch)

        def compare(op: str, bound: TorchVersion) -> bool:
            want = (bound.major, bound.minor, bound.patch)
            return {
                "==": have == want, "!=": have != want, ">=": have >= want,
                "<=": have <= want, ">": have > want, "<": have < want,
            }[op]
        return all(compare(op, bound) for op, bound in self.clauses)
