"""The cache directory's stored values: pickles named by a content digest of
everything they were made from (see inputs.py). A missing, truncated, corrupt
or unreadable entry is a miss, a failed write only costs time later, and
DEEPLINK_GEN_NO_CACHE=1 turns every cache off. Deleting the directory is
always safe. Each kind keeps its KEEP most recently used entries: storing a
new one deletes the others, least recently used first."""

from __future__ import annotations

import os
from pathlib import Path

from deeplink_gen.output.atomic import write_cache
from deeplink_gen.paths import cache_dir

# Bumped when the layout of stored values changes.
FORMAT = 1
# Entries kept per kind (a rendered vendor is about 1.5 MB).
KEEP = 32


def enabled() -> bool:
    return os.environ.get("DEEPLINK_GEN_NO_CACHE", "") in ("", "0")


def _path(kind: str, key: str) -> Path:
    return cache_dir() / f"{kind}-{FORMAT}" / key[:2] / key[2:]


def load(kind: str, key: str | None):
    """The value stored for *key*, else None."""
    if key is None or not enabled():
        return None
    path = _path(kind, key)
    try:
        data = path.read_bytes()
    except OSError:        # missing or unreadable
        return None
    try:
        os.utime(path)     # used now: the last to be deleted
    except OSError:
        pass
    import pickle          # only now: a run that finds nothing stored never pays for it

    try:
        return pickle.loads(data)
    except Exception:      # truncated, or pickled by other code
        return None


def store(kind: str, key: str | None, value) -> None:
    if key is None or not enabled():
        return
    import pickle

    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return
    path = _path(kind, key)
    new = not path.exists()
    write_cache(path, data)
    if new:
        _prune(path.parent.parent)


def _prune(folder: Path) -> None:
    """Delete all but the KEEP most recently used entries of a kind's *folder*."""
    try:
        entries = sorted((entry.stat().st_mtime_ns, entry.path)
                         for group in os.scandir(folder) if group.is_dir()
                         for entry in os.scandir(group.path) if entry.is_file() and not entry.name.startswith("."))
    except OSError:        # another process pruned first
        return
    for _, path in entries[:-KEEP]:
        try:
            os.unlink(path)
        except OSError:
            pass
