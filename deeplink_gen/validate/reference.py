"""What validation checks against: the chosen torch's op table (the
installed torch's, or a shipped snapshot's), whose version decides torch:
gates, and the DIOPI prototypes."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.model import CatalogEntry, OpTable, Prototypes, TorchGate, TorchVersion


@dataclass(frozen=True)
class Reference:
    ops: OpTable
    protos: Prototypes

    @property
    def torch_version(self) -> TorchVersion:
        return self.ops.version

    def admits(self, gate: TorchGate | None) -> bool:
        return gate is None or gate.admits(self.torch_version)

    def applies(self, entry: CatalogEntry) -> bool:
        """Whether the entry's torch: gate admits the chosen torch."""
        return self.admits(entry.torch)
