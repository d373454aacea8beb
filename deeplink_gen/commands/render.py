"""`deeplink-gen render`: render the chosen vendors, write them (or, with
--check, compare them with what is on disk). Before anything is loaded, the
digest of every input (inputs.py) decides what is left to do: nothing when
the output on disk is what those inputs rendered last time (stamps), only the
writing when they were rendered before (the rendered files are stored in the
cache directory under that digest), else the whole pipeline. Validation's
warnings are stored under the same digest, so that a run that loads nothing
prints them too; without them stored, nothing is reused."""

from __future__ import annotations

import json
from pathlib import Path

import click

from deeplink_gen import cache, inputfile, inputs, pipeline
from deeplink_gen.commands import warnings_out
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.output import stamps
from deeplink_gen.paths import vendor_files


def _names(root: Path, vendors: list[str] | None) -> list[str]:
    return [p.stem for p in vendor_files(root)] if vendors is None else list(vendors)


def _digest(root: Path, vendors: list[str] | None, autocompare: bool | None,
            shards: int | None, diopi_include: Path | None, torch_version: str | None) -> str | None:
    """What a render's output depends on (deeplink-gen.yaml's torch is one of the workspace's files);
    not the output folder: the same files go into any folder (the stamps are kept per folder)."""
    return inputs.workspace_digest(root, diopi_include, {
        "render": _names(root, vendors), "autocompare": autocompare,
        "shards": shards, "torch_version": torch_version})


def reuse(root: Path, vendors: list[str] | None, out_root: Path, autocompare: bool | None = None,
          shards: int | None = None, diopi_include: Path | None = None, strict: bool = False,
          torch_version: str | None = None) -> int | None:
    """Finish the render without loading anything if its inputs were rendered
    before: the exit code (the warnings and the summary printed) when done, else None."""
    names = _names(root, vendors)
    digest = _digest(root, vendors, autocompare, shards, diopi_include, torch_version)
    if not names or digest is None:
        return None
    warnings = cache.load("warnings", digest)
    if not (isinstance(warnings, tuple) and all(isinstance(d, Diagnostic) for d in warnings)):
        return None
    current = {n: stamps.fresh(out_root, n, digest) for n in names}
    if all(files is not None for files in current.values()):
        if warnings_out.show(warnings, strict):
            return 1
        count = sum(len(files) for files in current.values())
        click.echo(f"0 written, {count} unchanged, 0 removed ({', '.join(names)})")
        _next(names)
        return 0
    rendered = cache.load("render", digest)
    if not (isinstance(rendered, dict) and sorted(rendered) == sorted(names)
            and all(isinstance(files, dict) for files in rendered.values())):
        return None
    if warnings_out.show(warnings, strict):
        return 1
    _write(out_root, rendered, digest)
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


def run(root: Path, vendors: list[str] | None, options: pipeline.Options, out_root: Path, *,
        check: bool = False, show_diff: bool = False, prefix: list[str] = ("deeplink-gen",),
        out_args: list[str] = (), strict: bool = False, torch_version: str | None = None) -> int:
    """Render *vendors* (None: all) with *options*, through the whole pipeline
    (the caller has tried reuse first); returns the exit code. The commands
    this prints as hints start with *prefix* (deeplink-gen and its -C) and
    carry *out_args* (--out ...). With *strict*, a warning stops the run
    before anything is rendered."""
    choices = (options.autocompare, options.shards, options.diopi_include, torch_version)
    digest = _digest(root, vendors, *choices)
    checked = pipeline.load_checked(root, vendors, options)
    if warnings_out.show(checked.warnings, strict):
        return 1
    ws = checked.ws
    if not ws.vendors:
        raise UserError([Diagnostic(None, "--all", (
            f"nothing to render: {root / 'vendors'} has no vendor file; "
            f"`{' '.join(prefix)} new-vendor NAME` scaffolds one"))])
    if check:
        chosen = {v.name: _recorded_options(out_root / v.name, options) for v in ws.vendors}
        rendered = {v.name: pipeline.render(ws, pipeline.resolve(ws, v, chosen[v.name]), chosen[v.name])
                    for v in ws.vendors}
        return _check(out_root, rendered, chosen, vendors is None, show_diff, list(prefix), list(out_args))
    rendered = {v.name: pipeline.render(ws, pipeline.resolve(ws, v, options), options) for v in ws.vendors}
    if _digest(root, vendors, *choices) != digest:   # an input changed while it was read
        digest = None
    cache.store("warnings", digest, checked.warnings)
    cache.store("render", digest, rendered)
    _write(out_root, rendered, digest)
    return 0


def _recorded_options(tree: Path, options: pipeline.Options) -> pipeline.Options:
    """The options a vendor's tree was rendered with (its manifest.json), under those given now."""
    from deeplink_gen.render import paths

    try:
        recorded = json.loads(inputfile.read(tree / paths.MANIFEST)).get("options")
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
