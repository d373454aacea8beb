"""What a command is asked to render: the workspace, its vendors, the output
folder and the choices of the command line, and the keys its results are
stored under. Every key is made from the digest of every input file
(digests.workspace_digest), taken once per request, and from every field of
Options: an option added there is part of every key without being listed
anywhere. The output folder is in no key: the same files go into any folder."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from deeplink_gen import digests
from deeplink_gen.options import Options
from deeplink_gen.input_paths import vendor_files


@dataclass(frozen=True)
class Request:
    root: Path                            # the workspace
    vendors: tuple[str, ...] | None       # None: every vendor file
    options: Options = Options()
    out: Path | None = None               # --out as given (in no key); None: <workspace>/generated

    @property
    def out_root(self) -> Path:
        """The folder the render writes: --out, else the workspace's generated/."""
        return self.out if self.out is not None else self.root / "generated"

    @property
    def out_within(self) -> Path:
        """What no write of the render may leave through a link: the workspace for its
        generated/, --out itself when given (where it leads is what the user chose)."""
        return self.out if self.out is not None else self.root

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The vendors asked for, by name."""
        return tuple(p.stem for p in vendor_files(self.root)) if self.vendors is None else self.vendors

    @cached_property
    def inputs(self) -> str | None:
        """The digest of every input file as it was when first asked for (None: one could not be read)."""
        return self._inputs_now()

    def _inputs_now(self) -> str | None:
        return digests.workspace_digest(self.root, self.options.diopi_include)

    def key(self, kind: str) -> str | None:
        """The key of a result of *kind* made from these inputs and these options."""
        if self.inputs is None:
            return None
        options = {f.name: getattr(self.options, f.name) for f in dataclasses.fields(Options)}
        return digests.digest(kind, self.inputs, json.dumps({"vendors": list(self.names), **options},
                                                            sort_keys=True, default=str))

    def unchanged(self) -> bool:
        """Whether every input file is still what it was when the request first read it."""
        return self.inputs is not None and self._inputs_now() == self.inputs
