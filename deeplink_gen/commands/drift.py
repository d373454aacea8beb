"""`deeplink-gen drift`: what moving a workspace from one torch to another
changes, for every catalog entry and vendor replacement that applies to
both. The workspace is only loaded (shape errors), not validated: it may be
valid for one of the two versions only."""

from __future__ import annotations

from pathlib import Path

from deeplink_gen import pipeline
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
