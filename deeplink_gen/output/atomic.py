"""One atomic write: a temporary file in the same directory, then a rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes, *, sync: bool = False) -> None:
    """Replace *path* with *data*; readers see the old or the new file, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
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


def write_cache(path: Path, data: bytes) -> None:
    """An atomic write into the cache directory: failing only costs time later."""
    try:
        write_atomic(path, data)
    except OSError:
        pass
