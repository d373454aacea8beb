"""Which files of a DIPU vendor folder are its runtime: what its CMake
compiles (the version subfolder chosen), the local headers those files
include, which of them define DIPU's functions, the generator, and the local
headers that stay files because vendorapi.h or a hand-written file includes
them. Every file is read once, its conditionals resolved for the vendor's
configuration (a warning at each condition an SDK macro decides)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from deeplink_gen import cpplex, inputfile
from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.runtime import build as cmake
from deeplink_gen.commands.import_dipu.runtime.cxx import (Branch, Config, Item, ItemKind, SourceFile, Unreadable,
                                                           invocations, mask, resolve, source_file, splices)
from deeplink_gen.cpptext import refuse_bidi
from deeplink_gen.errors import Diagnostic, Loc, UserError, display_path
from deeplink_gen.interfaces.dipu import COMM_FUNCTIONS, DEVICE_FUNCTIONS
from deeplink_gen.model.interfaces import DipuFunction

_IDENT = re.compile(r"[A-Za-z_]\w*")

# DIPU's own build defines a vendor sees (dipu/CMakeLists.txt at 9dd38082): DIPU_VENDOR_NAME_<NAME>=1
# for the vendor built, and USE_MACA=1 for muxi.
BUILD_DEFINES = {"muxi": {"USE_MACA": "1"}}
BY_NAME: dict[tuple[str, int], DipuFunction] = {(f.name, len(f.params)): f for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS}


def shown(p: Path) -> str:
    """How messages name a file: as given, `..` resolved."""
    return os.path.normpath(p)


CONTRACT_SCOPE = ("dipu", "devapis")
CONTRACT_NAMES = frozenset(f.name for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS)
# Blocks in which a function is not the one DIPU declares, whatever its name: an inline or anonymous
# namespace, a C linkage block.
_FOREIGN_BLOCK = re.compile(r'inline |namespace$|extern "(?!C\+\+")')


def is_contract(item: Item) -> bool:
    """Whether *item* defines one of DIPU's device or communicator functions: its name and parameter count,
    in namespace dipu::devapis, where nothing (an inline namespace, extern "C") makes it another function."""
    return (item.kind is ItemKind.FUNCTION and (item.name, len(item.params)) in BY_NAME
            and item.scope == CONTRACT_SCOPE and not any(_FOREIGN_BLOCK.match(b) for b in item.blocks))


def _returns_as_declared(returns: str) -> str:
    """A return type as written, DIPU_API and the qualification by dipu::devapis left out."""
    unqualified = re.sub(r"(?<![\w:])(?:::\s*)?(?:dipu\s*::\s*)?(?:devapis\s*::\s*)?(?=[A-Za-z_])", "",
                         re.sub(r"\bDIPU_API\b", " ", returns))
    return " ".join(unqualified.split())


def contract_problem(item: Item) -> str | None:
    """Why *item*, a function named like one of DIPU's in a namespace devapis, is neither DIPU's function
    as the import reads it nor a function of its own that it can carry; None when it is either."""
    fn = BY_NAME.get((item.name, len(item.params)))
    if item.kind is not ItemKind.FUNCTION or fn is None or "devapis" not in item.scope:
        return None
    written = f"`{' '.join([item.returns, item.name])}(...){' ' + item.suffix if item.suffix else ''}`"
    declared = f"`{fn.returns} {fn.name}(...)`"
    foreign = next((b for b in item.blocks if _FOREIGN_BLOCK.match(b)), None)
    if foreign is not None:
        return (f"{fn.name} is defined inside `{foreign}`, so to the compiler it is not DIPU's "
                f"dipu::devapis::{fn.name} (it clashes with DIPU's declaration, which would stay undefined): "
                f"define it in namespace dipu::devapis itself, or give it another name")
    if item.scope != CONTRACT_SCOPE:
        return None                  # a function of a nested namespace: carried as the vendor's own code
    if _returns_as_declared(item.returns) != fn.returns:
        return (f"{fn.name} is defined as {written}, where DIPU declares {declared}: the import reads DIPU's "
                f"functions only as declared (DIPU_API before them aside), and what else stands before the name "
                f"would be lost, or makes it another function to the compiler (static, inline, extern \"C\"); "
                f"write {declared} {{ ... }}, with a macro's use before it on a line of its own, ended with `;`")
    if re.sub(r"\s", "", item.suffix) not in ("", "noexcept(false)"):
        return (f"{fn.name} is defined as {written}, where DIPU declares {declared}, without `{item.suffix}`: "
                f"the compiler refuses a definition that differs from its declaration so; write {declared} {{ ... }}")
    return None


@dataclass(frozen=True)
class Placed:
    """An item where the compiler reads it: in its file, or where a header read as part of a file is included."""

    file: SourceFile
    item: Item
    pasted: bool = True          # False: in a header pasted before (include guards make it empty to the compiler)


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

    @cached_property
    def _read_as_part(self) -> dict[tuple[int, int], SourceFile]:
        """(file, offset) of each #include of a header read as part of the file including it -> the header."""
        out = {}
        for f in [*self.files.values(), *self.headers.values()]:
            for item in f.items:
                if item.kind is ItemKind.INCLUDE and item.local:
                    h = self.local(item.name, self.path_of(f))
                    if h in self.headers and h not in self.shared:
                        out[id(f), item.start] = self.headers[h]
        return out

    def header_at(self, f: SourceFile, item: Item) -> SourceFile | None:
        """The header read as part of *f* that the #include *item* of it includes; None where it is no such header."""
        return self._read_as_part.get((id(f), item.start))

    def unit(self, root: SourceFile, pasted: set[int]) -> list[Placed]:
        """*root*'s items as the compiler reads them, each header read as part of it in place of its #include;
        a header already in *pasted* (by id, which this adds to) comes again as not pasted, as its include
        guard leaves it, and one that includes itself is not read again."""
        out: list[Placed] = []
        pasted.add(id(root))
        stack = [(root, iter(root.items), True)]
        while stack:
            f, items, first = stack[-1]
            item = next(items, None)
            if item is None:
                stack.pop()
                continue
            out.append(Placed(f, item, first))
            h = self.header_at(f, item) if item.kind is ItemKind.INCLUDE else None
            if h is not None and all(h is not g for g, _, _ in stack):
                stack.append((h, iter(h.items), first and id(h) not in pasted))
                pasted.add(id(h))
        return out

    def included(self, f: SourceFile) -> list[SourceFile]:
        """The local headers read as part of *f*: those it includes, and those they include."""
        out: list[SourceFile] = []
        todo = [f]
        while todo:
            g = todo.pop(0)
            for item in g.items:
                h = self.header_at(g, item) if item.kind is ItemKind.INCLUDE else None
                if h is not None and h is not f and h not in out:
                    out.append(h)
                    todo.append(h)
        return out

    def with_headers(self, f: SourceFile) -> list[SourceFile]:
        """*f* after the local headers read as part of it, runtime files aside."""
        return [h for h in self.included(f) if h not in self.runtime_files] + [f]

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


