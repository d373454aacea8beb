"""A DIPU vendor runtime folder as the vendor file's runtime: and build:
sections plus the files that stay hand-written. The folder's CMake says what
DIPU compiles; vendorapi.h gives the handle types, the headers, the check
macros (as checkers) and what other files need from it (runtime.vendorapi);
each devapis/dicl function DIPU defines becomes an entry (bodies.py); what
else the runtime files define goes to the section's prelude; the generator
becomes custom code; every other file is carried as it is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.output_paths import generator_file
from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.runtime import build as cmake
from deeplink_gen.commands.import_dipu.runtime import defects
from deeplink_gen.commands.import_dipu.runtime.bodies import Tables, Translated, end_statements, translate
from deeplink_gen.commands.import_dipu.runtime.checkers import Macro, checker_name, read_macro
from deeplink_gen.commands.import_dipu.runtime.cxx import Item, ItemKind, SourceFile, uncommented
from deeplink_gen.commands.import_dipu.runtime.reading import (Placed, Reading, dipu_header, is_contract,
                                                               read_folder, shown)
from deeplink_gen.commands.import_dipu.runtime.tables import SIZES, Table, find_tables, size_clashes
from deeplink_gen.errors import Diagnostic, Loc, UserError, display_path
from deeplink_gen.input_paths import MAX_HAND_WRITTEN
from deeplink_gen.load.vendor import SOURCES_README
from deeplink_gen.interfaces.dipu import COMM_FUNCTIONS, DEVICE_FUNCTIONS, FUNCTIONS
from deeplink_gen.model.interfaces import DipuFunction
from deeplink_gen.validate.names import path_problem

_TYPES = {"deviceStream_t": "stream", "deviceEvent_t": "event", "diclComm_t": "comm", "commUniqueId": "unique_id",
          "deviceHandle_t": "handle"}
# The handle types every vendor file's runtime.types names (the rest have defaults).
_REQUIRED_TYPES = ("stream", "event", "comm", "unique_id")
_NOT_SDK = ("c10/", "ATen/", "torch/", "csrc_dipu/")


@dataclass
class RuntimeImport:
    """What one runtime folder becomes."""

    vendor: str
    sections: dict                                  # runtime: and build:
    files: dict[str, bytes]                         # hand-written files, relative to vendors/<vendor>/
    notes: list[Diagnostic] = field(default_factory=list)
    report: list[str] = field(default_factory=list)


# The blocks the rendered runtime files paste their vendor code into.
_DEVAPIS = ("namespace dipu", "namespace devapis")
_PRAGMA_ONCE = re.compile(r"\s*(?:#|%:)\s*pragma\s+once\b")
_OTHER_INCLUDE = re.compile(r"\s*(?:#|%:)\s*(include_next|import|embed)\b")


def _namespaced(placed: list[tuple[SourceFile, Item]], base: tuple[str, ...], macros: set[str] = frozenset()) -> str:
    """The items' text in order, wrapped in the blocks (namespaces, extern "C") they sit in below
    *base*, each invocation of *macros* ended with `;`."""
    out: list[str] = []
    open_: tuple[str, ...] = ()
    for file, item in [*placed, (None, None)]:          # None: the end, where every block closes
        blocks = () if item is None else (
            item.blocks[len(base):] if item.blocks[:len(base)] == base else item.blocks)
        while open_ and blocks[:len(open_)] != open_:
            out.append(f"}}  // {open_[-1]}")
            open_ = open_[:-1]
        if item is None:
            break
        for block in blocks[len(open_):]:
            out.append(f"{block} {{")
            open_ += (block,)
        out.append(end_statements(file.slice(item), file.code[item.start:item.end], set(macros)).rstrip())
    return "\n\n".join(out).strip() + "\n" if out else ""


def _carried_code(f: SourceFile, item: Item) -> bool:
    """Whether the rendered file carries *item* where it stands: all but its #includes, which go to the top of
    the file, and `#pragma once`, which means nothing there. An error at a directive that includes a file
    otherwise than #include, which would include it inside the block the code is pasted into."""
    if item.kind is ItemKind.DIRECTIVE and (other := _OTHER_INCLUDE.match(f.code, item.start)) is not None:
        raise UserError([Diagnostic(Loc(f.path, item.line, 1), "--runtime", (
            f"#{other.group(1)} includes a file where the import reads only #include, whose headers the rendered "
            f"file includes at its top; write #include"))])
    return item.kind is not ItemKind.INCLUDE and not (
        item.kind is ItemKind.DIRECTIVE and _PRAGMA_ONCE.match(f.code, item.start))


