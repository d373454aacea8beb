"""DIOPI's impl/<vendor>/convert_config.yaml, in DIOPI's own grammar, from the
vendor's dtypes/layouts sections. DIPU reads the same file for its
memory-format placeholders, so layouts are always written as strings.

The file states merged rules at each level (DIOPI's levels replace each
other instead of merging), and leaves out what DIOPI's generator cannot read:
rules naming bfloat16/tfloat32 and per-tensor layouts (listed in comments;
deeplink-gen's own adaptor applies them)."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.conversions import CONVERT_CONFIG_DTYPES, DTYPES, EMPTY, Conversions, Rule
from deeplink_gen.render.adaptor import impl_dir
from deeplink_gen.resolve import ResolvedVendor
from deeplink_gen.templating import render


@dataclass(frozen=True)
class Item:
    name: str
    dtype: str
    layout: str
    tensor_dtype: tuple[tuple[str, str], ...]
    omitted: tuple[str, ...]


def rules_text(rules: tuple[Rule, ...]) -> tuple[str, list[str]]:
    """``(int64)->int32, (float64)->float32``; sources grouped by target."""
    kept = [r for r in rules if r.source in CONVERT_CONFIG_DTYPES and r.target in CONVERT_CONFIG_DTYPES]
    omitted = [f"{r.source}->{r.target}" for r in rules if r not in kept]
    targets: dict[str, list[str]] = {}
    for r in sorted(kept, key=lambda r: DTYPES.index(r.source)):
        targets.setdefault(r.target, []).append(r.source)
    text = ", ".join(f"({', '.join(srcs)})->{dst}" for dst, srcs in targets.items())
    return text, omitted


def items(conv: Conversions) -> list[Item]:
    out = []
    common, omitted = rules_text(conv.convert)
    layout = conv.default_layout.value if conv.default_layout is not None else ""
    if common or layout or omitted:
        out.append(Item("common_config", common, layout, (), tuple(omitted)))
    for fn in conv.named_functions():
        d = conv.dtypes_of(fn)
        dtype, omitted = rules_text(conv.rules(fn)) if d is not None and d.convert else ("", [])
        tensor_dtype = []
        if d is not None:
            for t, _loc, _rules in d.tensors:
                text, more = rules_text(conv.rules(fn, t))
                omitted += [f"{t}: {o}" for o in more]
                if text:
                    tensor_dtype.append((t, text))
        lf = conv.layouts_of(fn)
        if lf is not None:
            omitted += [f"{t}: layout {','.join(v.value)}" for t, v in lf.tensors]
            omitted += [f"{c.value}: contiguous" for c in lf.contiguous]
        out.append(Item(fn, dtype, ",".join(conv.function_layouts(fn)), tuple(tensor_dtype), tuple(omitted)))
    return out


def render_convert_config(rv: ResolvedVendor, source: str) -> dict[str, str]:
    conv = rv.vendor.conversions or EMPTY
    found = items(conv)
    if not found:
        return {}
    return {f"{impl_dir(rv)}/convert_config.yaml":
            render("adaptor/convert_config.yaml.j2", source=source, items=found, vendor=rv.vendor.identity)}
