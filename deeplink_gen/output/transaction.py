"""Change many files of a tree we do not own (a DIPU checkout) all at once or
not at all. Every new content is first written to a temporary file beside
its target (fsynced, with the target's permissions, so a 100755 CMakeLists
stays executable); only when all of them are written are they renamed into
place, each old file kept aside (a hard link) until the end. An error at any
point undoes what was done, so the tree is left as it was; what a killed run
leaves beside a target (.<name>.<pid>.deeplink-gen-new/-old) is swept by the
next one. Nothing is written (or swept) through a folder that is a link leading
out of the tree (atomic.refuse_link_out)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from deeplink_gen.atomic import refuse_link_out
from deeplink_gen.errors import Diagnostic, UserError

_TMP = ".deeplink-gen-new"
_OLD = ".deeplink-gen-old"


def _aside(path: Path, tag: str) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}{tag}")


def sweep(root: Path, rels) -> None:
    """Remove what a killed earlier run left beside each of *rels* below
    *root* (only regular files named as this module names them); a UserError,
    with nothing removed, when a folder of one is a link leading out of *root*, or
    when two of them are one file. Each folder is checked and listed once."""
    by_folder: dict[Path, list[str]] = {}
    for rel in rels:
        by_folder.setdefault((root / rel).parent, []).append(rel)
    seen: dict[str, str] = {}
    for folder, names in by_folder.items():
        refuse_link_out(root, folder, names[0])
        # A folder link that stays inside *root* may make two paths one file, which would be
        # replaced twice and could not be put back: refused, naming both.
        real_folder = os.path.realpath(folder)
        for rel in names:
            real = os.path.join(real_folder, (root / rel).name)
            if real in seen:
                raise UserError([Diagnostic(None, str(root / rel), (
                    f"is the file {seen[real]} too: a folder link in {root} leads one path to the other; "
                    "nothing was written: replace the link by a folder"))])
            seen[real] = rel
    for folder, names in by_folder.items():
        if folder.is_dir():
            _remove_leftovers(folder, {(root / rel).name for rel in names})


def _remove_leftovers(folder: Path, targets: set[str]) -> None:
    """Remove the files in *folder* named exactly as _aside names them for one of *targets*
    (a process id between): a user's file is not."""
    with os.scandir(folder) as entries:
        for entry in entries:
            for tag in (_TMP, _OLD):
                if not (entry.name.startswith(".") and entry.name.endswith(tag)):
                    continue
                target, _, pid = entry.name[1:-len(tag)].rpartition(".")
                if target in targets and pid.isdigit() and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)


def _make_dirs(path: Path, created: list[Path]) -> None:
    missing = []
    for parent in [path, *path.parents]:
        if parent.is_dir():
            break
        missing.append(parent)
    for d in reversed(missing):
        d.mkdir()
        created.append(d)


# Up to this many files are each synced to disk as they are staged; more (an import of a runtime
# folder of thousands of headers) are synced by one sync of every file system, which costs what
# a few fsyncs do, where thousands took seconds.
_FSYNC_EACH = 64


def _stage(path: Path, data: bytes, tmp: Path, sync: bool) -> None:
    """*data* written to *tmp*, beside *path* (named by the caller before it exists, so that
    an interrupt at any moment leaves it known, to be removed), synced to disk with *sync*."""
    if path.is_dir() and not path.is_symlink():
        raise IsADirectoryError(errno.EISDIR, "a folder is in the way", str(path))
    if os.path.lexists(tmp):
        os.unlink(tmp)
    mode = None
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            mode = stat.S_IMODE(st.st_mode)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)   # the umask applies
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            if sync:
                os.fsync(fh.fileno())
    except BaseException:
        os.unlink(tmp)
        raise


def commit(root: Path, changes: dict[str, bytes | None]) -> None:
    """Write *changes* below *root*: {relative path: new bytes, or None to
    remove the file}. On any error nothing is changed and the error is raised."""
    staged: dict[Path, Path] = {}
    created: list[Path] = []
    done: list[tuple[Path, Path | None]] = []     # (target, where its old file went)

    def undo() -> None:
        for target, old in reversed(done):
            try:
                if old is not None:
                    os.replace(old, target)
                elif os.path.lexists(target):
                    os.unlink(target)
            except OSError:
                pass
        for tmp in staged.values():
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for d in reversed(created):
            try:
                d.rmdir()
            except OSError:
                pass

    try:
        sweep(root, sorted(changes))
        each = sum(data is not None for data in changes.values()) <= _FSYNC_EACH
        for rel, data in sorted(changes.items()):
            if data is not None:
                path = root / rel
                _make_dirs(path.parent, created)
                staged[path] = _aside(path, _TMP)
                _stage(path, data, staged[path], each)
        if not each:
            os.sync()
        for rel, data in sorted(changes.items()):
            path = root / rel
            old = _aside(path, _OLD) if os.path.lexists(path) else None
            done.append((path, old))        # before anything moves: an interrupt from here on is undone
            if old is not None:
                try:
                    os.link(path, old, follow_symlinks=False)      # the target never goes missing
                except OSError:
                    os.replace(path, old)                          # a file system without hard links
            if data is not None:
                os.replace(staged[path], path)
                del staged[path]
            elif os.path.lexists(path):
                os.unlink(path)
    except BaseException:
        undo()
        raise
    for _, old in done:
        if old is not None:
            try:
                os.unlink(old)
            except OSError:
                pass