def dipu_header(path: Path, folder: Path) -> str | None:
    """How DIPU's include path names *path* (csrc_dipu/...), where it is one of DIPU's own headers beside
    the vendor folders of the DIPU checkout *folder* sits in (csrc_dipu/vendor/<name>); None otherwise."""
    vendors = folder.resolve().parent
    csrc = vendors.parent
    if vendors.name != "vendor" or csrc.name != "csrc_dipu" or not path.is_relative_to(csrc) \
            or path.is_relative_to(vendors):
        return None
    return "csrc_dipu/" + path.relative_to(csrc).as_posix()


def config_of(vendor: str, torch_code: int) -> Config:
    defined = {f"DIPU_VENDOR_NAME_{vendor.upper()}": "1", "DIPU_TORCH_VERSION": str(torch_code),
               "__cplusplus": "201703"}
    defined.update(BUILD_DEFINES.get(vendor, {}))
    return Config(defined, ("USE_", "DIPU_VENDOR_NAME_"))


@dataclass(frozen=True)
class _Text:
    """A file's text, its conditionals resolved, and the warnings reading it gave."""

    path: str                                # as messages name it
    text: str
    code: str                                # its mask
    branches: tuple[Branch, ...]
    notes: tuple[Diagnostic, ...]

    def source(self, blocks: tuple[str, ...] = ()) -> SourceFile:
        return source_file(self.path, self.text, self.code, list(self.branches), blocks)