def import_runtime(vendor: str, folder: Path, *, torch_code: int, variant: str | None = None) -> RuntimeImport:
    """Import *folder* (a DIPU vendor folder) for *vendor*. *variant* picks the
    version subfolder where DIPU's CMake picks one by SDK version."""
    notes: list[Diagnostic] = []
    report: list[str] = []
    reading = read_folder(vendor, folder, variant, torch_code, notes, report)
    macros, checkers, macro_checker = _checkers(reading, notes)
    sources = reading.runtime_sources()
    tables = [t for f in sources for t in find_tables(f, notes)]
    names = Tables(frozenset(t.name for t in tables if t.kind == "dtype"),
                   frozenset(t.name for t in tables if t.kind == "op"))
    by_status = {}
    for name, c in checkers.items():
        by_status.setdefault(c["status"], name)
    translated = {key: (f, item, translate(FUNCTIONS[key], f, item, macro_checker, names, set(macros), by_status))
                  for key, (f, item) in reading.defined.items()}
    translated = _grant(translated, checkers)
    runtime = _api_sections(reading, checkers, macro_checker, notes)
    for section, fns in (("device", DEVICE_FUNCTIONS), ("comm", COMM_FUNCTIONS)):
        runtime[section] = _section(reading, section, fns, translated, macro_checker, tables, notes)
    for strong, what in ((True, "written unsupported"), (False, "left to DIPU's default")):
        missing = [f.key for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS if f.key not in translated and f.strong == strong]
        if missing:
            report.append(f"{vendor}: not defined by DIPU's folder ({what}): {', '.join(missing)}")
    runtime["generator"] = (_generator(reading.generator, set(macro_checker)) if reading.generator is not None
                            else {"kind": "seed_offset"})
    carried = _carried(reading, notes)
    build = _build(reading, runtime["headers"], carried, notes)
    widened = {t.name for t in tables if t.kind == "dtype" and size_clashes(t)}
    notes += defects.check(translated, checkers, macros, widened, sources)
    report.append(f"{vendor}: {len(translated)} functions ("
                  + ", ".join(f"{n} {k}" for k, n in sorted(_kinds(translated).items()))
                  + f"), {len(checkers)} checkers, {len(carried)} hand-written files")
    return RuntimeImport(vendor, {"runtime": runtime, "build": build}, carried, notes, report)


_CHECKER_ORDER = ("macro", "status", "success", "not_ready", "out_of_memory", "clear_error", "message_function",
                  "on_failure")


def _grant(translated: dict, checkers: dict[str, dict]) -> dict:
    """Give each checker what the status patterns of its functions need (not_ready codes,
    out_of_memory, clear_error) where they agree with each other and with the checker; a
    function whose needs cannot be granted stays custom."""
    wanted: dict[str, dict[str, set]] = {}
    for _, _, t in translated.values():
        for field_, value in t.needs:
            wanted.setdefault(t.checker, {}).setdefault(field_, set()).add(value)
    granted: dict[str, dict] = {}
    for name, fields in wanted.items():
        c = checkers[name]
        ok = all(len(values) == 1 for values in fields.values()) and next(iter(fields.get("success", {None}))) in (
            None, *c["success"])
        if ok:
            granted[name] = {f: next(iter(v)) for f, v in fields.items() if f != "success" and next(iter(v)) is not None}
    out = {}
    for key, (f, item, t) in translated.items():
        if t.needs and t.checker not in granted:
            t = Translated(t.fallback, "custom", None, t.bracket_lookups)
        out[key] = (f, item, t)
    for name, fields in granted.items():
        merged = {**checkers[name], **{k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}}
        checkers[name] = {k: merged[k] for k in _CHECKER_ORDER if k in merged}
    return out


def _checkers(reading: Reading, notes: list[Diagnostic]) -> tuple[dict[str, Macro], dict[str, dict], dict[str, str]]:
    """The folder's one-argument macros, the checkers the check macros among them become,
    and which checker each such macro became."""
    macros: dict[str, Macro] = {}
    files = ([reading.api] if reading.api else []) + reading.runtime_sources()
    _refuse_redefined_macros(files)
    for f in files:
        for item in f.items:
            if item.kind is ItemKind.DEFINE and item.macro_params is not None:
                macros.setdefault(item.name, read_macro(f, item))
    checkers: dict[str, dict] = {}
    macro_checker: dict[str, str] = {}
    for name, m in macros.items():
        if m.checker is not None:
            cname = checker_name(name, set(checkers))
            checkers[cname] = dict(m.checker)
            macro_checker[name] = cname
        elif name.upper() == name and re.search(r"(?i)call|check|throw|assert", name):
            notes.append(warning(m.file.path, m.item.line,
                                 f"the check macro {name} has no checker form ({m.why}): it stays C++ "
                                 "and the functions using it are custom"))
    return macros, checkers, macro_checker


