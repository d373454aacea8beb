"""The deeplink-gen command line: options, help text and the usage checks
between options; each command parses its arguments and calls its function in
deeplink_gen.commands, which does the work on top of deeplink_gen.pipeline
(this module reads and writes no file). Bad input exits 1 with file:line:col
messages, usage errors exit 2, and no command ever prints a traceback for
either."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deeplink_gen.input_paths import shipped_torch_snapshots

if TYPE_CHECKING:
    from deeplink_gen.errors import UserError


class Invocation:
    """What deeplink-gen's own options (before the command) say: the workspace and DIOPI's headers."""

    def __init__(self, root: Path, diopi_include: Path | None) -> None:
        self.root = root
        self.diopi_include = diopi_include


class _Path(click.Path):
    """click.Path that refuses an empty value, which Path("") would read as the current folder."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not value:
            self.fail("is empty: give a path ('.' for the current folder)", param, ctx)
        return super().convert(value, param, ctx)


def _fail(exc: UserError) -> None:
    from deeplink_gen.errors import count, shown

    for line in shown(exc.diagnostics):
        click.echo(line, err=True)
    if any(d.loc is not None for d in exc.diagnostics):
        errors = sum(d.is_error for d in exc.diagnostics)
        warnings = len(exc.diagnostics) - errors
        click.echo(count(errors, "error") + (f", {count(warnings, 'warning')}" if warnings else ""), err=True)
    sys.exit(1)


