"""The cache directory's stored values: pickles named by a content digest of
everything they were made from (see inputs.py). A missing, truncated, corrupt
or unreadable entry is a miss, a failed write only costs time later, and
DEEPLINK_GEN_NO_CACHE=1 turns every cache off. Deleting the directory is
always safe."""

from __future__ import annotations

import os
from pathlib import Path

from deeplink_gen.output.atomic import write_cache
from deeplink_gen.paths import cache_dir

# Bumped when the layout of stored values changes.
FORMAT = 1


def enabled() -> bool:
    return os.environ.get("DEEPLINK_GEN_NO_CACHE", "") in ("", "0")


def _path(kind: str, key: str) -> Path:
    return cache_dir() / f"{kind}-{FORMAT}" / key[:2] / key[2:]


def load(kind: str, key: str | None):
    """The value stored for *key*, else None."""
    if key is None or not enabled():
        return None
    try:
        data = _path(kind, key).read_bytes()
    except OSError:        # missing or unreadable
        return None
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
    write_cache(_path(kind, key), data)