def _resolved(path: Path, config: Config, included: Callable[[int, str, bool], None] | None = None) -> _Text:
    raw = inputfile.read(path, key="--runtime")
    notes = []
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
        text, code, branches = resolve(text, mask(text), config, included)
    except Unreadable as exc:
        raise UserError([Diagnostic(Loc(shown(path), exc.line, 1), "--runtime", f"{exc}: the compiler refuses it")]) \
            from None
    notes += [warning(shown(path), b.line, f"`{b.condition.rstrip(chr(92)).strip()}` depends on the SDK: "
                                           "imported as if it holds (the newest SDK); edit the result for an older one")
              for b in branches]
    return _Text(shown(path), text, code, tuple(branches), tuple(notes))


def _read(path: Path, config: Config, notes: list[Diagnostic]) -> SourceFile:
    text = _resolved(path, config)
    notes += text.notes
    return text.source()


# How deep #includes may nest (GCC's limit).
_MAX_INCLUDE_DEPTH = 200


@dataclass(frozen=True)
class _ReadOtherwise:
    """An #include of a header whose conditionals the including file decides otherwise than the first."""

    at: Loc
    name: str
    first: str                               # where the header is first included


def _read_sources(paths: list[Path], base: Config, folder: Path, roots: tuple[Path, ...], vendor: str,
                  notes: list[Diagnostic]) -> tuple[dict[Path, SourceFile], dict[Path, _Text],
                                                    dict[Path, _ReadOtherwise]]:
    """The compiled files *paths*, each read as the compiler reads it: from the configuration *base* (the
    macros of one file unseen by another), each local header it includes resolved where it is included (the
    header's #define seen by what follows), once; the text of each such header as first read; and where one
    reads otherwise. An error at the #include of a file outside the *roots* (the folders DIPU compiles the
    runtime from)."""
    skipped = {(folder / "vendorapi.h").resolve()} | {p.resolve() for p in paths}
    headers: dict[Path, _Text] = {}
    first_at: dict[Path, str] = {}
    otherwise: dict[Path, _ReadOtherwise] = {}

    def resolved(path: Path, config: Config, seen: set[Path], depth: int) -> _Text:
        def included(line: int, name: str, quoted: bool) -> None:
            h = local(name, path, folder, vendor) if quoted else None
            if h is None or h in skipped or h in seen or dipu_header(h, folder) is not None:
                return
            at = Loc(shown(path), line, 1)
            if not any(h.is_relative_to(root) for root in roots):
                raise UserError([Diagnostic(at, "--runtime", (
                    f"includes \"{name}\" ({display_path(str(h))}), a file outside the runtime folder "
                    f"{display_path(shown(folder))}: the import reads and carries only the folder's own files (and "
                    "those DIPU compiles from another folder); copy the header into the folder"))])
            if depth == _MAX_INCLUDE_DEPTH:
                raise UserError([Diagnostic(at, "--runtime", (
                    f"includes \"{name}\" inside {_MAX_INCLUDE_DEPTH} nested headers, deeper than the compiler "
                    "nests #include; include fewer headers in one another"))])
            seen.add(h)
            text = resolved(h, config, seen, depth + 1)
            first = headers.setdefault(h, text)
            if first is text:
                first_at[h] = f"{display_path(shown(path))}:{line}"
                notes.extend(text.notes)
            elif first.text != text.text:
                otherwise.setdefault(h, _ReadOtherwise(at, name, first_at[h]))
        return _resolved(path, config, included)

    files = {}
    for p in paths:
        text = resolved(p, Config(dict(base.defined), base.build_prefixes), set(), 0)
        notes.extend(text.notes)
        files[p] = text.source()
    return files, headers, otherwise


