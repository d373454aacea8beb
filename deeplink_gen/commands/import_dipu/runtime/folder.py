"""A DIPU vendor runtime folder as the vendor file's runtime: and build:
sections plus the files that stay hand-written. The folder's CMake says what
DIPU compiles; vendorapi.h gives the handle types, the headers, the check
macros (as checkers) and what other files need from it (runtime.vendorapi);
each devapis/dicl function DIPU defines becomes an entry (bodies.py); what
else the runtime files define goes to the section's prelude; the generator
becomes custom code; every other file is carried as it is."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen.commands.import_dipu.read import warning
from deeplink_gen.commands.import_dipu.runtime import build as cmake
from deeplink_gen.commands.import_dipu.runtime import defects
from deeplink_gen.commands.import_dipu.runtime.bodies import Tables, Translated, end_statements, translate
from deeplink_gen.commands.import_dipu.runtime.checkers import Macro, checker_name, read_macro
from deeplink_gen.commands.import_dipu.runtime.cxx import Config, Item, ItemKind, SourceFile, read
from deeplink_gen.commands.import_dipu.runtime.tables import Table, find_tables, size_clashes
from deeplink_gen.errors import Diagnostic, Loc, UserError
from deeplink_gen.interfaces.dipu import DEVICE_FUNCTIONS, COMM_FUNCTIONS
from deeplink_gen.model.interfaces import DipuFunction

# DIPU's own build defines a vendor sees (dipu/CMakeLists.txt at 9dd38082): DIPU_VENDOR_NAME_<NAME>=1
# for the vendor built, and USE_MACA=1 for muxi.
BUILD_DEFINES = {"muxi": {"USE_MACA": "1"}}
_TYPES = {"deviceStream_t": "stream", "deviceEvent_t": "event", "diclComm_t": "comm", "commUniqueId": "unique_id",
          "deviceHandle_t": "handle"}
_NOT_SDK = ("c10/", "ATen/", "torch/", "csrc_dipu/")
_BY_NAME: dict[tuple[str, int], DipuFunction] = {(f.name, len(f.params)): f for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS}


@dataclass
class RuntimeImport:
    """What one runtime folder becomes."""

    vendor: str
    sections: dict                                  # runtime: and build:
    files: dict[str, bytes]                         # hand-written files, relative to vendors/<vendor>/
    notes: list[Diagnostic] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    functions: dict[str, tuple[SourceFile, Item, Translated]] = field(default_factory=dict)


def _config(vendor: str, torch_code: int) -> Config:
    defined = {f"DIPU_VENDOR_NAME_{vendor.upper()}": "1", "DIPU_TORCH_VERSION": str(torch_code),
               "__cplusplus": "201703"}
    defined.update(BUILD_DEFINES.get(vendor, {}))
    return Config(defined, ("USE_", "DIPU_VENDOR_NAME_"))


def _read(path: Path, shown: str, config: Config, notes: list[Diagnostic]) -> SourceFile:
    text = path.read_text(encoding="utf-8", errors="replace")
    file = read(shown, text, config)
    for b in file.branches:
        notes.append(warning(shown, b.line, f"`{b.condition.rstrip(chr(92)).strip()}` depends on the SDK: "
                                            "imported as if it holds (the newest SDK); edit the result for an older one"))
    return file


def _namespaced(file: SourceFile, items: list[Item], base: tuple[str, ...], macros: set[str] = frozenset()) -> str:
    """The items' text in order, wrapped in the namespaces they sit in below *base*, each
    invocation of *macros* ended with `;`."""
    out: list[str] = []
    open_: tuple[str, ...] = ()
    for item in items:
        ns = item.namespace[len(base):] if item.namespace[:len(base)] == base else item.namespace
        while open_ and ns[:len(open_)] != open_:
            out.append(f"}}  // namespace {open_[-1]}".rstrip())
            open_ = open_[:-1]
        for name in ns[len(open_):]:
            out.append(f"namespace {name} {{".replace("namespace  {", "namespace {"))
            open_ += (name,)
        out.append(end_statements(file.slice(item), file.code[item.start:item.end], set(macros)).rstrip())
    while open_:
        out.append(f"}}  // namespace {open_[-1]}".rstrip())
        open_ = open_[:-1]
    return "\n\n".join(out).strip() + "\n" if out else ""


def import_runtime(vendor: str, folder: Path, *, torch_code: int, variant: str | None = None) -> RuntimeImport:
    """Import *folder* (a DIPU vendor folder) for *vendor*. *variant* picks the
    version subfolder where DIPU's CMake picks one by SDK version."""
    notes: list[Diagnostic] = []
    report: list[str] = []
    config = _config(vendor, torch_code)

    def shown(p: Path) -> str:
        return os.path.normpath(p)

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
    api_path = folder / "vendorapi.h"
    api = _read(api_path, shown(api_path), config, notes) if api_path.is_file() else None
    files: dict[Path, SourceFile] = {}
    for p in srcs.files + srcs.conditional:
        files[p] = _read(p, shown(p), config, notes)
    # local headers the compiled files include
    headers: dict[Path, SourceFile] = {}
    for p, f in list(files.items()):
        for inc in (i for i in f.items if i.kind is ItemKind.INCLUDE and i.local):
            h = _local(inc.name, p, folder, vendor)
            if h is not None and h != api_path.resolve() and h not in headers:
                headers[h] = _read(h, shown(h), config, notes)
    path_of = {id(f): p for p, f in {**files, **headers}.items()}

    # which files hold the contract
    def contract(f: SourceFile) -> list[tuple[DipuFunction, Item]]:
        out = []
        for item in f.functions():
            fn = _BY_NAME.get((item.name, len(item.params)))
            if fn is not None and "devapis" in item.namespace:
                out.append((fn, item))
        return out

    defined: dict[str, tuple[SourceFile, Item]] = {}
    runtime_files: list[SourceFile] = []
    for f in list(headers.values()) + list(files.values()):
        found = contract(f)
        if found:
            runtime_files.append(f)
        for fn, item in found:
            defined.setdefault(fn.key, (f, item))
    if not defined:
        raise UserError([Diagnostic(Loc(str(folder)), "--runtime", (
            f"{folder} defines none of DIPU's device or communicator functions in the sources its "
            "CMakeLists.txt compiles: not a DIPU vendor runtime folder"))])
    generator = next((f for f in files.values() if any(i.name == "vendorMakeGenerator" for i in f.functions())), None)
    consumed_paths = {p for p, f in {**files, **headers}.items() if f in runtime_files or f is generator}

    # A local header vendorapi.h or a hand-written file includes stays a file, which the runtime
    # includes; any other local header of a runtime file is read as part of it.
    runtime_paths = {path_of[id(f)].resolve() for f in runtime_files if id(f) in path_of}
    users = ([(api_path, api.text)] if api else []) + [
        (p, p.read_text(encoding="utf-8", errors="replace")) for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in (".h", ".hpp", ".cpp", ".cc") and p.resolve() not in runtime_paths
        and not (srcs.variants and p.relative_to(folder).parts[0] in srcs.variants)]
    shared = {h for p, text in users for name in re.findall(r'#\s*include\s*"([^"]+)"', text)
              if (h := _local(name, p, folder, vendor)) is not None and h != p.resolve() and h not in runtime_paths}

    def local_includes(f: SourceFile) -> list[Path]:
        base = path_of.get(id(f), folder / "x")
        return [h for i in f.items if i.kind is ItemKind.INCLUDE and i.local
                and (h := _local(i.name, base, folder, vendor)) is not None]

    def with_headers(f: SourceFile) -> list[SourceFile]:
        own = [headers[h] for h in local_includes(f)
               if h in headers and headers[h] not in runtime_files and h not in shared]
        return own + [f]

    # check macros
    macros: dict[str, Macro] = {}
    for f in ([api] if api else []) + [g for f in runtime_files for g in with_headers(f)]:
        for item in f.items:
            if item.kind is ItemKind.DEFINE and item.macro_params is not None:
                macros.setdefault(item.name, read_macro(f, item))
    checkers: dict[str, dict] = {}
    macro_checker: dict[str, str] = {}
    for name, m in macros.items():
        if m.checker is not None:
            cname = checker_name(name, set(checkers))
            checkers[cname] = {k: v for k, v in m.checker.items()}
            macro_checker[name] = cname
        elif name.upper() == name and re.search(r"(?i)call|check|throw|assert", name):
            notes.append(warning(m.file.path, m.item.line,
                                 f"the check macro {name} has no checker form ({m.why}): it stays C++ "
                                 "and the functions using it are custom"))

    # tables
    tables = [t for f in dict.fromkeys(g for f in runtime_files for g in with_headers(f)) for t in find_tables(f)]
    dtype_tables = [t for t in tables if t.kind == "dtype"]
    op_tables = [t for t in tables if t.kind == "op"]
    top_level = {i.start for f in runtime_files for i in f.items if i.kind is ItemKind.DECLARATION}
    table_names = Tables(frozenset(t.name for t in dtype_tables), frozenset(t.name for t in op_tables))

    # functions
    translated: dict[str, tuple[SourceFile, Item, Translated]] = {}
    for key, (f, item) in defined.items():
        fn = next(x for x in DEVICE_FUNCTIONS + COMM_FUNCTIONS if x.key == key)
        translated[key] = (f, item, translate(fn, f, item, macro_checker, table_names, set(macros)))

    def section_checker(section: str) -> str | None:
        counts: dict[str, int] = {}
        for key, (_, _, t) in translated.items():
            fn = next(x for x in DEVICE_FUNCTIONS + COMM_FUNCTIONS if x.key == key)
            if fn.section == section and t.checker not in (None, "none"):
                counts[t.checker] = counts.get(t.checker, 0) + 1
        return max(sorted(counts), key=lambda c: counts[c]) if counts else None

    runtime: dict = {}
    sdk_headers = [i.name for i in (api.items if api else []) if i.kind is ItemKind.INCLUDE and not i.local
                   and not i.name.startswith(_NOT_SDK)]
    runtime["headers"] = sdk_headers
    types, default_stream, api_rest = _api(api, macro_checker, notes) if api else ({}, None, [])
    if default_stream is not None:
        types["default_stream"] = default_stream
    runtime["types"] = types
    if checkers:
        runtime["checkers"] = checkers
    # what vendorapi.h includes besides the SDK and what the rendered one includes anyway
    api_includes = [i.name for i in (api.items if api else []) if i.kind is ItemKind.INCLUDE
                    and i.name not in sdk_headers and not i.name.startswith("csrc_dipu/")
                    and i.name != "c10/util/Exception.h"]
    api_code = _namespaced(api, api_rest, ()) if api and api_rest else ""
    if api_includes or api_code:
        runtime["vendorapi"] = {**({"includes": api_includes} if api_includes else {}),
                                **({"code": api_code} if api_code else {})}

    for section, fns in (("device", DEVICE_FUNCTIONS), ("comm", COMM_FUNCTIONS)):
        checker = section_checker(section)
        body: dict = {}
        if checker:
            body["checker"] = checker
        keys = {x.key for x in fns}
        section_files = list(dict.fromkeys(g for f in runtime_files
                                           if any(translated[k][0] is f for k in translated if k in keys)
                                           for g in with_headers(f)))
        # what still names a table: custom bodies and the macros that stay C++
        customs = " ".join([str(t.entry) for k, (_, _, t) in translated.items() if t.kind == "custom"]
                           + [f.slice(i) for f in section_files for i in f.items
                              if i.kind is ItemKind.DEFINE and i.name not in macro_checker])
        prelude_items: list[tuple[SourceFile, Item]] = []
        includes: list[str] = []
        for f in section_files:
            for item in f.items:
                if item.kind is ItemKind.FUNCTION and (item.name, len(item.params)) in _BY_NAME and "devapis" in item.namespace:
                    continue
                if item.kind is ItemKind.INCLUDE:
                    if not item.local and not item.name.startswith("csrc_dipu/runtime/device/"):
                        includes.append(item.name)
                    elif item.local and (h := _local(item.name, path_of.get(id(f), folder / "x"), folder, vendor)) in shared:
                        includes.append(h.relative_to(folder.resolve()).as_posix())
                    continue
                if item.kind is ItemKind.DIRECTIVE:
                    continue
                if item.kind is ItemKind.DEFINE and item.name in macro_checker:
                    continue
                text = f.slice(item)
                if item.kind is ItemKind.DECLARATION and "DICL_UNIQUE_ID_BYTES_SIZE" in text:
                    m = re.search(r"=\s*([\w:]+)\s*;", text)
                    if m:
                        body_unique = m.group(1)
                        runtime.setdefault("_unique", body_unique)
                    continue
                table = next((t for t in tables if t.file is f and t.line == f.line_of(item.start)), None)
                if table is not None and table.name not in customs:
                    continue
                prelude_items.append((f, item))
        if includes:
            body["includes"] = list(dict.fromkeys(includes))
        if section == "comm":
            unique = runtime.pop("_unique", None)
            if unique is None:
                # DIPU_UNIQUE_ID_BYTES_SIZE is defined by a communicator file; a folder without one has no size
                notes.append(warning(shown(folder), 0, "no DICL_UNIQUE_ID_BYTES_SIZE: comm.unique_id_bytes is 1 "
                                                       "until the vendor gives its unique id's size"))
            body["unique_id_bytes"] = unique or 1
            body["dtype_type"] = dtype_tables[0].value_type if dtype_tables else _converter_type(runtime_files, "ScalarType") or "int"
            body["reduce_op_type"] = op_tables[0].value_type if op_tables else _converter_type(runtime_files, "ReduceOp") or "int"
            if dtype_tables:
                body["dtypes"] = dict(dtype_tables[0].entries)
                for message in size_clashes(dtype_tables[0]):
                    notes.append(warning(dtype_tables[0].file.path, dtype_tables[0].line, f"{message}: kept as is"))
            if op_tables:
                body["reduce_ops"] = dict(op_tables[0].entries)
        prelude = "\n\n".join(_namespaced(f, [i for g, i in prelude_items if g is f], ("dipu", "devapis"),
                                            set(macro_checker)).rstrip()
                              for f in dict.fromkeys(g for g, _ in prelude_items))
        if prelude.strip():
            body["prelude"] = prelude.strip() + "\n"
        entries = {}
        for fn in fns:
            if fn.key in translated:
                entries[fn.key] = translated[fn.key][2].finish(checker)
            elif fn.strong:          # DIPU's build would not link without it: it fails when called
                entries[fn.key] = "unsupported"
        body["functions"] = entries
        runtime[section] = body
    for strong, what in ((True, "written unsupported"), (False, "left to DIPU's default")):
        missing = [f.key for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS if f.key not in translated and f.strong == strong]
        if missing:
            report.append(f"{vendor}: not defined by DIPU's folder ({what}): {', '.join(missing)}")
    if generator is not None:
        runtime["generator"] = _generator(generator, set(macro_checker))
    else:
        runtime["generator"] = {"kind": "seed_offset"}

    # hand-written files: everything the runtime did not consume
    carried: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if not p.is_file() or rel.parts[0] == "cmake" or rel.name == "CMakeLists.txt" or p == api_path:
            continue
        if srcs.variants and rel.parts[0] in srcs.variants and rel.parts[0] != srcs.variant:
            continue
        if p.resolve() in {c.resolve() for c in consumed_paths} - shared:
            continue
        if p.resolve() in headers and headers[p.resolve()] not in runtime_files and p.resolve() not in shared:
            continue
        carried[rel.as_posix()] = p.read_bytes()
    for p in srcs.files:           # sources DIPU takes from another folder (muxi's from cuda's)
        if folder.resolve() not in p.resolve().parents and p not in consumed_paths:
            carried[p.name] = p.read_bytes()
    compiled = [rel for rel in carried if rel.endswith(".cpp") and any(
        s.resolve() == (folder / rel).resolve() or s.name == rel for s in srcs.files)]
    for p in srcs.conditional:
        if p not in consumed_paths:
            notes.append(warning(shown(folder / "CMakeLists.txt"), 1,
                                 f"DIPU compiles {shown(p)} only under a condition of its build: carried, not built "
                                 "(add it to build.sources to build it)"))
    gen_name = "*GeneratorImpl.cpp"
    build_sources = ["deviceimpl.cpp", "communicatorimpl.cpp", gen_name, *sorted(compiled)]
    toolkit, build_notes = cmake.toolkit(vendor, folder, sdk_headers)
    for n in build_notes:
        notes.append(warning(shown(folder / "CMakeLists.txt"), 1, n))
    build = {"toolkit": toolkit, "sources": build_sources}
    if carried:
        build["hand_written"] = sorted(carried)
    widened = {t.name for t in dtype_tables if size_clashes(t)}
    notes += defects.check(translated, checkers, set(macros), widened)
    report.append(f"{vendor}: {len(translated)} functions ("
                  + ", ".join(f"{n} {k}" for k, n in sorted(_kinds(translated).items()))
                  + f"), {len(checkers)} checkers, {len(carried)} hand-written files")
    return RuntimeImport(vendor, {"runtime": runtime, "build": build}, carried, notes, report, translated)


