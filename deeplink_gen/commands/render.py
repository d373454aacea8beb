"""`deeplink-gen render`: render the chosen vendors, write them (or, with
--check, compare them with what is on disk), and keep stamps so that an
unchanged render does nothing."""

from __future__ import annotations

import json
from pathlib import Path

import click

from deeplink_gen import pipeline
from deeplink_gen.output import stamps, writer
from deeplink_gen.paths import vendor_files
from deeplink_gen.render import paths


def _stamp_options(options: pipeline.Options) -> dict:
    return {"autocompare": options.autocompare, "torch": str(options.torch_version),
            "diopi_include": options.diopi_include and str(options.diopi_include), "shards": options.shards}


def run(root: Path, vendors: list[str] | None, options: pipeline.Options, out_root: Path, *,
        check: bool = False, show_diff: bool = False, prefix: list[str] = ("deeplink-gen",),
        out_args: list[str] = ()) -> int:
    """Render *vendors* (None: all); returns the exit code. The commands this
    prints as hints start with *prefix* (deeplink-gen and its -C) and carry
    *out_args* (--out ...)."""
    names = [p.stem for p in vendor_files(root)] if vendors is None else list(vendors)
    if not check:
        digests = {n: stamps.input_digest(root, n, _stamp_options(options)) for n in names}
        current = {n: stamps.fresh(out_root, n, digests[n]) for n in names}
        if names and all(files is not None for files in current.values()):
            count = sum(len(files) for files in current.values())
            click.echo(f"0 written, {count} unchanged, 0 removed ({', '.join(names)})")
            return 0
    ws = pipeline.load_valid(root, vendors, options)
    if check:
        chosen = {v.name: _recorded_options(out_root / v.name, options) for v in ws.vendors}
        rendered = {v.name: pipeline.render(ws, pipeline.resolve(ws, v, chosen[v.name]), chosen[v.name])
                    for v in ws.vendors}
        return _check(out_root, rendered, chosen, vendors is None, show_diff, list(prefix), list(out_args))
    rendered = {v.name: pipeline.render(ws, pipeline.resolve(ws, v, options), options) for v in ws.vendors}
    report = pipeline.write(out_root, rendered)
    stamps.record(out_root, {name: (digests.get(name), files) for name, files in rendered.items()})
    click.echo(f"{len(report.written)} written, {len(report.unchanged)} unchanged, "
               f"{len(report.removed)} removed ({', '.join(rendered)})")
    return 0


def _recorded_options(tree: Path, options: pipeline.Options) -> pipeline.Options:
    """The options a vendor's tree was rendered with (its manifest.json), under those given now."""
    try:
        recorded = json.loads((tree / paths.MANIFEST).read_text(encoding="utf-8")).get("options")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if not isinstance(recorded, dict):
        return options
    chosen = options.with_recorded(recorded)
    flags = " ".join((["--diopi-include", str(chosen.diopi_include)] if chosen.diopi_include else [])
                     + chosen.flags()) or "no options"
    click.echo(f"{tree.name}: checking with the options of its manifest.json and the command line: {flags}")
    return chosen


def _check(out_root: Path, rendered: dict[str, dict[str, str]], chosen: dict[str, pipeline.Options],
           all_vendors: bool, show_diff: bool, prefix: list[str], out_args: list[str]) -> int:
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
    return 0
