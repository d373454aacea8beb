"""Checks of a vendor's adaptor section: every function it lists is a DIOPI
function, listed once, and when a listed function's wrapper converts a
tensor, the two conversion primitives the adaptor converts with are listed.
A vendor whose DIOPI library is rendered (diopi_library) has no such list:
the adaptor wraps what that library implements."""

from __future__ import annotations

from deeplink_gen.errors import Diagnostics, Suggestion, display_path
from deeplink_gen.interfaces.diopi import CONVERSION_PRIMITIVES
from deeplink_gen.model import Prototypes, Vendor
from deeplink_gen.translate.conversion import plan_function


def check_implemented(vendor: Vendor, protos: Prototypes, diags: Diagnostics) -> None:
    implemented = vendor.implemented
    if implemented is None:
        return
    if vendor.diopi_library is not None:
        diags.add(implemented.loc, ("adaptor", "implemented"),
                  f"the DIOPI library is rendered (diopi_library: {vendor.diopi_library.value}), and the adaptor "
                  f"wraps what it implements; leave adaptor.implemented out")
        return
    first = {}
    known = protos.names()
    for ns in implemented.namespaces:
        for f in ns.functions:
            where = ("adaptor", "implemented", ns.name)
            if f.value in first:
                diags.add(f.loc, where, f"{f.value} is listed twice (first at {first[f.value]})")
                continue
            first[f.value] = f.loc
            if protos.get(f.value) is None:
                diags.add(f.loc, where, f"'{f.value}' is not a DIOPI function in the DIOPI prototypes "
                                       f"({display_path(protos.source)})", Suggestion(f.value, known))
    missing = [p for p in CONVERSION_PRIMITIVES if p not in first]
    converting = next((f for f in sorted(first) if protos.get(f) is not None
                       and plan_function(protos.get(f), vendor, {}).tensors), None)
    if missing and converting is not None:
        diags.add(implemented.loc, ("adaptor", "implemented"),
                  f"the adaptor converts tensors with {' and '.join(CONVERSION_PRIMITIVES)}, which the DIOPI "
                  f"library must define ({converting} converts); {' and '.join(missing)} "
                  f"{'is' if len(missing) == 1 else 'are'} not listed")
