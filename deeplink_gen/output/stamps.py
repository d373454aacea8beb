"""The no-change fast path. After a successful render, a stamp records the
digest of everything the output depends on (digests.py) and the sha256 of
every file written. A later render with the same digest whose files on disk
still match is a no-op that neither loads nor renders anything. Stamps live
in the cache directory, keyed by the output directory, never in the output
tree; DEEPLINK_GEN_NO_CACHE=1 neither reads nor writes them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from deeplink_gen import cache, digests, inputfile


def _key(out_root: Path) -> str:
    return digests.digest("stamps", str(out_root.resolve()))


def _load(out_root: Path) -> dict:
    data = cache.load("stamps", _key(out_root))
    return data if isinstance(data, dict) else {}


def fresh(out_root: Path, vendor: str, digest: str | None) -> list[str] | None:
    """The vendor's files (relative paths) if its output is current, else None."""
    if digest is None or not cache.enabled():
        return None
    entry = _load(out_root).get(vendor)
    if not isinstance(entry, dict) or entry.get("inputs") != digest:
        return None
    target = out_root / vendor
    files = entry.get("files")
    if not (isinstance(files, dict) and all(type(k) is str and type(v) is str for k, v in files.items())):
        return None
    try:
        on_disk = sorted(p.relative_to(target).as_posix() for p in target.rglob("*")
                         if p.is_file() or p.is_symlink())
    except OSError:
        return None
    if on_disk != sorted(files):
        return None
    for rel, sha in files.items():
        path = target / rel
        data = inputfile.read_back(path, links=False)
        if data is None or hashlib.sha256(data).hexdigest() != sha:
            return None
    return sorted(files)


def record(out_root: Path, rendered: dict[str, tuple[str | None, dict[str, str]]]) -> None:
    """Remember {vendor: (digest, files)} after a successful write."""
    if not cache.enabled():
        return
    data = _load(out_root)
    for vendor, (digest, files) in rendered.items():
        if digest is None:
            data.pop(vendor, None)
            continue
        data[vendor] = {"inputs": digest, "files": {
            rel: hashlib.sha256(text.encode("utf-8")).hexdigest() for rel, text in sorted(files.items())}}
    cache.store("stamps", _key(out_root), data)      # without one the next render does the full work
