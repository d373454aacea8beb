"""The stages, in order, as run() runs them for a render:

    load      files -> Workspace (shape errors)              deeplink_gen/load/
    validate  Workspace -> Diagnostics (semantic errors)      deeplink_gen/validate/
    resolve   Workspace + vendor -> ResolvedVendor            deeplink_gen/plan/resolve.py
    render    ResolvedVendor -> {path: text} via plans        deeplink_gen/plan/, deeplink_gen/render/
    write     {path: text} -> generated/<vendor>/             deeplink_gen/output/

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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from deeplink_gen.cache import NO_MEMO, Memo
from deeplink_gen.errors import Diagnostic, UserError, split

if TYPE_CHECKING:
    from deeplink_gen.model import OpTable, Prototypes, ResolvedVendor, TorchVersion, Vendor, Workspace
    from deeplink_gen.output import writer
    from deeplink_gen.request import Request


@dataclass(frozen=True)
class Options:
    """Everything besides the workspace that changes a run's result."""

    torch_version: TorchVersion
    diopi_include: Path | None = None     # DIOPI headers instead of the bundled prototype snapshot
    autocompare: bool | None = None       # the command line's --autocompare/--no-autocompare
    shards: int | None = None             # the command line's --shards
    snapshot: bool = False                # torch's ops from the shipped snapshot of torch_version, not the installed torch

    @classmethod
    def for_torch(cls, wanted: str, diopi_include: Path | None = None, **choices) -> "Options":
        """Options for torch *wanted* (X.Y[.Z]): the installed torch when it is that version
        (major.minor, and the patch when given), else the op table shipped for it; ParseError
        when there is neither."""
        from deeplink_gen.interfaces import torch_snapshots
        from deeplink_gen.interfaces.aten import installed_torch_version

        installed = installed_torch_version()
        if torch_snapshots.matches(installed, wanted):
            return cls(installed, diopi_include, **choices)
        return cls(torch_snapshots.choose(wanted).version, diopi_include, snapshot=True, **choices)

    def prototypes(self) -> Prototypes:
        """The DIOPI prototypes of the --diopi-include headers, else of the bundled snapshot (read once per process)."""
        from deeplink_gen.interfaces import diopi

        return diopi.prototypes(self.diopi_include)

    def op_table(self) -> OpTable:
        from deeplink_gen.interfaces import torch_snapshots

        return torch_snapshots.load(self.torch_version) if self.snapshot else torch_snapshots.installed()

    def recorded(self) -> dict:
        """The options that change output, as manifest.json records them (None: not given)."""
        return {"autocompare": self.autocompare, "shards": self.shards,
                "diopi_include": str(self.diopi_include) if self.diopi_include is not None else None}

    def with_recorded(self, recorded: dict) -> "Options":
        """These options, with *recorded* ones filling in what was not given."""
        def pick(name, given, convert=lambda v: v):
            value = recorded.get(name)
            return given if given is not None or value is None else convert(value)
        return replace(self, diopi_include=pick("diopi_include", self.diopi_include, Path),
                       autocompare=pick("autocompare", self.autocompare, bool),
                       shards=pick("shards", self.shards, int))

    def flags(self) -> list[str]:
        """`render`'s flags that give these options (--diopi-include goes before the command)."""
        out = []
        if self.autocompare is not None:
            out.append("--autocompare" if self.autocompare else "--no-autocompare")
        if self.shards is not None:
            out += ["--shards", str(self.shards)]
        return out

    def command(self, prefix: list[str], *args: str) -> str:
        """The full render command for these options: *prefix* (deeplink-gen and its -C), then *args*."""
        group = ["--diopi-include", str(self.diopi_include)] if self.diopi_include is not None else []
        return " ".join([*prefix, *group, "render", *args, *self.flags()])


def load(root: Path, vendors: Sequence[str] | None = None, memo: Memo = NO_MEMO) -> Workspace:
    from deeplink_gen.load.workspace import load_workspace

    ws, problems = load_workspace(root, vendors, memo)
    if problems:
        raise UserError(problems)
    return ws


@dataclass(frozen=True)
class Checked:
    """A valid workspace and the warnings its validation found, sorted."""

    ws: Workspace
    warnings: tuple[Diagnostic, ...] = ()


def _warnings_only(problems: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The warnings among *problems*; UserError (errors and warnings) if any is an error."""
    errors, warnings = split(problems)
    if errors:
        raise UserError(errors + warnings)
    return tuple(warnings)


def validate(ws: Workspace, options: Options) -> tuple[Diagnostic, ...]:
    """The workspace's warnings; UserError if it is not valid."""
    from deeplink_gen.validate import Context, validate as run_checks

    return _warnings_only(run_checks(ws, Context(options.op_table(), options.prototypes())))


def check(root: Path, vendors: Sequence[str] | None, options: Options, memo: Memo = NO_MEMO) -> Checked:
    """load, then validate; every problem of both stages is reported together
    (the files that loaded are validated even when others did not)."""
    from deeplink_gen.load.workspace import load_workspace
    from deeplink_gen.validate import Context, validate as run_checks

    ws, problems = load_workspace(root, vendors, memo)
    problems += run_checks(ws, Context(options.op_table(), options.prototypes()))
    return Checked(ws, _warnings_only(problems))


def resolve(ws: Workspace, vendor: Vendor, options: Options) -> ResolvedVendor:
    from deeplink_gen.plan.resolve import Choices, resolve as resolve_vendor

    return resolve_vendor(ws, vendor, options.op_table(), Choices(options.autocompare, options.shards))


def render(ws: Workspace, rv: ResolvedVendor, options: Options, memo: Memo = NO_MEMO) -> dict[str, str]:
    from deeplink_gen.render.artifacts import render_vendor
    from deeplink_gen.render.job import Job

    return render_vendor(Job(rv, ws.rel(rv.vendor.path), options.prototypes(), options.recorded(), ws.root, memo))


@dataclass(frozen=True)
class Rendered:
    """What a render made: each vendor's files {path: text}, and the warnings of its validation."""

    files: dict[str, dict[str, str]]
    warnings: tuple[Diagnostic, ...] = ()


def run(request: Request, options: Options, memo: Memo = NO_MEMO, *, checked: Checked | None = None,
        each: dict[str, Options] | None = None) -> Rendered:
    """The render *request* asks for, top to bottom: load, validate, then
    resolve and render every vendor, with *options* (or its own from *each*).
    Given *checked*, the workspace check() made for this request before, it
    starts at resolve."""
    if checked is None:
        checked = check(request.root, request.vendors, options, memo)
    ws = checked.ws
    files = {}
    for vendor in ws.vendors:
        chosen = (each or {}).get(vendor.name, options)
        files[vendor.name] = render(ws, resolve(ws, vendor, chosen), chosen, memo)
    return Rendered(files, checked.warnings)


def write(out_root: Path, rendered: dict[str, dict[str, str]]) -> writer.Report:
    """Each vendor's tree staged and swapped in; unchanged files kept as they are."""
    from deeplink_gen.output import lock, writer

    report = writer.Report()
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
