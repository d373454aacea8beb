"""DIOPI's operator prototypes: a reader for DIOPI's C proto headers and for
the bundled snapshot (interfaces/data/diopi_prototypes.yaml).

Where prototypes come from: DIOPI's headers when an include directory is
given (``--diopi-include DIR``: DIR holds ``functions.h``, or
``diopi/functions.h``), else the bundled snapshot, refreshed with
``deeplink-gen diopi-snapshot``. The snapshot maps each operator name
(sorted) to ``header`` and ``params`` (the parameter list as declared,
normalised to single spaces with ``*`` glued to the type);
``runtime_functions`` holds the non-operator hooks with their ``returns``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.cpplex import CONTROL
from deeplink_gen.cpptext import blank_comments, blank_spans, delimited_spans, remove_comments, split_args
from deeplink_gen import yamlfile
from deeplink_gen.errors import Diagnostic, Diagnostics, Loc, ParseError, UserError, key_path
from deeplink_gen.model import DiopiParam, Prototype, Prototypes, RuntimeHeader

SNAPSHOT = Path(__file__).resolve().parent / "data" / "diopi_prototypes.yaml"
RUNTIME_HEADER = "diopirt.h"
HEADERS = ("functions.h", "functions_ext.h", "functions_lmdeploy.h", "functions_mmcv.h",
           "functions_sparse.h")
# The DIOPI functions a dtype/layout adaptor converts with: every vendor
# implements them, and their own tensors are never converted (it would recurse).
CONVERSION_PRIMITIVES = ("diopiCastDtype", "diopiCopyInp")
_PARAM_NAME = re.compile(r"^(?P<type>.*?)\s*\b(?P<name>[A-Za-z_]\w*)$")


# The DIOPI commit DIPU 9dd38082 pins as its dipu/third_party/DIOPI submodule.
DIOPI_COMMIT = "02f03c6a"


@dataclass(frozen=True)
class ImplChoice:
    """One IMPL_* alias list of DIOPI 02f03c6a's impl/CMakeLists.txt and the
    folder its branch builds (add_subdirectory)."""

    list_name: str
    aliases: tuple[str, ...]
    directory: str
    files: str = ""      # the folder of the vendor's own files when not *directory*


# In the order of DIOPI's if/elseif chain (the first list holding IMPL_OPT
# wins). Note ascend builds impl/ascend_npu (which also compiles sources of
# impl/ascend) and tops builds impl/topsrider. An IMPL_OPT in none of them
# only warns there, and configure then fails at target_link_options on the
# missing diopi_impl target.
IMPL_CHOICES = (
    ImplChoice("IMPL_CUDA", ("CUDA", "cuda"), "cuda"),
    ImplChoice("IMPL_TOPS", ("TOPS", "tops", "TOPSRIDER", "topsrider"), "topsrider"),
    ImplChoice("IMPL_TORCH", ("TORCH", "LIBTORCH", "ATEN", "PYTORCH", "torch", "libtorch", "aten", "pytorch",
                              "PyTorch"), "torch"),
    ImplChoice("IMPL_MUXI", ("MUXI", "muxi"), "muxi"),
    ImplChoice("IMPL_CAMB_TORCH", ("CAMB_PYTORCH", "camb_pytorch"), "camb_pytorch"),
    ImplChoice("IMPL_CAMB", ("CAMB", "camb"), "camb"),
    ImplChoice("IMPL_ASCEND", ("ASCEND", "ascend"), "ascend_npu", files="ascend"),
    ImplChoice("IMPL_SUPA", ("SUPA", "supa"), "supa"),
    ImplChoice("IMPL_DROPLET", ("DROPLET", "droplet"), "droplet"),
    ImplChoice("IMPL_KUNLUNXIN", ("KUNLUNXIN", "kunlunxin"), "kunlunxin"),
)


def impl_choice(impl_opt: str) -> ImplChoice | None:
    """The IMPL_* list DIOPI selects for IMPL_OPT (DIPU's DIOPI_IMPL_OPT), if any."""
    return next((c for c in IMPL_CHOICES if impl_opt in c.aliases), None)


def impl_folder(impl_opt: str) -> str:
    """The DIOPI impl/ folder that holds the own files (convert_config.yaml, device_configs.py,
    test/, the adaptor) of the vendor whose DIOPI_IMPL_OPT is *impl_opt*: the folder DIOPI builds
    for it (IMPL_OPT tops builds impl/topsrider), but for ascend, whose files DIOPI keeps in
    impl/ascend (its generator runs with --config_device=ascend) while impl/ascend_npu builds.
    An IMPL_OPT DIOPI does not know names its own folder."""
    choice = impl_choice(impl_opt)
    if choice is None:
        return impl_opt
    return choice.files or choice.directory


def impl_namespace(folder: str) -> str:
    """The C++ namespace (impl::<namespace>) the functions of DIOPI's impl/<folder> are defined
    in: the folder's name, but cuda for impl/torch."""
    return "cuda" if folder == "torch" else folder


@functools.lru_cache(maxsize=4096)
def normalise_type(text: str) -> str:
    """A C type (or parameter) spelled one way: single spaces, `T* x`, `T**` (the same few
    spellings come back thousands of times, so each is worked out once)."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s*\*\s*", "* ", text).strip()
    return re.sub(r"\*\s+\*", "**", text)


def parse_params(text: str) -> tuple[DiopiParam, ...]:
    """``"diopiContextHandle_t ctx, const diopiScalar_t *alpha"`` -> DiopiParams; raises ParseError."""
    text = text.strip()
    if text in ("", "void"):
        return ()
    out = []
    for part in split_args(text):
        m = _PARAM_NAME.match(normalise_type(part))
        if not m or not m.group("type"):
            raise ParseError(f"cannot read parameter '{part}' (expected a type and a name)")
        out.append(DiopiParam(normalise_type(m.group("type")), m.group("name")))
    return tuple(out)


# ---------------------------------------------------------------- C headers

_DECL = re.compile(
    r"^(?P<quals>(?:(?:DIOPI_API|DIOPI_RT_API|DIOPI_ATTR_WEAK|DIOPI_ATTR_WEEK|extern)\s+)+)"
    r"(?P<ret>[\w\s\*]+?)\s*\b(?P<name>diopi\w+)\s*\((?P<params>[^()]*)\)\s*$",
    re.S,
)


def _blank_comments(text: str) -> str:
    """Replace comments, preprocessor lines and C++ attributes (``[[deprecated("...")]]``)
    by spaces, keeping every newline."""
    def keep_lines(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    text = blank_comments(text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", keep_lines, text, flags=re.M)
    text = re.sub(r'extern\s+"C"\s*\{', keep_lines, text)
    return blank_spans(text, delimited_spans(text, "[[", "]]"))


def parse_header(text: str, header: str, path: str) -> tuple[list[tuple[Prototype, bool]], list[Diagnostic]]:
    """Every ``DIOPI_API``/``DIOPI_RT_API`` function declared in one header, each
    with a flag: True for an operator (``DIOPI_API diopiError_t``).

    Handles declarations wrapped over several lines, comments anywhere,
    ``const`` handles, pointer-to-handle parameters and ``extern "C"`` blocks.
    """
    clean = _blank_comments(text)
    found: list[tuple[Prototype, bool]] = []
    problems: list[Diagnostic] = []
    start = 0
    line, counted = 1, 0        # the line of offset *counted*: lines are counted on from there
    for m in re.finditer(r";", clean):
        chunk = clean[start:m.start()]
        offset = start
        start = m.end()
        lead = len(chunk) - len(chunk.lstrip().lstrip("}").lstrip())
        stmt = chunk[lead:].strip()
        if not re.match(r"(DIOPI_API|DIOPI_RT_API)\b", stmt):
            continue
        line += clean.count("\n", counted, offset + lead)
        counted = offset + lead
        loc = Loc(path, line, 1)
        d = _DECL.match(stmt)
        if d is None:
            problems.append(Diagnostic(loc, header, "cannot read this declaration"))
            continue
        ret = normalise_type(d.group("ret"))
        try:
            params = parse_params(d.group("params"))
        except ParseError as exc:
            problems.append(Diagnostic(loc, d.group("name"), str(exc)))
            continue
        found.append((Prototype(d.group("name"), header, params, loc, ret),
                      "DIOPI_API" in d.group("quals").split() and ret == "diopiError_t"))
    tail = clean[start:]
    lead = len(tail) - len(tail.lstrip().lstrip("}").lstrip())
    if re.match(r"(DIOPI_API|DIOPI_RT_API)\b", tail[lead:]):        # the file ends inside a declaration
        line += clean.count("\n", counted, start + lead)
        problems.append(Diagnostic(Loc(path, line, 1), header, "this declaration has no ';': the header ends in it"))
    return found, problems


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:[ \t]+([^\n]*?))?[ \t]*$", re.M)


def parse_runtime_header(text: str) -> RuntimeHeader:
    """diopirt.h's #define constants (not its include guard) and its top-level
    declarations, in order, each on one line with comments removed."""
    uncommented = remove_comments(text)
    guards = set(re.findall(r"^[ \t]*#[ \t]*ifndef[ \t]+(\w+)", uncommented, re.M))
    macros = tuple((m.group(1), m.group(2) or "") for m in _DEFINE.finditer(uncommented) if m.group(1) not in guards)
    clean = _blank_comments(text)
    declarations, current, depth = [], "", 0
    for ch in clean:
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:           # the end of the extern "C" block
                continue
            depth -= 1
        if ch == ";" and depth == 0:
            statement = re.sub(r"\s+", " ", current).strip()
            if statement:
                declarations.append(statement)
            current = ""
        else:
            current += ch
    return RuntimeHeader(macros, tuple(declarations))


def find_header_dir(include: Path) -> Path | None:
    for cand in (include, include / "diopi"):
        if os.path.lexists(cand / "functions.h"):
            return cand
    return None


def _read(header: Path) -> str:
    """A header's text (inputfile.read's rules: a regular file of bounded size); a control
    character is an error at it."""
    text = inputfile.read(header, key="--diopi-include").decode("utf-8", errors="replace")
    control = CONTROL.search(text)      # the compiler reads NUL as a space; a YAML snapshot cannot hold it
    if control is not None:
        raise UserError([Diagnostic(Loc.at(str(header), text, control.start()), "--diopi-include", (
            f"the control character U+{ord(control.group()):04X} is not C text"))])
    return text


def from_headers(include: Path, commit: str = "unknown") -> Prototypes:
    """Parse DIOPI's proto headers under *include*; raise UserError on any problem."""
    hdir = find_header_dir(include)
    if hdir is None:
        raise UserError([Diagnostic(Loc(str(include)), "--diopi-include",
                                    "no functions.h here or in diopi/ below it")])
    functions: dict[str, Prototype] = {}
    runtime: dict[str, Prototype] = {}
    diags = Diagnostics()
    for name in HEADERS:
        path = hdir / name
        if not os.path.lexists(path):
            continue
        protos, problems = parse_header(_read(path), name, str(path))
        diags.extend(problems)
        for p, is_operator in protos:
            first = functions.get(p.name) or runtime.get(p.name)
            if first is not None:
                diags.add(p.loc, p.name, f"declared twice (first at {first.loc})")
                continue
            (functions if is_operator else runtime)[p.name] = p
    diags.raise_if_any()
    rt = hdir / RUNTIME_HEADER
    header = parse_runtime_header(_read(rt)) if os.path.lexists(rt) else RuntimeHeader()
    return Prototypes(dict(sorted(functions.items())), dict(sorted(runtime.items())), commit, str(hdir), header)


