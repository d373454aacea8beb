"""Where inputs live: a workspace's vendor and catalog files, a vendor's
hand-written sources, the JSON Schemas and the cache directory. No heavy
imports, so the unchanged-render shortcut can use it before anything else is
loaded. (Output paths are defined in render/paths.py.)"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def vendor_files(root: Path) -> list[Path]:
    return sorted((root / "vendors").glob("*.yaml"))


def vendor_file(root: Path, name: str) -> Path:
    return root / "vendors" / f"{name}.yaml"


def catalog_files(root: Path) -> list[Path]:
    return sorted((root / "catalog").glob("*.yaml"))


def hand_written_dir(vendor_path: str | Path) -> Path:
    """vendors/<name>/ beside vendors/<name>.yaml: the vendor's hand-written files."""
    return Path(vendor_path).with_suffix("")


def schema_dir() -> Path:
    """The packaged schemas (wheel) or the repository's schemas/ (editable install)."""
    packaged = PACKAGE / "schemas"
    return packaged if packaged.is_dir() else PACKAGE.parent / "schemas"


@functools.lru_cache(maxsize=1)
def schema_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(schema_dir().glob("*.schema.json")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def cache_dir() -> Path:
    """DEEPLINK_GEN_CACHE_DIR, else $XDG_CACHE_HOME/deeplink-gen, else ~/.cache/deeplink-gen."""
    env = os.environ.get("DEEPLINK_GEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "deeplink-gen"
