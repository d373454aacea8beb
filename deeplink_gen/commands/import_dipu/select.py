"""Per vendor, the definition DIPU's device filter gives it: one catalog
entry per op (the definition most vendors get), vendor overrides that
enable or disable it, and a replacement for a vendor that gets another."""

from __future__ import annotations

from dataclasses import dataclass, field

from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.readings import device_kept
from deeplink_gen.commands.import_dipu.translate import Imported
from deeplink_gen.errors import Diagnostic
from deeplink_gen.model.layouts import memory_format_of
from deeplink_gen.translate.signature import wrapper_name


@dataclass
class Selection:
    catalog: dict[str, dict] = field(default_factory=dict)                  # op -> catalog entry
    overrides: dict[str, dict[str, dict]] = field(default_factory=dict)     # vendor -> op -> override
    origin: dict[str, Imported] = field(default_factory=dict)               # op -> its catalog entry's source
    replaced: dict[str, dict[str, Imported]] = field(default_factory=dict)  # op -> vendor -> its own source


def point_forward_at_ops(imported: list[Imported], path: str, notes: list[Diagnostic]) -> None:
    """An autograd forward_schema may name the op itself under another name
    with the same wrapper (DIPU calls dipu_<name>): point it at that op."""
    by_wrapper = {wrapper_name(i.op): i.op for i in imported}
    for item in imported:
        ag = item.entry.get("autograd")
        if ag and "forward" in ag and ag["forward"] not in by_wrapper.values():
            target = by_wrapper.get(wrapper_name(ag["forward"]))
            if target is not None:
                item.notes.append(warning(path, item.up.line,
                                          f"forward_schema '{ag['forward']}' is not an op; its wrapper"
                                          f" dipu_{wrapper_name(ag['forward'])[5:]} is {target}'s (fixed)"))
                notes.append(item.notes[-1])
                ag["forward"] = target


def _choose(op: str, items: list[Imported], vendors: list[str], path: str,
            notes: list[Diagnostic]) -> dict[str, Imported | None]:
    """Each vendor's entry for *op*: the first of *items* its device filter keeps. Each later
    entry some vendor keeps is reported once, at its line, as defined again; one no vendor
    keeps (when some entry is kept), as selecting none of them."""
    choice: dict[str, Imported | None] = {}
    again: dict[int, Imported] = {}          # id of a later entry -> the first of a vendor it shares
    for v in vendors:
        kept = [i for i in items if i.devices is None or device_kept(i.devices, v)]
        choice[v] = kept[0] if kept else None
        for i in kept[1:]:
            again.setdefault(id(i), kept[0])
    chosen = {id(c) for c in choice.values() if c is not None}
    for i in items:
        first = again.get(id(i))
        if first is not None:
            notes.append(warning(path, i.up.line, f"'{op}' is defined again (first at line {first.up.line}) for"
                                                  " the same vendors; DIPU's generator emits both (C++"
                                                  " redefinition); the first is used"))
        elif id(i) not in chosen and chosen:
            notes.append(warning(path, i.up.line, f"'{op}': device {i.devices} selects none of"
                                                  f" {', '.join(vendors)}; not imported"))
    return choice


def select(imported: list[Imported], vendors: list[str], layouts: dict[str, tuple], path: str,
           notes: list[Diagnostic]) -> Selection:
    groups: dict[str, list[Imported]] = {}
    for item in imported:
        groups.setdefault(item.op, []).append(item)
    out = Selection(overrides={v: {} for v in vendors})
    for op, items in groups.items():
        choice = _choose(op, items, vendors, path, notes)
        used = [i for i in items if any(c is i for c in choice.values())]
        if not used:
            for i in items:
                notes.append(warning(path, i.up.line, f"'{op}': device {i.devices} selects none of"
                                                      f" {', '.join(vendors)}; entry skipped"))
            continue
        best = max(used, key=lambda i: (sum(c is i for c in choice.values()),
                                        -min(vendors.index(v) for v in vendors if choice[v] is i)))
        entry = dict(best.entry)
        devices = best.devices
        if devices is not None and "all" not in devices:
            entry = {"call": entry.pop("call"), "enabled": False, **entry}
        out.catalog[op] = entry
        out.origin[op] = best
        line = best.up.line
        for v in vendors:
            mine = choice[v]
            kept = mine is best
            default_on = "enabled" not in entry
            if mine is not None and not kept:
                # Another upstream entry defines the op for this vendor: it replaces the catalog's.
                replacement = {k: val for k, val in mine.entry.items() if k != "enabled"}
                out.overrides[v][op] = {"replace": replacement,
                                        "reason": f"upstream defines {op} for {v} at line {mine.up.line}"
                                                  f" (device {mine.devices}); the catalog has line {line}"}
                if not default_on:
                    out.overrides[v][op]["enabled"] = True
                out.replaced.setdefault(op, {})[v] = mine
            elif kept != default_on:
                out.overrides[v][op] = {"enabled": kept, "reason": f"upstream device filter {devices} at line {line}"}
            if mine is not None and mine.has_placeholders and mine.interface_fn and v in layouts:
                common, per_fn = layouts[v]
                layout = per_fn.get(mine.interface_fn, common)
                if layout is not None:
                    out.overrides[v].setdefault(op, {})["memory_format"] = memory_format_of(layout)
    return out
