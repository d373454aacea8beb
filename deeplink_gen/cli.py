"""The deeplink-gen command line: options and help text, nothing else; each
command's work is in deeplink_gen.commands on top of deeplink_gen.pipeline.
Bad input exits 1 with file:line:col messages, usage errors exit 2, and no
command ever prints a traceback for either."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from deeplink_gen.errors import ParseError, UserError


@dataclass
class Context:
    root: Path
    diopi_include: Path | None


def _fail(exc: UserError) -> None:
    for d in exc.diagnostics:
        click.echo(str(d), err=True)
    if any(d.loc is not None for d in exc.diagnostics):
        n = len(exc.diagnostics)
        click.echo(f"{n} error{'s' if n != 1 else ''}", err=True)
    sys.exit(1)


def _options(ctx: Context, torch_version: str | None, **choices):
    from deeplink_gen.interfaces.aten import installed_torch_version
    from deeplink_gen.model import TorchVersion
    from deeplink_gen.pipeline import Options

    if torch_version is None:
        version = installed_torch_version()
    else:
        try:
            version = TorchVersion.parse(torch_version)
        except ParseError:
            raise click.BadParameter(f"'{torch_version}' is not a version such as 2.13", param_hint="--torch-version")
    return Options(version, ctx.diopi_include, **choices)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("-C", "directory", type=click.Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="Run as if started in DIR: the workspace holding vendors/ and catalog/.")
@click.option("--diopi-include", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              envvar="DEEPLINK_GEN_DIOPI_INCLUDE",
              help="Read DIOPI prototypes from the proto headers in DIR (holding functions.h or diopi/functions.h) "
                   "instead of the bundled snapshot. Env: DEEPLINK_GEN_DIOPI_INCLUDE.")
@click.version_option(package_name="deeplink-gen")
@click.pass_context
def main(ctx: click.Context, directory: Path, diopi_include: Path | None) -> None:
    """Render DIPU/DIOPI vendor code from validated YAML.

    A workspace is a directory with vendors/<name>.yaml (one file per vendor)
    and catalog/*.yaml (the op catalog shared by all vendors). Output goes to
    generated/<vendor>/, laid out like the upstream DIPU/DIOPI trees.
    """
    ctx.obj = Context(directory, diopi_include)


@main.command()
@click.option("--vendor", "vendors", multiple=True, metavar="NAME",
              help="Validate only this vendor file (repeatable). Default: every vendor.")
@click.option("--torch-version", metavar="X.Y", help="Torch version for the catalog's torch gates "
              "(default: the installed torch).")
@click.pass_obj
def validate(ctx: Context, vendors: tuple[str, ...], torch_version) -> None:
    """Check vendor files and the op catalog.

    Runs the JSON Schemas, then checks that op names exist in the installed
    torch, calls name real arguments, and overrides refer to catalog ops.
    Every problem is printed as file:line:col: key.path: message; exit code 1
    if there is any.
    """
    from deeplink_gen import pipeline

    options = _options(ctx, torch_version)
    try:
        ws = pipeline.load_valid(ctx.root, list(vendors) or None, options)
    except UserError as exc:
        _fail(exc)
    click.echo(f"ok: {len(ws.catalog.names())} catalog ops, "
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
@click.option("--check", is_flag=True, help="Write nothing; exit 1 listing stale, missing and unexpected files and "
              "the command that renders them. Options not given are taken from each vendor's manifest.json, "
              "which records how its tree was rendered.")
@click.option("--diff", "show_diff", is_flag=True, help="With --check: also print a unified diff.")
@click.option("--shards", type=click.IntRange(1, 64), metavar="N",
              help="Split the kernels into N translation units that DIPU can compile in parallel: "
                   "AutoGenedKernels_0.cpp .. _<N-1>.cpp, each declaring the wrappers of other shards it calls; "
                   "an op's shard depends only on its name (stable hash). Default: the vendor file's defaults.shards, else 1 "
                   "(one AutoGenedKernels.cpp). AutoGenedKernels.cmake lists the files for DIPU's build.")
@click.option("--into", "into_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="DIR",
              help="Put one --vendor into the deeplink.framework checkout DIR (its root, holding dipu/): write the "
                   "rendered dipu/ files (those of dipu/third_party/DIOPI/ only if that submodule is populated) and "
                   "apply onboarding/dipu.patch. Running it again changes nothing; a tree the edits do not fit is "
                   "refused. Writes nothing under generated/.")
@click.option("--force", is_flag=True, help="With --into: also write into a tree the edits do not fit, applying "
              "those that fit and listing the others.")
@click.pass_obj
def render(ctx: Context, vendors, all_vendors, autocompare, torch_version, out_dir, allow_outside_workspace,
           check, show_diff, shards, into_dir, force) -> None:
    """Render generated/<vendor>/ for the chosen vendors, or (--into) put one
    vendor into a DIPU checkout.

    Files are written only when their content changed, through a staging
    directory that is swapped into place, so an interrupted render leaves the
    previous tree intact. Output is byte-identical from run to run.
    """
    from deeplink_gen.commands import render as command

    if bool(vendors) == bool(all_vendors):
        raise click.UsageError("give --vendor NAME (repeatable) or --all")
    if show_diff and not check:
        raise click.UsageError("--diff goes with --check")
    if force and into_dir is None:
        raise click.UsageError("--force goes with --into")
    if into_dir is not None:
        if all_vendors or len(vendors) != 1:
            raise click.UsageError("--into takes exactly one --vendor: a checkout holds one vendor's kernels")
        if check or out_dir is not None or allow_outside_workspace:
            raise click.UsageError("--into does not combine with --check, --out or --allow-outside-workspace")
        from deeplink_gen.commands import into

        options = _options(ctx, torch_version, autocompare=autocompare, shards=shards)
        try:
            code = into.run(ctx.root, vendors[0], options, into_dir, force)
        except UserError as exc:
            _fail(exc)
        sys.exit(code)
    if out_dir is not None and not allow_outside_workspace and not check:
        root = ctx.root.resolve()
        if root != out_dir.resolve() and root not in out_dir.resolve().parents:
            raise click.UsageError(f"--out {out_dir} is outside the workspace {ctx.root}; "
                                   "add --allow-outside-workspace if that is what you want")
    options = _options(ctx, torch_version, autocompare=autocompare, shards=shards)
    out_root = out_dir if out_dir is not None else ctx.root / "generated"
    prefix = ["deeplink-gen"] + ([] if ctx.root == Path(".") else ["-C", str(ctx.root)])
    out_args = [] if out_dir is None else ["--out", str(out_dir), "--allow-outside-workspace"]
    try:
        code = command.run(ctx.root, None if all_vendors else list(vendors), options, out_root,
                           check=check, show_diff=show_diff, prefix=prefix, out_args=out_args)
    except UserError as exc:
        _fail(exc)
    sys.exit(code)


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
    from deeplink_gen.commands import explain as command

    options = _options(ctx, torch_version, autocompare=autocompare, shards=shards)
    try:
        lines = command.run(ctx.root, op, vendor, options)
    except UserError as exc:
        _fail(exc)
    click.echo("\n".join(lines))


@main.command("diopi-snapshot")
@click.option("--include", "include", required=True, type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="DIOPI proto headers: DIR holds functions.h (or diopi/functions.h).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Snapshot to write (default: the bundled deeplink_gen/interfaces/data/diopi_prototypes.yaml).")
@click.option("--commit", default="unknown", show_default=True, metavar="HASH",
              help="The DIOPI commit the headers come from (recorded as diopi_commit).")
def diopi_snapshot(include: Path, out: Path | None, commit: str) -> None:
    """Refresh the DIOPI prototype snapshot from DIOPI's proto headers.

    Parses every DIOPI_API declaration of functions.h, functions_ext.h,
    functions_lmdeploy.h, functions_mmcv.h and functions_sparse.h (multi-line
    declarations, comments, const handles, pointer-to-handle outputs) and
    writes them sorted by name; the file is rewritten only if it changed.
    """
    from deeplink_gen.commands import diopi_snapshot as command

    try:
        click.echo(command.run(include, out, commit))
    except UserError as exc:
        _fail(exc)


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
@click.pass_obj
def import_dipu_cmd(ctx: Context, functions, convert_configs, vendors, out_dir, torch_version, force) -> None:
    """Migrate DIPU's op config into a deeplink-gen workspace.

    Applies DIPU's device and torch_ver filters for the named vendors, turns
    each entry into a catalog entry (custom code byte for byte), device
    filters into vendor enable/disable overrides and convert_config layouts
    into per-op memory_format settings. Problems of the upstream file are
    printed as file:line: warning: ..., each fixed or its entry skipped. The
    result passes `deeplink-gen -C DIR validate`.
    """
    from deeplink_gen.commands.import_dipu import import_dipu

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
    existing += [p for p in (out_dir / "deeplink-gen.yaml",) if p.is_file()]
    if existing and not force:
        raise click.UsageError(f"{out_dir} already holds a workspace ({existing[0]}); use --force to overwrite")
    options = _options(ctx, torch_version)
    try:
        result = import_dipu(functions, configs, names, out_dir, options)
    except UserError as exc:
        _fail(exc)
    for p in existing:
        if str(p) not in result.files:
            p.unlink()
    for n in result.notes:
        click.echo(str(n), err=True)
    click.echo(f"imported {len(result.ops)} ops for {', '.join(result.vendors)} into {out_dir} "
               f"({len(result.notes)} warning{'s' if len(result.notes) != 1 else ''})")


@main.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.pass_obj
def init(ctx: Context, directory: Path | None) -> None:
    """Make DIRECTORY (default: the -C workspace) a deeplink-gen workspace.

    Creates vendors/, schemas/ (the JSON Schemas vendor files name on their
    first line, refreshed on every run), deeplink-gen.yaml (workspace
    settings), .vscode/settings.json (editor schema association), a CI
    workflow (.github/workflows/deeplink-gen.yml) and a pre-commit
    configuration, both running `deeplink-gen render --all --check`. Files
    that already exist are kept, except the schemas. The op catalog ships
    with deeplink-gen; catalog/*.yaml in the workspace adds to it.
    """
    from deeplink_gen.commands.init import init as command

    root = directory if directory is not None else ctx.root
    try:
        result = command(root)
    except UserError as exc:
        _fail(exc)
    for label, items in (("created", result.created), ("refreshed", result.refreshed), ("kept", result.kept)):
        for item in items:
            click.echo(f"{label:9} {root / item}")
    cd = "" if root == Path(".") else f" -C {root}"
    click.echo(f"next: deeplink-gen{cd} new-vendor NAME   (or: new-vendor NAME --like droplet)")


@main.command("new-vendor")
@click.argument("name")
@click.option("--like", metavar="VENDOR", help="Start from vendors/VENDOR.yaml, or from the example of that name "
              "that ships with deeplink-gen (camb, ascend, droplet); comments kept, identity changed, its "
              "vendors/VENDOR/ sources copied too.")
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
    from deeplink_gen.commands.new_vendor import new_vendor, next_steps

    if like is not None and runtime_prefix is not None:
        raise click.UsageError("--like and --runtime-prefix do not combine (--like copies that vendor's runtime)")
    try:
        result = new_vendor(ctx.root, name, like=like, device_type=device_type, runtime_prefix=runtime_prefix,
                            with_sources=with_sources, force=force)
    except UserError as exc:
        _fail(exc)
    cd = "" if ctx.root == Path(".") else f" -C {ctx.root}"
    click.echo(next_steps(result, cd), nl=False)


if __name__ == "__main__":
    main()
