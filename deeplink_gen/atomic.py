"""One atomic write: a temporary file in the same directory, then a rename."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def _mode(path: Path) -> int:
    """The mode the file keeps (an existing one's), or a new file's under the umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _create_beside(path: Path) -> tuple[int, str]:
    """A new, exclusively created hidden file next to *path* (what tempfile.mkstemp
    does, without importing tempfile, which costs a start-up-bound run 10 ms)."""
    while True:
        tmp = str(path.parent / f".{path.name}-{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), tmp
        except FileExistsError:
            continue


def write_atomic(path: Path, data: bytes, *, sync: bool = False) -> None:
    """Replace *path* with *data*; readers see the old or the new file, never a part."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:                 # a file where a folder is needed
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), exc.filename) from None
    mode = _mode(path)
    fd, tmp = _create_beside(path)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
