"""`deeplink-gen coverage`: what each vendor really runs of one torch's op
table. Loads and validates the workspace for that torch, resolves each
vendor, reads the DIOPI libraries (given with --impl, else the vendor
file's adaptor.implemented), the workload and the baseline it is given, and
renders the report."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import click

from deeplink_gen import jsonfile, pipeline
from deeplink_gen.commands import next_step, report_out, stored, torch_choice
from deeplink_gen.errors import Diagnostic, Loc, UserError, key_path
from deeplink_gen.interfaces.diopi_impl import read_library
from deeplink_gen.interfaces.dipu import DIPU_OWN_OPS
from deeplink_gen.cpptext import IDENT
from deeplink_gen.interfaces.workload import OP_NAME, read_workload
from deeplink_gen.model import DiopiLibrary
from deeplink_gen.plan import coverage as plan
from deeplink_gen.render import coverage as report
from deeplink_gen.request import Request
from deeplink_gen.validate.names import vendor_name_problem


@dataclass(frozen=True)
class Asked:
    """What a coverage report is asked for besides the workspace's vendors."""

    libraries: dict[str, Path]         # vendor -> DIOPI impl folder, library or symbol list
    against: Path | None = None
    baseline: Path | None = None


def read_baseline(path: Path) -> plan.Baseline:
    """An earlier `coverage --format json` report: per vendor, its registered
    ops and the DIOPI functions its library was known to define."""
    doc = jsonfile.read(path, "--baseline")

    def bad(where: tuple, message: str) -> UserError:
        key = f"--baseline {key_path(where)}" if where else "--baseline"
        return UserError([Diagnostic(Loc(str(path), 1, 1), key, message)])

    if not isinstance(doc, dict) or doc.get("format") != report.FORMAT:
        raise bad((), f"not a coverage report of format '{report.FORMAT}' (write one with coverage --format json)")
    vendors, ops = doc.get("vendors", []), doc.get("ops", [])
    for key, value in (("vendors", vendors), ("ops", ops)):
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise bad((key,), "expected a list of objects")
    for i, v in enumerate(vendors):      # a name the reports quote back: only a vendor's name
        if not isinstance(v.get("name"), str) or vendor_name_problem(v["name"]) is not None:
            raise bad(("vendors", i, "name"), "expected a vendor's name (such as camb)")
        if any(w.get("name") == v["name"] for w in vendors[:i]):
            raise bad(("vendors", i, "name"), f"'{v['name']}' is listed twice (a report lists each vendor once)")
    registered: dict[str, set[str]] = {v["name"]: set() for v in vendors}
    implemented: dict[str, set[str]] = {name: set() for name in registered}
    for i, row in enumerate(ops):
        cells = row.get("vendors") or {}
        if not isinstance(cells, dict):
            raise bad(("ops", i, "vendors"), "expected an object of vendor names")
        for name, cell in cells.items():
            if name in registered and isinstance(cell, dict) and cell.get("reach") == plan.Reach.REGISTERED.value:
                # Names the reports quote back (in Markdown too): only names of the right form.
                op, diopi = row.get("op"), cell.get("diopi")
                if not (isinstance(op, str) and OP_NAME.match(op)):
                    raise bad(("ops", i, "op"), "expected an op name such as add.out")
                registered[name].add(op)
                if cell.get("implemented") is True:
                    if not (isinstance(diopi, str) and IDENT.fullmatch(diopi)):
                        raise bad(("ops", i, "vendors", name, "diopi"), "expected a DIOPI function's name")
                    implemented[name].add(diopi)
    return plan.Baseline(str(path), {k: frozenset(v) for k, v in registered.items()},
                         {k: frozenset(v) for k, v in implemented.items()})


def run(request: Request, asked: Asked) -> plan.Coverage:
    torch = torch_choice.of_request(request)
    ws = stored.checked(request, torch).ws
    table = torch.op_table()
    resolved = [pipeline.resolve(ws, v, torch, request.options) for v in ws.vendors]
    unknown = sorted(set(asked.libraries) - {v.name for v in ws.vendors})
    if unknown:
        raise UserError([Diagnostic(None, "--impl", f"'{name}' is not a vendor of this report "
                                                    f"({', '.join(v.name for v in ws.vendors)})") for name in unknown])
    libraries = {name: read_library(path) for name, path in sorted(asked.libraries.items())}
    for v in ws.vendors:        # the adaptor exports exactly what the vendor file says the library defines
        if v.name not in libraries and v.implemented is not None:
            libraries[v.name] = DiopiLibrary(v.implemented.functions(), f"vendors/{v.name}.yaml adaptor.implemented",
                                             "vendor file")
    cov = plan.coverage(table, resolved, libraries, DIPU_OWN_OPS, frozenset(request.options.prototypes().names()))
    if asked.against is not None:
        cov = replace(cov, workload=plan.against(cov, str(asked.against), read_workload(asked.against)))
    if asked.baseline is not None:
        cov = replace(cov, baseline=plan.compare(cov, read_baseline(asked.baseline)))
    return cov


def source_of(cov: plan.Coverage) -> str:
    """What the header says the report comes from."""
    files = ", ".join(f"vendors/{v.name}.yaml" for v in cov.vendors)
    return f"{files}, catalog/ and torch {cov.table.version}'s op table"


def main(request: Request, asked: Asked, fmt: str, out: Path | None, fail_on_regression: bool) -> int:
    """`coverage`: the report printed or written to *out*; 1 when *fail_on_regression* and something was lost."""
    cov = run(request, asked)
    report_out.emit(report.render(cov, fmt, source_of(cov), header=out is not None), out,
                    f"{len(cov.vendors)} vendor{'s' if len(cov.vendors) != 1 else ''}, "
                    f"{cov.total} ops of torch {cov.table.version}", request.root)
    regressions = cov.baseline.regressions if cov.baseline is not None else ()
    if regressions and fail_on_regression:
        click.echo(f"{len(regressions)} regression{'s' if len(regressions) != 1 else ''} against "
                   f"{asked.baseline}", err=True)
        return 1
    one = cov.vendors[0].name if len(cov.vendors) == 1 else "NAME"
    next_step.show(f"{next_step.prog(request.root)} explain OP --vendor {one}   (how one op reaches the device)",
                   err=out is None and fmt != "text")
    return 0
