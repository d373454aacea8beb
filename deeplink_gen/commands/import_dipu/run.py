"""The import, from reading DIPU's file to a workspace that validates."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from deeplink_gen.commands import next_step, torch_choice
from deeplink_gen.commands.import_dipu import checkout
from deeplink_gen.commands.import_dipu.checkout import Kind, diopi_impl
from deeplink_gen.commands.import_dipu.conversions import read_conversions
from deeplink_gen.commands.import_dipu.dialect import dialect_of
from deeplink_gen.commands.import_dipu.implemented import read_implemented
from deeplink_gen.commands.import_dipu.runtime.folder import import_runtime
from deeplink_gen.commands.import_dipu.read import (
    UpstreamYaml, read_convert_config, read_functions, read_yaml, warning,
)
from deeplink_gen.commands.import_dipu.select import Selection, point_forward_at_ops, select
from deeplink_gen.commands.import_dipu.translate import Imported, translate
from deeplink_gen.errors import Diagnostic, Loc, UserError, sort_key
from deeplink_gen.interfaces.dipu import UPSTREAM
from deeplink_gen import inputfile, pipeline
from deeplink_gen.load.workspace import Sources
from deeplink_gen.model import Prototypes
from deeplink_gen.options import Options, Torch
from deeplink_gen.atomic import refuse_link_out
from deeplink_gen.output import lock, transaction
from deeplink_gen.input_paths import catalog_files, vendor_files, workspace_file
from deeplink_gen.request import Request


# The third-party headers of DIPU's kernel template (scripts/autogen_diopi_wrapper/
# diopi_wrapper_template.py at 9dd38082), which custom code written for DIPU may rely on.
DIPU_KERNEL_HEADERS = (
    "algorithm", "array", "cmath", "cstddef", "cstdint", "cstdio", "iostream", "ostream", "tuple", "utility",
    "vector", "type_traits",
    "ATen/core/ATen_fwd.h", "ATen/core/Generator.h", "ATen/core/LegacyTypeDispatch.h", "ATen/core/List.h",
    "ATen/core/TensorBody.h", "ATen/ExpandUtils.h", "ATen/Functions.h", "ATen/native/BinaryOps.h",
    "ATen/native/ReduceOpsUtils.h", "ATen/ops/empty_like.h", "ATen/ops/empty.h", "ATen/ops/scalar_tensor.h",
    "ATen/ops/to_native.h", "ATen/ops/zeros.h", "ATen/Tensor.h", "c10/core/MemoryFormat.h", "c10/core/ScalarType.h",
    "c10/core/SymInt.h", "c10/core/SymIntArrayRef.h", "c10/util/accumulate.h", "c10/util/ArrayRef.h",
    "c10/util/Exception.h", "c10/util/Optional.h", "c10/util/SmallVector.h", "c10/util/string_view.h",
    "torch/csrc/autograd/custom_function.h", "torch/csrc/autograd/generated/variable_factories.h", "torch/types.h",
)


@dataclass
class ImportResult:
    notes: list[Diagnostic]        # warnings about the upstream input
    ops: list[str]
    skipped: int
    vendors: list[str]
    files: list[str]
    report: list[str]              # what the runtime import did, a line per vendor and fact
    kept: list[str]                # files of the workspace there that the import did not write


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper, value: str):
    # YAML reads NEL, LS and PS as line breaks: only escapes keep them (custom code byte for byte).
    style = '"' if any(c in value for c in "\x85\u2028\u2029") else \
        "|" if "\n" in value and not any(line != line.rstrip() for line in value.split("\n")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)


# The line that opens each catalog and vendor file the import writes (after the schema line),
# then the upstream file's name: what --force takes as proof that an import wrote a file.
IMPORTED = "# Imported by deeplink-gen import-dipu from DIPU's "
_IMPORTED_HEAD = re.compile(rb"(?:# yaml-language-server: [^\n]*\n)?" + re.escape(IMPORTED.encode()))


def _texts(out: Path, sel: Selection, vendors: list[str], source: str, torch: str,
           sections: dict[str, dict]) -> dict[Path, str]:
    """The workspace's files, by path."""
    name = Path(source).name
    texts = {out / "catalog" / "dipu.yaml": "# yaml-language-server: $schema=../schemas/catalog.schema.json\n"
                                            f"{IMPORTED}{name}; its custom code\n"
                                            "# may use anything DIPU's kernel template includes, so this file includes it too.\n"
                                            + _dump({"includes": list(DIPU_KERNEL_HEADERS), "ops": sel.catalog})}
    texts[out / "deeplink-gen.yaml"] = ("# Written by deeplink-gen import-dipu: the imported catalog is the whole catalog,\n"
                                        "# as DIPU's file was for DIPU; it renders for the torch it was imported for.\n"
                                        f"bundled_catalog: false\ntorch: {torch}\n")
    for v in vendors:
        up = UPSTREAM.get(v)     # DIPU's own identity of a vendor it knows
        body: dict = {"vendor": {"name": v, "device_type": up.device_type if up else v.upper(),
                                 "cmake_aliases": list(up.cmake_aliases) if up else [v.upper(), v],
                                 "diopi_impl": diopi_impl(v)}}
        body.update(sections.get(v, {}))
        if sel.overrides[v]:
            body["ops"] = sel.overrides[v]
        texts[out / "vendors" / f"{v}.yaml"] = ("# yaml-language-server: $schema=../schemas/vendor.schema.json\n"
                                                f"{IMPORTED}{name}.\n"
                                                + _dump(body))
    return texts


