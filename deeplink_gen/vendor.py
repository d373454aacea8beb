"""Read a vendor file (vendors/<name>.yaml) into the model and check it
against the catalog."""

from __future__ import annotations

import re

from pathlib import Path

from deeplink_gen.errors import Diagnostics, Loc, did_you_mean, key_path
from deeplink_gen.model import (
    SWITCHES, Catalog, CatalogEntry, Located, OpOverride, Vendor, VendorIdentity,
)
from deeplink_gen.signature import wrapper_name
from deeplink_gen.yamlload import Document
from deeplink_gen import diopi_api
from deeplink_gen.conversions import check_conversions, parse_conversions
from deeplink_gen.testspec import check_tests, parse_tests
from deeplink_gen.runtime.checks import check_runtime
from deeplink_gen.runtime.parse import parse_build, parse_runtime


def parse_vendor(doc: Document, diags: Diagnostics) -> Vendor:
    raw = doc.data
    ident = raw["vendor"]
    name = ident["name"]
    stem = Path(doc.path).stem
    if name != stem:
        diags.add(doc.loc(("vendor", "name")), "vendor.name",
                  f"vendor name '{name}' must match the file name '{stem}.yaml'")
    identity = VendorIdentity(
        name=name,
        device_type=ident["device_type"],
        cmake_aliases=tuple(ident.get("cmake_aliases") or (name.upper(), name)),
        diopi_impl=ident.get("diopi_impl", name),
        description=ident.get("description", ""),
        loc=doc.loc(("vendor",), key=True),
    )
    defaults = tuple(
        (k, Located(v, doc.loc(("defaults", k)))) for k, v in sorted((raw.get("defaults") or {}).items())
        if k != "shards"
    )
    shards = (Located(raw["defaults"]["shards"], doc.loc(("defaults", "shards")))
              if "shards" in (raw.get("defaults") or {}) else None)
    overrides = []
    for op, o in (raw.get("ops") or {}).items():
        where = ("ops", op)
        overrides.append(OpOverride(
            op=op,
            loc=doc.loc(where, key=True),
            enabled=Located(o["enabled"], doc.loc(where + ("enabled",))) if "enabled" in o else None,
            switches=tuple((k, Located(o[k], doc.loc(where + (k,)))) for k in SWITCHES if k in o),
            reason=o.get("reason", ""),
            register=Located(o["register"], doc.loc(where + ("register",))) if "register" in o else None,
            memory_format=(Located(o["memory_format"], doc.loc(where + ("memory_format",)))
                           if "memory_format" in o else None),
            replace=_replacement(doc, op, o, diags),
        ))
    conversions = parse_conversions(doc)
    tests = parse_tests(doc)
    check_tests(doc, tests, diags)
    runtime = parse_runtime(doc, diags)
    if runtime is not None:
        check_runtime(runtime, diags)
    return Vendor(doc.path, identity, defaults, tuple(overrides), conversions=conversions, tests=tests,
                  runtime=runtime, build=parse_build(doc), shards=shards)


def _replacement(doc: Document, op: str, o: dict, diags: Diagnostics):
    """ops.<op>.replace: the vendor's own definition of the op, read and
    checked by the same rules as a catalog entry."""
    if "replace" not in o:
        return None
    from deeplink_gen.catalog import check_entry, parse_entry

    where = ("ops", op, "replace")
    entry = parse_entry(doc, op, o["replace"], diags, where=where)
    if entry is not None:
        check_entry(doc, entry, diags, where=where)
    return entry


