"""Which torch a run checks and renders for, worked out in one place: the
command line's --torch-version, else deeplink-gen.yaml's torch, else a
default (the installed torch; new-vendor's is DIPU's newest). Its op table
is the installed torch's when the installed torch is that version
(major.minor, and the patch when given), else the one shipped for it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from deeplink_gen.errors import Diagnostic, ParseError, UserError
from deeplink_gen.options import Torch

if TYPE_CHECKING:
    from deeplink_gen.model import OpTable
    from deeplink_gen.request import Request

# The op tables and torchgen are imported when a torch is chosen, not with this module: a render
# that reuses what it rendered before chooses none.


def of_version(wanted: str) -> Torch:
    """Torch *wanted* (X.Y[.Z]): the installed one when it is that version, else
    the op table shipped for it; ParseError when there is neither."""
    from deeplink_gen.interfaces import torch_snapshots
    from deeplink_gen.interfaces.aten import installed_torch_version

    installed = installed_torch_version()
    if torch_snapshots.matches(installed, wanted):
        return Torch(installed)
    return Torch(torch_snapshots.choose(wanted).version, snapshot=True)


def of_request(request: Request, *, renders: bool = False) -> Torch:
    """The torch of *request*: choose() for its workspace and its --torch-version."""
    return choose(request.root, request.options.torch_version, renders=renders)


def choose(root: Path, asked: str | None, *, renders: bool = False, workspace: bool = True,
           default: str | None = None) -> Torch:
    """The torch of a run in the workspace *root* whose command line *asked* for
    that version (None: not given). A command that *renders* the workspace's
    files must not be asked for another torch than deeplink-gen.yaml's; the
    others may look at any. Without *workspace* (a command that writes a new
    workspace) deeplink-gen.yaml is not read. Without either, the torch is
    *default*, else the installed one."""
    from deeplink_gen.interfaces import torch_snapshots
    from deeplink_gen.interfaces.aten import installed_torch_version
    from deeplink_gen.load.workspace import target_torch
    from deeplink_gen.model import TorchVersion

    recorded = target_torch(root) if workspace else None
    if asked is not None:
        try:
            TorchVersion.parse(asked)
        except ParseError:
            raise click.BadParameter(f"'{asked}' is not a version such as 2.13", param_hint="--torch-version")
        if renders and recorded is not None and not torch_snapshots.matches(TorchVersion.parse(recorded[0]), asked):
            raise UserError([Diagnostic(recorded[1], "torch",
                                        f"the workspace renders for torch {recorded[0]}, and --torch-version asks "
                                        f"for torch {asked}: change deeplink-gen.yaml's torch, or leave "
                                        f"--torch-version out")])
        wanted, where = asked, None
    elif recorded is not None:
        wanted, where = recorded
    elif default is not None:
        wanted, where = default, None
    else:
        return Torch(installed_torch_version())
    try:
        return of_version(wanted)
    except ParseError as exc:
        if asked is not None:
            raise click.BadParameter(str(exc), param_hint="--torch-version")
        raise UserError([Diagnostic(where, "torch", str(exc))]) from None


def table_for(text: str, option: str) -> OpTable:
    """The op table of the torch *text* that the command-line *option* names
    (the installed torch's or a shipped one); a usage error when there is none."""
    from deeplink_gen.interfaces import torch_snapshots

    try:
        return torch_snapshots.choose(text)
    except ParseError as exc:
        raise click.BadParameter(str(exc), param_hint=option)