def _refuse_headers_read_otherwise(otherwise: dict[Path, _ReadOtherwise], shared: set[Path]) -> None:
    """An error at the #include of a header the runtime reads as part of its files that one file reads
    otherwise than another (which stays a file, included where DIPU includes it, is read by each)."""
    for h, found in otherwise.items():
        if h not in shared:
            raise UserError([Diagnostic(found.at, "--runtime", (
                f"includes \"{found.name}\", whose #if decide otherwise here than where {found.first} includes "
                "it (after the macros each file defines before it): the import pastes the header's code once, "
                "into the vendor file; make it read the same for both"))])


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
    compiled = list(srcs.files + srcs.conditional)
    roots = (folder.resolve(), *{p.resolve().parent for p in compiled})
    files, texts, otherwise = _read_sources(compiled, config, folder, roots, vendor, notes)
    headers = _read_headers(files, texts, folder, vendor)
    for f in ([api] if api else []) + list(files.values()) + list(headers.values()):
        _refuse_splices(f)
    _refuse_macro_definitions(([api] if api else []) + list(files.values()) + list(headers.values()))
    defined, runtime_files = _defined(list(headers.values()) + list(files.values()))
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
            if h is None or h == p.resolve() or h in runtime_paths \
                    or (p != api_path and dipu_header(h, folder) is not None):   # carried where DIPU has it
                continue
            if not h.is_relative_to(folder.resolve()):
                # it stays a file beside the rendered runtime, and only the folder's files are carried there
                raise UserError([Diagnostic(Loc.at(shown(p), text, m.start()), "--runtime", (
                    f"includes \"{m.group(1)}\" ({display_path(str(h))}), which is outside the runtime folder "
                    f"{shown(folder)}: the import carries only the folder's files, so the rendered runtime would "
                    "not find it; move the header into the folder"))])
            shared.add(h)
    _refuse_headers_read_otherwise(otherwise, shared)
    reading = Reading(vendor, folder, srcs, api, files, headers, runtime_files, defined, generator, shared)
    for f in reading.runtime_sources():
        _refuse_unreadable_code(f)
    for f in ([api] if api else []) + reading.runtime_sources() + ([generator] if generator else []):
        _refuse_includes_in_blocks(reading, f)
    return reading


def _error(file: SourceFile, line: int, message: str) -> UserError:
    return UserError([Diagnostic(Loc(file.path, line, 1), "--runtime", message)])


def _place(blocks: tuple[str, ...]) -> str:
    """Where an item of *blocks* sits, in words."""
    return f"inside `{' { '.join(blocks)} {{`" if blocks else "at the top level"


def _read_headers(files: dict[Path, SourceFile], texts: dict[Path, _Text], folder: Path,
                  vendor: str) -> dict[Path, SourceFile]:
    """The local headers *files* include, and those these include, of *texts* (the headers read as part of
    the files), each read in the blocks its #include sits in, which declare its names; an error where two
    #includes of one header sit in different blocks."""
    headers: dict[Path, SourceFile] = {}
    first: dict[Path, tuple[SourceFile, Item]] = {}
    todo = list(files.items())
    while todo:
        p, f = todo.pop(0)
        for inc in (i for i in f.items if i.kind is ItemKind.INCLUDE and i.local):
            h = local(inc.name, p, folder, vendor)
            if h not in texts:
                continue
            if h not in headers:
                headers[h] = texts[h].source(inc.blocks)
                first[h] = (f, inc)
                todo.append((h, headers[h]))
            elif first[h][1].blocks != inc.blocks:
                other, at = first[h]
                raise _error(f, inc.line, (
                    f"includes \"{inc.name}\" {_place(inc.blocks)}, and {other.path}:{at.line} includes it "
                    f"{_place(at.blocks)}: the import reads a header once, its names declared in one place; "
                    "include it in the same place in both"))
    return headers


def _refuse_splices(f: SourceFile) -> None:
    """An error at a backslash-newline the import would misread: one outside a #define and outside the
    body of a function it carries as it is."""
    for at in splices(f.code):
        item = next((i for i in f.items if i.start <= at < i.end), None)
        if item is None or item.kind is not ItemKind.FUNCTION or is_contract(item) \
                or not item.body[0] <= at < item.body[1]:
            raise _error(f, f.line_of(at), (
                "a backslash ends this line outside a #define, so the compiler joins the next line to it (in the "
                "middle of a name, where one runs on): the import reads this code by lines and would misread it; "
                "join the two lines"))


