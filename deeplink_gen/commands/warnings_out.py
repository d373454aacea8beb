"""Printing validation warnings, and --strict: warnings go to stderr as
file:line:col: warning: key.path: message, one run after another (stored
results included), and exit 1 only when --strict makes them errors."""

from __future__ import annotations

from typing import Iterable

import click

from deeplink_gen.errors import Diagnostic, count, shown

def show(warnings: Iterable[Diagnostic], strict: bool) -> bool:
    """Print *warnings*; True when --strict makes them stop the run."""
    warnings = list(warnings)
    for line in shown(warnings):
        click.echo(line, err=True)
    if not warnings:
        return False
    if strict:
        click.echo(f"{count(len(warnings), 'warning')}, treated as errors (--strict)", err=True)
        return True
    click.echo(count(len(warnings), "warning"), err=True)
    return False
