"""Checks of a vendor's hand-written files (vendors/<name>/): each is named in
UTF-8 without control characters and not too long (the name is written into
the output and manifest.json), is UTF-8 text, and none is named like a file
render writes into the vendor folder."""

from __future__ import annotations

from deeplink_gen.cpptext import CONTROL
from deeplink_gen.errors import Diagnostics, Loc
from deeplink_gen.model import Vendor
from deeplink_gen.output_paths import vendor_folder_files
from deeplink_gen.validate.names import MAX_FILE_NAME


def check_sources(vendor: Vendor, diags: Diagnostics) -> None:
    if not vendor.sources or vendor.build is None:
        return            # without a build section nothing is copied
    rendered = set(vendor_folder_files(vendor).values())
    for s in vendor.sources:
        try:
            s.rel.encode("utf-8")
        except UnicodeEncodeError:
            diags.add(s.loc, "(sources)", "the file name is not UTF-8; rename the file")
            continue
        if CONTROL.search(s.rel):
            diags.add(s.loc, "(sources)", "the file name holds a control character or line break; rename the file")
            continue
        if any(len(part.encode("utf-8")) > MAX_FILE_NAME for part in s.rel.split("/")):
            diags.add(s.loc, "(sources)", f"a name in its path is longer than {MAX_FILE_NAME} bytes; rename it")
            continue
        if s.rel in rendered:
            diags.add(s.loc, "(sources)", f"'{s.rel}' is also a rendered file of the vendor folder; rename it")
            continue
        try:
            s.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            diags.add(Loc.at(s.loc.file, s.data, exc.start), "(sources)",
                      f"not UTF-8 text (byte 0x{s.data[exc.start]:02x}); only text files are copied")
