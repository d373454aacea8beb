"""Write rendered trees safely. A vendor's output is staged next to its
target, unchanged files are hard-linked (mtime kept, so CMake/Ninja rebuild
nothing), and the staged tree takes the target's place in one atomic
exchange (output/swap.py): a failed or killed render leaves the previous
tree in place, and the target path always names a whole tree. A folder
holding anything deeplink-gen did not write (output/owned.py) is never
replaced. What a killed render left beside the trees is cleaned by the
next one (recover). ``check`` compares without writing."""

from __future__ import annotations

import difflib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.output import swap
from deeplink_gen.atomic import write_atomic
from deeplink_gen.output.owned import MARKER, entries, not_ours

STAGING = ".deeplink-gen-staging-"     # a tree being written, then the old tree being removed
ASIDE = ".deeplink-gen-previous-"      # the old tree between the two renames of a swap without exchange


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
    def problems(self) -> list[str]:
        """What a check found wrong: the stale, missing and unexpected files."""
        return self.stale + self.missing + self.unexpected

    @property
    def clean(self) -> bool:
        return not self.problems


def _existing(root: Path) -> dict[str, Path]:
    """The entries below *root* when it is a folder (not a link to one)."""
    return entries(root) if root.is_dir() and not root.is_symlink() else {}


def _ours(folder: Path) -> bool:
    return not_ours(folder) is None


def _staged(folder: Path) -> bool:
    """A staging folder deeplink-gen made: marked while incomplete, else a tree of ours."""
    return folder.is_dir() and not folder.is_symlink() and ((folder / MARKER).is_file() or _ours(folder))


def _discard(folder: Path) -> None:
    """Delete a folder of ours: marked first and its marker deleted last, so
    that a deletion killed part-way leaves what is still known as ours."""
    try:
        (folder / MARKER).touch()
        children = [p for p in folder.iterdir() if p.name != MARKER]
    except OSError:
        return
    for child in children:
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
    (folder / MARKER).unlink(missing_ok=True)
    try:
        folder.rmdir()
    except OSError:
        pass


def recover(out_root: Path) -> None:
    """Clean up after a render killed in *out_root*: put back an old tree a
    swap left aside, remove staging folders. Only folders deeplink-gen
    wrote are touched; anything else under these names is left alone."""
    if not out_root.is_dir():
        return
    for leftover in sorted(out_root.glob(ASIDE + "*")):
        target = out_root / leftover.name[len(ASIDE):]
        if not _staged(leftover):
            continue
        if not os.path.lexists(target):    # killed between the two renames: the old tree is whole
            (leftover / MARKER).unlink(missing_ok=True)
            os.rename(leftover, target)
        else:
            _discard(leftover)
    for staging in sorted(out_root.glob(STAGING + "*")):
        if _staged(staging):
            _discard(staging)


def check_tree(target: Path, files: dict[str, str], label: str, report: Report, diff: bool) -> None:
    on_disk = _existing(target)
    for rel in sorted(files):
        want = files[rel].encode("utf-8")
        have = inputfile.read_back(on_disk[rel], links=False) if rel in on_disk else None
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


def outside(name: str, rel: str = "x") -> bool:
    """Whether the file *rel* of vendor *name* would land anywhere but in its own folder:
    a name that is not one plain folder name, or a path that is not plain relative
    folder names down to a file (absolute, `..`, `.`, empty, a backslash or a NUL)."""
    parts = rel.split("/")
    return (name in ("", ".", "..") or any(c in name for c in "/\\\0")
            or any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts))


def refusal(out_root: Path, name: str) -> Diagnostic | None:
    """Why a render must not replace ``out_root/name``, as an error, or None."""
    target = out_root / name
    why = not_ours(target)
    if why is None:
        return None
    return Diagnostic(None, str(target), f"{why}; a render replaces that folder as a whole, so it was left as it "
                                         "was: move what is there elsewhere, or give --out another folder")


def write_tree(out_root: Path, name: str, files: dict[str, str], report: Report) -> None:
    """Replace ``out_root/name`` with exactly *files*, touching nothing if nothing changed."""
    target = out_root / name
    for folder in (name, STAGING + name):          # recover() removed a staging folder of ours
        problem = refusal(out_root, folder)
        if problem is not None:
            raise UserError([problem])
    on_disk = _existing(target)
    changed = [rel for rel in sorted(files)
               if rel not in on_disk or inputfile.read_back(on_disk[rel], links=False) != files[rel].encode("utf-8")]
    extra = sorted(set(on_disk) - set(files))
    if not changed and not extra:
        report.unchanged.extend(f"{name}/{rel}" for rel in sorted(files))
        return
    staging = out_root / (STAGING + name)
    try:
        staging.mkdir()
        (staging / MARKER).touch()
        for rel in sorted(files):
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if rel in on_disk and rel not in changed:
                os.link(on_disk[rel], dest, follow_symlinks=False)
            else:
                write_atomic(dest, files[rel].encode("utf-8"), within=out_root)
        os.sync()        # the whole staged tree on disk before it replaces the old one: one wait, not one per file
        (staging / MARKER).unlink()
        _swap_in(staging, target, out_root / (ASIDE + name))
    except BaseException:
        if _staged(staging):
            _discard(staging)
        raise
    _discard(staging)                  # the old tree, after an exchange
    for rel in sorted(files):
        (report.unchanged if rel in on_disk and rel not in changed else report.written).append(f"{name}/{rel}")
    report.removed.extend(f"{name}/{rel}" for rel in extra)


def _swap_in(staging: Path, target: Path, aside: Path) -> None:
    """Put the complete tree at *staging* in *target*'s place."""
    if not os.path.lexists(target):
        os.rename(staging, target)
    elif not swap.exchange(staging, target):
        os.rename(target, aside)
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(aside, target)
            raise
        _discard(aside)
