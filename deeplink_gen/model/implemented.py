"""A vendor's adaptor section: the DIOPI functions its DIOPI library defines,
by the C++ namespace that defines them (impl::<namespace>). The adaptor
wraps every one of them, as DIOPI's adaptor generator wraps every function
it finds in impl/<vendor>/functions*."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.errors import Loc
from deeplink_gen.model.common import Located


@dataclass(frozen=True)
class Namespace:
    name: str                              # impl::<name>
    loc: Loc
    functions: tuple[Located[str], ...]


@dataclass(frozen=True)
class Implemented:
    loc: Loc
    namespaces: tuple[Namespace, ...]

    def namespace_of(self, function: str) -> str | None:
        """The namespace that defines *function* (the first that lists it)."""
        return next((ns.name for ns in self.namespaces for f in ns.functions if f.value == function), None)

    def functions(self) -> frozenset[str]:
        return frozenset(f.value for ns in self.namespaces for f in ns.functions)
