"""The stages, in order. Every command goes through them:

    load      files -> Workspace (shape errors)              deeplink_gen/load/
    validate  Workspace -> Diagnostics (semantic errors)      deeplink_gen/validate/
    resolve   Workspace + vendor -> ResolvedVendor            deeplink_gen/plan/resolve.py
    render    ResolvedVendor -> {path: text} via plans        deeplink_gen/plan/, deeplink_gen/render/
    write     {path: text} -> generated/<vendor>/             deeplink_gen/output/

Each stage raises UserError for bad input; nothing here prints. Validation
also finds warnings, which stop nothing: they travel with the valid workspace
(Checked) for the command to print. The stages are imported when first used,
so that a run that reuses stored results (see commands/render.py) loads none
of them. A validated workspace and its warnings are stored in the cache
directory under the digest of its inputs (inputs.py) and reused while none of
them changes, so a run that reuses them shows the same warnings."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from deeplink_gen import cache, inputs
from deeplink_gen.errors import Diagnostic, UserError, split

if TYPE_CHECKING:
    from deeplink_gen.model import OpTable, Prototypes, ResolvedVendor, TorchVersion, Vendor, Workspace
    from deeplink_gen.output import writer


@dataclass(frozen=True)
class Options:
    """Everything besides the workspace that changes a run's result."""

    torch_version: TorchVersion
    diopi_include: Path | None = None     # DIOPI headers instead of the bundled prototype snapshot
    autocompare: bool | None = None       # the command line's --autocompare/--no-autocompare
    shards: int | None = None             # the command line's --shards
    snapshot: bool = False                # torch's ops from the shipped snapshot of torch_version, not the installed torch

    def prototypes(self) -> Prototypes:
        return _prototypes(self.diopi_include)

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


def _prototypes(include: Path | None) -> Prototypes:
    """The DIOPI prototypes of the headers in *include*, else the bundled
    snapshot: stored in the cache directory under the digest of the headers
    (or of the tool, whose data the snapshot is), and read once per process."""
    from deeplink_gen.interfaces import diopi

    return _prototypes_of(inputs.digest("prototypes", str(include and include.resolve()),
                                        diopi.contents_digest(include) if include is not None else "bundled"), include)


@functools.lru_cache(maxsize=4)
def _prototypes_of(key: str, include: Path | None) -> Prototypes:
    from deeplink_gen.interfaces import diopi
    from deeplink_gen.model import Prototypes

    found = cache.load("prototypes", key)
    if isinstance(found, Prototypes):
        return found
    protos = diopi.prototypes(include)
    cache.store("prototypes", key, protos)
    return protos


def load(root: Path, vendors: list[str] | None = None) -> Workspace:
    from deeplink_gen.load.workspace import load_workspace

    ws, problems = load_workspace(root, vendors)
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


def load_valid(root: Path, vendors: list[str] | None, options: Options) -> Workspace:
    """load_checked's workspace, for commands that do not report warnings."""
    return load_checked(root, vendors, options).ws


def load_checked(root: Path, vendors: list[str] | None, options: Options) -> Checked:
    """load, then validate; every problem of both stages is reported together
    (the files that loaded are validated even when others did not). A valid
    workspace and its warnings are reused from the cache while its inputs
    stay the same."""
    from deeplink_gen.load.workspace import load_workspace
    from deeplink_gen.validate import Context, validate as run_checks

    def digest():
        return inputs.workspace_digest(root, options.diopi_include, {
            "model": vendors, "torch": str(options.torch_version), "snapshot": options.snapshot})

    key = digest()
    found = cache.load("model", key)
    if isinstance(found, Checked):
        return found
    ws, problems = load_workspace(root, vendors)
    problems += run_checks(ws, Context(options.op_table(), options.prototypes()))
    checked = Checked(ws, _warnings_only(problems))
    if digest() == key:      # no input changed while it was read
        cache.store("model", key, checked)
    return checked


def resolve(ws: Workspace, vendor: Vendor, options: Options) -> ResolvedVendor:
    from deeplink_gen.plan.resolve import Choices, resolve as resolve_vendor

    return resolve_vendor(ws, vendor, options.op_table(), Choices(options.autocompare, options.shards))


def render(ws: Workspace, rv: ResolvedVendor, options: Options) -> dict[str, str]:
    from deeplink_gen.render.artifacts import render_vendor
    from deeplink_gen.render.job import Job

    return render_vendor(Job(rv, ws.rel(rv.vendor.path), options.prototypes(), options.recorded(), ws.root))


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
