"""Renders into one folder exclude each other: each holds an exclusive
flock(2) on the folder itself while it writes there. The lock lives in the
kernel, not in a file, so it puts nothing into the folder and a killed
render never leaves a stale one."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import Iterator

import click

from deeplink_gen.errors import Diagnostic, UserError

WAIT_SECONDS = 120.0


@contextlib.contextmanager
def held(folder: Path, label: str) -> Iterator[None]:
    """Hold the folder's lock for the block, waiting (and saying so) while
    another deeplink-gen holds it; after WAIT_SECONDS an error."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        deadline = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is None:
                    click.echo(f"waiting for another deeplink-gen writing to {folder} to finish", err=True)
                    deadline = time.monotonic() + WAIT_SECONDS
                elif time.monotonic() > deadline:
                    raise UserError([Diagnostic(None, label, (
                        f"another deeplink-gen has been writing to {folder} for over {WAIT_SECONDS:.0f} s; "
                        "nothing was written: run again when it has finished"))]) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)          # releases the lock
