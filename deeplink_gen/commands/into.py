"""`deeplink-gen render --vendor V --into CHECKOUT`: render one vendor in
memory and put it into a deeplink.framework checkout: the rendered dipu/
files (those under dipu/third_party/DIOPI/ only when that submodule is
populated), the edits of onboarding/dipu.patch, and onboarding/diopi.patch
when DIOPI has the vendor's implementation folder.

Every edit is checked first (output/patching.py): each hunk applies, is
already applied, or does not fit. A tree where any edit does not fit is not
one this patch is for, and nothing is written, unless --force: then the
files are written, the edits that fit are applied, and the others are
listed. All writes go through one transaction (output/transaction.py), so
an error leaves the checkout as it was, and a file whose content would not
change is not touched, so running again changes nothing."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import click

from deeplink_gen import cache, inputfile, output_paths, pipeline
from deeplink_gen.commands import next_step, stored, torch_choice, warnings_out
from deeplink_gen.errors import Diagnostic, ParseError, UserError
from deeplink_gen.interfaces.diopi import DIOPI_COMMIT
from deeplink_gen.interfaces.dipu import DIPU_COMMIT, SUPPORTED_TORCHS
from deeplink_gen.output import lock, patching, transaction
from deeplink_gen.plan.onboarding import CSRC_CMAKE, DIOPI_ROOT, DIPU_CMAKE, plan_onboarding
from deeplink_gen.render.templating import written_by_us
from deeplink_gen.request import Request

# The first line of the kernels file DIPU's own generator (scripts/autogen_diopi_wrapper) writes.
DIPU_GENERATED = b"// autogened file\n"

DIOPI_MARKER = f"{DIOPI_ROOT}/impl/CMakeLists.txt"      # present when the DIOPI submodule is populated


@dataclass
class Edit:
    file: str                     # from the checkout's root
    label: str
    state: patching.State


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    without_diopi: bool = False   # DIOPI has no library for the vendor yet: DIPU builds without one


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def run(request: Request, dest: Path, force: bool, strict: bool = False) -> int:
    torch = torch_choice.of_request(request, renders=True)
    checked = stored.checked(request, torch)
    if warnings_out.show(checked.warnings, strict):
        return 1
    ws = checked.ws
    (v,) = ws.vendors
    files = pipeline.run(request, torch, checked, cache.MEMO).files[v.name]
    if dest.is_dir():
        with lock.held(dest, "--into"):
            outcome = into(dest, v, files, force)
    else:
        outcome = into(dest, v, files, force)          # refused: not a checkout
    _report(v.name, dest, outcome)
    torchs = ", ".join(SUPPORTED_TORCHS[:-1]) + " or " + SUPPORTED_TORCHS[-1]
    device = v.cmake_aliases[0] if v.cmake_aliases else v.name
    if v.diopi_library:
        library = dest / output_paths.diopi_impl_dir(v)
        next_step.show(f"build DIPU on {v.name}'s DIOPI library: cmake -S {next_step.word(library)} -B build-diopi "
                       f"&& cmake --build build-diopi, then DIPU with -DDEVICE={device} "
                       "-DWITH_DIOPI_LIBRARY=$PWD/build-diopi   (docs/hostsim.md; for hostsim, deeplink-gen's scripts/try_without_a_chip.py does every step "
                       "and runs DIPU's tests)")
        return 0
    next_step.show(f"build DIPU: cd {next_step.word(dest / 'dipu')} && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "
                   f"-DDEVICE={device}{' -DWITH_DIOPI_LIBRARY=DISABLE' if outcome.without_diopi else ''} && "
                   f"cmake --build build -j8   (with torch {torchs} installed; onboarding/ONBOARDING.md of "
                   f"`{next_step.prog(request.root)} render --vendor {v.name}` says what else)")
    return 0


def into(dest: Path, vendor, files: dict[str, str], force: bool) -> Outcome:
    out = Outcome()
    plan = plan_onboarding(vendor, output_paths.kernels_cmake_from_csrc())
    diopi_ready = (dest / DIOPI_MARKER).is_file()

    # The rendered files that belong in the checkout.
    wanted = {rel: text for rel, text in files.items() if rel.startswith("dipu/")}
    diopi_files = sorted(rel for rel in wanted if rel.startswith(DIOPI_ROOT + "/"))
    if not diopi_ready and diopi_files:
        for rel in diopi_files:
            del wanted[rel]
        out.notes.append(f"{DIOPI_ROOT} is not populated, so its {len(diopi_files)} rendered file"
                         f"{'s were' if len(diopi_files) != 1 else ' was'} not written; DIPU needs that submodule "
                         f"to build: git submodule update --init {DIOPI_ROOT}, then render --into again")

    # The edits, each hunk checked against the checkout.
    patches = [("", files[output_paths.DIPU_PATCH])]
    if output_paths.DIOPI_PATCH in files:
        impl = f"{DIOPI_ROOT}/impl/{plan.diopi_dir}/CMakeLists.txt"
        if diopi_ready and ((dest / impl).is_file() or impl in files):
            patches.append((DIOPI_ROOT + "/", files[output_paths.DIOPI_PATCH]))
        elif not diopi_ready:
            out.notes.append(f"onboarding/diopi.patch not applied: {DIOPI_ROOT} is not populated")
        else:
            out.without_diopi = True
            out.notes.append(f"onboarding/diopi.patch not applied: {impl} does not exist; build DIPU with "
                             f"-DWITH_DIOPI_LIBRARY=DISABLE (setup.py: DIPU_WITH_DIOPI_LIBRARY=DISABLE) until DIOPI "
                             "has that implementation")
    changes: dict[str, bytes | None] = {}
    touched = set(wanted)                      # every file this run may write: a killed run's leftovers are swept
    conflicts: list[Diagnostic] = []
    for prefix, text in patches:
        try:
            file_patches = patching.parse(text)
        except ParseError as exc:                      # our own output: never expected
            raise UserError([Diagnostic(None, "--into", f"internal: cannot read the rendered patch: {exc}")])
        for fp in file_patches:
            rel = prefix + fp.path
            touched.add(rel)
            try:
                there = os.path.lexists(dest / rel)
                before = _text(inputfile.read(dest / rel, shown=str(dest / rel), key="--into")) if there else None
            except UserError as exc:                   # there, but too large, unreadable or not a file
                conflicts += exc.diagnostics
                out.notes.append(f"{rel} was not read ({exc.diagnostics[0].message}), so its edits were not applied")
                continue
            results = patching.check(before, fp)
            for r in results:
                out.edits.append(Edit(rel, r.hunk.label, r.state))
                if r.state is patching.State.CONFLICT:
                    base = f"DIOPI {DIOPI_COMMIT}" if prefix else f"DIPU {DIPU_COMMIT}"
                    why = "no such file" if before is None else \
                        f"neither the lines of {base} it edits nor the edited ones are there" + (
                            "; the file has CRLF line ends, which no line of DIPU has: check it out with LF "
                            "line ends (git config core.autocrlf false)" if "\r\n" in before else "")
                    conflicts.append(Diagnostic(None, rel, f"{r.hunk.label}: {why}"))
            if any(r.state is patching.State.APPLIES for r in results):
                changes[rel] = patching.apply(before, results).encode("utf-8", "surrogateescape")
    if conflicts and not force:
        raise UserError([Diagnostic(None, None, _refusal(dest, vendor.name)), *conflicts])

    for rel, text in sorted(wanted.items()):
        assert rel not in changes, rel
        data = text.encode("utf-8")
        if inputfile.read_back(dest / rel) == data:
            out.unchanged.append(rel)
        else:
            changes[rel] = data
            out.written.append(rel)
    # Kernel files of an earlier render (another shard count, a precompiled header no longer chosen)
    # or of DIPU's own generator; any other file of such a name is someone's, and left alone.
    ops = dest / output_paths.KERNELS_DIR
    if ops.is_dir():
        kept = []
        for p in sorted(ops.glob("AutoGenedKernels*")):
            rel = p.relative_to(dest).as_posix()
            if rel in wanted or not p.is_file() or p.is_symlink():
                continue
            if output_paths.is_kernel_file(p.name) and _generated(p):
                changes[rel] = None
                out.removed.append(rel)
            else:
                kept.append(rel)
        if kept:
            out.notes.append(f"left as they are, since neither deeplink-gen nor DIPU's kernel generator wrote them "
                             f"(DIPU's build compiles only the files AutoGenedKernels.cmake lists): {', '.join(kept)}")
    folder = dest / output_paths.vendor_dir(vendor)
    if folder.is_dir():
        extra = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                       if (p.is_file() or p.is_symlink()) and p.relative_to(dest).as_posix() not in wanted)
        if extra:
            out.notes.append(f"{output_paths.vendor_dir(vendor)}/ also holds files the render does not produce, left as "
                             f"they are (a vendor CMakeLists.txt that globs *.cpp compiles them): {', '.join(extra)}")
    try:
        transaction.sweep(dest, sorted(touched | set(changes)))
        transaction.commit(dest, changes)
    except OSError as exc:
        where = exc.filename or dest
        raise UserError([Diagnostic(None, "--into", f"cannot write {where}: {exc.strerror or exc}; "
                                                    "the checkout was left as it was")]) from None
    return out


def _generated(path: Path) -> bool:
    """Whether deeplink-gen wrote *path* (its first lines say so), or DIPU's own kernel generator did."""
    try:
        head = inputfile.read(path, head=1024)
    except UserError:
        return False
    return written_by_us(head) or (path.name == "AutoGenedKernels.cpp" and head.startswith(DIPU_GENERATED))