def _defined(files: list[SourceFile]) -> tuple[dict[str, tuple[SourceFile, Item]], list[SourceFile]]:
    """Where each of DIPU's functions is defined, and the files defining any; an error at a definition
    the import can read neither as DIPU's function nor as the vendor's own, and at a second definition."""
    defined: dict[str, tuple[SourceFile, Item]] = {}
    runtime_files: list[SourceFile] = []
    for f in files:
        for item in f.functions():
            problem = contract_problem(item)
            if problem is not None:
                raise _error(f, item.line, problem)
        found = [(BY_NAME[(i.name, len(i.params))], i) for i in f.functions() if is_contract(i)]
        if found:
            runtime_files.append(f)
        for fn, item in found:
            if fn.key in defined:
                other, at = defined[fn.key]
                raise _error(f, item.line, (
                    f"{fn.name} is defined again here (first at {other.path}:{at.line}): C++ allows one "
                    "definition, and DIPU would not build; remove one"))
            defined[fn.key] = (f, item)
    return defined, runtime_files


def _macros_naming(files: list[SourceFile], names: frozenset[str]) -> dict[str, str]:
    """Each macro *files* define whose definition names one of *names*, itself or through the other
    macros it uses -> that name."""
    users: dict[str, set[str]] = {}          # a name -> the macros whose definition holds it
    for f in files:
        for item in f.items:
            if item.kind is ItemKind.DEFINE:
                for word in set(_IDENT.findall(f.code[item.start:item.end])):
                    users.setdefault(word, set()).add(item.name)
    naming: dict[str, str] = {}
    todo = [(name, name) for name in sorted(names)]
    while todo:
        word, named = todo.pop()
        for macro in sorted(users.get(word, ())):
            if macro not in naming:
                naming[macro] = named
                todo.append((macro, named))
    return naming


def _top_level_code(f: SourceFile, item: Item) -> str:
    """The masked code of *item* that stands at the top level: a function's head, or a declaration
    less what its braces hold."""
    if item.kind is ItemKind.FUNCTION:
        return f.code[item.start:item.body[0]]
    out, depth = [], 0
    for c in f.code[item.start:item.end]:
        depth += c == "{"
        out.append(c if depth == 0 else " ")
        depth -= c == "}"
    return "".join(out)


def _refuse_macro_definitions(files: list[SourceFile]) -> None:
    """An error at a macro used at the top level that may define one of DIPU's functions: its arguments
    or its definition name one. The import would not see the function, and write it a second time."""
    naming = _macros_naming(files, CONTRACT_NAMES)
    watched = CONTRACT_NAMES | set(naming)
    for f in files:
        for item in f.items:
            if item.kind in (ItemKind.INCLUDE, ItemKind.DEFINE, ItemKind.DIRECTIVE):
                continue
            code = _top_level_code(f, item)
            if watched.isdisjoint(_IDENT.findall(code)):
                continue
            uses = [(f"the macro use `{name}(...)` at the top level names", min(named))
                    for name, s, e in invocations(code) if (named := CONTRACT_NAMES & set(_IDENT.findall(code[s:e])))]
            uses += [(f"the macro {word}, used here at the top level, expands to code naming", naming[word])
                     for word in _IDENT.findall(code) if word in naming]
            if uses:
                what, fn = uses[0]
                raise _error(f, item.line, (
                    f"{what} {fn}, one of DIPU's functions, which it may define: the import reads DIPU's functions "
                    f"only from definitions written out, and would write {fn} a second time beside it; write the "
                    f"definition of {fn} out in C++"))


def _refuse_includes_in_blocks(reading: Reading, f: SourceFile) -> None:
    """An error at an #include inside a namespace or extern block that the rendered runtime would move to
    the top of its file (an SDK header, one that stays a file): what it declares would change. A local
    header read as part of the runtime is read in those blocks and stays there."""
    for item in f.items:
        if item.kind is not ItemKind.INCLUDE or not item.blocks:
            continue
        h = reading.local(item.name, reading.path_of(f)) if item.local and f is not reading.api else None
        if h is None or h not in reading.headers or h in reading.shared:
            written = f'"{item.name}"' if item.local else f"<{item.name}>"
            raise _error(f, item.line, (
                f"#include {written} sits {_place(item.blocks)}, and the rendered runtime "
                "includes its headers at the top of its files, outside any block, which would change what the "
                "header declares: move the #include to the top level"))
