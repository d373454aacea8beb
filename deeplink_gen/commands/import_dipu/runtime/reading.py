"""Which files of a DIPU vendor folder are its runtime: what its CMake
compiles (the version subfolder chosen), the local headers those files
include, which of them define DIPU's functions, the generator, and the local
headers that stay files because vendorapi.h or a hand-written file includes
them. Every file is read once, its conditionals resolved for the vendor's
configuration (a warning at each condition an SDK macro decides)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from deeplink_gen import cpplex, inputfile
from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.runtime import build as cmake
from deeplink_gen.commands.import_dipu.runtime.cxx import Config, Item, ItemKind, SourceFile, Unreadable, read
from deeplink_gen.cpptext import refuse_bidi
from deeplink_gen.errors import Diagnostic, Loc, UserError, display_path
from deeplink_gen.interfaces.dipu import COMM_FUNCTIONS, DEVICE_FUNCTIONS
from deeplink_gen.model.interfaces import DipuFunction

# DIPU's own build defines a vendor sees (dipu/CMakeLists.txt at 9dd38082): DIPU_VENDOR_NAME_<NAME>=1
# for the vendor built, and USE_MACA=1 for muxi.
BUILD_DEFINES = {"muxi": {"USE_MACA": "1"}}
BY_NAME: dict[tuple[str, int], DipuFunction] = {(f.name, len(f.params)): f for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS}


def shown(p: Path) -> str:
    """How messages name a file: as given, `..` resolved."""
    return os.path.normpath(p)


def is_contract(item: Item) -> bool:
    """Whether *item* defines one of DIPU's device or communicator functions."""
    return item.kind is ItemKind.FUNCTION and (item.name, len(item.params)) in BY_NAME and "devapis" in item.namespace


@dataclass
class Reading:
    vendor: str
    folder: Path
    sources: cmake.Sources
    api: SourceFile | None                   # vendorapi.h
    files: dict[Path, SourceFile]            # what the CMake compiles
    headers: dict[Path, SourceFile]          # local headers those include (resolved paths)
    runtime_files: list[SourceFile]          # the files (and headers) defining DIPU's functions
    defined: dict[str, tuple[SourceFile, Item]]   # function key -> where DIPU defines it
    generator: SourceFile | None
    shared: set[Path]                        # local headers that stay files

    @cached_property
    def _paths(self) -> dict[int, Path]:
        return {id(f): p for p, f in {**self.files, **self.headers}.items()}

    def path_of(self, f: SourceFile) -> Path:
        return self._paths.get(id(f), self.folder / "vendorapi.h")

    def local(self, name: str, including: Path) -> Path | None:
        return local(name, including, self.folder, self.vendor)

    def with_headers(self, f: SourceFile) -> list[SourceFile]:
        """*f* after the local headers it includes that are read as part of it."""
        own = [self.headers[h] for i in f.items if i.kind is ItemKind.INCLUDE and i.local
               if (h := self.local(i.name, self.path_of(f))) in self.headers
               and self.headers[h] not in self.runtime_files and h not in self.shared]
        return own + [f]

    def runtime_sources(self) -> list[SourceFile]:
        """Every runtime file with the headers read as part of it, once each."""
        return list(dict.fromkeys(g for f in self.runtime_files for g in self.with_headers(f)))

    def consumed(self) -> set[Path]:
        """The resolved paths of the files the import turns into YAML."""
        return {p.resolve() for p, f in {**self.files, **self.headers}.items()
                if f in self.runtime_files or f is self.generator
                or (p in self.headers and p not in self.shared)} - self.shared


def local(name: str, including: Path, folder: Path, vendor: str) -> Path | None:
    """The file a quoted include of *including* names: beside it, or by its path under
    torch_dipu (csrc_dipu/vendor/<vendor>/...), which is the vendor folder."""
    under = f"csrc_dipu/vendor/{vendor}/"
    for candidate in (including.parent / name, folder / name.removeprefix(under)):
        if candidate.is_file():
            return candidate.resolve()
    return None


def config_of(vendor: str, torch_code: int) -> Config:
    defined = {f"DIPU_VENDOR_NAME_{vendor.upper()}": "1", "DIPU_TORCH_VERSION": str(torch_code),
               "__cplusplus": "201703"}
    defined.update(BUILD_DEFINES.get(vendor, {}))
    return Config(defined, ("USE_", "DIPU_VENDOR_NAME_"))


def _read(path: Path, config: Config, notes: list[Diagnostic]) -> SourceFile:
    raw = inputfile.read(path, key="--runtime")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:      # a comment in another encoding, as often as not
        text = raw.decode("utf-8", errors="replace")
        notes.append(Diagnostic(Loc.at(shown(path), raw, exc.start), None, (
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}): read with U+FFFD in place of each such byte, which "
            "the imported code holds where this file's code is imported; save the file as UTF-8 to keep them"),
            "warning"))
    text = text.replace("\r\n", "\n").replace("\r", "\n")     # a CR ends a line for the compiler too
    refuse_bidi(text, shown(path), "--runtime")     # the vendor file it would go into refuses it
    try:
        file = read(shown(path), text, config)
    except Unreadable as exc:
        raise UserError([Diagnostic(Loc(shown(path), exc.line, 1), "--runtime", f"{exc}: the compiler refuses it")]) \
            from None
    for b in file.branches:
        notes.append(warning(file.path, b.line, f"`{b.condition.rstrip(chr(92)).strip()}` depends on the SDK: "
                                                "imported as if it holds (the newest SDK); edit the result for an older one"))
    return file


