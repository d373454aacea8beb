"""What validation checks against: the torch version (for torch: gates) and
the DIOPI prototypes. ATen ops come from the installed torch's op table."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.model import CatalogEntry, Prototypes, TorchVersion


@dataclass(frozen=True)
class Context:
    torch_version: TorchVersion
    protos: Prototypes

    def applies(self, entry: CatalogEntry) -> bool:
        """Whether the entry's torch: gate admits the chosen torch."""
        return entry.torch is None or entry.torch.admits(self.torch_version)
