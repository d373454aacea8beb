"""`deeplink-gen torch-snapshot`: record the installed torch's op table (every
ATen op with its schema, variants and the torchgen flags of aten.ROW_FIELDS)
as data, so that validate, coverage and drift can use that torch without it
being installed. The file is rewritten only when its content changed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import display_path
from deeplink_gen.commands import snapshot_out
from deeplink_gen.interfaces import aten, torch_snapshots
from deeplink_gen.render.templating import render


def snapshot_text(version, digest: str, rows: dict[str, list]) -> str:
    """The snapshot document: JSON with one op per line, keys sorted."""
    lines = [f"{json.dumps(name)}: {json.dumps(row)}" for name, row in sorted(rows.items())]
    return render("torch/op_snapshot.json.j2", source=f"torch {version}'s native_functions.yaml (through torchgen)",
                  format=torch_snapshots.FORMAT, version=version, digest=digest, optional=aten.optional_spelling(),
                  columns=json.dumps(list(aten.ROW_FIELDS)), op_lines=lines)


def _current(target: Path) -> str | None:
    """The text *target* holds now (decompressed), if it is a readable file; a file that is
    not one (huge, a gzip bomb, corrupt) is simply replaced."""
    data = inputfile.read_back(target)
    try:
        return None if data is None else torch_snapshots.unpacked(data).decode("utf-8")
    except ValueError:
        return None


def run(out: Path | None, into_package: bool) -> str:
    """Returns the line to print."""
    version = aten.installed_torch_version()
    target = snapshot_out.target(out, into_package, torch_snapshots.path_of(version))
    # Built afresh from torchgen, never taken from the cache: this file records what torch says.
    rows = aten.fresh_rows()
    text = snapshot_text(version, aten.native_functions_digest(), rows)
    if _current(target) == text:
        return f"unchanged: {display_path(str(target))} (torch {version}, {len(rows)} ops)"
    data = text.encode("utf-8")
    if target.name.endswith(".gz"):
        # No name and no time in the gzip header: the same ops give the same bytes.
        data = gzip.compress(data, compresslevel=9, mtime=0)
    snapshot_out.write(target, data)
    return f"wrote {display_path(str(target))}: torch {version}, {len(rows)} ops"
