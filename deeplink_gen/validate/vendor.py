"""Checks of a vendor file against the catalog and the other vendors: its
name matches its file, its -DDEVICE aliases are not another DIPU vendor's,
its overrides name catalog ops and agree with the facts the catalog states,
custom code only calls wrappers the vendor keeps, and no two vendors share a
device type."""

from __future__ import annotations

from pathlib import Path

from deeplink_gen.cpptext import mentioned_wrappers
from deeplink_gen.errors import Diagnostics, Suggestion
from deeplink_gen.interfaces.diopi import IMPL_CHOICES, impl_folder
from deeplink_gen.interfaces.dipu import UPSTREAM
from deeplink_gen.model import Catalog, OpOverride, Vendor, VendorIdentity
from deeplink_gen.translate.signature import wrapper_name
from deeplink_gen.validate.reference import Reference
from deeplink_gen.validate.names import (
    C_KEYWORDS, file_name_problem, length_problem, macro_name_problem, vendor_name_problem,
)

# The folders of DIOPI's impl/ that hold DIOPI's own implementations (each IMPL_* branch's).
DIOPI_FOLDERS = frozenset(f for c in IMPL_CHOICES for f in (c.directory, c.files) if f)


def check_identity(vendor: Vendor, diags: Diagnostics) -> None:
    stem = Path(vendor.path).stem
    if vendor.name != stem:
        diags.add(vendor.identity.name.loc, ("vendor", "name"),
                  f"vendor name '{vendor.name}' must match the file name '{stem}.yaml'")
    problem = vendor_name_problem(vendor.name)
    if problem:
        diags.add(vendor.identity.name.loc, ("vendor", "name"), f"vendor name '{vendor.name}' {problem}")
    ident, toolkit = vendor.identity, vendor.build.toolkit if vendor.build is not None else None
    named = [(ident.device_type.value, ident.device_type.loc, ("vendor", "device_type")),
             (ident.diopi_impl.value, ident.diopi_impl.loc, ("vendor", "diopi_impl"))]
    if toolkit is not None:
        named.append((toolkit.name.value, toolkit.name.loc, ("build", "toolkit", "name")))
    for value, loc, key in named:
        problem = length_problem(value)
        if problem:
            diags.add(loc, key, f"{problem} ({len(value)}): it becomes part of file and folder names")
    # The vendor name is checked above; DIOPI's impl folder is named by diopi_impl alone.
    impl = ident.diopi_impl.value
    problem = file_name_problem(impl)
    if problem is None and impl in C_KEYWORDS:
        problem = "is a C/C++ keyword"
    if problem:
        diags.add(ident.diopi_impl.loc, ("vendor", "diopi_impl"),
                  f"'{impl}' {problem}: it names DIOPI's folder impl/{impl} and the C++ namespace impl::{impl}; "
                  "choose another (default: the vendor name)")
    elif vendor.diopi_library is not None and impl_folder(impl) in DIOPI_FOLDERS:
        diags.add(ident.diopi_impl.loc, ("vendor", "diopi_impl"),
                  f"'{impl}' selects DIOPI's own impl/{impl_folder(impl)}, which the DIOPI library this vendor "
                  f"renders (diopi_library: {vendor.diopi_library.value}) would overwrite; choose a folder of "
                  "its own (default: the vendor name)")
    # It becomes an enumerator of DIPU's VendorDeviceType, which a macro of that name would replace.
    problem = macro_name_problem(ident.device_type.value)
    if problem:
        diags.add(ident.device_type.loc, ("vendor", "device_type"),
                  f"device type '{ident.device_type.value}' {problem}: it becomes an enumerator of DIPU's "
                  "VendorDeviceType, which the macro would replace; choose another")
    # DIPU's vendor chain takes the first DEVICE_* list holding -DDEVICE's value:
    # an alias of a vendor DIPU knows would select that vendor, never this one.
    for alias in vendor.cmake_aliases:
        owner = next((u for u in UPSTREAM.values() if alias in u.cmake_aliases and u.name != vendor.name), None)
        if owner is not None:
            diags.add(vendor.identity.loc, ("vendor", "cmake_aliases"),
                      f"'{alias}' is DIPU's -DDEVICE alias for {owner.name} ({owner.list_name} in "
                      f"dipu/CMakeLists.txt); -DDEVICE={alias} would build {owner.name}")