def _refuse_redefined_macros(files: list[SourceFile]) -> None:
    """An error at a macro defined a second time, otherwise: the preprocessor takes each definition for
    the code after it, where the import reads one definition of each macro (a check macro, one checker)."""
    first: dict[str, tuple[SourceFile, Item, str]] = {}
    for f in files:
        for item in f.items:
            if item.kind is not ItemKind.DEFINE:
                continue
            written = _definition(f, item)
            other, at, was = first.setdefault(item.name, (f, item, written))
            if was != written:
                where = f"line {at.line}" if other is f else f"{display_path(other.path)}:{at.line}"
                raise UserError([Diagnostic(Loc(f.path, item.line, 1), "--runtime", (
                    f"{item.name} is defined again here, otherwise than at {where}: the preprocessor takes each "
                    "definition for the code after it, but the rendered runtime writes the vendor's macros before "
                    "all of DIPU's functions (and a check macro as one checker), where every function would see "
                    "one definition; give the two macros different names"))])


def _api_sections(reading: Reading, checkers: dict[str, dict], macro_checker: dict[str, str],
                  notes: list[Diagnostic]) -> dict:
    """headers, types, checkers and vendorapi: what vendorapi.h says."""
    api = reading.api
    items = api.items if api else ()
    sdk_headers = [_header(api, i, i.name) for i in items
                   if i.kind is ItemKind.INCLUDE and not i.local and not i.name.startswith(_NOT_SDK)]
    runtime: dict = {"headers": sdk_headers}
    types, default_stream, rest = _api(api, macro_checker, notes) if api else ({}, None, [])
    missing = [name for name, key in _TYPES.items() if key in _REQUIRED_TYPES and key not in types]
    if missing:
        path = reading.folder / "vendorapi.h"
        raise UserError([Diagnostic(Loc(str(path)), "--runtime", (
            (f"declares no {', '.join(missing)} (as `using {missing[0]} = ...;`)" if api else
             "is missing") + ": a DIPU vendor runtime folder's vendorapi.h names its stream, event, communicator "
            "and unique-id types; nothing was written"))])
    if default_stream is not None:
        types["default_stream"] = default_stream
    runtime["types"] = types
    if checkers:
        runtime["checkers"] = checkers
    # what vendorapi.h includes besides the SDK and what the rendered one includes anyway
    includes = [_header(api, i, i.name) for i in items if i.kind is ItemKind.INCLUDE and i.name not in sdk_headers
                and not i.name.startswith("csrc_dipu/") and i.name != "c10/util/Exception.h"]
    code = _namespaced([(api, i) for i in rest], ()) if api and rest else ""
    if includes or code:
        runtime["vendorapi"] = {**({"includes": includes} if includes else {}), **({"code": code} if code else {})}
    return runtime


