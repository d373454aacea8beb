"""Checks of a vendor's hand-written files (vendors/<name>/): each is UTF-8
text, and none is named like a file render writes into the vendor folder."""

from __future__ import annotations

from deeplink_gen.errors import Diagnostics
from deeplink_gen.model import Vendor
from deeplink_gen.render.paths import vendor_folder_files


def check_sources(vendor: Vendor, diags: Diagnostics) -> None:
    if not vendor.sources or vendor.build is None:
        return            # without a build section nothing is copied
    rendered = set(vendor_folder_files(vendor).values())
    for s in vendor.sources:
        if s.rel in rendered:
            diags.add(s.loc, "(sources)", f"'{s.rel}' is also a rendered file of the vendor folder; rename it")
            continue
        try:
            s.data.decode("utf-8")
        except UnicodeDecodeError:
            diags.add(s.loc, "(sources)", "not UTF-8 text; only text files are copied")
