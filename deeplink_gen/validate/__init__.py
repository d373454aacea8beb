"""Every semantic check of a loaded workspace, run in one fixed order; the
one place where what lower layers find becomes Diagnostics. A check that
depends on torch skips entries whose torch: gate excludes the chosen torch.

Order: the catalog (duplicates, entries, autograd references), then each
vendor (identity, tests, runtime, dtypes, layouts, hand-written sources,
op overrides and replacements, wrapper uses), then across vendors. The
result holds errors and warnings (Diagnostic.severity); only errors make a
workspace invalid."""

from __future__ import annotations

from deeplink_gen.errors import Diagnostic, Diagnostics
from deeplink_gen.model import Workspace
from deeplink_gen.validate.catalog import check_autograd, check_duplicates, check_entry
from deeplink_gen.validate.reference import Reference
from deeplink_gen.validate.dtypes import check_dtypes, check_layouts
from deeplink_gen.validate.implemented import check_implemented
from deeplink_gen.validate.event_timing import check_event_timing
from deeplink_gen.validate.runtime import check_runtime
from deeplink_gen.validate.sources import check_sources
from deeplink_gen.validate.testconfig import check_tests
from deeplink_gen.validate.vendor import (
    check_identity, check_overrides, check_unique_identity, check_wrapper_uses,
)

__all__ = ["Reference", "validate"]


def validate(ws: Workspace, ctx: Reference) -> list[Diagnostic]:
    diags = Diagnostics()
    catalog = ws.catalog
    check_duplicates(catalog, ctx, diags)
    # With a catalog file missing, "not in the catalog" would only repeat its own errors.
    complete = ws.catalog_complete
    for entry in catalog.entries:
        if ctx.applies(entry):
            check_entry(entry, ctx, diags)
            if complete:
                check_autograd(entry, catalog, ctx, diags)
    for vendor in ws.vendors:
        check_identity(vendor, diags)
        check_tests(vendor, diags)
        if vendor.runtime is not None:
            check_runtime(vendor.runtime, diags, vendor.rejected)
            check_event_timing(vendor.runtime, diags)
        check_dtypes(vendor, ctx.protos, diags)
        check_layouts(vendor, ctx.protos, diags)
        check_implemented(vendor, ctx.protos, diags)
        check_sources(vendor, diags)
        check_overrides(vendor, catalog, ctx, complete, diags)
        for o in vendor.overrides:
            if o.replace is not None and catalog.all(o.op) and ctx.admits(o.torch) and ctx.applies(o.replace):
                check_entry(o.replace, ctx, diags)
                if complete:
                    check_autograd(o.replace, catalog, ctx, diags)
        check_wrapper_uses(vendor, catalog, ctx, diags)
    check_unique_identity(ws.vendors, ws.others, diags)
    return diags.items
