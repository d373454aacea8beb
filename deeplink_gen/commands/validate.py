"""`deeplink-gen validate`: load and check the workspace for its torch, print
the warnings and a summary; the exit code says whether it is valid."""

from __future__ import annotations

import click

from deeplink_gen.commands import next_step, stored, torch_choice, warnings_out
from deeplink_gen.request import Request


def main(request: Request, strict: bool) -> int:
    torch = torch_choice.of_request(request)
    checked = stored.checked(request, torch)
    if warnings_out.show(checked.warnings, strict):
        return 1
    ws = checked.ws
    click.echo(f"ok: {len(ws.catalog.names())} catalog ops, "
               f"{len(ws.vendors)} vendor{'s' if len(ws.vendors) != 1 else ''} "
               f"({', '.join(v.name for v in ws.vendors)}), torch {torch.version}"
               f"{' (shipped op table)' if torch.snapshot else ''}")
    prog = next_step.prog(request.root)
    if not ws.vendors:
        click.echo("no vendor yet: `deeplink-gen new-vendor NAME` scaffolds one in vendors/")
        next_step.show(f"{prog} new-vendor NAME")
    else:
        chosen = " ".join(f"--vendor {v}" for v in request.vendors) if request.vendors else "--all"
        next_step.show(f"{prog} render {chosen}")
    return 0
