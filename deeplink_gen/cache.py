"""The cache folder: one store for everything deeplink-gen keeps between
runs. An entry is a value (codec.py: JSON of plain data and deeplink-gen's
own dataclasses, so reading one never runs code) behind a header with the
sha256 of its key and body, named by its kind and a key that digests.digest() made
from everything the value was made from. An entry that is missing,
truncated, corrupt, damaged, moved to another key or unreadable is a miss (and deleted), a
failed write only costs time later, and DEEPLINK_GEN_NO_CACHE=1 reads and
writes nothing. Deleting the folder is always safe. The store stays under
DEEPLINK_GEN_CACHE_MB megabytes (default 256): storing a new entry that
takes it over deletes the least recently used entries, of any kind, down to
three quarters of that. Links found in the store are never followed: an
entry behind one is a miss, and nothing is written or deleted through one.
The checksum finds damage, not forgery: whoever may write the folder can make
any entry pass, so it is as much the user's as the workspace is."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen import codec, inputfile
from deeplink_gen.atomic import write_atomic
from deeplink_gen.errors import UserError
from deeplink_gen.input_paths import cache_dir

# Bumped when the layout of entries or of stored values changes.
FORMAT = 8
# The store's default size bound (a rendered vendor is about 1.5 MB, a validated workspace about 1 MB).
DEFAULT_MB = 256
_MAGIC = b"deeplink-gen cache %d " % FORMAT


def enabled() -> bool:
    return os.environ.get("DEEPLINK_GEN_NO_CACHE", "") in ("", "0")


def limit() -> int:
    """The store's size bound in bytes."""
    try:
        return max(0, int(os.environ.get("DEEPLINK_GEN_CACHE_MB", ""))) * 1024 * 1024
    except ValueError:
        return DEFAULT_MB * 1024 * 1024


def _store() -> Path:
    return cache_dir() / f"store-{FORMAT}"


def _path(kind: str, key: str) -> Path:
    return _store() / kind / key[:2] / key[2:]


def _in_store(path: Path) -> bool:
    """Whether the entry at *path* and no folder from the store down to it is a link: an
    entry is only ever read, deleted or written inside the store, whatever links someone
    put there."""
    try:
        return not any(p.is_symlink() for p in (_store(), path.parent.parent, path.parent, path))
    except OSError:
        return False


def _read(path: Path) -> bytes | None:
    """An entry's bytes: a regular file of bounded size (never a FIFO or device someone put there), else None."""
    try:
        return inputfile.read(path)
    except UserError:
        return None


def load(kind: str, key: str | None):
    """The value stored for *key*, else None."""
    if key is None or not enabled():
        return None
    path = _path(kind, key)
    raw = _read(path) if _in_store(path) else None
    if raw is None:
        return None
    header, _, body = raw.partition(b"\n")
    try:
        if header != _header(key, body):
            raise codec.DecodeError("checksum")
        value = codec.loads(body)
    except codec.DecodeError:
        _delete(path)
        return None
    try:
        os.utime(path)     # used now: the last to be deleted
    except OSError:
        pass
    return value


def _header(key: str, body: bytes) -> bytes:
    """An entry's first line: the format and the sha256 of its key and body, so that an entry
    copied or renamed to another key is a miss, as a damaged one is."""
    return _MAGIC + hashlib.sha256(key.encode() + b"\n" + body).hexdigest().encode()


def store(kind: str, key: str | None, value) -> None:
    if key is None or not enabled():
        return
    try:
        body = codec.dumps(value)
    except (TypeError, ValueError):
        return
    path = _path(kind, key)
    if _store().is_symlink():
        return
    new = not path.exists()
    try:
        write_atomic(path, _header(key, body) + b"\n" + body, within=_store())
    except (OSError, UserError):       # UserError: a folder of the store links out of it
        return
    if new:
        _prune()


@dataclass(frozen=True)
class Memo:
    """The store as a stage is handed it, to keep values of its own between
    runs (the stages never call load or store themselves); NO_MEMO keeps nothing."""

    keeps: bool = True

    def get(self, kind: str, key: str | None):
        return load(kind, key) if self.keeps else None

    def put(self, kind: str, key: str | None, value) -> None:
        if self.keeps:
            store(kind, key, value)


MEMO = Memo()
NO_MEMO = Memo(keeps=False)


def _delete(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _prune() -> None:
    """Keep the store under limit(), deleting the least recently used entries first."""
    entries = []
    try:
        if _store().is_symlink():
            return
        # Links are neither followed nor counted: only the store's own entries are ever deleted.
        for kind in os.scandir(_store()):
            for group in os.scandir(kind.path) if kind.is_dir(follow_symlinks=False) else ():
                for entry in os.scandir(group.path) if group.is_dir(follow_symlinks=False) else ():
                    if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                        st = entry.stat(follow_symlinks=False)
                        entries.append((st.st_mtime_ns, st.st_size, entry.path))
    except OSError:        # another process pruned first
        return
    total, bound = sum(size for _, size, _ in entries), limit()
    if total <= bound:
        return
    for _, size, path in sorted(entries):
        _delete(Path(path))
        total -= size
        if total <= bound * 3 // 4:
            break
