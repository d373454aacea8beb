"""The drift report as text: a terminal report, JSON for tools and
Markdown; JSON and Markdown start with the @generated header (the text
report too when it goes to a file)."""

from __future__ import annotations

import json

from deeplink_gen.plan.drift import Drift, OpDrift
from deeplink_gen.render.templating import render as render_template

FORMAT = "deeplink-gen drift 1"
FORMATS = ("text", "json", "markdown")


def _op_json(d: OpDrift) -> dict:
    out = {
        "op": d.op, "definition": d.definition, "where": str(d.loc), "torch": d.entry_gate or None,
        "removed": d.removed, "old_schema": d.old_schema, "new_schema": d.new_schema or None, "pinned": d.pinned, "pin": d.pin or None,
        "changes": [{"kind": c.kind, "name": c.name, "old": c.old, "new": c.new} for c in d.changes],
        "uses": [{"where": u.where, "at": str(u.loc), "names": list(u.names), "bare_call": u.bare_call}
                 for u in d.uses],
        "breaks": list(d.breaks),
        "gate": None,
    }
    if d.gate is not None:
        out["gate"] = {"torch": d.gate.text, "first_changed": f"{d.gate.bound.major}.{d.gate.bound.minor}",
                       "exact": d.gate.exact, "last_unchanged": str(d.gate.after)}
    return out


def render(result: Drift, fmt: str, source: str, *, header: bool = True) -> str:
    ctx = dict(d=result, source=source, format=FORMAT)
    if fmt == "text":
        return render_template("drift/drift.txt.j2", header_line=header, **ctx)
    if fmt == "markdown":
        return render_template("drift/drift.md.j2", **ctx)
    if fmt == "json":
        ops = [json.dumps(_op_json(d)) for d in result.ops]
        overloads = [json.dumps({"base": o.base, "added": list(o.added), "removed": list(o.removed)})
                     for o in result.overloads]
        return render_template("drift/drift.json.j2", ops=ops, overloads=overloads, **ctx)
    raise ValueError(fmt)