def _section(reading: Reading, section: str, fns: tuple[DipuFunction, ...], translated: dict,
             macro_checker: dict[str, str], tables: list[Table], notes: list[Diagnostic]) -> dict:
    """The device: or comm: section: its checker, includes, prelude, tables and functions."""
    counts: dict[str, int] = {}
    for key, (_, _, t) in translated.items():
        if FUNCTIONS[key].section == section and t.checker not in (None, "none"):
            counts[t.checker] = counts.get(t.checker, 0) + 1
    checker = max(sorted(counts), key=lambda c: counts[c]) if counts else None
    body: dict = {"checker": checker} if checker else {}
    defining = {id(item) for k, (_, item, _) in translated.items() if FUNCTIONS[k].section == section}
    units = _units(reading, {id(f) for k, (f, _, _) in translated.items() if FUNCTIONS[k].section == section})
    pasted = [(p.file, p.item) for unit in units for p in unit if p.pasted]
    _refuse_moved_macros(units, defining, set(macro_checker))
    _refuse_includes_after_macros(reading, units)
    # what still names a table: custom bodies and the macros that stay C++
    users = " ".join([str(t.entry) for _, _, t in translated.values() if t.kind == "custom"]
                     + [f.slice(i) for f, i in pasted if i.kind is ItemKind.DEFINE and i.name not in macro_checker])
    prelude: list[tuple[SourceFile, Item]] = []
    includes: list[str] = []
    unique = None
    for f, item in pasted:
        text = f.slice(item)
        if is_contract(item) or (item.kind is ItemKind.DEFINE and item.name in macro_checker):
            continue
        if item.kind is ItemKind.INCLUDE:
            includes += _included(reading, f, item)
        elif item.kind is ItemKind.DECLARATION and "DICL_UNIQUE_ID_BYTES_SIZE" in text:
            m = re.search(r"=\s*([\w:]+)\s*;", text)
            unique = m.group(1) if m else unique
        elif _carried_code(f, item) and not any(t.file is f and t.line == f.line_of(item.start) and t.name not in users
                                                 for t in tables):
            _refuse_outside(f, item, ("dipu", "devapis"))
            prelude.append((f, item))
    if includes:
        body["includes"] = list(dict.fromkeys(includes))
    if section == "comm":
        body.update(_comm_tables(reading, unique, tables, notes))
    text = _namespaced(prelude, _DEVAPIS, set(macro_checker))
    if text.strip():
        body["prelude"] = text.strip() + "\n"
    entries = {}
    for fn in fns:
        if fn.key in translated:
            entries[fn.key] = translated[fn.key][2].finish(checker)
        elif fn.strong:          # DIPU's build would not link without it: it fails when called
            entries[fn.key] = "unsupported"
    body["functions"] = entries
    return body


def _units(reading: Reading, defining: set[int]) -> list[list[Placed]]:
    """The files defining the section's functions (in the files of *defining*, by id) as the compiler reads
    them, their headers in place: each compiled runtime file, and each runtime header no such file includes."""
    compiled = [f for f in reading.runtime_files if f in reading.files.values()]
    covered = {id(h) for f in compiled for h in reading.included(f)}
    roots = compiled + [f for f in reading.runtime_files if f not in compiled and id(f) not in covered]
    pasted: set[int] = set()
    return [reading.unit(f, pasted) for f in roots
            if any(id(g) in defining for g in [f, *reading.included(f)])]


def _included(reading: Reading, f: SourceFile, item: Item) -> list[str]:
    """What the rendered section includes for the #include *item* of *f*: an SDK header (quoted or not, found
    on the include path), DIPU's own header, or a local header that stays a file; nothing for a header the
    rendered file includes anyway or reads as part of it."""
    name = item.name
    if item.local and (h := reading.local(item.name, reading.path_of(f))) is not None:
        if h in reading.shared:
            return [h.relative_to(reading.folder.resolve()).as_posix()]
        if h in reading.headers or h == (reading.folder / "vendorapi.h").resolve():
            return []
        name = dipu_header(h, reading.folder)
        if name is None:
            raise UserError([Diagnostic(Loc(f.path, item.line, 1), "--runtime", (
                f"includes \"{item.name}\", a file DIPU's CMake also compiles on its own: the import reads each "
                "compiled file once, as a file of its own; include a header instead"))])
    return [] if name.startswith("csrc_dipu/runtime/device/") else [_header(f, item, name)]


# A header as the vendor file's include lists take it (vendor.schema.json's runtime_header).
_HEADER = re.compile(r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_./+-]*")


def _header(f: SourceFile, item: Item, name: str) -> str:
    """*name*, which the #include *item* of *f* includes, as the vendor file lists it; an error at the
    #include where the list cannot hold it."""
    if not _HEADER.fullmatch(name):
        written = f'"{item.name}"' if item.local else f"<{item.name}>"
        raise UserError([Diagnostic(Loc(f.path, item.line, 1), "--runtime", (
            f"#include {written} names a header {'that is no file of the runtime folder, ' if item.local else ''}"
            "by a path the vendor file cannot list (it includes headers by their path on the include path: "
            "letters, digits and _ . / + -, without ..); include it by such a path"))])
    return name


# What gives a declaration at namespace scope internal linkage, or declares a type or alias: what moving
# it into an inner namespace keeps meaning the same to the code of its own file.
_FILE_LOCAL = re.compile(r"(?:\[\[.*?\]\]\s*)*(?:static|inline|constexpr|const|typedef|using|struct|class|union|enum|"
                         r"template|static_assert|namespace)\b")


