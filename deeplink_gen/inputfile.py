"""Reading an input file: only a regular file of bounded size is read.

The file is opened without blocking (a FIFO never waits for a writer),
checked on the open descriptor (what is read is what was checked: a regular
file, not a FIFO, a device such as /dev/zero, a socket or a directory) and
read to at most MAX_BYTES. Every problem is a UserError at line 1, column 1
of the file, under the caller's key. Imports nothing heavy."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from deeplink_gen.errors import Diagnostic, Loc, UserError

MAX_BYTES = 16 * 1024 * 1024    # room for a coverage report of 40 vendors (--baseline)
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read(path: str | Path, *, shown: str | None = None, key: tuple | str = (), head: int | None = None) -> bytes:
    """The bytes of the regular file *path* (named *shown* in errors), or
    with *head* its first *head* bytes, whatever its size."""
    def fail(message: str) -> UserError:
        return UserError([Diagnostic(Loc(shown or str(path), 1, 1), key, message)])

    too_large = f"file is larger than {MAX_BYTES // (1024 * 1024)} MiB; larger input files are not read"
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise fail(f"cannot read file: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "a special file")
            raise fail(f"{kind} is not a regular file; only regular files are read")
        if head is None and st.st_size > MAX_BYTES:
            raise fail(too_large)
        want = MAX_BYTES + 1 if head is None else head    # a byte past the limit: the file grew since fstat
        chunks, got = [], 0
        while got < want and (chunk := os.read(fd, min(1 << 20, want - got))):
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise fail(f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if got > MAX_BYTES:
        raise fail(too_large)
    return b"".join(chunks)


def decode(raw: bytes, name: str, key: tuple | str = ()) -> str:
    """The UTF-8 text of *raw*, the bytes of the file *name*; a UserError under *key* at the first
    byte that is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError([Diagnostic(Loc.at(name, raw, exc.start), key,
                                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")]) from None


def read_back(path: str | Path, *, links: bool = True) -> bytes | None:
    """The bytes of a file deeplink-gen wrote and reads back to compare; None where it
    cannot be what deeplink-gen wrote: not a regular file, unreadable, larger than
    MAX_BYTES (read's rules, so a huge or endless file is never read whole), or, without
    *links*, a symbolic link (deeplink-gen writes none)."""
    if not links and os.path.islink(path):
        return None
    try:
        return read(path)
    except UserError:
        return None