def check_vendor(vendor: Vendor, catalog: Catalog, diags: Diagnostics) -> None:
    if vendor.conversions is not None:
        check_conversions(vendor.conversions, diopi_api.active(), diags)
    for o in vendor.overrides:
        entry = catalog.get(o.op)
        if entry is None:
            diags.add(o.loc, key_path(("ops", o.op)),
                      f"'{o.op}' is not in the op catalog{did_you_mean(o.op, catalog.names())}")
            continue
        if o.replace is not None:
            _check_replacement(o, catalog, diags)
            entry = o.replace
        source = "the vendor's replacement" if o.replace is not None else "the catalog"
        wanted = o.switch("autocompare")
        if wanted and wanted.value and entry.autocompare is not None and not entry.autocompare.value:
            diags.add(wanted.loc, key_path(("ops", o.op, "autocompare")),
                      f"conflicts with {source}, which marks {o.op} as not comparable at {entry.autocompare.loc}")
        register = o.register if o.register is not None else entry.register
        wanted = o.switch("autocompare")
        if register is not None and not register.value and wanted is not None and wanted.value:
            diags.add(wanted.loc, key_path(("ops", o.op, "autocompare")),
                      f"an unregistered op has no autocompare twin (register: false at {register.loc})")
        wanted = o.switch("fallback_to_cpu")
        if wanted and wanted.value and entry.fallback_to_cpu is not None and not entry.fallback_to_cpu.value:
            diags.add(wanted.loc, key_path(("ops", o.op, "fallback_to_cpu")),
                      f"conflicts with {source}, which marks {o.op} as having no CPU fallback at "
                      f"{entry.fallback_to_cpu.loc}")


_WRAPPER_CALL = re.compile(r"\b(dipu_[a-z0-9_]+)\s*\(")


def _enabled(entry: CatalogEntry, vendor: Vendor) -> tuple[bool, Loc]:
    """Whether the vendor keeps the op, and where that is decided (as resolve decides it)."""
    stated, _ = vendor.op_flag("enabled", entry)
    return (stated.value, stated.loc) if stated is not None else (True, entry.loc)


def check_wrapper_uses(vendor: Vendor, catalog: Catalog, diags: Diagnostics) -> None:
    """An enabled op whose custom code or autograd calls the wrapper of an op
    this vendor disables would not compile: report both places."""
    by_wrapper = {wrapper_name(e.op): e for e in catalog.entries}
    for entry in catalog.entries:
        effective = vendor.definition(entry)
        if not _enabled(entry, vendor)[0]:
            continue
        uses = []
        for hook, text in effective.code:
            uses += [(name, text.loc, f"code.{hook}") for name in _WRAPPER_CALL.findall(text.value)]
        if effective.autograd is not None:
            for part in (effective.autograd.backward, effective.autograd.forward):
                if part is not None:
                    uses.append((wrapper_name(part.value), part.loc, "autograd"))
        for name, loc, where in uses:
            base = name.removesuffix("_autocompare").removesuffix("_wrapper")
            target = by_wrapper.get(name) or by_wrapper.get(base)
            if target is None or target.op == entry.op:
                continue
            enabled, off_loc = _enabled(target, vendor)
            if not enabled:
                diags.add(off_loc, key_path(("ops", target.op, "enabled")),
                          f"{target.op} is disabled for {vendor.name}, but {entry.op} calls {name} "
                          f"({where} at {loc})")


def _check_replacement(o: OpOverride, catalog: Catalog, diags: Diagnostics) -> None:
    """A replacement is a whole definition: its autograd ops must be in the
    catalog, and a setting given both in it and beside it is an error naming
    both places."""
    from deeplink_gen.catalog import check_autograd

    check_autograd({e.op: e for e in catalog.entries}, o.replace, diags, where=("ops", o.op, "replace"))
    for key in ("enabled", "register"):
        outer, inner = getattr(o, key), getattr(o.replace, key)
        if outer is not None and inner is not None:
            diags.add(inner.loc, key_path(("ops", o.op, "replace", key)),
                      f"'{key}' is also set beside replace: at {outer.loc}; say it once")


def check_unique_identity(vendors: list[Vendor], diags: Diagnostics) -> None:
    seen: dict[str, Vendor] = {}
    for v in vendors:
        other = seen.get(v.identity.device_type)
        if other is not None:
            diags.add(v.identity.loc, "vendor.device_type",
                      f"device type '{v.identity.device_type}' is also used by {other.path}")
        seen[v.identity.device_type] = v
