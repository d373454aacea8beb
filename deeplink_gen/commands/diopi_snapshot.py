"""`deeplink-gen diopi-snapshot`: refresh the DIOPI prototype snapshot from
DIOPI's proto headers; the file is rewritten only when it changed."""

from __future__ import annotations

import re
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, UserError, display_path
from deeplink_gen.commands import snapshot_out
from deeplink_gen.interfaces import diopi
from deeplink_gen.model import Prototypes
from deeplink_gen.render.templating import render


def snapshot_text(protos: Prototypes, source: str) -> str:
    for p in list(protos.functions.values()) + list(protos.runtime_functions.values()):
        if '"' in p.params_text or "\\" in p.params_text:
            raise UserError([Diagnostic(p.loc, p.name, "parameter text contains a quote or backslash")])
    texts = [v for _, v in protos.runtime_header.macros] + list(protos.runtime_header.declarations)
    if any('"' in t or "\\" in t for t in texts):
        raise UserError([Diagnostic(None, None, "diopirt.h: a declaration contains a quote or backslash")])
    return render("diopi/diopi_prototypes.yaml.j2", protos=protos, source=source)


# A commit hash, a tag or a branch name: what git names a commit with (it goes into the YAML as is).
COMMIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,99}")


def run(include: Path, out: Path | None, into_package: bool, commit: str) -> str:
    """Returns the line to print."""
    if not COMMIT.fullmatch(commit):
        raise UserError([Diagnostic(None, "--commit", (
            f"{commit[:60]!r} is not a commit: give its hash (or a tag), letters, digits and . _ / + - only"))])
    target = snapshot_out.target(out, into_package, diopi.SNAPSHOT)
    protos = diopi.from_headers(include, commit)
    # Named by commit, not by this machine's path, so the file is the same wherever it is refreshed.
    text = snapshot_text(protos, f"DIOPI {commit}, proto/include/diopi/")
    # Read bounded, as bytes: a file that cannot be a snapshot (not UTF-8, gigabytes) is simply replaced.
    if inputfile.read_back(target) == text.encode("utf-8"):
        return f"unchanged: {display_path(str(target))} ({len(protos.functions)} functions)"
    snapshot_out.write(target, text.encode("utf-8"))
    return (f"wrote {display_path(str(target))}: {len(protos.functions)} functions, "
            f"{len(protos.runtime_functions)} runtime functions")