def check_overrides(vendor: Vendor, catalog: Catalog, ctx: Reference, complete: bool, diags: Diagnostics) -> None:
    """*complete*: every catalog file loaded, so an op missing from it is the override's mistake."""
    for o in vendor.overrides:
        entry = catalog.get(o.op, ctx.torch_version)
        if entry is None or not ctx.admits(o.torch):
            # An override gated out of the chosen torch is only checked to name a catalog op.
            if complete and not catalog.all(o.op):
                diags.add(o.loc, ("ops", o.op), f"'{o.op}' is not in the op catalog", Suggestion(o.op, catalog.names()))
            continue
        if o.replace is not None:
            _check_replacement(o, diags)
            entry = o.replace
        source = "the vendor's replacement" if o.replace is not None else "the catalog"
        wanted = o.switch("autocompare")
        if wanted and wanted.value and entry.autocompare is not None and not entry.autocompare.value:
            diags.add(wanted.loc, ("ops", o.op, "autocompare"),
                      f"conflicts with {source}, which marks {o.op} as not comparable at {entry.autocompare.loc}")
        register = o.register if o.register is not None else entry.register
        if o.register is not None and o.register.value and entry.register is not None and not entry.register.value \
                and entry.schema_text is not None:
            diags.add(o.register.loc, ("ops", o.op, "register"),
                      f"{o.op} is a helper with its own schema ({source}'s schema: at {entry.schema_text.loc} and "
                      f"register: false at {entry.register.loc}); a helper is never registered")
        if register is not None and not register.value and wanted is not None and wanted.value:
            diags.add(wanted.loc, ("ops", o.op, "autocompare"),
                      f"an unregistered op has no autocompare twin (register: false at {register.loc})")
        wanted = o.switch("fallback_to_cpu")
        if wanted and wanted.value and entry.fallback_to_cpu is not None and not entry.fallback_to_cpu.value:
            diags.add(wanted.loc, ("ops", o.op, "fallback_to_cpu"),
                      f"conflicts with {source}, which marks {o.op} as having no CPU fallback at "
                      f"{entry.fallback_to_cpu.loc}")


def _check_replacement(o: OpOverride, diags: Diagnostics) -> None:
    """A setting given both in a replacement and beside it is an error naming both places."""
    for key in ("enabled", "register"):
        outer, inner = getattr(o, key), getattr(o.replace, key)
        if outer is not None and inner is not None:
            diags.add(inner.loc, ("ops", o.op, "replace", key), f"'{key}' is also set beside replace: at {outer.loc}; say it once")


def check_wrapper_uses(vendor: Vendor, catalog: Catalog, ctx: Reference, diags: Diagnostics) -> None:
    """An op this vendor renders whose custom code or autograd calls the
    wrapper of an op it does not render (disabled, or outside the torch
    version) would not compile: report both places."""
    vendor = vendor.at(ctx.torch_version)
    by_wrapper = {wrapper_name(op): catalog.get(op, ctx.torch_version) or catalog.get(op) for op in catalog.names()}
    absent = None     # the wrapper names of torch's ops, made only when a call names no catalog op
    for entry in catalog.entries:
        effective = vendor.definition(entry)
        if not vendor.keeps(entry)[0] or not ctx.applies(effective):
            continue
        uses = []
        for hook, text in effective.code:
            uses += [(name, text.loc, f"code.{hook}") for name in sorted(mentioned_wrappers(text.value))]
        if effective.autograd is not None:
            uses += [(wrapper_name(ref.value), ref.loc, "autograd") for _, ref in effective.autograd.ops()]
        for name, loc, where in uses:
            base = name.removesuffix("_autocompare").removesuffix("_wrapper")
            target = by_wrapper.get(name) or by_wrapper.get(base)
            if target is None:
                # Named as the wrapper of a torch op the catalog has no entry for: no wrapper of that
                # name is rendered (a name of no torch op may be DIPU's own function, and is left).
                absent = absent if absent is not None else {wrapper_name(op): op for op in ctx.ops.ops}
                op = absent.get(name) or absent.get(base)
                if op is not None:
                    diags.add(loc, entry.where + tuple(where.split(".")),
                              f"{entry.op} calls {name}, the wrapper of {op}, which the catalog has no entry "
                              f"for: add {op} to the catalog, or call something else")
                continue
            if target.op == entry.op:
                continue
            kept, off_loc = vendor.keeps(target)
            if not kept:
                diags.add(off_loc, ("ops", target.op, "enabled"),
                          f"{target.op} is disabled for {vendor.name}, but {entry.op} calls {name} ({where} at {loc})")
            elif not ctx.applies(vendor.definition(target)):
                gate = vendor.definition(target).torch
                diags.add(gate.loc, target.where + ("torch",),
                          f"{target.op} does not apply to torch {ctx.torch_version}, but {entry.op} calls {name} "
                          f"({where} at {loc})")


def check_unique_identity(vendors: tuple[Vendor, ...], others: tuple[VendorIdentity, ...], diags: Diagnostics) -> None:
    """No two vendor files share a device type (DIPU's VendorDeviceType and the
    pytorch_config_<type>.py name) or a CMake alias (DIPU's -DDEVICE choice).
    Each checked vendor is told at its own line, naming the other file."""
    every = [v.identity for v in vendors] + list(others)
    for v in vendors:
        mine = v.identity
        for other in every:
            if other is mine:
                continue
            if other.device_type.value == mine.device_type.value:
                diags.add(mine.device_type.loc, ("vendor", "device_type"),
                          f"device type '{mine.device_type.value}' is also {other.name.value}'s "
                          f"({other.device_type.loc})")
            shared = sorted(set(mine.cmake_aliases.value) & set(other.cmake_aliases.value))
            if shared:
                diags.add(mine.cmake_aliases.loc, ("vendor", "cmake_aliases"),
                          f"CMake alias{'es' if len(shared) > 1 else ''} {', '.join(shared)} also "
                          f"select{'' if len(shared) > 1 else 's'} "
                          f"{other.name.value} ({other.cmake_aliases.loc})")