def _refuse_outside(f: SourceFile, item: Item, base: tuple[str, ...]) -> None:
    """An error at code the rendered file pastes inside namespace *base* that sits elsewhere and would mean
    something else there: a definition by a qualified name, code in another named namespace, or a function
    or variable that other files may name (external C++ linkage). Code in *base* or a namespace enclosing it
    that only this file names (internal linkage, a type, an alias), code of an anonymous namespace and code
    with C linkage mean the same there."""
    namespace = item.namespace
    if item.kind not in (ItemKind.FUNCTION, ItemKind.DECLARATION, ItemKind.INVOCATION) \
            or namespace[:len(base)] == base and (not item.qualifier or item.scope[:len(base)] == base):
        return
    text = uncommented(f.slice(item), f.code[item.start:item.end])
    c_linkage = any(b.startswith('extern "') and b != 'extern "C++"' for b in item.blocks) \
        or re.match(r'extern\s*"C"', text) is not None
    if not item.qualifier and (c_linkage or "" in namespace or (
            base[:len(namespace)] == namespace and _FILE_LOCAL.match(text))):
        return
    where = f"in namespace {'::'.join(namespace)}" if namespace else "at the global scope"
    if item.qualifier:
        what = f"{'::'.join(item.qualifier + (item.name,))} is defined by its qualified name {where}"
        meaning = "a definition by a name qualified so does not compile"
    elif item.kind is ItemKind.FUNCTION:
        what = f"{item.name} is defined {where}"
        meaning = (f"it would be {'::'.join(base + namespace + (item.name,))}, another function than the one "
                   "other files call (or the SDK's headers declare)")
    else:
        what = f"this {'macro use' if item.kind is ItemKind.INVOCATION else 'declaration'} sits {where}"
        meaning = "what it declares would be another entity than the one other files (or the SDK's headers) name"
    raise UserError([Diagnostic(Loc(f.path, item.line, 1), "--runtime", (
        f"{what}, outside namespace {'::'.join(base)}: the rendered file pastes the runtime files' own code "
        f"inside namespace {'::'.join(base)}, where {meaning}; move it into a hand-written source file of the "
        f"folder (which the import carries as it is), or, where only this file uses it, into namespace "
        f"{'::'.join(base)} by its own name"))])