def _problems(out: Path, texts: dict[Path, str], torch: Torch, options: Options) -> list[Diagnostic]:
    """Everything `deeplink-gen validate` would report for these files, once written to *out*."""
    request = Request(out, None, options)
    _, problems = pipeline.examine(request, torch, sources=Sources(out, texts, only_texts=True))
    return problems


def _drop_rejected(problems: list[Diagnostic], sel: Selection, vendors: list[str], path: str,
                   notes: list[Diagnostic]) -> bool:
    """Drop each op (or vendor replacement) a problem is about, by the
    problem's key path and file; False when a problem is about no op."""
    bad: dict[str, Diagnostic] = {}
    bad_replacements: dict[tuple[str, str], Diagnostic] = {}
    for diag in problems:
        key = diag.key if isinstance(diag.key, tuple) else ()
        op = key[1] if len(key) >= 2 and key[0] == "ops" else None
        file = Path(diag.loc.file) if diag.loc is not None else None
        vendor = file.stem if file is not None and file.parent.name == "vendors" else None
        if op and vendor in sel.overrides and "replace" in sel.overrides[vendor].get(op, {}):
            bad_replacements.setdefault((op, vendor), diag)
        elif op in sel.catalog:
            bad.setdefault(op, diag)
    for (op, vendor), diag in bad_replacements.items():
        mine = sel.replaced[op][vendor]
        notes.append(warning(path, mine.up.line, f"'{op}' for {vendor} is not valid for deeplink-gen:"
                                                 f" {diag.text}; the op is disabled for {vendor}"))
        sel.overrides[vendor][op] = {"enabled": False, "reason": f"upstream line {mine.up.line} cannot be imported"}
    for op, diag in bad.items():
        notes.append(warning(path, sel.origin[op].up.line,
                             f"'{op}' is not valid for deeplink-gen: {diag.text}; entry skipped"))
        del sel.catalog[op]
        for v in vendors:
            sel.overrides[v].pop(op, None)
    return bool(bad or bad_replacements)


def _diopi_sections(vendors: list[str], convert_configs: dict[str, UpstreamYaml], impls: dict[str, Path],
                    protos: Prototypes, notes: list[Diagnostic]) -> dict[str, dict]:
    """Per vendor, the dtypes:, layouts: and adaptor: sections its DIOPI convert_config.yaml and
    impl folder say."""
    sections: dict[str, dict] = {v: {} for v in vendors}
    for v, cfg in sorted(convert_configs.items()):
        conv = read_conversions(cfg, protos)
        notes += conv.notes
        sections[v].update({k: val for k, val in (("dtypes", conv.dtypes), ("layouts", conv.layouts)) if val})
    for v, folder in sorted(impls.items()):
        implemented, more = read_implemented(folder, diopi_impl(v), protos)
        notes += more
        if implemented:
            sections[v]["adaptor"] = {"implemented": implemented}
    return sections


