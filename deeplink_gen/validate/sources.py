"""Checks of a vendor's hand-written files (vendors/<name>/, or those build.hand_written
names): each is named in UTF-8 without control characters and not too long (the name is
written into the output and manifest.json), is UTF-8 text, is named once, and none is
named like a file render writes into the vendor folder (or a folder of one). A file the
list names is reported where it is named; load has read it (or reported why not)."""

from __future__ import annotations

from deeplink_gen.cpptext import CONTROL
from deeplink_gen.errors import Diagnostics, Loc, key_path
from deeplink_gen.model import Located, Vendor
from deeplink_gen.output_paths import vendor_folder_files
from deeplink_gen.validate.names import MAX_FILE_NAME

_FOLDER_KEY = "(sources)"


def _name_problem(rel: str, rendered: set[str]) -> str | None:
    """Why *rel* cannot be a hand-written file of the vendor folder, if it cannot."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "the file name is not UTF-8; rename the file"
    if CONTROL.search(rel):
        return "the file name holds a control character or line break; rename the file"
    if any(len(part.encode("utf-8")) > MAX_FILE_NAME for part in rel.split("/")):
        return f"a name in its path is longer than {MAX_FILE_NAME} bytes; rename it"
    for name in sorted(rendered):
        if rel == name:
            return f"'{rel}' is also a rendered file of the vendor folder; rename it"
        if name.startswith(rel + "/") or rel.startswith(name + "/"):
            return f"'{rel}' and the rendered file '{name}' cannot both be in the vendor folder; rename it"
    return None


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
    for s in vendor.sources:
        loc, key = named.get(s.rel, (s.loc, _FOLDER_KEY))
        problem = _name_problem(s.rel, rendered)
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
