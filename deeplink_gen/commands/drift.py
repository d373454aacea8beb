"""`deeplink-gen drift`: what moving a workspace from one torch to another
changes, for every catalog entry and vendor replacement that applies to
both. The workspace is only loaded (shape errors), not validated: it may be
valid for one of the two versions only."""

from __future__ import annotations

from pathlib import Path

import click

from deeplink_gen import pipeline
from deeplink_gen.commands import next_step, report_out, torch_choice
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.interfaces import aten, torch_snapshots
from deeplink_gen.model import OpTable
from deeplink_gen.plan import drift as plan
from deeplink_gen.validate.schemas import difference


def between(old: OpTable, new: OpTable) -> list[OpTable]:
    """The shipped snapshots strictly between two versions, oldest first."""
    return [torch_snapshots.load(v) for v in torch_snapshots.shipped() if old.version < v < new.version]


def _parse(schema: str):
    """torchgen's FunctionSchema; UserError when the installed torchgen cannot read it."""
    try:
        return aten.parse_schema(schema)
    except aten.SCHEMA_ERRORS as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError([Diagnostic(None, None, f"the installed torchgen cannot read the schema "
                                                f"'{schema}': {first}")]) from None


def run(root: Path, old: OpTable, new: OpTable) -> plan.Drift:
    ws = pipeline.load(root)
    return plan.drift(ws, old, new, between(old, new), _parse, difference)


def source_of(result: plan.Drift) -> str:
    return f"catalog/, vendors/ and the op tables of torch {result.old.version} and {result.new.version}"


def main(root: Path, old: str, new: str, fmt: str, out: Path | None) -> int:
    """`drift --from OLD --to NEW`: the report printed or written to *out*; 1 when an entry would break."""
    from deeplink_gen.render import drift as report

    old_table, new_table = torch_choice.table_for(old, "--from"), torch_choice.table_for(new, "--to")
    if not old_table.version < new_table.version:
        raise click.UsageError(f"--from ({old_table.version}) must be an older torch than --to ({new_table.version})")
    result = run(root, old_table, new_table)
    report_out.emit(report.render(result, fmt, source_of(result), header=out is not None), out,
                    f"{len(result.ops)} changed, {len(result.breaking)} would break", root)
    if result.breaking:
        return 1
    next_step.show(f"{next_step.prog(root)} validate --torch-version {new_table.version}, then set torch: "
                   f"{new_table.version} in deeplink-gen.yaml and render --all", err=out is None and fmt != "text")
    return 0
