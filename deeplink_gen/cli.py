"""The deeplink-gen command line. Bad input exits 1 with file:line:col
messages, usage errors exit 2, and no command ever prints a traceback for
either."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from deeplink_gen.errors import UserError


class Context:
    def __init__(self, root: Path):
        self.root = root


def _fail(exc: UserError) -> None:
    for d in exc.diagnostics:
        click.echo(f"{d.loc}: error: {d.path}: {d.message}", err=True)
    n = len(exc.diagnostics)
    click.echo(f"{n} error{'s' if n != 1 else ''}", err=True)
    sys.exit(1)


def _torch_version(text: str | None):
    from deeplink_gen.aten import installed_torch_version
    from deeplink_gen.model import TorchVersion

    if text is None:
        return installed_torch_version()
    try:
        return TorchVersion.parse(text)
    except ValueError:
        raise click.BadParameter(f"'{text}' is not a version such as 2.13", param_hint="--torch-version")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("-C", "directory", type=click.Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="Run as if started in DIR: the workspace holding vendors/ and catalog/.")
@click.option("--diopi-include", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              envvar="DEEPLINK_GEN_DIOPI_INCLUDE", expose_value=False, callback=lambda c, p, v: _use_diopi_include(v),
              help="Read DIOPI prototypes from the proto headers in DIR (holding functions.h or diopi/functions.h) "
                   "instead of the bundled snapshot. Env: DEEPLINK_GEN_DIOPI_INCLUDE.")
@click.version_option(package_name="deeplink-gen")
@click.pass_context
def main(ctx: click.Context, directory: Path) -> None:
    """Render DIPU/DIOPI vendor code from validated YAML.

    A workspace is a directory with vendors/<name>.yaml (one file per vendor)
    and catalog/*.yaml (the op catalog shared by all vendors). Output goes to
    generated/<vendor>/, laid out like the upstream DIPU/DIOPI trees.
    """
    ctx.obj = Context(directory)


def _use_diopi_include(include: Path | None) -> None:
    from deeplink_gen import diopi_api

    diopi_api.use_headers(include)


def _load(ctx: Context, vendors: tuple[str, ...] | None):
    from deeplink_gen import workspace

    try:
        return workspace.load(ctx.root, list(vendors) if vendors else None)
    except UserError as exc:
        _fail(exc)


@main.command()
@click.option("--vendor", "vendors", multiple=True, metavar="NAME",
              help="Validate only this vendor file (repeatable). Default: every vendor.")
@click.pass_obj
def validate(ctx: Context, vendors: tuple[str, ...]) -> None:
    """Check vendor files and the op catalog.

    Runs the JSON Schemas, then checks that op names exist in the installed
    torch, calls name real arguments, and overrides refer to catalog ops.
    Every problem is printed as file:line:col: key.path: message; exit code 1
    if there is any.
    """
    ws = _load(ctx, vendors)
    click.echo(f"ok: {len(ws.catalog.entries)} catalog ops, "
               f"{len(ws.vendors)} vendor{'s' if len(ws.vendors) != 1 else ''} "
               f"({', '.join(v.name for v in ws.vendors)})")


@main.command()
@click.option("--vendor", "vendors", multiple=True, metavar="NAME", help="Render this vendor (repeatable).")
@click.option("--all", "all_vendors", is_flag=True, help="Render every vendor in vendors/.")
@click.option("--autocompare/--no-autocompare", default=None,
              help="Emit the CPU-comparison twin for every op whose catalog entry allows it "
                   "(default: the vendor file decides).")
@click.option("--torch-version", metavar="X.Y", help="Torch version for the catalog's torch gates "
              "(default: the installed torch). Signatures always come from the installed torch.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Output root (default: <workspace>/generated).")
@click.option("--allow-outside-workspace", is_flag=True,
              help="Allow --out to point outside the workspace (e.g. straight into a DIPU checkout).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 listing stale, missing and unexpected files.")
@click.option("--diff", "show_diff", is_flag=True, help="With --check: also print a unified diff.")
@click.option("--shards", type=click.IntRange(1, 64), metavar="N",
              help="Split the kernels into N translation units that DIPU can compile in parallel: "
                   "AutoGenedKernels_0.cpp .. _<N-1>.cpp, each declaring the wrappers of other shards it calls; "
                   "an op's shard depends only on its name (stable hash). Default: the vendor file's defaults.shards, else 1 "
                   "(one AutoGenedKernels.cpp, as DIPU's build expects).")
@click.pass_obj
def render(ctx: Context, vendors, all_vendors, autocompare, torch_version, out_dir, allow_outside_workspace,
           check, show_diff, shards) -> None:
    """Render generated/<vendor>/ for the chosen vendors.

    Files are written only when their content changed, through a staging
    directory that is swapped into place, so an interrupted render leaves the
    previous tree intact. Output is byte-identical from run to run.
    """
    from deeplink_gen import stamps, writer
    from deeplink_gen.paths import vendor_files

    if bool(vendors) == bool(all_vendors):
        raise click.UsageError("give --vendor NAME (repeatable) or --all")
    if show_diff and not check:
        raise click.UsageError("--diff goes with --check")
    version = _torch_version(torch_version)
    out_root = out_dir if out_dir is not None else ctx.root / "generated"
    if out_dir is not None and not allow_outside_workspace and not check:
        root = ctx.root.resolve()
        if root != out_dir.resolve() and root not in out_dir.resolve().parents:
            raise click.UsageError(f"--out {out_dir} is outside the workspace {ctx.root}; "
                                   "add --allow-outside-workspace if that is what you want")
    report = writer.Report()
    from deeplink_gen import diopi_api

    include = diopi_api.header_dir()
    options = {"autocompare": autocompare, "torch": str(version), "diopi_include": include and str(include),
               "shards": shards}
    names = [p.stem for p in vendor_files(ctx.root)] if all_vendors else list(vendors)
    digests = {n: stamps.input_digest(ctx.root, n, options) for n in names} if not check else {}
    current = {n: stamps.fresh(out_root, n, digests[n]) for n in digests}
    if names and not check and all(current.get(n) is not None for n in names):
        count = sum(len(files) for files in current.values())
        click.echo(f"0 written, {count} unchanged, 0 removed ({', '.join(names)})")
        return
    from deeplink_gen.render.vendor import render_vendor
    from deeplink_gen.resolve import resolve

    ws = _load(ctx, None if all_vendors else vendors)
    rendered = {}
    try:
        for v in ws.vendors:
            rv = resolve(ws, v, version, {"autocompare": autocompare, "shards": shards})
            rendered[v.name] = render_vendor(rv, ws.rel(v.path))
    except UserError as exc:
        _fail(exc)
    if check:
        for name, files in rendered.items():
            writer.check_tree(out_root / name, files, name, report, show_diff)
        if all_vendors and out_root.is_dir():
            for extra in sorted(p.name for p in out_root.iterdir() if p.is_dir() and p.name not in rendered
                                and not p.name.startswith(".")):
                report.unexpected.append(f"{extra}/")
        for text in report.diffs:
            click.echo(text, nl=False)
        for label, items in (("stale", report.stale), ("missing", report.missing),
                             ("unexpected", report.unexpected)):
            for item in items:
                click.echo(f"{label}: {item}", err=True)
        if not report.clean:
            click.echo(f"generated files are out of date; run: deeplink-gen render "
                       f"{'--all' if all_vendors else ' '.join('--vendor ' + n for n in rendered)}", err=True)
            sys.exit(1)
        click.echo(f"up to date: {len(report.unchanged)} files")
        return
    writer.recover(out_root)
    for name, files in rendered.items():
        writer.write_tree(out_root, name, files, report)
    stamps.record(out_root, {name: (digests.get(name), files) for name, files in rendered.items()})
    click.echo(f"{len(report.written)} written, {len(report.unchanged)} unchanged, "
               f"{len(report.removed)} removed ({', '.join(rendered)})")


@main.command()
@click.argument("op")
@click.option("--vendor", required=True, metavar="NAME", help="The vendor whose settings to explain.")
@click.option("--autocompare/--no-autocompare", default=None, help="As for render.")
@click.option("--torch-version", metavar="X.Y", help="As for render.")
@click.option("--shards", type=click.IntRange(1, 64), metavar="N", help="As for render.")
@click.pass_obj
def explain(ctx: Context, op: str, vendor: str, autocompare, torch_version, shards) -> None:
    """Show how OP is rendered for a vendor, and where each setting came from.

    Precedence: command line > vendor op override > vendor default > catalog >
    built-in default; a catalog entry marking an op as not comparable, without
    CPU fallback or without device guard always wins.
    """
    from deeplink_gen.errors import did_you_mean
    from deeplink_gen.resolve import resolve
    from deeplink_gen.signature import wrapper_name

    version = _torch_version(torch_version)
    ws = _load(ctx, (vendor,))
    rv = resolve(ws, ws.vendor(vendor), version, {"autocompare": autocompare, "shards": shards})
    found = next((r for r in rv.ops if r.op == op), None)
    if found is None:
        skipped = next((s for s in rv.skipped if s.op == op), None)
        if skipped is not None:
            click.echo(f"{op}: not rendered: {skipped.reason}")
            return
        click.echo(f"error: '{op}' is not in the op catalog{did_you_mean(op, ws.catalog.names())}", err=True)
        sys.exit(1)
    e = found.entry
    click.echo(f"{op}  ({e.loc})")
    click.echo(f"  {'schema':16}{found.aten.schema}")
    click.echo(f"  {'wrapper':16}{wrapper_name(op)}")
    click.echo(f"  {'DIOPI call':16}{e.call}")
    if found.replaced is not None:
        click.echo(f"  {'definition':16}vendor replace ({e.loc}), instead of the catalog's ({found.replaced.loc})")
    else:
        click.echo(f"  {'definition':16}catalog ({e.loc})")
    if found.enabled.value:
        from deeplink_gen.render.kernels import shard_of, shard_paths
        count = int(rv.shards.value)
        index = shard_of(op, count)
        click.echo(f"  {'shard':16}{index} of {count}: {shard_paths(count)[index].rsplit('/', 1)[-1]}"
                   f" (shards: {rv.shards.describe().split(' ', 1)[1].strip()})")
    click.echo(f"  {'enabled':16}{found.enabled.describe()}")
    for name, s in found.settings:
        click.echo(f"  {name:16}{s.describe()}")
    if found.memory_format is not None and any("PREFERRED_MEMORY_FORMAT_PLACEHOLDER" in t.value for _, t in e.code):
        click.echo(f"  {'memory_format':16}{found.memory_format.describe()}")
    for label, located in (("dummy_call", e.dummy_call), ("custom_fallback", e.custom_fallback),
                           ("force_fallback", e.force_fallback)):
        if located is not None:
            click.echo(f"  {label:16}{str(located.value).lower():5} from catalog ({located.loc})")
    for hook, text in e.code:
        lines = text.value.count("\n") + (0 if text.value.endswith("\n") else 1)
        click.echo(f"  code.{hook:11}{lines} line{'s' if lines != 1 else ''} of C++ ({text.loc})")
    for label, names in (("locals", e.locals), ("ins", [n + ("?" if o else "") for n, o in e.ins]),
                         ("outs", e.outs), ("no_device_check", e.no_device_check)):
        if names:
            click.echo(f"  {label:16}{', '.join(names)}")
    if e.autograd is not None:
        ag = e.autograd
        forward = ag.forward.value if ag.forward is not None else op
        click.echo(f"  {'autograd':16}forward {forward}, backward {ag.backward.value}"
                   f"{', saves ' + ', '.join(ag.saved) if ag.saved else ''} ({ag.loc})")


@main.command("diopi-snapshot")
@click.option("--include", "include", required=True, type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="DIOPI proto headers: DIR holds functions.h (or diopi/functions.h).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Snapshot to write (default: the bundled deeplink_gen/data/diopi_prototypes.yaml).")
@click.option("--commit", default="unknown", show_default=True, metavar="HASH",
              help="The DIOPI commit the headers come from (recorded as diopi_commit).")
def diopi_snapshot(include: Path, out: Path | None, commit: str) -> None:
    """Refresh the DIOPI prototype snapshot from DIOPI's proto headers.

    Parses every DIOPI_API declaration of functions.h, functions_ext.h,
    functions_lmdeploy.h, functions_mmcv.h and functions_sparse.h (multi-line
    declarations, comments, const handles, pointer-to-handle outputs) and
    writes them sorted by name; the file is rewritten only if it changed.
    """
    from deeplink_gen import diopi_api
    from deeplink_gen.errors import display_path

    try:
        protos = diopi_api.from_headers(include, commit)
        text = diopi_api.snapshot_text(protos, display_path(str(include)))
    except UserError as exc:
        _fail(exc)
    target = out if out is not None else diopi_api.SNAPSHOT
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        click.echo(f"unchanged: {display_path(str(target))} ({len(protos.functions)} functions)")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    click.echo(f"wrote {display_path(str(target))}: {len(protos.functions)} functions, "
               f"{len(protos.runtime_functions)} runtime functions")


@main.command("import-dipu")
@click.option("--functions", "functions", required=True, type=click.Path(dir_okay=False, path_type=Path),
              metavar="PATH", help="DIPU's diopi_functions.yaml.")
@click.option("--convert-config", "convert_configs", multiple=True, metavar="VENDOR=PATH",
              help="A DIOPI impl/<vendor>/convert_config.yaml; its layouts decide the memory-format "
                   "placeholders of that vendor (repeatable).")
@click.option("--vendors", required=True, metavar="A,B,...", help="DIPU vendor names to write vendor files for.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="The workspace to write (catalog/dipu.yaml and vendors/<name>.yaml).")
@click.option("--torch-version", metavar="X.Y.Z", help="Torch version for torch_ver filters "
              "(default: the installed torch).")
@click.option("--force", is_flag=True, help="Overwrite the files of an existing workspace at DIR.")
def import_dipu_cmd(functions, convert_configs, vendors, out_dir, torch_version, force) -> None:
    """Migrate DIPU's op config into a deeplink-gen workspace.

    Applies DIPU's device and torch_ver filters for the named vendors, turns
    each entry into a catalog entry (custom code byte for byte), device
    filters into vendor enable/disable overrides and convert_config layouts
    into per-op memory_format settings. Problems of the upstream file are
    printed as file:line: warning: ..., each fixed or its entry skipped. The
    result passes `deeplink-gen -C DIR validate`.
    """
    from deeplink_gen.importers.dipu import import_dipu

    names = [v.strip() for v in vendors.split(",") if v.strip()]
    if not names or any(not v.isidentifier() or v != v.lower() for v in names):
        raise click.BadParameter("expected lower-case vendor names such as camb,ascend,droplet",
                                 param_hint="--vendors")
    configs = {}
    for item in convert_configs:
        vendor, sep, path = item.partition("=")
        if not sep or vendor not in names:
            raise click.BadParameter(f"'{item}' is not VENDOR=PATH for one of {', '.join(names)}",
                                     param_hint="--convert-config")
        configs[vendor] = Path(path)
    existing = [p for sub in ("catalog", "vendors") for p in sorted((out_dir / sub).glob("*.yaml"))]
    if existing and not force:
        raise click.UsageError(f"{out_dir} already holds a workspace ({existing[0]}); use --force to overwrite")
    if force:
        for p in existing:
            p.unlink()
    version = _torch_version(torch_version)
    try:
        result = import_dipu(functions, configs, names, out_dir, version)
    except UserError as exc:
        _fail(exc)
    for n in result.notes:
        click.echo(str(n), err=True)
    click.echo(f"imported {len(result.ops)} ops for {', '.join(result.vendors)} into {out_dir} "
               f"({len(result.notes)} warning{'s' if len(result.notes) != 1 else ''})")


@main.command("new-vendor")
@click.argument("name")
@click.option("--like", metavar="VENDOR", help="Start from vendors/VENDOR.yaml (comments kept, identity changed; "
              "its vendors/VENDOR/ sources are copied too).")
@click.option("--device-type", metavar="ENUM", help="The VendorDeviceType enumerator (default: NAME upper-cased).")
@click.option("--runtime-prefix", metavar="PREFIX", help="Pre-fill the device runtime with CUDA-style calls "
              "using PREFIX (tang: tangStreamCreate, tangMalloc, ...). Default: every function unsupported.")
@click.option("--with-sources", is_flag=True, help="Also create vendors/NAME/ for hand-written files, which "
              "render copies into DIPU's vendor folder.")
@click.option("--force", is_flag=True, help="Replace an existing vendors/NAME.yaml.")
@click.pass_obj
def new_vendor_cmd(ctx: Context, name: str, like, device_type, runtime_prefix, with_sources, force) -> None:
    """Scaffold vendors/NAME.yaml: a vendor file that validates, renders and
    compiles right away, with every section explained in comments.

    NAME is a lower-case C identifier. Nothing is written when anything is
    wrong; on success the next steps are printed (what to fill in, the
    render command, the DIPU edits outside the vendor folder, the build and
    the first test).
    """
    from deeplink_gen.scaffold import ScaffoldError, new_vendor, next_steps

    if like is not None and runtime_prefix is not None:
        raise click.UsageError("--like and --runtime-prefix do not combine (--like copies that vendor's runtime)")
    try:
        result = new_vendor(ctx.root, name, like=like, device_type=device_type, runtime_prefix=runtime_prefix,
                            with_sources=with_sources, force=force)
    except ScaffoldError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except UserError as exc:
        _fail(exc)
    cd = "" if ctx.root == Path(".") else f" -C {ctx.root}"
    click.echo(next_steps(result, cd), nl=False)


if __name__ == "__main__":
    main()
