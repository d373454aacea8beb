"""DIOPI's convert_config.yaml grammar, from the vendor's dtypes/layouts
sections. The file states merged rules at each level (DIOPI's levels
replace each other instead of merging), and leaves out what DIOPI's
generator cannot read: rules naming bfloat16/tfloat32 and per-tensor
layouts (listed as omitted; deeplink-gen's own adaptor applies them)."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.model import Rule, Vendor
from deeplink_gen.model.dtypes import CONVERT_CONFIG_DTYPES, DTYPES
from deeplink_gen.plan.adaptor import named_functions


@dataclass(frozen=True)
class Item:
    name: str                                   # common_config or a DIOPI function
    dtype: str | None                           # DIOPI's rule text: (int64)->int32, (float64)->float32;
                                                # "" converts nothing, None leaves the lower level's rules
    layout: str
    tensor_dtype: tuple[tuple[str, str], ...]
    omitted: tuple[str, ...]


def rules_text(rules: tuple[Rule, ...]) -> tuple[str, list[str]]:
    """``(int64)->int32, (float64)->float32``, sources grouped by target; and the rules left out."""
    kept = [r for r in rules if r.source in CONVERT_CONFIG_DTYPES and r.target in CONVERT_CONFIG_DTYPES]
    omitted = [f"{r.source}->{r.target}" for r in rules if r not in kept]
    targets: dict[str, list[str]] = {}
    for r in sorted(kept, key=lambda r: DTYPES.index(r.source)):
        targets.setdefault(r.target, []).append(r.source)
    return ", ".join(f"({', '.join(srcs)})->{dst}" for dst, srcs in targets.items()), omitted


def plan_convert_config(vendor: Vendor) -> list[Item]:
    dtypes, layouts = vendor.dtypes, vendor.layouts
    out = []
    common, omitted = rules_text(dtypes.convert)
    layout = layouts.default.value if layouts.default is not None else ""
    if common or layout or omitted:
        out.append(Item("common_config", common or None, layout, (), tuple(omitted)))
    for fn in sorted(named_functions(vendor)):
        d = dtypes.of(fn)
        dtype, omitted = rules_text(dtypes.rules(fn)) if d is not None and d.convert else (None, [])
        if not dtype and not common:
            dtype = None       # nothing to convert either way
        tensor_dtype = []
        if d is not None:
            for t, _loc, _rules in d.tensors:
                text, more = rules_text(dtypes.rules(fn, t))
                omitted += [f"{t}: {o}" for o in more]
                if text or dtype or (dtype is None and common):
                    tensor_dtype.append((t, text))
        lf = layouts.of(fn)
        if lf is not None:
            omitted += [f"{t}: layout {','.join(v.value)}" for t, v in lf.tensors]
            omitted += [f"{c.value}: contiguous" for c in lf.contiguous]
        out.append(Item(fn, dtype, ",".join(layouts.function_layouts(fn)), tuple(tensor_dtype), tuple(omitted)))
    return out