def _refusal(dest: Path, name: str) -> str:
    missing = next((rel for rel in (DIPU_CMAKE, CSRC_CMAKE) if not (dest / rel).is_file()), None)
    if missing is not None:
        hint = " (it looks like the dipu/ folder: give the repository root, its parent)" \
            if (dest / "torch_dipu" / "csrc_dipu" / "CMakeLists.txt").is_file() else ""
        return (f"{dest} is not a deeplink.framework checkout: it has no {missing} (a regular file){hint}; nothing was "
                f"written. Give the root of a checkout of DIPU {DIPU_COMMIT}; the edits it needs and why they do "
                "not fit here:")
    what = (f"{dest} is not a DIPU checkout that the edits for {name} fit (DIPU {DIPU_COMMIT}, "
            "or one they were applied to; a checkout onboarded for another new vendor does not fit either)")
    return (f"{what}; nothing was written. --force writes the files anyway and applies the edits that fit; "
            "the ones that do not:")


def _report(name: str, dest: Path, out: Outcome) -> None:
    applied = sum(1 for e in out.edits if e.state is patching.State.APPLIES)
    present = sum(1 for e in out.edits if e.state is patching.State.APPLIED)
    click.echo(f"{name} -> {dest}: {len(out.written)} written, {len(out.unchanged)} unchanged, "
               f"{len(out.removed)} removed; edits: {applied} applied, {present} already applied")
    for e in out.edits:
        if e.state is patching.State.CONFLICT:
            click.echo(f"warning: {e.file}: {e.label}: not applied, the file does not have the lines it edits",
                       err=True)
        else:
            click.echo(f"  {'applied' if e.state is patching.State.APPLIES else 'already applied'}: "
                       f"{e.file}: {e.label}")
    for rel in out.removed:
        click.echo(f"  removed: {rel}")
    for note in out.notes:
        click.echo(f"note: {note}", err=True)
