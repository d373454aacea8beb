"""The no-change fast path. After a successful render, a stamp records a digest
of everything the output depends on (the vendor file, the catalog, the
package's own code, templates, schemas and data, the torch op table, the
options) and the sha256 of every file written. A later render whose inputs
(the vendor's hand-written vendors/<name>/ files included) have the same
digest and whose files on disk still match is a no-op that neither loads nor renders anything. Stamps live in the cache directory, keyed
by the output directory, never in the output tree."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from deeplink_gen.interfaces import aten
from deeplink_gen.output.atomic import write_cache
from deeplink_gen.paths import (
    PACKAGE, cache_dir, catalog_files, hand_written_dir, schema_digest, vendor_file, workspace_file,
)


def _hash_files(h, paths: list[Path], root: Path) -> None:
    for path in paths:
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")


@functools.lru_cache(maxsize=1)
def tool_digest() -> str:
    """Everything of deeplink-gen itself that shapes output, plus torch's op table."""
    h = hashlib.sha256()
    files = sorted(p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    _hash_files(h, files, PACKAGE)
    h.update(schema_digest().encode())
    h.update(aten.native_functions_digest().encode())
    return h.hexdigest()


def input_digest(root: Path, vendor: str, options: dict) -> str | None:
    path = vendor_file(root, vendor)
    if not path.is_file():
        return None
    sources = hand_written_dir(path)   # copied into the output
    extra = sorted(p for p in sources.rglob("*") if p.is_file()) if sources.is_dir() else []
    h = hashlib.sha256(tool_digest().encode())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    settings = [workspace_file(root)] if workspace_file(root).is_file() else []
    _hash_files(h, [path, *settings, *catalog_files(root), *extra], root)
    extra = options.get("diopi_include")
    if extra:
        inc = Path(extra)
        _hash_files(h, sorted(p for p in inc.rglob("*.h") if p.is_file()), inc)
    return h.hexdigest()


def _stamp_path(out_root: Path) -> Path:
    key = hashlib.sha256(str(out_root.resolve()).encode()).hexdigest()[:24]
    return cache_dir() / "stamps" / f"{key}.json"


def _load(out_root: Path) -> dict:
    try:
        data = json.loads(_stamp_path(out_root).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def fresh(out_root: Path, vendor: str, digest: str | None) -> list[str] | None:
    """The vendor's files (relative paths) if its output is current, else None."""
    if digest is None:
        return None
    entry = _load(out_root).get(vendor)
    if not isinstance(entry, dict) or entry.get("inputs") != digest:
        return None
    target = out_root / vendor
    files = entry.get("files") or {}
    try:
        on_disk = sorted(p.relative_to(target).as_posix() for p in target.rglob("*")
                         if p.is_file() or p.is_symlink())
    except OSError:
        return None
    if on_disk != sorted(files):
        return None
    for rel, sha in files.items():
        path = target / rel
        if path.is_symlink() or hashlib.sha256(path.read_bytes()).hexdigest() != sha:
            return None
    return sorted(files)


def record(out_root: Path, rendered: dict[str, tuple[str | None, dict[str, str]]]) -> None:
    """Remember {vendor: (digest, files)} after a successful write."""
    data = _load(out_root)
    for vendor, (digest, files) in rendered.items():
        if digest is None:
            data.pop(vendor, None)
            continue
        data[vendor] = {"inputs": digest, "files": {
            rel: hashlib.sha256(text.encode("utf-8")).hexdigest() for rel, text in sorted(files.items())}}
    # Without a stamp the next render just does the full work.
    write_cache(_stamp_path(out_root), json.dumps(data, sort_keys=True).encode("utf-8"))
