"""Where deeplink-gen may write, and one atomic write there.

Every write happens below a root: the workspace, the checkout of `render --into`, the
folder an option names. A folder on the way down that is a link leading out of that root
(a checkout whose vendor/ links to another tree, a workspace whose schemas/ links to a
shared folder) would take the write somewhere nobody asked for, so no writer follows one:
each checks its folder with refuse_link_out() before it writes, write_atomic() included.
A link in the last place, where a file goes, is not followed either: the rename replaces
the link itself. Writing: a temporary file in the same directory, then a rename."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from deeplink_gen.errors import Diagnostic, UserError, display_path


def link_out(root: Path, folder: Path) -> tuple[Path, str] | None:
    """The first folder from below *root* down to *folder* (itself included) that is a link no
    write may follow, and what is wrong with it: it leads out of *root*, to nothing, or round a
    loop of links. None when there is none or *folder* is not below *root*. A link to a folder
    inside *root* is followed, as the file system does."""
    base, here = Path(os.path.abspath(root)), Path(os.path.abspath(folder))
    if not here.is_relative_to(base):
        return None
    real = base.resolve()
    step = base
    for part in here.relative_to(base).parts:
        step = step / part
        if not os.path.islink(step):
            if not os.path.lexists(step):
                return None        # nothing below it exists yet: the writer makes real folders
            continue
        try:
            leads = step.resolve()
        except (OSError, RuntimeError):        # RuntimeError: a loop of links
            return step, "is a link that leads round a loop of links; nothing was written: replace it by a folder"
        if not leads.is_relative_to(real):
            return step, (f"is a link to {leads}, outside {display_path(str(root))}; nothing was written, since a "
                          "write through it would land there: replace the link by a folder")
        if not leads.is_dir():
            return step, (f"is a link to {os.readlink(step)}, which is not a folder; nothing was written: make "
                          "that folder, or replace the link by a folder")
    return None


def refuse_link_out(root: Path, folder: Path, key: str) -> None:
    """Raise a UserError (under *key*) when writing into *folder* would follow a link out of
    *root*, or one that leads nowhere."""
    found = link_out(root, folder)
    if found is not None:
        link, why = found
        raise UserError([Diagnostic(None, key, f"{display_path(str(link))} {why}")])


def bound(path: Path, root: Path) -> Path:
    """The root a write to *path*, a place a user named, stays below: *root* (the
    workspace) when *path* is in it, else *path*'s folder as named."""
    return root if Path(os.path.abspath(path)).is_relative_to(os.path.abspath(root)) else path.parent


def _mode(path: Path) -> int:
    """The mode the file keeps (an existing one's), or a new file's under the umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _create_beside(path: Path) -> tuple[int, str]:
    """A new, exclusively created hidden file next to *path* (what tempfile.mkstemp
    does, without importing tempfile, which costs a start-up-bound run 10 ms)."""
    while True:
        tmp = str(path.parent / f".{path.name}-{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), tmp
        except FileExistsError:
            continue


def write_atomic(path: Path, data: bytes, *, within: Path) -> None:
    """Replace *path* with *data*; readers see the old or the new file, never a part. No
    folder on the way from *within* is a link leading out of it (refuse_link_out)."""
    refuse_link_out(within, path.parent, str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:                 # a file where a folder is needed
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), exc.filename) from None
    mode = _mode(path)
    fd, tmp = _create_beside(path)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