def _reader_gone() -> None:
    """Standard output was closed by its reader (`deeplink-gen explain | head`):
    the command ends as a program killed by SIGPIPE would, exit 141, and
    prints nothing; what is still buffered goes to the null device, so the
    flush at exit cannot fail again."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    sys.exit(141)


class _Group(click.Group):
    """The command group: a command's UserError is printed as its diagnostics,
    exit 1; so is a file-system error no command expected (a disk full, a
    folder made read-only under it), by the path and the system's reason.
    A reader that stops reading is no error (see _reader_gone)."""

    def make_context(self, *args, **kwargs) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:
            _reader_gone()

    def invoke(self, ctx: click.Context):
        from deeplink_gen.errors import Diagnostic, UserError

        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _reader_gone()
        except UserError as exc:
            _fail(exc)
        except OSError as exc:
            where = None if exc.filename is None else os.fsencode(exc.filename).decode("utf-8", "backslashreplace")
            _fail(UserError([Diagnostic(None, where, f"{exc.strerror or exc}")]))


def _request(ctx: Invocation, vendors, out: Path | None = None, **options):
    """What the command asks of the workspace: *vendors* (empty: all) and the options of its command line."""
    from deeplink_gen.options import Options
    from deeplink_gen.request import Request

    request = Request(ctx.root, tuple(vendors) or None, Options(diopi_include=ctx.diopi_include, **options), out)
    _refuse_cache_among(request)
    return request


def _refuse_cache_among(request) -> None:
    """Refuse a cache folder inside the workspace's input folders (its entries would become
    inputs, new at every run) or inside the folder a render replaces as a whole, and a
    workspace or output folder inside the cache folder (the cache deletes what it finds in
    its store when it grows too large)."""
    from deeplink_gen import cache
    from deeplink_gen.errors import display_path
    from deeplink_gen.input_paths import cache_dir

    if not cache.enabled():
        return
    store = cache_dir().resolve()
    places = [(request.root / name, "holds the workspace's inputs") for name in ("vendors", "catalog", "schemas")]
    for folder, what in [*places, (request.out_root, "a render writes")]:
        folder = folder.resolve()
        if store == folder or folder in store.parents:
            raise click.UsageError(f"the cache folder {display_path(str(store))} (DEEPLINK_GEN_CACHE_DIR, else "
                                   f"$XDG_CACHE_HOME) is inside {display_path(str(folder))}, which {what}; "
                                   "point DEEPLINK_GEN_CACHE_DIR elsewhere, or set DEEPLINK_GEN_NO_CACHE=1")
    for folder, what in ((request.root, "workspace"), (request.out_root, "output folder")):
        folder = folder.resolve()
        if store == folder or store in folder.parents:
            raise click.UsageError(f"the {what} {display_path(str(folder))} is inside the cache folder "
                                   f"{display_path(str(store))} (DEEPLINK_GEN_CACHE_DIR, else $XDG_CACHE_HOME), "
                                   "whose entries the cache deletes as it grows; point DEEPLINK_GEN_CACHE_DIR "
                                   "elsewhere, or set DEEPLINK_GEN_NO_CACHE=1")


# The torch versions an op table ships for, as the help texts list them.
_SHIPPED = ", ".join(shipped_torch_snapshots())

_STRICT_HELP = ("Treat warnings as errors: exit 1 when validation warns (the warnings are printed either way), "
                "before anything is written.")

_TORCH_VERSION_HELP = ("Check against torch X.Y[.Z]: the installed torch when it is that version, else the op table "
                       f"shipped for it ({_SHIPPED}; X.Y picks the newest X.Y.*). Its version decides "
                       "torch: gates. Default: deeplink-gen.yaml's torch, else the installed torch.")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("-C", "directory", type=_Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="The workspace: the folder holding vendors/ and catalog/. Other paths of the command "
                   "line (--out, --baseline, ...) are taken from the current folder, as the shell completes them.")
@click.option("--diopi-include", type=_Path(file_okay=False, path_type=Path), metavar="DIR",
              envvar="DEEPLINK_GEN_DIOPI_INCLUDE",
              help="Read DIOPI prototypes from the proto headers in DIR (holding functions.h or diopi/functions.h) "
                   "instead of the bundled snapshot. Env: DEEPLINK_GEN_DIOPI_INCLUDE.")
@click.version_option(package_name="deeplink-gen")
@click.pass_context
def main(ctx: click.Context, directory: Path, diopi_include: Path | None) -> None:
    """Render DIPU/DIOPI vendor code from validated YAML.

    A workspace is a directory with deeplink-gen.yaml (its settings: `init`
    makes it), vendors/<name>.yaml (one file per vendor) and, if it adds ops
    to the op catalog that ships with deeplink-gen, catalog/*.yaml. Output
    goes to generated/<vendor>/, laid out like the upstream DIPU/DIOPI trees.

    Results are stored under DEEPLINK_GEN_CACHE_DIR (default:
    $XDG_CACHE_HOME/deeplink-gen, else ~/.cache/deeplink-gen), keyed by the
    content of every input; deleting it is always safe, and
    DEEPLINK_GEN_NO_CACHE=1 stores and reuses nothing.
    """
    ctx.obj = Invocation(directory, diopi_include)


@main.command()
@click.option("--vendor", "vendors", multiple=True, metavar="NAME",
              help="Validate only this vendor file (repeatable). Default: every vendor.")
@click.option("--torch-version", metavar="X.Y[.Z]", help=_TORCH_VERSION_HELP)
@click.option("--strict", is_flag=True, help=_STRICT_HELP)
@click.pass_obj
def validate(ctx: Invocation, vendors: tuple[str, ...], torch_version, strict) -> None:
    """Check vendor files and the op catalog.

    Runs the JSON Schemas, then checks that op names exist in the torch the
    workspace renders for (deeplink-gen.yaml's torch:, read from the installed
    torch when it is that version, else from the op table shipped for it;
    without one, the installed torch), calls name real arguments, and
    overrides refer to catalog ops.
    Every problem is printed as file:line:col: error: key.path: message; exit
    code 1 if there is any. A warning (file:line:col: warning: ...) is valid
    input that cannot work as written, such as eventElapsedTime defined while
    createEvent disables timing; it is printed on every run and exits 0
    unless --strict is given.
    """
    from deeplink_gen.commands.validate import main as command

    sys.exit(command(_request(ctx, vendors, torch_version=torch_version), strict))


@main.command()
@click.option("--vendor", "vendors", multiple=True, metavar="NAME", help="Render this vendor (repeatable).")
@click.option("--all", "all_vendors", is_flag=True, help="Render every vendor in vendors/.")
@click.option("--autocompare/--no-autocompare", default=None,
              help="Emit the CPU-comparison twin for every op whose catalog entry allows it "
                   "(default: the vendor file decides).")
@click.option("--torch-version", metavar="X.Y[.Z]", help="Render for torch X.Y[.Z]: with the installed torch when it "
              f"is that version, else with the op table shipped for it ({_SHIPPED}), byte for byte "
              "what that torch installed would render. Default: deeplink-gen.yaml's torch, else the installed torch; "
              "a version other than deeplink-gen.yaml's is an error.")
@click.option("--out", "out_dir", type=_Path(file_okay=False, path_type=Path), metavar="DIR",
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
                   "an op's shard depends only on its name (stable hash). Default: the vendor file's "
                   "defaults.shards, else 2 (1: one AutoGenedKernels.cpp, as DIPU's own generator writes). "
                   "AutoGenedKernels.cmake lists the files for DIPU's build.")
@click.option("--into", "into_dir", type=_Path(exists=True, file_okay=False, path_type=Path), metavar="DIR",
              help="Put one --vendor into the deeplink.framework checkout DIR (its root, holding dipu/): write the "
                   "rendered dipu/ files (those of dipu/third_party/DIOPI/ only if that submodule is populated) and "
                   "apply onboarding/dipu.patch. Running it again changes nothing; a tree the edits do not fit is "
                   "refused. Writes nothing under generated/.")
@click.option("--force", is_flag=True, help="With --into: also write into a tree the edits do not fit, applying "
              "those that fit and listing the others.")
@click.option("--strict", is_flag=True, help=_STRICT_HELP)
@click.pass_obj
def render(ctx: Invocation, vendors, all_vendors, autocompare, torch_version, out_dir, allow_outside_workspace,
           check, show_diff, shards, into_dir, force, strict) -> None:
    """Render generated/<vendor>/ for the chosen vendors, or (--into) put one
    vendor into a DIPU checkout.

    Files are written only when their content changed, through a staging
    directory that is swapped into place, so an interrupted render leaves the
    previous tree intact. Output is byte-identical from run to run. The
    workspace is validated first; its warnings are printed as validate prints
    them (also when nothing needs rendering) and do not stop the render
    unless --strict is given.
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

        request = _request(ctx, vendors, autocompare=autocompare, shards=shards, torch_version=torch_version)
        sys.exit(into.run(request, into_dir, force, strict))
    if out_dir is not None:
        command.refuse_out(ctx.root, out_dir, allow_outside_workspace, check)
    request = _request(ctx, () if all_vendors else vendors, out_dir,
                       autocompare=autocompare, shards=shards, torch_version=torch_version)
    sys.exit(command.main(request, check=check, show_diff=show_diff, strict=strict))


_OP_NAME = re.compile(r"[A-Za-z_]\w*(?:\.\w+)?", re.ASCII)


@main.command()
@click.argument("op", required=False)
@click.option("--vendor", required=True, metavar="NAME", help="The vendor whose settings to explain.")
@click.option("--autocompare/--no-autocompare", default=None, help="As for render.")
@click.option("--torch-version", metavar="X.Y[.Z]", help="As for validate: the installed torch or a shipped op table.")
@click.option("--shards", type=click.IntRange(1, 64), metavar="N", help="As for render.")
@click.pass_obj
def explain(ctx: Invocation, op: str | None, vendor: str, autocompare, torch_version, shards) -> None:
    """Show how OP is rendered for a vendor, and where each setting came from;
    without OP, list every op of the vendor, one per line: whether it is
    enabled and registered, its DIOPI function, and where its definition is.

    Precedence: command line > vendor op override > vendor default > catalog >
    built-in default; a fact of the op (a catalog entry marking it as not
    comparable, without CPU fallback or without device guard; no
    registration; a helper; a dummy call) always wins.
    """
    from deeplink_gen.commands import explain as command
    from deeplink_gen.errors import printable

    if op is not None and not _OP_NAME.fullmatch(op):
        raise click.BadParameter(f"'{printable(op)}' is not an op name: NAME or NAME.OVERLOAD, such as add.out",
                                 param_hint="OP")
    request = _request(ctx, [vendor], autocompare=autocompare, shards=shards, torch_version=torch_version)
    command.main(request, op)


@main.command()
@click.argument("logs", nargs=-1, type=_Path(exists=True, dir_okay=False, path_type=Path), metavar="[LOG]...")
@click.option("--torch-version", metavar="X.Y[.Z]", help="As for validate: the installed torch or a shipped op table.")
@click.pass_obj
def locate(ctx: Invocation, logs: tuple[Path, ...], torch_version) -> None:
    """Print compiler output (the LOG files, else standard input) with each
    place in an op's C++ from YAML given as a line of its file.

    The C++ a catalog or vendor entry gives an op is compiled from
    AutoGenedKernels*.pasted.inc under a #line that names the op's entry and
    counts from it: an error on the third line of add.out's entry in
    catalog/x.yaml reads "catalog/x.yaml:add.out:3:...", so that an edit
    elsewhere in the file renumbers no rendered line and recompiles nothing
    else. This writes it as "catalog/x.yaml:57:...", the line in the file as
    it is now:

        cmake --build build 2>&1 | deeplink-gen -C WORKSPACE locate
    """
    from deeplink_gen.commands import locate as command

    command.main(_request(ctx, (), torch_version=torch_version), logs)


def _libraries(root: Path, vendors: tuple[str, ...], impls: tuple[str, ...]) -> dict[str, Path]:
    """--impl [VENDOR=]PATH values by vendor; a bare PATH needs exactly one vendor."""
    from deeplink_gen.input_paths import vendor_files

    chosen = list(vendors) or [p.stem for p in vendor_files(root)]
    out: dict[str, Path] = {}
    for item in impls:
        name, sep, path = item.partition("=")
        if not (sep and name.isidentifier()):
            if len(chosen) != 1:
                raise click.BadParameter(f"'{item}': say whose library it is as VENDOR=PATH "
                                         f"(the report covers {', '.join(chosen) or 'no vendor'})", param_hint="--impl")
            name, path = chosen[0], item
        if not path:
            raise click.BadParameter(f"'{item}' names no path", param_hint="--impl")
        if name in out:
            raise click.BadParameter(f"{name} is given twice", param_hint="--impl")
        out[name] = Path(path)
    return out


@main.command()
@click.option("--vendor", "vendors", multiple=True, metavar="NAME",
              help="Report this vendor (repeatable). Default: every vendor, side by side.")
@click.option("--torch-version", metavar="X.Y[.Z]",
              help="Whose op table to cover: the installed torch when it is that version, else the op table "
                   f"shipped for it ({_SHIPPED}). Default: deeplink-gen.yaml's torch, else the "
                   "installed torch.")
@click.option("--autocompare/--no-autocompare", default=None,
              help="Resolve autocompare as render would with this flag (default: the vendor files decide).")
@click.option("--impl", "impls", multiple=True, metavar="[VENDOR=]PATH",
              help="The vendor's DIOPI library, to say which DIOPI functions it defines (repeatable, one per "
                   "vendor): a DIOPI impl/<vendor> folder, scanned as DIOPI's adaptor generator scans it (every "
                   "file below functions/ and functions_ext/), a shared library (read with nm -D), or a text "
                   "file of `nm -D` output or of one symbol per line. Without it that column says unknown.")
@click.option("--against", type=_Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="A workload's ops: one op name per line (# comments), or the CSV of DIPU's op capture tool "
                   "(dipu/scripts/op_capture). The report adds what each vendor would send to the CPU.")
@click.option("--baseline", type=_Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="An earlier `coverage --format json` report: list the ops registered then and not now, and "
                   "the DIOPI functions defined then and not now.")
@click.option("--fail-on-regression", is_flag=True,
              help="With --baseline: exit 1 when anything was lost (after writing the report).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown", "html"]), default="text",
              show_default=True, help="text: a summary with counts and percentages per category; json: every op "
                                      "for tools (also what --baseline reads); markdown: a summary for a pull-"
                                      "request comment; html: a self-contained page to sort and filter every op.")
@click.option("--out", "out", type=_Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the report to FILE (rewritten only if it changed) instead of printing it. A file already "
                   "there is replaced only if deeplink-gen wrote it: its top line says @generated by deeplink-gen.")
@click.pass_obj
def coverage(ctx: Invocation, vendors, torch_version, autocompare, impls, against, baseline, fail_on_regression, fmt,
             out) -> None:
    """Show how every ATen op of a torch reaches each vendor's device.

    One row per op of the torch's op table and per vendor: registered by this
    workspace (with its DIOPI function, whether the vendor's DIOPI library
    defines it, whether autocompare and the CPU-fallback block are possible,
    and the dtypes it takes after the vendor's dtype rules), registered by
    DIPU itself, served by a CompositeExplicitAutograd kernel, decomposed
    through CompositeImplicitAutograd, or left to DIPU's CPU fallback.
    """
    from deeplink_gen.commands import coverage as command

    if fail_on_regression and baseline is None:
        raise click.UsageError("--fail-on-regression goes with --baseline")
    asked = command.Asked(_libraries(ctx.root, vendors, impls), against, baseline)
    request = _request(ctx, vendors, torch_version=torch_version, autocompare=autocompare)
    sys.exit(command.main(request, asked, fmt, out, fail_on_regression))


@main.command()
@click.option("--from", "old", required=True, metavar="X.Y[.Z]",
              help="The torch the workspace works with now: the installed torch when it is that version, else "
                   f"the op table shipped for it ({_SHIPPED}; X.Y picks the newest X.Y.*).")
@click.option("--to", "new", required=True, metavar="X.Y[.Z]", help="The newer torch, chosen the same way.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
              help="text for the terminal, json for tools, markdown for a pull-request comment.")
@click.option("--out", "out", type=_Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the report to FILE (rewritten only if it changed) instead of printing it. A file already "
                   "there is replaced only if deeplink-gen wrote it: its top line says @generated by deeplink-gen.")
@click.pass_obj
def drift(ctx: Invocation, old: str, new: str, fmt: str, out: Path | None) -> None:
    """List what moving the workspace from one torch to a newer one changes.

    For every catalog entry and vendor replacement that applies to both
    versions: arguments renamed or retyped (int to SymInt included), defaults
    changed, arguments added, removed or made keyword-only, returns changed,
    the op removed; the custom snippets (call, code hooks, alloc, autograd
    code) that name a changed argument; overloads of the op's base name added
    or removed. An entry breaks when the newer torch removes its op, when its
    schema: no longer fits, or when its code names an argument torch renamed,
    removed or retyped; for each, the torch: gate that keeps it where it
    works is proposed. Exit 1 when an entry would break. The workspace is
    only loaded, not validated: it may be valid for one of the versions only.
    """
    from deeplink_gen.commands import drift as command

    sys.exit(command.main(ctx.root, old, new, fmt, out))


@main.command("diopi-snapshot")
@click.option("--include", "include", required=True, type=_Path(file_okay=False, path_type=Path),
              metavar="DIR", help="DIOPI proto headers: DIR holds functions.h (or diopi/functions.h).")
@click.option("--out", "out", type=_Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Snapshot to write (required unless --into-package).")
@click.option("--into-package", "into_package", is_flag=True,
              help="Instead of --out, refresh the file deeplink-gen ships (deeplink_gen/interfaces/data/diopi_prototypes.yaml); only from a source "
                   "checkout, never an installed package.")
@click.option("--commit", default="unknown", show_default=True, metavar="HASH",
              help="The DIOPI commit the headers come from (recorded as diopi_commit).")
def diopi_snapshot(include: Path, out: Path | None, into_package: bool, commit: str) -> None:
    """Refresh the DIOPI prototype snapshot from DIOPI's proto headers.

    Parses every DIOPI_API declaration of functions.h, functions_ext.h,
    functions_lmdeploy.h, functions_mmcv.h and functions_sparse.h (multi-line
    declarations, comments, const handles, pointer-to-handle outputs) and
    writes them sorted by name; the file is rewritten only if it changed.
    """
    from deeplink_gen.commands import diopi_snapshot as command

    click.echo(command.run(include, out, into_package, commit))


@main.command("dipu-link-snapshot")
@click.option("--build", "build", required=True, type=_Path(file_okay=False, exists=True, path_type=Path),
              metavar="DIR", help="A DIPU build directory (its object files are read with nm).")
@click.option("--out", "out", type=_Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Data to write (required unless --into-package).")
@click.option("--into-package", "into_package", is_flag=True,
              help="Instead of --out, refresh the file deeplink-gen ships (deeplink_gen/interfaces/data/dipu_link.json.gz); only from a source "
                   "checkout, never an installed package.")
@click.option("--source", "source", required=True, type=_Path(file_okay=False, exists=True, path_type=Path),
              metavar="DIR", help="The deeplink.framework checkout that was built (its dipu/torch_dipu/csrc_dipu "
                                  "headers are searched for dipu_* declarations).")
@click.option("--commit", required=True, metavar="HASH", help="The DIPU commit that was built.")
@click.option("--torch", "torch", required=True, metavar="X.Y.Z", help="The torch DIPU was built with.")
def dipu_link_snapshot(build: Path, source: Path, out: Path | None, into_package: bool, commit: str,
                       torch: str) -> None:
    """Record DIPU core's link contract with the kernels file.

    Reads the object files of a DIPU build with nm, leaving out the kernels
    file's (AutoGenedKernels*), the vendor folder's and third-party code's,
    and records the dipu::native functions DIPU core calls or declares but
    does not define (the kernels file must), and every global symbol DIPU
    core defines (the kernels file may call them). Declarations are resolved
    to their mangled names by compiling a probe with the build's own flags
    (DIR/compile_commands.json). The link-contract tests check rendered
    kernels against this data.
    """
    from deeplink_gen.commands import dipu_link_snapshot as command

    click.echo(command.run(build, source, out, into_package, commit, torch))


@main.command("torch-snapshot")
@click.option("--out", "out", type=_Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Snapshot to write (required unless --into-package). A name ending in .gz is "
                   "gzip-compressed; anything else is plain JSON.")
@click.option("--into-package", "into_package", is_flag=True,
              help="Instead of --out, refresh the file deeplink-gen ships (deeplink_gen/interfaces/data/torch-<installed version>.json.gz, the file validate, coverage and drift read for that version); only from a source "
                   "checkout, never an installed package.")
def torch_snapshot(out: Path | None, into_package: bool) -> None:
    """Record the installed torch's op table as data.

    Reads torchgen's native_functions.yaml (never importing torch) and writes
    every ATen op with its schema, variants, the torchgen flags signatures
    depend on and whether a CompositeImplicitAutograd or
    CompositeExplicitAutograd kernel serves every backend: sorted JSON, one op
    per line. The file is rewritten only if its content changed.
    """
    from deeplink_gen.commands import torch_snapshot as command

    click.echo(command.run(out, into_package))


@main.command("import-dipu")
@click.option("--dipu", "dipu", type=_Path(path_type=Path), metavar="CHECKOUT",
              help="A deeplink.framework checkout (its root, holding dipu/) with its DIOPI submodule "
                   "(dipu/third_party/DIOPI) initialised: read DIPU's op file "
                   "(dipu/scripts/autogen_diopi_wrapper/diopi_functions.yaml) and, for each of --vendors, the "
                   "convert_config.yaml and the impl folder of the DIOPI folder DIPU builds it with "
                   "(its DIOPI_IMPL_OPT, in DIOPI's impl/: torch for cuda, topsrider for topsrider, ascend (with "
                   "ascend_npu) for ascend, the vendor's name for the others) from it. A vendor DIOPI has no such "
                   "file or folder for gets none; the import lists, per vendor, what it read or where it looked. "
                   "--functions, --convert-config and --impl name files to read instead of the checkout's. A "
                   "CHECKOUT without dipu/ or the op file, or whose DIOPI submodule is empty, is an error "
                   "(DIOPI is not needed when --convert-config and --impl name every vendor's).")
@click.option("--functions", "functions", type=_Path(dir_okay=False, path_type=Path),
              metavar="PATH", help="DIPU's diopi_functions.yaml (required without --dipu).")
@click.option("--convert-config", "convert_configs", multiple=True, metavar="VENDOR=PATH",
              help="A DIOPI impl/<vendor>/convert_config.yaml: its dtype and layout rules become the vendor's "
                   "dtypes: and layouts:, and its layouts decide the memory-format placeholders (repeatable; "
                   "with --dipu, instead of the checkout's).")
@click.option("--impl", "impls", multiple=True, metavar="VENDOR=DIR",
              help="A DIOPI impl/<vendor> folder: the functions it defines, found as DIOPI's adaptor generator "
                   "finds them, become the vendor's adaptor.implemented, which the adaptor wraps (repeatable; "
                   "with --dipu, instead of the checkout's).")
@click.option("--runtime", "runtimes", multiple=True, metavar="VENDOR=DIR",
              help="A DIPU vendor runtime folder (dipu/torch_dipu/csrc_dipu/vendor/<name>): its vendorapi.h, device "
                   "and communicator functions, generator and CMake become the vendor's runtime: and build: "
                   "sections, and its other files stay hand-written in vendors/<name>/ (repeatable; with --dipu, "
                   "instead of the checkout's folder, which is read for every vendor that has one).")
@click.option("--variant", "variants", multiple=True, metavar="VENDOR=SUBFOLDER",
              help="Where DIPU's CMake picks a runtime subfolder by SDK version (camb's cnrt_${CNRT_MAJOR_VERSION}.x), "
                   "the one to import, such as camb=cnrt_5.x. Default: the newest; the import says which it took.")
@click.option("--vendors", required=True, metavar="A,B,...", help="DIPU vendor names to write vendor files for.")
@click.option("--out", "out_dir", required=True, type=_Path(file_okay=False, path_type=Path), metavar="DIR",
              help="The workspace to write (catalog/dipu.yaml and vendors/<name>.yaml).")
@click.option("--torch-version", metavar="X.Y.Z", help="The torch to import for: it decides DIPU's torch_ver "
              "filters, and its ops (the installed torch's, or the op table shipped for it) decide which entries "
              "are valid. Default: the installed torch.")
@click.option("--force", is_flag=True, help="Overwrite the files of an existing workspace at DIR; of its "
              "vendor, catalog and settings files, those an earlier import wrote and this one does not are removed, "
              "the others kept (and listed).")
@click.pass_obj
def import_dipu_cmd(ctx: Invocation, dipu, functions, convert_configs, impls, runtimes, variants, vendors, out_dir,
                    torch_version, force) -> None:
    """Migrate DIPU's op config into a deeplink-gen workspace.

    Reads DIPU's diopi_functions.yaml and DIOPI's convert_config.yaml files
    and impl folders from a checkout (--dipu), or from the files named with
    --functions, --convert-config and --impl, which win over the checkout's.
    Applies DIPU's device and torch_ver filters for the named vendors, turns
    each entry into a catalog entry (custom code byte for byte), device
    filters into vendor enable/disable overrides, convert_config layouts
    into per-op memory_format settings and its dtype and layout rules into
    the vendor's dtypes: and layouts:, and an impl folder's functions into
    the vendor's adaptor: section. Each vendor's runtime folder (--runtime,
    or the checkout's) becomes its runtime: and build: sections: check
    macros become checkers, each device and communicator function a call
    template, a pattern or its body as custom code, and the files that are
    not part of DIPU's contract stay hand-written in vendors/<name>/.
    Problems of the upstream files are printed as file:line: warning: ...,
    each saying whether it was fixed, kept as is or its entry skipped. The
    result passes `deeplink-gen -C DIR validate`.
    """
    from deeplink_gen.commands.import_dipu import command
    from deeplink_gen.options import Options

    if dipu is None and functions is None:
        raise click.UsageError("give --dipu CHECKOUT (a deeplink.framework checkout) or --functions PATH")
    names = [v.strip() for v in vendors.split(",") if v.strip()]
    if not names or any(not v.isidentifier() or v != v.lower() for v in names):
        raise click.BadParameter("expected lower-case vendor names such as camb,ascend,droplet",
                                 param_hint="--vendors")
    if twice := sorted({v for v in names if names.count(v) > 1}):
        raise click.BadParameter(f"{', '.join(twice)} named twice", param_hint="--vendors")

    def by_vendor(items: tuple[str, ...], hint: str) -> dict[str, Path]:
        out = {}
        for item in items:
            vendor, sep, path = item.partition("=")
            if not sep or vendor not in names:
                raise click.BadParameter(f"'{item}' is not VENDOR=PATH for one of {', '.join(names)}",
                                         param_hint=hint)
            if not path:
                raise click.BadParameter(f"'{item}' names nothing after '='", param_hint=hint)
            if vendor in out:
                raise click.BadParameter(f"{vendor} is given twice", param_hint=hint)
            out[vendor] = Path(path)
        return out

    configs = by_vendor(convert_configs, "--convert-config")
    folders = by_vendor(impls, "--impl")
    runtime_folders = by_vendor(runtimes, "--runtime")
    picked = {v: str(p) for v, p in by_vendor(variants, "--variant").items()}
    options = Options(torch_version=torch_version, diopi_include=ctx.diopi_include)
    command(functions, dipu, configs, names, out_dir, options, folders, force, runtime_folders, picked)


@main.command()
@click.argument("directory", required=False, type=_Path(file_okay=False, path_type=Path))
@click.option("--tool", metavar="REQUIREMENT", help="What the CI workflow installs deeplink-gen with (a pip "
              "requirement: deeplink-gen==X.Y.Z, a URL, ./tools/<wheel>). Default: this deeplink-gen as it was "
              "installed: from an index, that version; from git, that commit; from a wheel file, a copy of it in "
              "tools/.")
@click.pass_obj
def init(ctx: Invocation, directory: Path | None, tool: str | None) -> None:
    """Make DIRECTORY (default: the -C workspace) a deeplink-gen workspace.

    Creates vendors/, schemas/ (the JSON Schemas vendor files name on their
    first line, refreshed on every run), deeplink-gen.yaml (workspace
    settings), .vscode/settings.json (editor schema association), a CI
    workflow (.github/workflows/deeplink-gen.yml) and a pre-commit
    configuration, both running `deeplink-gen render --all --check`. Files
    that already exist are kept, except the schemas. The op catalog ships
    with deeplink-gen; catalog/*.yaml in the workspace adds to it.
    """
    from deeplink_gen.commands.init import main as command

    command(directory if directory is not None else ctx.root, tool)


@main.command("new-vendor")
@click.argument("name")
@click.option("--like", metavar="VENDOR", help="Start from vendors/VENDOR.yaml, or from the example of that name "
              "that ships with deeplink-gen (ascend, camb, cuda, droplet, hostsim); comments kept, identity changed, its "
              "adaptor section (what its DIOPI library defines) left out, its vendors/VENDOR/ sources copied too.")
@click.option("--device-type", metavar="ENUM", help="The VendorDeviceType enumerator (default: NAME upper-cased).")
@click.option("--runtime-prefix", metavar="PREFIX", help="Pre-fill the device runtime with CUDA-style calls "
              "using PREFIX (tang: tangStreamCreate, tangMalloc, ...). Default: every function unsupported.")
@click.option("--with-sources", is_flag=True, help="Also create vendors/NAME/ for hand-written files, which "
              "render copies into DIPU's vendor folder.")
@click.option("--force", is_flag=True, help="Replace an existing vendors/NAME.yaml.")
@click.pass_obj
def new_vendor_cmd(ctx: Invocation, name: str, like, device_type, runtime_prefix, with_sources, force) -> None:
    """Scaffold vendors/NAME.yaml: a vendor file that validates, renders and
    compiles right away, with every section explained in comments.

    NAME is a lower-case C identifier. Nothing is written when anything is
    wrong; on success the next steps are printed (what to fill in, the
    render command, the DIPU edits outside the vendor folder, the build and
    the first test).
    """
    from deeplink_gen.commands.new_vendor import main as command

    if like is not None and runtime_prefix is not None:
        raise click.UsageError("--like and --runtime-prefix do not combine (--like copies that vendor's runtime)")
    command(ctx.root, name, like=like, device_type=device_type, runtime_prefix=runtime_prefix,
            with_sources=with_sources, force=force)


if __name__ == "__main__":
    main()