_UNDEF = re.compile(r"\s*(?:#|%:)\s*undef\s+([A-Za-z_]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_UNTOUCHED = "(as the SDK leaves it)"     # a macro no runtime file has defined or undefined yet


def _definition(f: SourceFile, item: Item) -> str:
    """A #define as the preprocessor compares two: its tokens, comments and line-continuing backslashes aside."""
    return " ".join(uncommented(f.slice(item), f.code[item.start:item.end]).replace("\\", " ").split())


def _macro_change(p: Placed) -> tuple[str, str | None] | None:
    """The macro *p* defines or undefines, with its definition (None: undefined); None for other items."""
    if p.item.kind is ItemKind.DEFINE:
        return p.item.name, _definition(p.file, p.item)
    m = _UNDEF.match(p.file.code, p.item.start) if p.item.kind is ItemKind.DIRECTIVE else None
    return (m.group(1), None) if m else None


def _refuse_moved_macros(units: list[list[Placed]], defining: set[int], checker_macros: set[str]) -> None:
    """An error at a #define or #undef the rendered file would move before code that uses its macro and sees
    another definition of it (or none) where it stands: the rendered file writes the runtime files' own code,
    their macros and #undef with it, before all of DIPU's functions (the items of *defining*, by id), and
    the files of a section one after another."""
    changes = [(p, change) for unit in units for p in unit if (change := _macro_change(p)) is not None]
    for p, (name, definition) in changes:
        if definition is None and name in checker_macros:
            raise UserError([Diagnostic(Loc(p.file.path, p.item.line, 1), "--runtime", (
                f"{name} is a check macro, which the import turns into a checker that the rendered vendorapi.h "
                "defines for the whole runtime: `#undef` of it would undefine it for every function after the "
                "vendor's code; remove the #undef"))])
    names = {name for _, (name, _) in changes} - checker_macros
    if not names:
        return
    expands: dict[str, set[str]] = {}        # a macro -> the names of *names* its definitions use
    for p, (name, definition) in changes:
        if definition is not None:
            expands.setdefault(name, set()).update(set(_IDENT.findall(definition)) & names)
    merged: dict[str, tuple[Placed, str | None]] = {}    # what the rendered file has seen so far
    functions: list[tuple[Placed, dict[str, str | None]]] = []
    for unit in units:
        own: dict[str, str | None] = {}                # what the file has seen so far
        for p in unit:
            change = _macro_change(p)
            if change is not None and change[0] in names:
                own[change[0]] = change[1]
                if p.pasted:
                    merged[change[0]] = (p, change[1])
                continue
            if not p.pasted or p.item.kind not in (ItemKind.FUNCTION, ItemKind.DECLARATION, ItemKind.INVOCATION) \
                    or (is_contract(p.item) and id(p.item) not in defining):
                continue
            used = {n: own.get(n, _UNTOUCHED) for n in _uses(p.file.code[p.item.start:p.item.end], names, expands)}
            if id(p.item) in defining:
                functions.append((p, used))       # it comes after all of the vendor's code
                continue
            for name, saw in used.items():
                if name in merged and merged[name][1] != saw:      # an earlier file's macro
                    raise _moved(name, merged[name][0], p, saw)
    for p, used in functions:
        for name, saw in used.items():
            if merged[name][1] != saw:
                raise _moved(name, merged[name][0], p, saw)


def _refuse_includes_after_macros(reading: Reading, units: list[list[Placed]]) -> None:
    """An error at an #include the rendered file writes at its top that stands after a #define or #undef of
    its file: the header would not see the macro as it does in DIPU's build."""
    for unit in units:
        change: Placed | None = None
        for p in unit:
            if change is None and _macro_change(p) is not None:
                change = p
            elif change is not None and p.pasted and p.item.kind is ItemKind.INCLUDE \
                    and _included(reading, p.file, p.item):
                written = f'"{p.item.name}"' if p.item.local else f"<{p.item.name}>"
                name, definition = _macro_change(change)
                where = (f"line {change.item.line}" if change.file is p.file
                         else f"{display_path(change.file.path)}:{change.item.line}")
                raise UserError([Diagnostic(Loc(p.file.path, p.item.line, 1), "--runtime", (
                    f"#include {written} comes after `#{'define' if definition is not None else 'undef'} {name}` "
                    f"({where}), and the rendered runtime includes its headers at the top of its file, before the "
                    f"vendor's code, where the header would not see that; move the #include above it"))])


def _uses(code: str, names: set[str], expands: dict[str, set[str]]) -> set[str]:
    """The macros of *names* masked *code* uses, itself or through the macros it uses."""
    found = set(_IDENT.findall(code)) & names
    todo = list(found)
    while todo:
        for name in expands.get(todo.pop(), ()):
            if name not in found:
                found.add(name)
                todo.append(name)
    return found


def _moved(name: str, at: Placed, user: Placed, saw: str | None) -> UserError:
    """The error at the #define or #undef *at* of *name* that would reach *user*, which saw *saw* of it."""
    item = user.item
    who = (f"{item.name} ({display_path(user.file.path)}:{item.line})" if item.kind is ItemKind.FUNCTION
           else f"the code at {display_path(user.file.path)}:{item.line}")
    where = ("it is undefined" if saw is None else "no runtime file has defined it yet" if saw is _UNTOUCHED
             else f"it is `{saw}`")
    here, advice = ((f"`#undef {name}` here", "remove the #undef, or give the macros different names")
                    if _macro_change(at)[1] is None else
                    (f"this definition of {name}", f"define {name} before all code using the name, or give the "
                                                    "macros different names"))
    return UserError([Diagnostic(Loc(at.file.path, at.item.line, 1), "--runtime", (
        f"{here} would reach {who}, which uses {name} where {where}: the rendered runtime writes the runtime "
        "files' own code, their #define and #undef with it, before all of DIPU's functions (and the files of one "
        f"section one after another), so what the preprocessor makes of {name} there would change; {advice}"))])


def _comm_tables(reading: Reading, unique: str | None, tables: list[Table], notes: list[Diagnostic]) -> dict:
    """unique_id_bytes, the dtype and reduce-op types and tables of the comm: section."""
    if unique is None:
        # DICL_UNIQUE_ID_BYTES_SIZE is defined by a communicator file; a folder without one has no size
        notes.append(warning(shown(reading.folder), 0, "no DICL_UNIQUE_ID_BYTES_SIZE: comm.unique_id_bytes is 1 "
                                                       "until the vendor gives its unique id's size"))
    dtype = next((t for t in tables if t.kind == "dtype"), None)
    op = next((t for t in tables if t.kind == "op"), None)
    files = reading.runtime_files
    out: dict = {"unique_id_bytes": unique or 1,
                 "dtype_type": dtype.value_type if dtype else _converter_type(files, "ScalarType") or "int",
                 "reduce_op_type": op.value_type if op else _converter_type(files, "ReduceOp") or "int"}
    if dtype:
        out["dtypes"] = {k: v for k, v in dtype.entries if k in SIZES}
        others = [k for k, _ in dtype.entries if k not in SIZES]
        if others:
            notes.append(warning(dtype.file.path, dtype.line, (
                f"{dtype.name} maps {', '.join(others)}, which no collective carries (the ScalarTypes of "
                f"comm.dtypes are {', '.join(SIZES)}): left out")))
        for message in size_clashes(dtype):
            notes.append(warning(dtype.file.path, dtype.line, f"{message}: kept as is"))
    if op:
        out["reduce_ops"] = dict(op.entries)
    return out


# A name build.sources takes (the vendor schema's build_relpath, less the glob's *).
_SOURCE_NAME = re.compile(r"(?!.*\.\.)[A-Za-z0-9_.+][A-Za-z0-9_./+-]*")
# What is no vendor source: hidden files and folders (.git, .svn, an editor's swap file; render
# skips them in vendors/<name>/ too), CVS's folder, and the copies editors and patch leave behind.
_LEFTOVER = re.compile(r"(?:^|/)(?:\.|CVS(?:/|$))|~$|\.(?:orig|rej)$")


def _carried(reading: Reading, notes: list[Diagnostic]) -> dict[str, bytes]:
    """The hand-written files: everything of the folder the runtime did not consume, and the
    sources DIPU takes from another folder (muxi's from cuda's)."""
    folder, srcs = reading.folder, reading.sources
    consumed = reading.consumed()
    carried: dict[str, bytes] = {}
    inside = folder.resolve()
    leftovers = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if not p.is_file() or rel.parts[0] == "cmake" or rel.name == "CMakeLists.txt" \
                or rel.as_posix() in ("vendorapi.h", SOURCES_README):
            continue
        if _LEFTOVER.search(rel.as_posix()):
            leftovers.append(rel.as_posix())
            continue
        if srcs.variants and rel.parts[0] in srcs.variants and rel.parts[0] != srcs.variant:
            continue
        if not p.resolve().is_relative_to(inside):      # as render refuses it in vendors/<name>/
            raise UserError([Diagnostic(Loc(shown(p)), "--runtime", (
                f"is a link that leads outside {shown(folder)}: the import carries the folder's own files; "
                "copy the file into the folder"))])
        if p.resolve() not in consumed:
            carried[rel.as_posix()] = _carry(p, f"{reading.vendor}/{rel.as_posix()}")
        if len(carried) > MAX_HAND_WRITTEN:             # render would refuse the vendor folder anyway
            raise UserError([Diagnostic(Loc(shown(folder)), "--runtime", (
                f"holds more than {MAX_HAND_WRITTEN} files to carry as hand-written sources: a runtime "
                "folder holds the vendor's sources only"))])
    if leftovers:
        notes.append(warning(shown(folder), 0, (
            f"not carried (hidden, or left by a version control system, an editor or patch): {', '.join(leftovers[:10])}"
            + (f" and {len(leftovers) - 10} more" if len(leftovers) > 10 else ""))))
    for p in srcs.files:
        if folder.resolve() not in p.resolve().parents and p.resolve() not in consumed:
            carried[p.name] = _carry(p, f"{reading.vendor}/{p.name}")
    for p in srcs.conditional:
        if p.resolve() not in consumed:
            notes.append(warning(shown(folder / "CMakeLists.txt"), 1,
                                 f"DIPU compiles {shown(p)} only under a condition of its build: carried, not built "
                                 "(add it to build.sources to build it)"))
    return carried


def _carry(path: Path, rel: str) -> bytes:
    """The bytes of the file *path*, carried as vendors/*rel*: an error at the file when
    render would refuse it there (a name CMake or a file system reads otherwise, bytes that
    are not text)."""
    why = path_problem(rel.split("/", 1)[1])
    if why is not None:
        raise UserError([Diagnostic(Loc(shown(path)), "--runtime", (
            f"{why}: the import would carry it as the hand-written file vendors/{rel}; rename it"))])
    data = inputfile.read(path, key="--runtime")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError([Diagnostic(Loc.at(shown(path), data, exc.start), "--runtime", (
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}): the import carries the folder's other files as "
            f"hand-written sources (here vendors/{rel}), and those are text; move the file out of the folder, "
            "or save it as UTF-8"))]) from None
    return data


