"""Write rendered trees safely. A vendor's output is staged next to its
target, unchanged files are hard-linked (mtime kept, so CMake/Ninja rebuild
nothing), and the staged tree is swapped in with renames: a failed or killed
render leaves the previous tree in place. ``check`` compares without writing."""

from __future__ import annotations

import difflib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen.output.atomic import write_atomic

STAGING = ".staging-"
PREVIOUS = ".previous-"


@dataclass
class Report:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.stale or self.missing or self.unexpected)


def _existing(root: Path) -> dict[str, Path]:
    """Every entry below *root* that is not a directory; symlinks are listed but
    never followed (a link inside the output tree never leads out of it)."""
    found: dict[str, Path] = {}
    if not root.is_dir() or root.is_symlink():
        return found
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            path = Path(dirpath) / name
            found[path.relative_to(root).as_posix()] = path
    return found


def recover(out_root: Path) -> None:
    """Finish a swap that was interrupted between its two renames."""
    if not out_root.is_dir():
        return
    for leftover in sorted(out_root.glob(PREVIOUS + "*")):
        target = out_root / leftover.name[len(PREVIOUS):]
        if not target.exists():
            os.replace(leftover, target)
        else:
            shutil.rmtree(leftover, ignore_errors=True)
    for staging in sorted(out_root.glob(STAGING + "*")):
        shutil.rmtree(staging, ignore_errors=True)


def _read(path: Path) -> bytes | None:
    """A regular file's bytes; None for symlinks and anything unreadable."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def check_tree(target: Path, files: dict[str, str], label: str, report: Report, diff: bool) -> None:
    on_disk = _existing(target)
    for rel in sorted(files):
        want = files[rel].encode("utf-8")
        have = _read(on_disk[rel]) if rel in on_disk else None
        shown = f"{label}/{rel}"
        if have is None and rel in on_disk:
            report.stale.append(shown)
        elif have is None:
            report.missing.append(shown)
        elif have != want:
            report.stale.append(shown)
            if diff:
                report.diffs.append("".join(difflib.unified_diff(
                    have.decode("utf-8", "replace").splitlines(True), files[rel].splitlines(True),
                    fromfile=f"a/{shown}", tofile=f"b/{shown}")))
        else:
            report.unchanged.append(shown)
    for rel in sorted(set(on_disk) - set(files)):
        report.unexpected.append(f"{label}/{rel}")


def write_tree(out_root: Path, name: str, files: dict[str, str], report: Report) -> None:
    """Replace ``out_root/name`` with exactly *files*, touching nothing if nothing changed."""
    target = out_root / name
    on_disk = _existing(target)
    changed = [rel for rel in sorted(files)
               if rel not in on_disk or _read(on_disk[rel]) != files[rel].encode("utf-8")]
    extra = sorted(set(on_disk) - set(files))
    if not changed and not extra:
        report.unchanged.extend(f"{name}/{rel}" for rel in sorted(files))
        return
    out_root.mkdir(parents=True, exist_ok=True)
    staging = out_root / (STAGING + name)
    shutil.rmtree(staging, ignore_errors=True)
    for rel in sorted(files):
        dest = staging / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if rel in on_disk and rel not in changed:
            os.link(on_disk[rel], dest, follow_symlinks=False)
            report.unchanged.append(f"{name}/{rel}")
        else:
            write_atomic(dest, files[rel].encode("utf-8"), sync=True)
            report.written.append(f"{name}/{rel}")
    report.removed.extend(f"{name}/{rel}" for rel in extra)
    previous = out_root / (PREVIOUS + name)
    if target.is_symlink() or target.is_file():
        target.unlink()
    if target.exists():
        os.replace(target, previous)
    os.replace(staging, target)
    shutil.rmtree(previous, ignore_errors=True)
