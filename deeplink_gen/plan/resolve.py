"""Every op of a vendor with its final settings and where each came from.
Precedence: CLI flag > vendor per-op override > vendor default > catalog
entry > built-in default. A fact about the op itself always wins (_never):
a catalog entry that marks it as not comparable (autocompare: false),
without CPU fallback (fallback_to_cpu: false) or without a device guard
(device_guard: false), no registration (no autocompare twin), a helper, a
dummy call. Kernels, explain and coverage all read these settings; none of
them decides a switch again."""

from __future__ import annotations

from deeplink_gen.model import (
    BUILTIN_DEFAULTS, DEFAULT_SHARDS, FACTS, SWITCHES, AtenOp, CatalogEntry, OpTable, ResolvedOp, ResolvedVendor, Setting, Skipped, Vendor,
    Workspace,
)
from deeplink_gen.options import Options


def _never(name: str, entry: CatalogEntry, aten: AtenOp, register: Setting[bool], origin: str) -> Setting[bool] | None:
    """The switch fixed off by a fact of the op itself, whatever the vendor or
    the command line says: a catalog fact (autocompare/fallback_to_cpu/
    device_guard: false), no registration (no autocompare twin), a helper
    (neither twin nor CPU fallback), a dummy call (no CPU fallback)."""
    fact = getattr(entry, name) if name in FACTS else None
    if fact is not None and fact.value is False:
        return Setting(False, origin, fact.loc)
    if name in ("autocompare", "fallback_to_cpu") and aten.helper:
        return Setting(False, "a helper op, never registered")
    if name == "autocompare" and not register.value:
        return Setting(False, f"register: false ({register.source})", register.loc)
    if name == "fallback_to_cpu" and entry.flag("dummy_call"):
        return Setting(False, "dummy_call", entry.dummy_call.loc)
    return None


def _switch(name: str, entry: CatalogEntry, vendor: Vendor, options: Options) -> Setting[bool]:
    if name == "autocompare" and options.autocompare is not None:
        return Setting(options.autocompare, "command line")
    override = vendor.override(entry.op)
    stated = override.switch(name) if override is not None else None
    if stated is not None:
        return Setting(stated.value, "vendor op override", stated.loc)
    default = vendor.default(name)
    if default is not None:
        return Setting(default.value, "vendor default", default.loc)
    return Setting(BUILTIN_DEFAULTS[name], "built-in default")


def _op_flag(name: str, entry: CatalogEntry, vendor: Vendor, origin: str) -> Setting[bool]:
    """`enabled` or `register`: vendor op override > catalog (or replacement) > true."""
    stated, overridden = vendor.op_flag(name, entry)
    if stated is None:
        return Setting(True, "built-in default")
    return Setting(stated.value, "vendor op override" if overridden else origin, stated.loc)


def _memory_format(entry: CatalogEntry, vendor: Vendor) -> Setting[str] | None:
    """The memory format for the op's placeholders: a per-op override, else
    the vendor's layouts for the op's DIOPI function."""
    override = vendor.override(entry.op)
    if override is not None and override.memory_format is not None:
        return Setting(override.memory_format.value, "vendor op override", override.memory_format.loc)
    found = vendor.layouts.memory_format(entry.call.function)
    if found is None:
        return None
    value, loc, source = found
    return Setting(value, source, loc)


def resolve(ws: Workspace, vendor: Vendor, table: OpTable, options: Options = Options()) -> ResolvedVendor:
    """*vendor* for the version of *table* (the ATen ops): its overrides and
    test settings whose torch: gates admit that version, every catalog op
    that applies with its settings, and the ops that do not apply."""
    torch_version = table.version
    vendor = vendor.at(torch_version)
    ops, skipped = [], []
    for catalog_entry in ws.catalog.entries:
        entry = vendor.definition(catalog_entry)
        replaced = entry is not catalog_entry
        origin = "vendor replace" if replaced else "catalog"
        if entry.torch is not None and not entry.torch.admits(torch_version):
            skipped.append(Skipped(entry.op, f"torch {torch_version} is outside '{entry.torch.text}'", entry.loc))
            continue
        enabled = _op_flag("enabled", entry, vendor, origin)
        register = _op_flag("register", entry, vendor, origin)
        if not enabled.value:
            register = Setting(False, "the op being disabled", enabled.loc)   # a disabled op registers nothing
        aten = table.op_of(entry)
        fixed = {name: never for name in SWITCHES
                 for never in [_never(name, entry, aten, register, origin)] if never is not None}
        settings = tuple((name, fixed.get(name) or _switch(name, entry, vendor, options)) for name in SWITCHES)
        settings += (("register", register),)
        override = vendor.override(entry.op)
        ops.append(ResolvedOp(entry, aten, enabled, settings, frozenset(fixed),
                              _memory_format(entry, vendor), catalog_entry if replaced else None,
                              override.reason if override is not None else ""))
    return ResolvedVendor(vendor, torch_version, tuple(ops), tuple(skipped), _shards(vendor, options), table)


def _shards(vendor: Vendor, options: Options) -> Setting[int]:
    if options.shards is not None:
        return Setting(options.shards, "command line")
    if vendor.shards is not None:
        return Setting(vendor.shards.value, "vendor default", vendor.shards.loc)
    return Setting(DEFAULT_SHARDS, "built-in default")
