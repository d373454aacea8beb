"""The coverage report as text: a terminal summary, JSON for tools (one op
per line), Markdown for a pull-request comment and a self-contained HTML
page that sorts and filters. Every document but the terminal summary starts
with the @generated header."""

from __future__ import annotations

import json

from deeplink_gen.plan.coverage import REACH_MEANING, Cell, Coverage, Reach
from deeplink_gen.render.templating import render as render_template

# The JSON report's format; `coverage --baseline` reads this format only.
FORMAT = "deeplink-gen coverage 1"
FORMATS = ("text", "json", "markdown", "html")


def pct(count: int, total: int) -> str:
    return f"{100.0 * count / total:.1f}%" if total else "-"


def _cell_json(cell: Cell) -> dict:
    out: dict = {"reach": cell.reach.value, "runs": cell.runs.value}
    if cell.reach == Reach.REGISTERED:
        out.update(diopi=cell.diopi, implemented=cell.implemented, autocompare=cell.autocompare.value,
                   fallback_to_cpu=cell.fallback_to_cpu.value, dtypes=list(cell.dtypes), definition=cell.definition)
    return out


def _json_lines(cov: Coverage) -> dict:
    vendors = []
    for v in cov.vendors:
        library = None if v.library is None else {"source": v.library.source, "how": v.library.how,
                                                  "functions": len(v.library.functions)}
        yes, no, unknown = v.implemented
        vendors.append(json.dumps({
            "name": v.name, "library": library,
            "reach": {k.value: n for k, n in v.reach}, "runs": {k.value: n for k, n in v.runs},
            "implemented": {"yes": yes, "no": no, "unknown": unknown},
            "autocompare": {k.value: n for k, n in v.autocompare.states},
            "fallback_to_cpu": {k.value: n for k, n in v.fallback_to_cpu.states},
        }))
    names = [v.name for v in cov.vendors]
    ops = [json.dumps({"op": row.op.name, "schema": row.op.schema,
                       "vendors": {n: _cell_json(c) for n, c in zip(names, row.cells)}}) for row in cov.rows]
    extra = {}
    if cov.workload is not None:
        w = cov.workload
        extra["workload"] = json.dumps({
            "source": w.source, "ops": list(w.ops),
            "unknown": [{"op": n, "line": loc.line} for n, loc, _ in w.unknown],
            "vendors": {wv.name: {"runs": {k.value: n for k, n in wv.runs}, "to_cpu": list(wv.to_cpu),
                                  "unimplemented": list(wv.unimplemented)} for wv in w.vendors},
        }, indent=1)
    if cov.baseline is not None:
        b = cov.baseline
        extra["baseline"] = json.dumps({
            "source": b.source, "notes": list(b.notes),
            "regressions": [{"vendor": r.vendor, "kind": r.kind.value, "name": r.name} for r in b.regressions],
        }, indent=1)
    return {"vendors": vendors, "ops": ops, "extra": extra}


def _context(cov: Coverage, source: str) -> dict:
    return dict(cov=cov, source=source, total=cov.total, Reach=Reach, meaning=REACH_MEANING, pct=pct,
                vendor_names=[v.name for v in cov.vendors], format=FORMAT)


def render(cov: Coverage, fmt: str, source: str, *, header: bool = True) -> str:
    """The report in *fmt* (one of FORMATS). *source* is named in the header;
    the text summary has one only with *header* (when it goes to a file)."""
    ctx = _context(cov, source)
    if fmt == "text":
        return render_template("coverage/summary.txt.j2", header_line=header, **ctx)
    if fmt == "json":
        return render_template("coverage/coverage.json.j2", lines=_json_lines(cov),
                               categories=json.dumps({k.value: m for k, m in REACH_MEANING.items()}), **ctx)
    if fmt == "markdown":
        return render_template("coverage/coverage.md.j2", **ctx)
    if fmt == "html":
        return render_template("coverage/coverage.html.j2", **ctx)
    raise ValueError(fmt)
