"""What the CI workflow `init` writes installs deeplink-gen with: this very
deeplink-gen, found from how it was installed (PEP 610: its dist-info's
direct_url.json). From a package index: `deeplink-gen==VERSION`; from a git
URL: that URL at the installed commit; from a wheel file that still exists:
a copy of it in the workspace's tools/, installed from there; from any
other URL: that URL. From a local folder (a source checkout, an editable
install, or a copy a PYTHONPATH puts before the installed one, whose record
then says nothing of it) there is nothing CI can reach, so the workflow asks
the index for this version and a note names the folder and says how to do
better; `init --tool REQUIREMENT` decides it outright."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from deeplink_gen import __version__, inputfile
from deeplink_gen.atomic import write_atomic

DIST = "deeplink-gen"


@dataclass(frozen=True)
class ToolSource:
    requirement: str            # what pip installs in CI
    wheel: Path | None = None   # a wheel to copy into the workspace's tools/ first
    folder: Path | None = None  # the local folder deeplink-gen runs from, which CI cannot reach

    def note(self, root: Path, workflow: str) -> str | None:
        """What to do instead of installing the package index's release, for a workspace *root*
        whose CI *workflow* installs it; None when CI installs this very deeplink-gen."""
        if self.folder is None:
            return None
        return (f"deeplink-gen runs from {self.folder}, which CI cannot reach, so the workflow installs "
                f"{self.requirement} from the package index; to install this build instead: pip wheel --no-deps "
                f"-w {shlex.quote(str(root / 'tools'))} {shlex.quote(str(self.folder))}, then delete "
                f"{shlex.quote(str(root / workflow))} and run deeplink-gen init {shlex.quote(str(root))} --tool "
                "./tools/<the wheel>")


def _distribution() -> metadata.Distribution | None:
    try:
        return metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        return None


def _direct_url(dist: metadata.Distribution) -> dict:
    try:
        text = dist.read_text("direct_url.json")
        data = json.loads(text) if text else None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _folder(url: str) -> Path:
    return Path(unquote(urlparse(url).path))


def _runs_this(dist: metadata.Distribution, info: dict) -> bool:
    """Whether the deeplink-gen running is the one *dist* installed (a PYTHONPATH may put another
    copy first): an editable install runs from its folder, any other from where its files went."""
    here = Path(__file__).resolve().parents[2]
    dir_info = info.get("dir_info")
    if isinstance(dir_info, dict) and dir_info.get("editable"):
        return here.is_relative_to(_folder(str(info.get("url", ""))).resolve())
    return here == Path(dist.locate_file("")).resolve()


def installed_source() -> ToolSource:
    pinned = f"{DIST}=={__version__}"
    dist = _distribution()
    info = _direct_url(dist) if dist is not None else {}
    if dist is None or not _runs_this(dist, info):       # a source folder on the path
        return ToolSource(pinned, folder=Path(__file__).resolve().parents[2])
    url = str(info.get("url", ""))
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("commit_id"):
        return ToolSource(f"{DIST} @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}")
    if urlparse(url).scheme == "file":
        path = _folder(url)
        if "archive_info" in info and path.suffix == ".whl" and path.is_file():
            return ToolSource(f"./tools/{path.name}", wheel=path)
        return ToolSource(pinned, folder=path)
    if url:
        return ToolSource(f"{DIST} @ {url}")
    return ToolSource(pinned)


def place(source: ToolSource, root: Path) -> str | None:
    """Copy the source's wheel into *root*/tools/ (unless there); its path from the root, else None."""
    if source.wheel is None:
        return None
    target = root / "tools" / source.wheel.name
    data = source.wheel.read_bytes()
    if inputfile.read_back(target) != data:
        write_atomic(target, data, within=root)
    return f"tools/{source.wheel.name}"
