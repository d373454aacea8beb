"""Checks of a vendor's hand-written files (vendors/<name>/, or those build.hand_written
names): each is named as CMake and every file system take a name (validate/names.py: the
name is written into the output, its CMake list and manifest.json), is UTF-8 text, is named
once, and none is named like a file render writes into the vendor folder (or a folder of
one), nor like another of them or a rendered one but for case or Unicode normalisation (they
would be one file on a case-insensitive file system, or on macOS). A file the list names is
reported where it is named; load has read it (or reported why not)."""

from __future__ import annotations

import unicodedata

from deeplink_gen.errors import Diagnostics, Loc, key_path
from deeplink_gen.model import Located, Vendor
from deeplink_gen.output_paths import vendor_folder_files
from deeplink_gen.validate.names import path_problem

_FOLDER_KEY = "(sources)"


def _name_problem(rel: str, rendered: set[str], spelled: dict[str, str]) -> str | None:
    """Why *rel* cannot be a hand-written file of the vendor folder, if it cannot. *spelled*:
    each path (and folder of one) already in the folder by its case-folded form, the rendered
    files' first; *rel*'s are added."""
    problem = path_problem(rel)
    if problem is not None:
        return f"{problem}; rename the file"
    for name in sorted(rendered):
        if rel == name:
            return f"'{rel}' is also a rendered file of the vendor folder; rename it"
        if name.startswith(rel + "/") or rel.startswith(name + "/"):
            return f"'{rel}' and the rendered file '{name}' cannot both be in the vendor folder; rename it"
    return _case_clash(rel, spelled)


def _prefixes(rel: str) -> list[str]:
    """*rel* and each folder above it inside the vendor folder."""
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _fold(name: str) -> str:
    """*name* as a file system that ignores case and Unicode normalisation (macOS) takes it."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def _case_clash(rel: str, spelled: dict[str, str]) -> str | None:
    """Why *rel*, or a folder of it, would be the same file or folder as one in *spelled* on a
    case-insensitive file system (macOS, Windows), if it would; else *rel* joins *spelled*."""
    for prefix in _prefixes(rel):
        other = spelled.get(_fold(prefix))
        if other is not None and other != prefix:
            if prefix.casefold() == other.casefold():
                return (f"'{prefix}' and '{other}' differ only in case: on a case-insensitive file system "
                        "(macOS, Windows) they are one; rename it")
            return (f"'{prefix}' ({_code_points(prefix)}) and '{other}' ({_code_points(other)}) differ only in "
                    "Unicode normalisation (a character composed or decomposed) or case: on macOS they are one; "
                    "rename it")
    for prefix in _prefixes(rel):
        spelled.setdefault(_fold(prefix), prefix)
    return None


def _code_points(name: str) -> str:
    """*name* with each character outside ASCII written as its code point (e\\u0301 for é decomposed)."""
    return "".join(c if c.isascii() else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
                   for c in name)


def _duplicates(listed: tuple[Located[str], ...], diags: Diagnostics) -> dict[str, tuple[Loc, tuple]]:
    """Each file build.hand_written names, with where it is first named; a second naming is an error."""
    first: dict[str, tuple[Loc, tuple]] = {}
    for i, item in enumerate(listed):
        key = ("build", "hand_written", i)
        if item.value in first:
            diags.add(item.loc, key, f"'{item.value}' is named twice (first as {key_path(first[item.value][1])})")
        else:
            first[item.value] = (item.loc, key)
    return first


def check_sources(vendor: Vendor, diags: Diagnostics) -> None:
    if vendor.build is None:
        return            # without a build section nothing is copied
    listed = vendor.build.hand_written
    named = _duplicates(listed, diags) if listed is not None else {}
    rendered = set(vendor_folder_files(vendor).values())
    spelled: dict[str, str] = {}
    for name in sorted(rendered):
        _case_clash(name, spelled)
    for s in vendor.sources:
        loc, key = named.get(s.rel, (s.loc, _FOLDER_KEY))
        problem = _name_problem(s.rel, rendered, spelled)
        if problem is not None:
            diags.add(loc, key, problem)
            continue
        try:
            s.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            at = Loc.at(s.loc.file, s.data, exc.start)
            message = f"not UTF-8 text (byte 0x{s.data[exc.start]:02x}); only text files are copied"
            if listed is None:
                diags.add(at, key, message)
            else:
                diags.add(loc, key, f"{at}: {message}")