def import_dipu(functions: Path, convert_configs: dict[str, Path], vendors: list[str], out: Path,
                torch: Torch, options: Options, impls: dict[str, Path] | None = None,
                runtimes: dict[str, Path] | None = None, variants: dict[str, str] | None = None,
                existing: list[Path] = (), force: bool = False) -> ImportResult:
    """The import into *out*; of the *existing* files of a workspace there, those it does not
    write again are removed when an import wrote them, else kept. Without *force* no file of
    one's own is replaced."""
    path = str(functions)
    ups = read_functions(functions)
    notes: list[Diagnostic] = []
    layouts = {}
    configs = {v: read_yaml(path, "--convert-config", "--convert-config") for v, path in sorted(convert_configs.items())}
    for v, cfg in configs.items():
        common, per_fn, cfg_notes = read_convert_config(cfg)
        layouts[v] = (common, per_fn)
        notes += cfg_notes
    sections = _diopi_sections(vendors, configs, impls or {}, options.prototypes(), notes)
    report: list[str] = []
    hand_written: dict[Path, bytes] = {}
    for v, folder in sorted((runtimes or {}).items()):
        rt = import_runtime(v, folder, torch_code=torch.version.dipu_code, variant=(variants or {}).get(v))
        sections[v].update(rt.sections)
        notes += rt.notes
        report += rt.report
        hand_written.update({out / "vendors" / v / rel: data for rel, data in rt.files.items()})
    imported = []
    table = torch.op_table()
    dialect = dialect_of(ups)
    translated: dict[int, Imported] = {}      # id of an entry's mapping -> its translation
    for up in ups:
        first = translated.get(id(up.data))
        if first is not None:
            # An alias of an earlier entry (`- *name`): the same entry again, at its own line.
            item = dataclasses.replace(first, up=up, notes=[])
        else:
            item = translate(up, path, table, torch.version.dipu_code, dialect)
            if isinstance(up.data, dict):
                translated[id(up.data)] = item
        notes += item.notes
        if item.op:
            imported.append(item)
    point_forward_at_ops(imported, path, notes)
    sel = select(imported, vendors, layouts, path, notes)
    # The hand-written files are read from the folder beside each vendor file: written first,
    # put back as they were if the workspace does not validate; nothing when a folder links out of it.
    for folder in sorted({f.parent for f in hand_written} | {out / "catalog", out / "vendors"}):
        refuse_link_out(out, folder, str(folder))
    texts = _texts(out, sel, vendors, path, str(torch.version), sections)
    _refuse_in_the_way(out, [*texts, *hand_written])
    removed = [p for p in existing if p not in texts and _imported(p)]
    made = _missing_folders(out, [*texts, *hand_written])
    before = _before(hand_written, force)
    changed = {f: data for f, data in hand_written.items() if before[f] is None or before[f][0] != data}
    transaction.commit(out, {_rel(f, out): data for f, data in changed.items()})
    try:
        # Dropping an op can invalidate another (one whose code calls it): repeat until nothing is rejected.
        while True:
            problems = _problems(out, texts, torch, options)
            if not any(d.is_error for d in problems):
                # what validate warns about the files written (an imported runtime's, say) is part of the report
                notes += problems
                break
            problems = [d for d in problems if d.is_error]
            if not _drop_rejected(problems, sel, vendors, path, notes):
                raise UserError([Diagnostic(None, None, (
                    "the workspace made from the upstream files does not validate, so nothing was written; "
                    "the errors below name the files the import would have written, not the upstream files "
                    "they came from: the import should have reported these at their upstream lines (a bug)")),
                    *problems])
            texts = _texts(out, sel, vendors, path, str(torch.version), sections)
        transaction.commit(out, {**{_rel(f, out): t.encode("utf-8") for f, t in texts.items()},
                                 **{_rel(f, out): None for f in removed}})
    except BaseException:
        _put_back(out, {f: before[f] for f in changed}, made)
        raise
    return ImportResult(sorted(set(notes), key=sort_key), list(sel.catalog), len(ups) - len(sel.catalog), vendors,
                        [str(p) for p in texts] + [str(p) for p in sorted(hand_written)], report,
                        [str(p) for p in existing if p not in texts and p not in removed])