# ---------------------------------------------------------------- snapshot file

def load_snapshot(path: Path = SNAPSHOT) -> Prototypes:
    doc = yamlfile.load(path)
    diags = Diagnostics()
    data = doc.data if isinstance(doc.data, dict) else {}
    if not isinstance(data.get("functions"), dict):
        raise UserError([Diagnostic(doc.loc(()), "functions", "a prototype snapshot needs a 'functions' mapping")])
    tables: dict[str, dict[str, Prototype]] = {"functions": {}, "runtime_functions": {}}
    for section, table in tables.items():
        for name, raw in sorted((data.get(section) or {}).items()):
            where = (section, name)
            if not isinstance(raw, dict) or not isinstance(raw.get("params"), str):
                diags.add(doc.loc(where), key_path(where), "expected a mapping with 'header' and 'params'")
                continue
            try:
                params = parse_params(raw["params"])
            except ParseError as exc:
                diags.add(doc.loc(where + ("params",)), key_path(where + ("params",)), str(exc))
                continue
            table[name] = Prototype(name, str(raw.get("header", "functions.h")), params,
                                    doc.loc(where, key=True), str(raw.get("returns", "diopiError_t")))
    rt = data.get("runtime_header") or {}
    header = RuntimeHeader(tuple((str(k), str(v)) for k, v in (rt.get("macros") or {}).items()),
                           tuple(str(d) for d in rt.get("declarations") or ()))
    diags.raise_if_any()
    return Prototypes(tables["functions"], tables["runtime_functions"],
                      str(data.get("diopi_commit", "unknown")), doc.path, header)


def prototypes(include: Path | None = None) -> Prototypes:
    """The DIOPI prototypes: parsed from the headers under *include*, else the
    snapshot; parsed once per process for the same header contents."""
    return _parsed(include, contents_digest(include) if include is not None else "")


def contents_digest(include: Path) -> str:
    """A digest of the headers from_headers reads under *include*."""
    h = hashlib.sha256()
    hdir = find_header_dir(include)
    for name in (*HEADERS, RUNTIME_HEADER) if hdir is not None else ():
        path = hdir / name
        if os.path.lexists(path):
            h.update(f"{name}\0".encode() + inputfile.read(path, key="--diopi-include") + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=4)
def _parsed(include: Path | None, contents: str) -> Prototypes:
    return from_headers(include) if include is not None else load_snapshot()