def _build(reading: Reading, sdk_headers: list[str], carried: dict[str, bytes], notes: list[Diagnostic]) -> dict:
    """build: the toolkit, the sources (the rendered files and the hand-written sources DIPU
    compiles) and the hand-written files."""
    folder, srcs = reading.folder, reading.sources
    compiled = [rel for rel in carried if rel.endswith(".cpp") and any(
        s.resolve() == (folder / rel).resolve() or s.name == rel for s in srcs.files)]
    for rel in compiled:
        if not _SOURCE_NAME.fullmatch(rel):      # build.sources holds globs of these characters only
            raise UserError([Diagnostic(Loc(shown(folder / rel)), "--runtime", (
                "DIPU compiles this file, which build.sources would have to name, and a name there holds only "
                "letters, digits and _ . / + - (a glob's * aside); rename the file"))])
    toolkit, build_notes = cmake.toolkit(reading.vendor, folder, sdk_headers)
    notes += [warning(shown(folder / "CMakeLists.txt"), 1, n) for n in build_notes]
    # the rendered generator by its name, not a glob: DIPU's own (KLXGeneratorImpl.cpp beside a rendered
    # KunlunxinGeneratorImpl.cpp, when rendered --into its checkout) would match one and define it twice
    generator = generator_file(reading.vendor)
    build: dict = {"toolkit": toolkit,
                   "sources": ["deviceimpl.cpp", "communicatorimpl.cpp", generator, *sorted(compiled)]}
    if carried:
        build["hand_written"] = sorted(carried)
    return build