def _rel(path: Path, out: Path) -> str:
    return path.relative_to(out).as_posix()


def _put_back(out: Path, files: dict[Path, tuple[bytes, os.stat_result] | None], made: list[Path]) -> None:
    """Each of *files* as it was (bytes and times) or gone where there was none, and the folders
    *made* removed: quietly, since the error that stopped the import is the one to show."""
    with contextlib.suppress(OSError):
        transaction.commit(out, {_rel(f, out): None if old is None else old[0] for f, old in files.items()})
        for f, old in files.items():
            if old is not None:
                os.utime(f, ns=(old[1].st_atime_ns, old[1].st_mtime_ns))
    for folder in made:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _before(files: dict[Path, bytes], force: bool) -> dict[Path, tuple[bytes, os.stat_result] | None]:
    """Each hand-written file the import writes as it is now (None: not there), to put back if the
    import fails. A UserError, before anything is written, for one that cannot be put back (a link,
    a file too large to hold) and, without *force*, for one that differs from what the import writes."""
    found, problems = {}, []
    for f, data in sorted(files.items()):
        if not os.path.lexists(f):
            found[f] = None
            continue
        old = inputfile.read_back(f, links=False)
        if old is None:
            problems.append(Diagnostic(Loc(str(f)), "--out", (
                "is a link or a file the import cannot keep to put back (unreadable, or over "
                f"{inputfile.MAX_BYTES // (1024 * 1024)} MiB); nothing was written: move it away")))
        elif old != data and not force:
            problems.append(Diagnostic(Loc(str(f)), "--out", (
                "is a file of its own where the import writes DIPU's; nothing was written: use --force to "
                "replace it")))
        else:
            found[f] = (old, os.stat(f))
    if problems:
        raise UserError(problems)
    return found


def _refuse_in_the_way(out: Path, files: list[Path]) -> None:
    """A UserError, before anything is written, naming each file the import cannot write: a
    folder where it goes, or a file where one of its folders goes."""
    problems = [Diagnostic(Loc(str(d)), "--out", (
        f"is a link (to {os.readlink(d)}); the workspace's {d.name}/ is a folder of its own, which validate "
        "reads apart from the others: nothing was written: replace the link by a folder"))
        for d in (out / "catalog", out / "vendors") if d.is_symlink()]
    blocking: dict[Path, Path | None] = {}      # each folder: the first on its way down that is a file

    def blocked_at(folder: Path) -> Path | None:
        if folder not in blocking:
            above = blocked_at(folder.parent) if folder != out and folder.is_relative_to(out) else None
            blocking[folder] = above or (folder if os.path.lexists(folder) and not folder.is_dir() else None)
        return blocking[folder]

    for file in sorted(files):
        blocked = blocked_at(file.parent) if file.parent.is_relative_to(out) else None
        if blocked is not None:
            problems.append(Diagnostic(Loc(str(file)), "--out", f"{blocked} is a file where a folder is needed "
                                                                "to write this one; nothing was written"))
        elif file.is_dir():
            problems.append(Diagnostic(Loc(str(file)), "--out", "is a folder where the import writes a file; "
                                                                "nothing was written: move the folder away"))
    if problems:
        raise UserError(problems)


def _missing_folders(out: Path, files: list[Path]) -> list[Path]:
    """The folders writing *files* below *out* makes, deepest first: removed again when the import fails."""
    parents = {d for folder in {f.parent for f in files} for d in [folder, *folder.parents]}
    missing = {d for d in parents if d.is_relative_to(out) and not os.path.lexists(d)}
    return sorted(missing, key=lambda d: len(d.parts), reverse=True)


