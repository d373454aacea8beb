"""The adaptor plan: for every DIOPI function the vendor's DIOPI library
defines (the rendered library's, its adaptor section's; without either, every
function its kernels call),
how its ``extern "C"`` wrapper converts tensors (translate/conversion.py
decides, per function), the casts those conversions share, and what the
adaptor declares and includes."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.interfaces.diopi import CONVERSION_PRIMITIVES
from deeplink_gen.model import Prototype, Prototypes, ResolvedVendor, Vendor
from deeplink_gen.translate.conversion import CastPlan, FunctionPlan, plan_function


@dataclass(frozen=True)
class AdaptorPlan:
    functions: tuple[FunctionPlan, ...]
    casts: tuple[CastPlan, ...]
    declared: tuple[tuple[str, tuple[Prototype, ...]], ...]   # per namespace, the functions the adaptor calls
    headers: tuple[str, ...]


def named_functions(vendor: Vendor) -> set[str]:
    """DIOPI functions the vendor's dtypes and layouts sections name."""
    return {f.function for f in vendor.dtypes.functions} | {f.function for f in vendor.layouts.functions}


def functions_of(rv: ResolvedVendor, protos: Prototypes, library: tuple[str, ...] | None = None) -> list[str]:
    """DIOPI functions the adaptor wraps: every one the DIOPI library rendered
    for the vendor (diopi_library) implements, *library*, or else every one the
    vendor's adaptor section says its library defines: with the adaptor on,
    the library exports a function only through its wrapper. Without either, those the
    kernels of the ops the vendor keeps call, plus the two conversion
    primitives (which the vendor must implement anyway; forwarded unchanged);
    a function only the dtypes or layouts sections name is left out then:
    wrapping it would make the vendor's library need a symbol no kernel uses."""
    if library is not None:
        names = set(library)
    elif rv.vendor.implemented is not None:
        names = set(rv.vendor.implemented.functions())
    else:
        names = {r.entry.call.function for r in rv.enabled_ops} | set(CONVERSION_PRIMITIVES)
    return sorted(n for n in names if protos.get(n) is not None)


def plan_adaptor(rv: ResolvedVendor, protos: Prototypes, library: tuple[str, ...] | None = None) -> AdaptorPlan:
    """*library*: the functions of the DIOPI library rendered for the vendor, if any."""
    casts: dict[str, CastPlan] = {}
    functions = tuple(plan_function(protos.get(n), rv.vendor, casts) for n in functions_of(rv, protos, library))
    by_ns: dict[str, list[Prototype]] = {}
    for f in functions:
        by_ns.setdefault(f.namespace, []).append(f.proto)
    return AdaptorPlan(functions, tuple(casts[k] for k in sorted(casts)),
                       tuple((ns, tuple(by_ns[ns])) for ns in sorted(by_ns)),
                       tuple(sorted({f.proto.header for f in functions})))
