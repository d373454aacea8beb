"""`deeplink-gen render`: render the chosen vendors, write them (or, with
--check, compare them with what is on disk). Before anything is loaded, the
request's key (request.py: every input file and every choice) decides what
is left to do: nothing when the output on disk is what that key rendered
last time (stamps), only the writing when it was rendered before (its files
are stored under that key, commands/stored.py), else the whole pipeline.
Validation's warnings are stored under the same key, so that a run that
loads nothing prints them too; without them stored, nothing is reused."""

from __future__ import annotations

import os
from pathlib import Path

import click

from deeplink_gen import cache, jsonfile, pipeline
from deeplink_gen.commands import next_step, stored, torch_choice, warnings_out
from deeplink_gen.errors import Diagnostic, Loc, UserError, display_path, printable, terminal_text
from deeplink_gen.options import Options, Torch
from deeplink_gen.output import stamps
from deeplink_gen.input_paths import workspace_file
from deeplink_gen.request import Request

_INPUT_FOLDERS = ("vendors", "catalog", "schemas")


def refuse_out(root: Path, out_dir: Path, allow_outside: bool, check: bool) -> None:
    """Refuse an --out in a workspace's vendors/, catalog/ or schemas/ (this workspace's, or
    another's: a folder beside deeplink-gen.yaml), where a render would become its input;
    and one outside the workspace unless *allow_outside* (or only checked)."""
    resolved_root, target = root.resolve(), out_dir.resolve()
    for folder in (target, *target.parents):
        if folder.name in _INPUT_FOLDERS and (folder.parent == resolved_root
                                               or os.path.lexists(workspace_file(folder.parent))):
            raise click.UsageError(f"--out {out_dir} is inside {display_path(str(folder), root)}, a workspace folder that holds its "
                                   "inputs; render into generated/ (the default) or another folder")
    if not allow_outside and not check and resolved_root != target and resolved_root not in target.parents:
        raise click.UsageError(f"--out {out_dir} is outside the workspace {root}; "
                               "add --allow-outside-workspace if that is what you want")


def main(request: Request, *, check: bool = False, show_diff: bool = False, strict: bool = False) -> int:
    """`render` (without --into): reused when rendered before, else rendered; the exit code."""
    def torch() -> Torch:
        return torch_choice.of_request(request, renders=True)

    # A --torch-version that cannot be rendered for stops the render before anything is reused.
    chosen = torch() if request.options.torch_version is not None else None
    if not check:
        code = reuse(request, strict)
        if code is not None:
            return code     # nothing changed, or rendered before: done without loading anything
    return run(request, chosen or torch(), check=check, show_diff=show_diff, strict=strict)


def reuse(request: Request, strict: bool = False) -> int | None:
    """Finish the render without loading anything if the request was rendered
    before: the exit code (the warnings and the summary printed) when done, else None."""
    names, key = list(request.names), request.key("render")
    if not names or key is None:
        return None
    warnings = stored.warnings(request)
    if warnings is None:
        return None
    current = {n: stamps.fresh(request.out_root, n, key) for n in names}
    if all(files is not None for files in current.values()):
        if warnings_out.show(warnings, strict):
            return 1
        count = sum(len(files) for files in current.values())
        click.echo(f"0 written, {count} unchanged, 0 removed ({', '.join(names)})")
        _next(request.root, names)
        return 0
    rendered = stored.files(request)
    if rendered is None:
        return None
    if warnings_out.show(warnings, strict):
        return 1
    _write(request, rendered, key)
    return 0


def _write(request: Request, rendered: dict[str, dict[str, str]], digest: str | None) -> None:
    report = pipeline.write(request.out_root, rendered, request.out_within)
    stamps.record(request.out_root, {name: (digest, files) for name, files in rendered.items()})
    click.echo(f"{len(report.written)} written, {len(report.unchanged)} unchanged, "
               f"{len(report.removed)} removed ({', '.join(rendered)})")
    _next(request.root, list(rendered))


def _next(root: Path, names: list[str]) -> None:
    vendor = names[0] if len(names) == 1 else "NAME"
    next_step.show(f"{next_step.prog(root)} render --vendor {vendor} --into CHECKOUT   (into a deeplink.framework "
                   "checkout: the files and onboarding/dipu.patch; then build DIPU)")