def _refuse_unreadable_code(file: SourceFile) -> None:
    """An error at the place in *file* (a file whose code becomes YAML) where the compiler's
    lexer could not read it (a comment, literal or bracket left open, a stray character),
    rather than at the piece of the vendor file the import would have written from it."""
    found = cpplex.located(file.text, directives=True)
    if found is not None:
        why, line, column = found
        raise UserError([Diagnostic(Loc(file.path, line, column), "--runtime", (
            f"the import copies this file's code into the vendor file, where it must read as C++: {why}"))])


def read_folder(vendor: str, folder: Path, variant: str | None, torch_code: int, notes: list[Diagnostic],
                report: list[str]) -> Reading:
    if not folder.is_dir():
        raise UserError([Diagnostic(Loc(str(folder)), "--runtime", f"no folder {folder} (a DIPU vendor runtime "
                                    "folder, such as dipu/torch_dipu/csrc_dipu/vendor/<name>)")])
    srcs = cmake.sources(folder, variant)
    if variant is not None and variant not in srcs.variants:
        raise UserError([Diagnostic(Loc(str(folder / "CMakeLists.txt")), "--variant", (
            f"{vendor}'s CMakeLists.txt picks among {', '.join(srcs.variants)}, not {variant}" if srcs.variants else
            f"{vendor}'s CMakeLists.txt picks no subfolder by SDK version; leave out --variant {vendor}={variant}"))])
    if srcs.variants:
        others = [v for v in srcs.variants if v != srcs.variant]
        notes.append(warning(shown(folder / "CMakeLists.txt"), srcs.variant_line,
                             f"DIPU picks one of {', '.join(srcs.variants)} by SDK version: imported {srcs.variant}"
                             + (f"; --variant {vendor}={others[0]} imports the other" if others else "")))
        report.append(f"{vendor}: imported {srcs.variant} of {', '.join(srcs.variants)}")
    config = config_of(vendor, torch_code)
    api_path = folder / "vendorapi.h"
    api = _read(api_path, config, notes) if api_path.is_file() else None
    files = {p: _read(p, config, notes) for p in srcs.files + srcs.conditional}
    headers: dict[Path, SourceFile] = {}
    for p, f in list(files.items()):
        for inc in (i for i in f.items if i.kind is ItemKind.INCLUDE and i.local):
            h = local(inc.name, p, folder, vendor)
            if h is not None and h != api_path.resolve() and h not in headers:
                headers[h] = _read(h, config, notes)
    defined: dict[str, tuple[SourceFile, Item]] = {}
    runtime_files: list[SourceFile] = []
    for f in list(headers.values()) + list(files.values()):
        found = [(BY_NAME[(i.name, len(i.params))], i) for i in f.functions() if is_contract(i)]
        if found:
            runtime_files.append(f)
        for fn, item in found:
            defined.setdefault(fn.key, (f, item))
    if not defined:
        raise UserError([Diagnostic(Loc(str(folder)), "--runtime", (
            f"{folder} defines none of DIPU's device or communicator functions in the sources its "
            "CMakeLists.txt compiles: not a DIPU vendor runtime folder"))])
    generator = next((f for f in files.values() if any(i.name == "vendorMakeGenerator" for i in f.functions())), None)
    # A local header vendorapi.h or a hand-written file includes stays a file, which the runtime
    # includes; any other local header of a runtime file is read as part of it.
    runtime_paths = {p.resolve() for p, f in {**files, **headers}.items() if f in runtime_files}
    users = ([(api_path, api.text)] if api else []) + [
        (p, inputfile.read(p, key="--runtime").decode("utf-8", errors="replace")) for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in (".h", ".hpp", ".cpp", ".cc") and p.resolve() not in runtime_paths
        and not (srcs.variants and p.relative_to(folder).parts[0] in srcs.variants)]
    shared: set[Path] = set()
    for p, text in users:
        for m in re.finditer(r'#\s*include\s*"([^"]+)"', text):
            h = local(m.group(1), p, folder, vendor)
            if h is None or h == p.resolve() or h in runtime_paths:
                continue
            if not h.is_relative_to(folder.resolve()):
                # it stays a file beside the rendered runtime, and only the folder's files are carried there
                raise UserError([Diagnostic(Loc.at(shown(p), text, m.start()), "--runtime", (
                    f"includes \"{m.group(1)}\" ({display_path(str(h))}), which is outside the runtime folder "
                    f"{shown(folder)}: the import carries only the folder's files, so the rendered runtime would "
                    "not find it; move the header into the folder"))])
            shared.add(h)
    reading = Reading(vendor, folder, srcs, api, files, headers, runtime_files, defined, generator, shared)
    for f in reading.runtime_sources():
        _refuse_unreadable_code(f)
    return reading
