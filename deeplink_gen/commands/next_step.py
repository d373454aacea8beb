"""The `next:` line every command that succeeds ends with, and the
deeplink-gen commands it and other hints name: spelt as the user runs them
from where they stand (with -C DIR when the workspace is elsewhere), paths quoted
for the shell, so that each can be pasted as it is."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from deeplink_gen.options import Options


def word(path: Path) -> str:
    """*path* as one word of a shell command line: quoted where the shell would read it otherwise
    (a space splits it, `$(...)` runs a command)."""
    return shlex.quote(str(path))


def prog(root: Path) -> str:
    """deeplink-gen as the user runs it on the workspace *root* (with -C unless it is the current folder)."""
    return "deeplink-gen" if root == Path(".") else f"deeplink-gen -C {word(root)}"


def render_command(root: Path, options: Options, *args: str) -> str:
    """The render command that gives *options*, with *args* after `render`."""
    return " ".join([prog(root), *options.group_flags(), "render", *args, *options.render_flags()])


def show(text: str, err: bool = False) -> None:
    """The last line of a command that succeeded: what to do next (on stderr when stdout is a report for tools)."""
    click.echo(f"next: {text}", err=err)
