"""The stages, in order, as a render runs them: check() loads and
validates, run() resolves and renders, write() writes.

    load      files -> Workspace (shape errors)              deeplink_gen/load/
    validate  Workspace -> Diagnostics (semantic errors)      deeplink_gen/validate/
    resolve   Workspace + vendor -> ResolvedVendor            deeplink_gen/plan/resolve.py
    render    ResolvedVendor -> {path: text} via plans        deeplink_gen/plan/, deeplink_gen/render/
    write     {path: text} -> generated/<vendor>/             deeplink_gen/output/

Every command that loads a workspace goes through load() or check() (and
examine() beneath it), also for files it has not written yet.

Each stage raises UserError for bad input; nothing here prints, and nothing
here reads or writes the cache folder: what a run may reuse from earlier
runs is the caller's (commands/stored.py), and the two stages that keep
values of their own between runs (the schema results of unchanged files,
each op's code) are handed a Memo to keep them in. Validation also finds
warnings, which stop nothing: they travel with the valid workspace
(Checked) for the command to print. The stages are imported when first
used, so that a run that reuses stored results loads none of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deeplink_gen.atomic import refuse_link_out
from deeplink_gen.cache import NO_MEMO, Memo
from deeplink_gen.errors import Diagnostic, UserError, split

if TYPE_CHECKING:
    from deeplink_gen.load.workspace import Sources
    from deeplink_gen.model import ResolvedVendor, Vendor, Workspace
    from deeplink_gen.options import Options, Torch
    from deeplink_gen.output import writer
    from deeplink_gen.request import Request


def loaded(sources: Sources, vendors: Sequence[str] | None = None,
           memo: Memo = NO_MEMO) -> tuple[Workspace, list[Diagnostic]]:
    """The workspace of *sources* made of the files that have the right shape,
    and the shape problems of the others (UserError when there is no workspace
    to speak of)."""
    from deeplink_gen.load.workspace import load_workspace

    return load_workspace(sources, vendors, memo)


def load(root: Path, vendors: Sequence[str] | None = None, memo: Memo = NO_MEMO) -> Workspace:
    """The workspace at *root*; UserError for any shape problem."""
    from deeplink_gen.load.workspace import Sources

    ws, problems = loaded(Sources(root), vendors, memo)
    if problems:
        raise UserError(problems)
    return ws


@dataclass(frozen=True)
class Checked:
    """A valid workspace and the warnings its validation found, sorted."""

    ws: Workspace
    warnings: tuple[Diagnostic, ...] = ()


def examine(request: Request, torch: Torch, memo: Memo = NO_MEMO, *,
            sources: Sources | None = None) -> tuple[Workspace, list[Diagnostic]]:
    """load, then validate for *torch*: the workspace and every problem of both
    stages (the files that loaded are validated even when others did not).
    The files are the request's folder's, or those of *sources* (files about
    to be written, checked as they will be)."""
    from deeplink_gen.load.workspace import Sources
    from deeplink_gen.validate import Reference, validate as run_checks

    ws, problems = loaded(sources or Sources(request.root), request.vendors, memo)
    problems += run_checks(ws, Reference(torch.op_table(), request.options.prototypes()))
    return ws, problems


def check(request: Request, torch: Torch, memo: Memo = NO_MEMO, *, sources: Sources | None = None) -> Checked:
    """examine()'s workspace with its warnings; UserError (errors and warnings) if any problem is an error."""
    ws, problems = examine(request, torch, memo, sources=sources)
    errors, warnings = split(problems)
    if errors:
        raise UserError(errors + warnings)
    return Checked(ws, tuple(warnings))


def resolve(ws: Workspace, vendor: Vendor, torch: Torch, options: Options) -> ResolvedVendor:
    from deeplink_gen.plan.resolve import resolve as resolve_vendor

    return resolve_vendor(ws, vendor, torch.op_table(), options)


def render(ws: Workspace, rv: ResolvedVendor, options: Options, memo: Memo = NO_MEMO) -> dict[str, str]:
    from deeplink_gen.render.artifacts import render_vendor
    from deeplink_gen.render.job import Job

    return render_vendor(Job(rv, ws.rel(rv.vendor.path), options.prototypes(), options, ws.root, memo))


@dataclass(frozen=True)
class Rendered:
    """What a render made: each vendor's files {path: text}, and the warnings of its validation."""

    files: dict[str, dict[str, str]]
    warnings: tuple[Diagnostic, ...] = ()


def run(request: Request, torch: Torch, checked: Checked, memo: Memo = NO_MEMO, *,
        each: dict[str, Options] | None = None) -> Rendered:
    """The render *request* asks for, from its *checked* workspace (check()):
    resolve and render every vendor for *torch*, with the request's options
    (or the vendor's own from *each*)."""
    ws = checked.ws
    files = {}
    for vendor in ws.vendors:
        chosen = (each or {}).get(vendor.name, request.options)
        files[vendor.name] = render(ws, resolve(ws, vendor, torch, chosen), chosen, memo)
    return Rendered(files, checked.warnings)


def write(out_root: Path, rendered: dict[str, dict[str, str]], within: Path) -> writer.Report:
    """Each vendor's tree staged and swapped in; unchanged files kept as they are. Nothing is
    written when a folder from *within* down to *out_root* is a link leading out of *within*."""
    from deeplink_gen.output import lock, writer

    report = writer.Report()
    strays = [f"{name}/{rel}" for name, files in rendered.items() for rel in files if writer.outside(name, rel)]
    if strays:      # never made by a render: a stored result someone rewrote
        raise UserError([Diagnostic(None, str(out_root), (
            f"a rendered file's path leads out of its vendor folder ({strays[0]!r}); nothing was written: "
            "delete the cache folder (DEEPLINK_GEN_CACHE_DIR) and render again"))])
    refuse_link_out(within, out_root, str(out_root))
    try:
        out_root.mkdir(parents=True, exist_ok=True)
        with lock.held(out_root, str(out_root)):
            writer.recover(out_root)
            refused = [d for name in rendered for d in [writer.refusal(out_root, name)] if d is not None]
            if refused:
                raise UserError(refused)
            for name, files in rendered.items():
                try:
                    writer.write_tree(out_root, name, files, report)
                except OSError as exc:
                    raise UserError([Diagnostic(None, str(out_root / name), (
                        f"cannot write {exc.filename or out_root}: {exc.strerror or exc}; "
                        "nothing of this vendor was written, its folder is as it was"))]) from None
    except FileExistsError:
        raise UserError([Diagnostic(None, str(out_root), "is not a folder; nothing was written")]) from None
    except OSError as exc:
        raise UserError([Diagnostic(None, str(out_root), (
            f"cannot write {exc.filename or out_root}: {exc.strerror or exc}; nothing was written"))]) from None
    return report
