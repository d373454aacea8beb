"""`deeplink-gen render`: render the chosen vendors, write them (or, with
--check, compare them with what is on disk). Before anything is loaded, the
request's key (request.py: every input file and every choice) decides what
is left to do: nothing when the output on disk is what that key rendered
last time (stamps), only the writing when it was rendered before (its files
are stored under that key, commands/stored.py), else the whole pipeline.
Validation's warnings are stored under the same key, so that a run that
loads nothing prints them too; without them stored, nothing is reused."""

from __future__ import annotations

import json
from pathlib import Path

import click

from deeplink_gen import cache, inputfile, pipeline
from deeplink_gen.commands import stored, warnings_out
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.output import stamps
from deeplink_gen.request import Request


def reuse(request: Request, strict: bool = False) -> int | None:
    """Finish the render without loading anything if the request was rendered
    before: the exit code (the warnings and the summary printed) when done, else None."""
    names, key = list(request.names), request.key("render")
    if not names or key is None:
        return None
    warnings = stored.warnings(request)
    if warnings is None:
        return None
    current = {n: stamps.fresh(request.out, n, key) for n in names}
    if all(files is not None for files in current.values()):
        if warnings_out.show(warnings, strict):
            return 1
        count = sum(len(files) for files in current.values())
        click.echo(f"0 written, {count} unchanged, 0 removed ({', '.join(names)})")
        _next(names)
        return 0
    rendered = stored.files(request)
    if rendered is None:
        return None
    if warnings_out.show(warnings, strict):
        return 1
    _write(request.out, rendered, key)
    return 0


def _write(out_root: Path, rendered: dict[str, dict[str, str]], digest: str | None) -> None:
    report = pipeline.write(out_root, rendered)
    stamps.record(out_root, {name: (digest, files) for name, files in rendered.items()})
    click.echo(f"{len(report.written)} written, {len(report.unchanged)} unchanged, "
               f"{len(report.removed)} removed ({', '.join(rendered)})")
    _next(list(rendered))


def _next(names: list[str]) -> None:
    vendor = names[0] if len(names) == 1 else "NAME"
    click.echo(f"next: deeplink-gen render --vendor {vendor} --into CHECKOUT   (into a deeplink.framework "
               "checkout: the files and onboarding/dipu.patch; then build DIPU)")


def run(request: Request, options: pipeline.Options, *, check: bool = False, show_diff: bool = False,
        prefix: list[str] = ("deeplink-gen",), out_args: list[str] = (), strict: bool = False) -> int:
    """Render *request* with *options*, through the whole pipeline (the caller
    has tried reuse first); returns the exit code. The commands this prints
    as hints start with *prefix* (deeplink-gen and its -C) and carry
    *out_args* (--out ...). With *strict*, a warning stops the run before
    anything is rendered."""
    checked = stored.checked(request, options)
    if not request.names:
        raise UserError([Diagnostic(None, "--all", (
            f"nothing to render: {request.root / 'vendors'} has no vendor file; "
            f"`{' '.join(prefix)} new-vendor NAME` scaffolds one"))])
    if warnings_out.show(checked.warnings, strict):
        return 1
    if check:
        chosen = {name: _recorded_options(request.out / name, options) for name in request.names}
        made = pipeline.run(request, options, cache.MEMO, checked=checked, each=chosen)
        return _check(request.out, made.files, chosen, request.vendors is None, show_diff, list(prefix),
                      list(out_args))
    made, key = stored.render(request, options, checked)
    _write(request.out, made.files, key)
    return 0


def _recorded_options(tree: Path, options: pipeline.Options) -> pipeline.Options:
    """The options a vendor's tree was rendered with (its manifest.json), under those given now."""
    from deeplink_gen import output_paths

    try:
        recorded = json.loads(inputfile.read(tree / output_paths.MANIFEST)).get("options")
    except (UserError, ValueError, AttributeError):
        recorded = None
    if not isinstance(recorded, dict):
        return options
    chosen = options.with_recorded(recorded)
    flags = " ".join((["--diopi-include", str(chosen.diopi_include)] if chosen.diopi_include else [])
                     + chosen.flags()) or "no options"
    click.echo(f"{tree.name}: checking with the options of its manifest.json and the command line: {flags}")
    return chosen


def _check(out_root: Path, rendered: dict[str, dict[str, str]], chosen: dict[str, pipeline.Options], all_vendors: bool,
           show_diff: bool, prefix: list[str], out_args: list[str]) -> int:
    from deeplink_gen.output import writer

    report = writer.Report()
    stale_vendors = []
    for name, files in rendered.items():
        before = len(report.stale) + len(report.missing) + len(report.unexpected)
        writer.check_tree(out_root / name, files, name, report, show_diff)
        if len(report.stale) + len(report.missing) + len(report.unexpected) > before:
            stale_vendors.append(name)
    if all_vendors and out_root.is_dir():
        for extra in sorted(p.name for p in out_root.iterdir() if p.is_dir() and p.name not in rendered
                            and not p.name.startswith(".")):
            report.unexpected.append(f"{extra}/")
    for text in report.diffs:
        click.echo(text, nl=False)
    for label, items in (("stale", report.stale), ("missing", report.missing), ("unexpected", report.unexpected)):
        for item in items:
            click.echo(f"{label}: {item}", err=True)
    if not report.clean:
        click.echo("generated files are out of date; run:", err=True)
        for name in stale_vendors:
            click.echo(f"  {chosen[name].command(prefix, '--vendor', name, *out_args)}", err=True)
        return 1
    click.echo(f"up to date: {len(report.unchanged)} files")
    _next(list(rendered))
    return 0