def run(request: Request, torch: Torch, *, check: bool = False, show_diff: bool = False,
        strict: bool = False) -> int:
    """Render *request* for *torch*, through the whole pipeline (the caller
    has tried reuse first); returns the exit code. With *strict*, a warning
    stops the run before anything is rendered."""
    checked = stored.checked(request, torch)
    if not request.names:
        raise UserError([Diagnostic(None, "--all", (
            f"nothing to render: {request.root / 'vendors'} has no vendor file; "
            f"`{next_step.prog(request.root)} new-vendor NAME` scaffolds one"))])
    if warnings_out.show(checked.warnings, strict):
        return 1
    if check:
        chosen = {name: _recorded_options(request.out_root / name, request.options) for name in request.names}
        made = pipeline.run(request, torch, checked, cache.MEMO, each=chosen)
        return _check(request, made.files, chosen, show_diff)
    made, key = stored.render(request, torch, checked)
    _write(request, made.files, key)
    return 0


def _recorded_options(tree: Path, options: Options) -> Options:
    """The options a vendor's tree was rendered with (its manifest.json), under those given now."""
    from deeplink_gen import output_paths

    try:
        manifest = jsonfile.read(tree / output_paths.MANIFEST)
    except UserError:
        manifest = None
    recorded = manifest.get("options") if isinstance(manifest, dict) else None
    if not isinstance(recorded, dict):
        return options
    try:
        chosen = options.with_recorded(recorded)
    except ValueError as bad:
        raise UserError([Diagnostic(Loc(str(tree / output_paths.MANIFEST), 1, 1), ("options", str(bad)),
                                    "not a value this option takes: the file was changed by hand; render "
                                    "again without --check to write it anew")]) from None
    flags = " ".join(chosen.group_flags() + chosen.render_flags()) or "no options"
    click.echo(f"{tree.name}: checking with the options of its manifest.json and the command line: {flags}")
    return chosen


def _foreign(out_root: Path, name: str) -> list[str]:
    """What deeplink-gen did not write in a vendor's folder, which a render refuses to delete."""
    from deeplink_gen.output.owned import foreign

    tree = out_root / name
    return [f"{name}/{rel}" for rel in foreign(tree)] if tree.is_dir() and not tree.is_symlink() else []


def _check(request: Request, rendered: dict[str, dict[str, str]], chosen: dict[str, Options], show_diff: bool) -> int:
    from deeplink_gen.output import writer

    out_root = request.out_root
    all_vendors = request.vendors is None

    report = writer.Report()
    stale_vendors, alien = [], []          # a render fixes the first; only removing them fixes the second
    for name, files in rendered.items():
        before = set(report.problems)
        writer.check_tree(out_root / name, files, name, report, show_diff)
        found = set(report.problems) - before
        if found:
            foreign = _foreign(out_root, name)
            alien += foreign
            if found - set(foreign):
                stale_vendors.append(name)
    if all_vendors and out_root.is_dir():
        for extra in sorted(p.name for p in out_root.iterdir() if p.is_dir() and p.name not in rendered
                            and not p.name.startswith(".")):
            report.unexpected.append(f"{extra}/")
            alien.append(f"{extra}/")
    for text in report.diffs:
        click.echo(terminal_text(text), nl=False)
    for label, items in (("stale", report.stale), ("missing", report.missing), ("unexpected", report.unexpected)):
        for item in items:
            click.echo(f"{label}: {printable(item)}", err=True)
    if alien:
        click.echo("deeplink-gen did not write these, and no render removes them (it refuses a vendor's folder "
                   "that holds one): remove them, or move them elsewhere:", err=True)
        for rel in alien:
            click.echo(f"  {display_path(str(out_root / rel))}", err=True)
    if stale_vendors:
        click.echo("generated files are out of date; " + ("then " if alien else "") + "run:", err=True)
        out_args = [] if request.out is None else ["--out", next_step.word(request.out), "--allow-outside-workspace"]
        for name in stale_vendors:
            click.echo(f"  {next_step.render_command(request.root, chosen[name], '--vendor', name, *out_args)}",
                       err=True)
    if not report.clean:
        return 1
    click.echo(f"up to date: {len(report.unchanged)} files")
    _next(request.root, list(rendered))
    return 0