def _kinds(translated) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, _, t in translated.values():
        out[t.kind] = out.get(t.kind, 0) + 1
    return out


def _api(api: SourceFile, macro_checker: dict[str, str], notes: list[Diagnostic]) -> tuple[dict, str | None, list[Item]]:
    types: dict = {}
    declared_at: dict[str, int] = {}
    default = None
    rest: list[Item] = []
    for item in api.items:
        text = api.slice(item)
        if not _carried_code(api, item):
            continue
        if item.kind is ItemKind.DEFINE and item.name == "deviceDefaultStreamLiteral":
            # the value as the preprocessor reads it: lines joined where a backslash ends them
            value = " ".join(re.sub(r"\\[ \t]*\n", " ", text.split("deviceDefaultStreamLiteral", 1)[1]).split())
            if value.endswith(";"):
                notes.append(warning(api.path, item.line, "deviceDefaultStreamLiteral ends with `;`, which breaks "
                                                          "every expression using it: imported without it"))
                value = value.rstrip(";").strip()
            default = value
            continue
        if item.kind is ItemKind.DEFINE and item.name in macro_checker:
            continue
        m = re.fullmatch(r"using\s+(\w+)\s*=\s*(.+?)\s*;", " ".join(text.split()))
        if m and m.group(1) in _TYPES:
            # the global type named from namespace dipu, where the vendor file's types are declared
            key, type_ = _TYPES[m.group(1)], m.group(2).removeprefix("::").strip()
            if key in types and types[key] != type_:
                raise UserError([Diagnostic(Loc(api.path, item.line, 1), "--runtime", (
                    f"{m.group(1)} is declared again here, as {type_}, where line {declared_at[key]} declares "
                    f"it {types[key]}: the compiler refuses a second declaration of another type; keep one"))])
            types[key] = type_
            declared_at[key] = item.line
            continue
        rest.append(item)
    return types, default, rest


def _converter_type(files: list[SourceFile], param: str) -> str | None:
    for f in files:
        for item in f.functions():
            if len(item.params) >= 1 and param in item.params[0].type and item.returns not in ("bool", "void") \
                    and "string" not in item.returns:
                return item.returns.replace("static", "").replace("inline", "").strip()
    return None


def _generator(file: SourceFile, macros: set[str]) -> dict:
    includes = [_header(file, i, i.name) for i in file.items if i.kind is ItemKind.INCLUDE
                and i.name != "csrc_dipu/runtime/core/DIPUGeneratorImpl.h"]
    body = [(file, i) for i in file.items if _carried_code(file, i)]
    for f, item in body:
        _refuse_outside(f, item, ("dipu",))
    entry: dict = {"kind": "custom"}
    if includes:
        entry["includes"] = includes
    entry["code"] = _namespaced(body, ("namespace dipu",), macros)
    return entry
