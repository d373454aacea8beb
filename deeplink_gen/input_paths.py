"""Where inputs live: a workspace's vendor and catalog files, a vendor's
hand-written sources, the JSON Schemas, the installed torchgen's data and the
cache directory. No heavy imports, so the unchanged-render shortcut can use it
before anything else is loaded. (Output paths are defined in output_paths.py.)"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
# The torch op tables shipped as data (interfaces/torch_snapshots.py reads them).
TORCH_SNAPSHOTS = PACKAGE / "interfaces" / "data"
_TORCH_SNAPSHOT = re.compile(r"^torch-(\d+\.\d+\.\d+)\.json\.gz$")


def package_dir(name: str) -> Path | None:
    """Where the installed package or module *name* lives, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin) if spec.origin else None


def torchgen_native_dir(torchgen: Path) -> Path:
    """torchgen's packaged ATen data (native_functions.yaml, tags.yaml)."""
    return torchgen / "packaged" / "ATen" / "native"


def torch_version_file(torchgen: Path) -> Path:
    """torch/version.py of the torch that ships *torchgen*."""
    return torchgen.parent / "torch" / "version.py"


def workspace_name(path: str | Path, root: Path | None) -> str:
    """How generated files and reports name an input file: relative to the
    workspace *root* (a file or folder linked from elsewhere by its place in
    the workspace), deeplink_gen/... for what ships with deeplink-gen, else
    *path* as given."""
    for base, prefix in ((root, ""), (PACKAGE, "deeplink_gen/")):
        if base is None:
            continue
        for inside, folder in ((Path(os.path.abspath(path)), Path(os.path.abspath(base))),
                               (Path(path).resolve(), Path(base).resolve())):
            if inside.is_relative_to(folder):
                return prefix + inside.relative_to(folder).as_posix()
    return str(path)


def _yaml_files(folder: Path) -> list[Path]:
    """*folder*'s *.yaml files, hidden ones left out: an editor's lock link (.#acme.yaml) or a
    copy's resource fork (._acme.yaml) is no input."""
    return sorted(p for p in folder.glob("*.yaml") if not p.name.startswith("."))


def vendor_files(root: Path) -> list[Path]:
    return _yaml_files(root / "vendors")


WORKSPACE_FILE = "deeplink-gen.yaml"


def catalog_files(root: Path) -> list[Path]:
    """The workspace's own catalog files (catalog/*.yaml)."""
    return _yaml_files(root / "catalog")


def bundled_catalog_files() -> list[Path]:
    """The op catalog that ships with deeplink-gen."""
    return sorted((PACKAGE / "catalog").glob("*.yaml"))


def workspace_file(root: Path) -> Path:
    """deeplink-gen.yaml: the workspace's settings (whether it uses the bundled catalog)."""
    return root / WORKSPACE_FILE


def example_vendors_dir() -> Path:
    """The example vendor files that ship with deeplink-gen (the packaged copy in a
    wheel, or the repository's vendors/ in an editable install)."""
    packaged = PACKAGE / "examples" / "vendors"
    return packaged if packaged.is_dir() else PACKAGE.parent / "vendors"


# The most files a vendor's hand-written folder may hold (and the digest walks in an input folder).
MAX_HAND_WRITTEN = 10_000


def hand_written_dir(vendor_path: str | Path) -> Path:
    """vendors/<name>/ beside vendors/<name>.yaml: the vendor's hand-written files."""
    return Path(vendor_path).with_suffix("")


def schema_dir() -> Path:
    """The packaged schemas (wheel) or the repository's schemas/ (editable install)."""
    packaged = PACKAGE / "schemas"
    return packaged if packaged.is_dir() else PACKAGE.parent / "schemas"


def cache_dir() -> Path:
    """DEEPLINK_GEN_CACHE_DIR, else $XDG_CACHE_HOME/deeplink-gen, else ~/.cache/deeplink-gen."""
    env = os.environ.get("DEEPLINK_GEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "deeplink-gen"


def shipped_torch_snapshots() -> list[str]:
    """The torch versions an op table ships for, oldest first (as the help texts list them)."""
    found = (_TORCH_SNAPSHOT.match(p.name) for p in TORCH_SNAPSHOTS.glob("torch-*.json.gz"))
    return sorted((m.group(1) for m in found if m), key=lambda v: tuple(int(part) for part in v.split(".")))