def _kinds(translated) -> dict[str, int]:
    out: dict[str, int] = {}
    for _, _, t in translated.values():
        out[t.kind] = out.get(t.kind, 0) + 1
    return out


def _local(name: str, including: Path, folder: Path, vendor: str) -> Path | None:
    """The file a quoted include of *including* names: beside it, or by its path under
    torch_dipu (csrc_dipu/vendor/<vendor>/...), which is the vendor folder."""
    under = f"csrc_dipu/vendor/{vendor}/"
    for candidate in (including.parent / name, folder / name.removeprefix(under)):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _api(api: SourceFile, macro_checker: dict[str, str], notes: list[Diagnostic]) -> tuple[dict, str | None, list[Item]]:
    types: dict = {}
    default = None
    rest: list[Item] = []
    for item in api.items:
        text = api.slice(item)
        if item.kind is ItemKind.INCLUDE or item.kind is ItemKind.DIRECTIVE:
            continue
        if item.kind is ItemKind.DEFINE and item.name == "deviceDefaultStreamLiteral":
            value = text.split("deviceDefaultStreamLiteral", 1)[1].strip()
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
            types[_TYPES[m.group(1)]] = m.group(2)
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
    includes = [i.name for i in file.items if i.kind is ItemKind.INCLUDE
                and i.name != "csrc_dipu/runtime/core/DIPUGeneratorImpl.h"]
    body = [i for i in file.items if i.kind not in (ItemKind.INCLUDE, ItemKind.DIRECTIVE)]
    entry: dict = {"kind": "custom"}
    if includes:
        entry["includes"] = includes
    entry["code"] = _namespaced(file, body, ("dipu",), macros)
    return entry
