"""Content digests of everything a result depends on, the keys of the caches
and of the unchanged-render stamps: every input file's bytes (vendor files and
their hand-written folders, the workspace's catalog, deeplink-gen.yaml, the
bundled catalog, DIOPI headers given with --diopi-include), the options, the
Python version, the installed torch (its version and the stat of torchgen's op
files) and deeplink-gen itself (the path, size and mtime of every file of the
package and its schemas, and of the top-level files of the libraries it
renders with). Cheap enough for every run; imports nothing heavy. None means
an input could not be read, so nothing may be reused."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.input_paths import (
    MAX_HAND_WRITTEN, PACKAGE, bundled_catalog_files, catalog_files, hand_written_dir, package_dir, schema_dir,
    torch_version_file, torchgen_native_dir, vendor_files, workspace_file,
)

# Libraries whose code shapes output besides torchgen (covered by the torch identity).
_LIBRARIES = ("jinja2", "yaml", "jsonschema", "click")


def _files(root: Path, skip: tuple[str, ...] = (), *, folders: bool = False, limit: int | None = None) -> list[Path]:
    """Every file below *root* outside folders named in *skip* (with *folders*,
    every folder too), sorted; none for a missing root. More than *limit* is a
    UserError: such a tree is no input, and is not walked to its end."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        found += [Path(dirpath) / name for name in filenames + (dirnames if folders else [])]
        if limit is not None and len(found) > limit:
            raise UserError([Diagnostic(None, str(root), f"holds more than {limit} files")])
    return sorted(found)


def key_bytes(text: str) -> bytes:
    """*text* as bytes to hash: UTF-8, and a file name that is not UTF-8 (Python
    holds its bytes as lone surrogates, as every name under the C locale) too."""
    return text.encode("utf-8", "surrogatepass")


def _stat_line(path: Path) -> bytes:
    st = path.stat()
    return key_bytes(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n")


@functools.lru_cache(maxsize=1)
def tool_digest() -> str:
    """deeplink-gen's own code, templates, data and schemas, the libraries it
    renders with, and the Python running it (paths, sizes and mtimes)."""
    h = hashlib.sha256(f"{sys.version}\0{sys.implementation.cache_tag}\n".encode())
    for path in [*_files(PACKAGE, skip=("__pycache__",)), *_files(schema_dir())]:
        h.update(_stat_line(path))
    for name in _LIBRARIES:     # their top-level files: installing another version rewrites them
        lib = package_dir(name)
        h.update(key_bytes(f"{name}\0{lib}\n"))
        if lib is not None and lib.is_dir():
            for path in sorted(p for p in lib.iterdir() if p.is_file()):
                h.update(_stat_line(path))
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def torch_digest() -> str:
    """The installed torch: its version file and torchgen's op tables (path, size, mtime)."""
    h = hashlib.sha256()
    torchgen = package_dir("torchgen")
    h.update(key_bytes(f"{torchgen}\n"))
    if torchgen is not None:
        version = torch_version_file(torchgen)
        native = torchgen_native_dir(torchgen)
        for path in (version, native / "native_functions.yaml", native / "tags.yaml"):
            if path.is_file():
                h.update(_stat_line(path) + path.read_bytes() if path == version else _stat_line(path))
    return h.hexdigest()


def digest(*parts: str) -> str:
    """The tool and torch digests with *parts*: a key for a value made from those alone."""
    return hashlib.sha256(key_bytes("\0".join((tool_digest(), torch_digest(), *parts)))).hexdigest()


def _hash_tree(h, label: str, paths: list[Path], base: Path) -> None:
    """The name of each path and the bytes of each file (read as input files are: UserError
    for what is not a regular file of bounded size)."""
    for path in paths:
        data = b"/" if path.is_dir() else inputfile.read(path)
        h.update(key_bytes(f"{label}\0{path.relative_to(base).as_posix()}\0{len(data)}\0"))
        h.update(data)


def workspace_digest(root: Path, diopi_include: Path | None) -> str | None:
    """Every input file of the workspace at *root* (what a load reads: vendors/*.yaml,
    the hand-written folder vendors/<name>/ of each, catalog/*.yaml, deeplink-gen.yaml,
    the bundled catalog, the --diopi-include headers), the tool and torch; keys are made
    from it with digest() and what else the result depends on. None (no key: nothing is
    reused or stored) where a file cannot be read or a folder holds more files than an
    input folder may (the load says which)."""
    h = hashlib.sha256(f"{tool_digest()}\0{torch_digest()}\0".encode())
    h.update(json.dumps({"root": str(root), "resolved_root": str(root.resolve()),
                         "diopi_include": diopi_include and str(diopi_include.resolve())},
                        sort_keys=True).encode())
    try:
        vendors = vendor_files(root)
        for folder in (hand_written_dir(p) for p in list(vendors)):
            if folder.is_dir():
                vendors += [folder, *_files(folder, folders=True, limit=MAX_HAND_WRITTEN)]
        _hash_tree(h, "vendors", vendors, root / "vendors")
        _hash_tree(h, "catalog", catalog_files(root), root / "catalog")
        _hash_tree(h, "bundled", bundled_catalog_files(), PACKAGE / "catalog")
        if diopi_include is not None:
            _hash_tree(h, "diopi", _files(diopi_include, folders=True, limit=MAX_HAND_WRITTEN), diopi_include)
        settings = workspace_file(root)
        if os.path.lexists(settings):
            _hash_tree(h, "settings", [settings], root)
    except (OSError, UserError):
        return None
    return h.hexdigest()
