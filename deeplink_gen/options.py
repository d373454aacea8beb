"""A run's options, one record made once by the command line and passed
down only: Options holds what the user chose (None for what was not given),
the Request holds the Options, and every stage reads them from there.
Turning them into command-line flags and into manifest.json's record
happens here and nowhere else.

Which torch a run checks and renders for is not a choice but follows from
one (--torch-version, else deeplink-gen.yaml's torch, else the installed
torch): commands/torch_choice.py works it out once per run as a Torch."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deeplink_gen.model import OpTable, Prototypes, TorchVersion


# What each option's value in manifest.json may be (render's --shards takes 1 to 64).
_RECORDED = {"diopi_include": lambda v: type(v) is str and v != "" and "\0" not in v,
             "autocompare": lambda v: type(v) is bool,
             "shards": lambda v: type(v) is int and 1 <= v <= 64}


@dataclass(frozen=True)
class Options:
    """What the command line chose that changes what is checked or rendered."""

    torch_version: str | None = None      # --torch-version, as given
    diopi_include: Path | None = None     # --diopi-include: DIOPI headers instead of the bundled prototype snapshot
    autocompare: bool | None = None       # --autocompare/--no-autocompare
    shards: int | None = None             # --shards

    def prototypes(self) -> Prototypes:
        """The DIOPI prototypes of the --diopi-include headers, else of the bundled snapshot (read once per process)."""
        from deeplink_gen.interfaces import diopi

        return diopi.prototypes(self.diopi_include)

    def recorded(self) -> dict:
        """The options that change output, as manifest.json records them (None: not given)."""
        return {"autocompare": self.autocompare, "shards": self.shards,
                "diopi_include": str(self.diopi_include) if self.diopi_include is not None else None}

    def with_recorded(self, recorded: dict) -> Options:
        """These options, with the *recorded* ones (manifest.json's) filling in what was not given;
        ValueError naming the key of a recorded value that is not what recorded() writes."""
        def pick(name, given, convert):
            value = recorded.get(name)
            if given is not None or value is None:
                return given
            if not _RECORDED[name](value):
                raise ValueError(name)
            return convert(value)
        return replace(self, diopi_include=pick("diopi_include", self.diopi_include, Path),
                       autocompare=pick("autocompare", self.autocompare, bool),
                       shards=pick("shards", self.shards, int))

    def group_flags(self) -> list[str]:
        """The flags of these options that go before the command (deeplink-gen's own)."""
        return ["--diopi-include", str(self.diopi_include)] if self.diopi_include is not None else []

    def render_flags(self) -> list[str]:
        """`render`'s flags that give these options' autocompare and shards."""
        out = []
        if self.autocompare is not None:
            out.append("--autocompare" if self.autocompare else "--no-autocompare")
        if self.shards is not None:
            out += ["--shards", str(self.shards)]
        return out


@dataclass(frozen=True)
class Torch:
    """The torch a run checks and renders for, and where its op table comes from."""

    version: TorchVersion
    snapshot: bool = False     # the op table shipped for that version, not the installed torch's

    def op_table(self) -> OpTable:
        from deeplink_gen.interfaces import torch_snapshots

        return torch_snapshots.load(self.version) if self.snapshot else torch_snapshots.installed()