def _imported(path: Path) -> bool:
    """Whether an import wrote *path*: it opens with the header line an import writes (a
    hand-written file may well mention the import elsewhere, and is not removed)."""
    if path.is_symlink():       # the import writes none: a link is someone's
        return False
    try:
        return _IMPORTED_HEAD.match(inputfile.read(path, head=512)) is not None
    except UserError:
        return False


def command(functions: Path | None, dipu: Path | None, convert_configs: dict[str, Path], vendors: list[str],
            out: Path, options: Options, impls: dict[str, Path], force: bool,
            runtimes: dict[str, Path], variants: dict[str, str]) -> None:
    """`import-dipu`: the import into *out* for the torch *options* ask for (default: the
    installed one), replacing the files of a workspace there only with *force*. With a
    checkout *dipu*, what the other arguments leave out is read from it, each vendor's
    runtime folder too."""
    # One import at a time into one --out: the lock is its parent's, made for the import (and removed
    # again when the import leaves it empty), so that every import into it locks the same folder
    # however --out is spelt and whatever of it exists yet.
    if ".." in out.parts:       # a/x/../ws where a/x does not exist yet: the folder a/ws, which the OS cannot walk to
        out = Path(os.path.realpath(out))
    parent = Path(os.path.realpath(out)).parent
    made = [p for p in (parent, *parent.parents) if not os.path.lexists(p)]
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(f"--out {out}: cannot make its folder {parent}: {exc.strerror or exc}") from None
    try:
        with lock.held(parent, str(out)):
            _import_locked(functions, dipu, convert_configs, vendors, out, options, impls, force, runtimes, variants)
    finally:
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()


def _import_locked(functions: Path | None, dipu: Path | None, convert_configs: dict[str, Path], vendors: list[str],
                   out: Path, options: Options, impls: dict[str, Path], force: bool,
                   runtimes: dict[str, Path], variants: dict[str, str]) -> None:
    """The import, with the lock on --out's parent held."""
    existing = catalog_files(out) + vendor_files(out) + [p for p in (workspace_file(out),) if p.is_file()]
    if existing and not force:
        raise click.UsageError(f"{out} already holds a workspace ({existing[0]}); use --force to overwrite")
    if dipu is not None:
        found = checkout.read(dipu, vendors, functions, {Kind.CONVERT_CONFIG: convert_configs, Kind.IMPL: impls})
        for line in found.report():
            click.echo(line)
        functions, impls = found.functions, found.paths(Kind.IMPL)
        convert_configs = found.paths(Kind.CONVERT_CONFIG)
        for v in vendors:
            folder = found.runtime_folder(v)
            if v in runtimes:
                click.echo(f"{v}: runtime: {runtimes[v]} (--runtime)")
            elif folder.is_dir():
                runtimes = {**runtimes, v: folder}
                click.echo(f"{v}: runtime: {folder}")
            else:
                click.echo(f"{v}: runtime: none (no {folder})")
    for v, name in sorted(variants.items()):
        if v not in runtimes:
            raise click.UsageError(f"--variant {v}={name}: no runtime folder is imported for {v}")
    for v, folder in sorted(runtimes.items()):
        if out.resolve().is_relative_to(folder.resolve()):
            raise click.UsageError(f"--out {out} is inside {v}'s runtime folder {folder}: the import would read "
                                   "what it writes there: give --out another folder")
    assert functions is not None, "the command line asks for --functions or --dipu"
    torch = torch_choice.choose(out, options.torch_version, workspace=False)
    result = import_dipu(functions, convert_configs, vendors, out, torch, options, impls, runtimes, variants,
                         existing, force)
    if result.kept:
        click.echo(f"note: kept {', '.join(result.kept)}: import-dipu did not write them, so they stay part of the "
                   "workspace (remove them if the import replaces them)", err=True)
    for n in result.notes:
        click.echo(str(n), err=True)
    for line in result.report:
        click.echo(line)
    click.echo(f"imported {len(result.ops)} ops for {', '.join(result.vendors)} into {out} "
               f"({len(result.notes)} warning{'s' if len(result.notes) != 1 else ''})")
    next_step.show(f"{next_step.prog(out)} validate, then {next_step.prog(out)} render --all")
