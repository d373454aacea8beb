"""Where a report (coverage, drift) goes: printed, or written to --out
only if its content changed. A file already at --out is replaced only if
deeplink-gen wrote it (its top says so): a vendor file, a hand-written
note or a link's target named there by mistake is left as it is, and an --out in
the workspace is not written through a folder that links out of it."""

from __future__ import annotations

import os
from pathlib import Path

import click

from deeplink_gen import inputfile
from deeplink_gen.atomic import bound, write_atomic
from deeplink_gen.errors import Diagnostic, UserError, display_path
from deeplink_gen.render.templating import GENERATED, written_by_us


def emit(text: str, out: Path | None, summary: str, root: Path) -> None:
    """*text* printed, or written to *out* with *summary* printed; *root*: the workspace."""
    if out is None:
        click.echo(text, nl=False)
        return
    data = text.encode("utf-8")
    old = None
    if os.path.lexists(out):
        try:
            old = inputfile.read(out, key="--out")
        except UserError:
            old = b""
        if not written_by_us(old):
            raise UserError([Diagnostic(None, str(out), (
                "--out names a file deeplink-gen did not write (its first lines carry no "
                f"'{GENERATED} by deeplink-gen'); nothing was written: remove it or choose another --out")
            )])
    if old != data:
        write_atomic(out, data, within=bound(out, root))
    click.echo(f"wrote {display_path(str(out))}: {summary}")
