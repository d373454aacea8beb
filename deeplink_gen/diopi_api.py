"""DIOPI operator prototypes: the model, a parser for DIOPI's C proto headers,
and the snapshot data file (deeplink_gen/data/diopi_prototypes.yaml).

Where prototypes come from, first match wins:

1. ``--diopi-include DIR`` (or ``DEEPLINK_GEN_DIOPI_INCLUDE``): DIOPI's headers
   are parsed on the fly (DIR holds ``functions.h``, or ``diopi/functions.h``).
2. the bundled snapshot, refreshed with ``deeplink-gen diopi-snapshot``.

The snapshot format is documented in the file's own header comment and in
the README: ``functions`` maps each operator name (sorted) to ``header`` and
``params`` (the parameter list as declared, normalised to single spaces with
``*`` glued to the type); ``runtime_functions`` holds the non-operator hooks
with their ``returns`` type.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen.errors import Diagnostic, Diagnostics, Loc, UserError, key_path

SNAPSHOT = Path(__file__).resolve().parent / "data" / "diopi_prototypes.yaml"
HEADERS = ("functions.h", "functions_ext.h", "functions_lmdeploy.h", "functions_mmcv.h",
           "functions_sparse.h")
_PARAM_NAME = re.compile(r"^(?P<type>.*?)\s*\b(?P<name>[A-Za-z_]\w*)$")


class Kind(enum.Enum):
    CTX = "ctx"
    INPUT = "input"              # diopiConstTensorHandle_t (possibly const-qualified)
    OUTPUT = "output"            # diopiTensorHandle_t: written, maybe also read (in-place)
    INPUT_LIST = "input_list"    # diopiConstTensorHandle_t*: length is the next parameter
    HANDLE_PTR = "handle_ptr"    # diopiTensorHandle_t*: allocated or swapped by the implementation
    OTHER = "other"              # scalars, sizes, enums, ... passed through unchanged


@dataclass(frozen=True)
class Param:
    type: str
    name: str

    @property
    def kind(self) -> Kind:
        t = self.type.removeprefix("const ").strip()
        if t == "diopiContextHandle_t":
            return Kind.CTX
        if t == "diopiConstTensorHandle_t":
            return Kind.INPUT
        if t == "diopiTensorHandle_t":
            return Kind.OUTPUT
        if t == "diopiConstTensorHandle_t*":
            return Kind.INPUT_LIST
        if t == "diopiTensorHandle_t*":
            return Kind.HANDLE_PTR
        return Kind.OTHER

    @property
    def is_tensor(self) -> bool:
        return self.kind in (Kind.INPUT, Kind.OUTPUT, Kind.INPUT_LIST, Kind.HANDLE_PTR)

    def __str__(self) -> str:
        return f"{self.type} {self.name}"


@dataclass(frozen=True)
class Prototype:
    name: str
    header: str
    params: tuple[Param, ...]
    loc: Loc
    returns: str = "diopiError_t"

    @property
    def params_text(self) -> str:
        return ", ".join(str(p) for p in self.params)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def tensor_names(self) -> list[str]:
        return [p.name for p in self.params if p.is_tensor]

    @property
    def allocates(self) -> bool:
        """True when a parameter is a pointer to a handle the implementation fills in."""
        return any(p.kind == Kind.HANDLE_PTR for p in self.params)


@dataclass(frozen=True)
class Prototypes:
    functions: dict[str, Prototype]           # operators: return diopiError_t, declared DIOPI_API
    runtime_functions: dict[str, Prototype]   # other hooks (diopiGetVendorName, ...)
    commit: str
    source: str

    def get(self, name: str) -> Prototype | None:
        return self.functions.get(name)

    def names(self) -> list[str]:
        return sorted(self.functions)


# ---------------------------------------------------------------- parameter lists

def normalise_type(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s*\*\s*", "* ", text).strip()
    return re.sub(r"\*\s+\*", "**", text)


def split_params(text: str) -> list[str]:
    """Split a parameter list at top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def parse_params(text: str) -> tuple[Param, ...]:
    """``"diopiContextHandle_t ctx, const diopiScalar_t *alpha"`` -> Params; raises ValueError."""
    text = text.strip()
    if text in ("", "void"):
        return ()
    out = []
    for part in split_params(text):
        m = _PARAM_NAME.match(normalise_type(part))
        if not m or not m.group("type"):
            raise ValueError(f"cannot read parameter '{part}' (expected a type and a name)")
        out.append(Param(normalise_type(m.group("type")), m.group("name")))
    return tuple(out)


# ---------------------------------------------------------------- C headers

_DECL = re.compile(
    r"^(?P<quals>(?:(?:DIOPI_API|DIOPI_RT_API|DIOPI_ATTR_WEAK|DIOPI_ATTR_WEEK|extern)\s+)+)"
    r"(?P<ret>[\w\s\*]+?)\s*\b(?P<name>diopi\w+)\s*\((?P<params>[^()]*)\)\s*$",
    re.S,
)


def _blank_comments(text: str) -> str:
    """Replace comments and preprocessor lines by spaces, keeping every newline."""
    def keep_lines(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    text = re.sub(r"/\*.*?\*/", keep_lines, text, flags=re.S)
    text = re.sub(r"//[^\n]*", keep_lines, text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", keep_lines, text, flags=re.M)
    text = re.sub(r'extern\s+"C"\s*\{', keep_lines, text)
    return text


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
    for m in re.finditer(r";", clean):
        chunk = clean[start:m.start()]
        offset = start
        start = m.end()
        lead = len(chunk) - len(chunk.lstrip().lstrip("}").lstrip())
        stmt = chunk[lead:].strip()
        if not re.match(r"(DIOPI_API|DIOPI_RT_API)\b", stmt):
            continue
        line = clean.count("\n", 0, offset + lead) + 1
        loc = Loc(path, line, 1)
        d = _DECL.match(stmt)
        if d is None:
            problems.append(Diagnostic(loc, header, "cannot read this declaration"))
            continue
        quals = d.group("quals").split()
        ret = normalise_type(d.group("ret"))
        try:
            params = parse_params(d.group("params"))
        except ValueError as exc:
            problems.append(Diagnostic(loc, d.group("name"), str(exc)))
            continue
        found.append((Prototype(d.group("name"), header, params, loc, ret),
                      "DIOPI_API" in quals and ret == "diopiError_t"))
    return found, problems


def find_header_dir(include: Path) -> Path | None:
    for cand in (include, include / "diopi"):
        if (cand / "functions.h").is_file():
            return cand
    return None


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
        if not path.is_file():
            continue
        protos, problems = parse_header(path.read_text(encoding="utf-8", errors="replace"), name, str(path))
        diags.extend(problems)
        for p, is_operator in protos:
            table = functions if is_operator else runtime
            first = functions.get(p.name) or runtime.get(p.name)
            if first is not None:
                diags.add(p.loc, p.name, f"declared twice (first at {first.loc})")
                continue
            table[p.name] = p
    diags.raise_if_any()
    return Prototypes(dict(sorted(functions.items())), dict(sorted(runtime.items())), commit, str(hdir))


# ---------------------------------------------------------------- snapshot file

def load_snapshot(path: Path = SNAPSHOT) -> Prototypes:
    from deeplink_gen import yamlload

    doc = yamlload.load(path)
    diags = Diagnostics()
    data = doc.data if isinstance(doc.data, dict) else {}
    if not isinstance(doc.data, dict) or not isinstance(data.get("functions"), dict):
        raise UserError([Diagnostic(doc.loc(()), "functions", "a prototype snapshot needs a 'functions' mapping")])
    tables: dict[str, dict[str, Prototype]] = {"functions": {}, "runtime_functions": {}}
    for section in tables:
        for name, raw in sorted((data.get(section) or {}).items()):
            where = (section, name)
            if not isinstance(raw, dict) or not isinstance(raw.get("params"), str):
                diags.add(doc.loc(where), key_path(where), "expected a mapping with 'header' and 'params'")
                continue
            try:
                params = parse_params(raw["params"])
            except ValueError as exc:
                diags.add(doc.loc(where + ("params",)), key_path(where + ("params",)), str(exc))
                continue
            returns = raw.get("returns", "diopiError_t")
            tables[section][name] = Prototype(name, str(raw.get("header", "functions.h")), params,
                                              doc.loc(where, key=True), str(returns))
    diags.raise_if_any()
    return Prototypes(tables["functions"], tables["runtime_functions"],
                      str(data.get("diopi_commit", "unknown")), doc.path)


def snapshot_text(protos: Prototypes, source: str) -> str:
    from deeplink_gen.templating import render

    for p in list(protos.functions.values()) + list(protos.runtime_functions.values()):
        if '"' in p.params_text or "\\" in p.params_text:
            raise UserError([Diagnostic(p.loc, p.name, "parameter text contains a quote or backslash")])
    return render("diopi/diopi_prototypes.yaml.j2", protos=protos, source=source)


# ---------------------------------------------------------------- the active set

_include: Path | None = None
_cache: dict[str, Prototypes] = {}


def use_headers(include: Path | None) -> None:
    """Make later calls to active() parse the headers under *include* (None: the snapshot)."""
    global _include
    _include = include


def header_dir() -> Path | None:
    """The headers chosen with use_headers(), or None for the snapshot."""
    return _include


def active() -> Prototypes:
    key = str(_include) if _include is not None else ""
    if key not in _cache:
        _cache[key] = from_headers(_include) if _include is not None else load_snapshot()
    return _cache[key]


def check_call(call, path: tuple, diags: Diagnostics) -> None:
    """A catalog call names an existing DIOPI operator and passes as many arguments as it takes."""
    from deeplink_gen.errors import did_you_mean

    protos = active()
    if not call.function.startswith("diopi"):
        return
    p = protos.get(call.function)
    if p is None:
        diags.add(call.loc, key_path(path),
                  f"'{call.function}' is not a DIOPI operator in {display(protos)}"
                  f"{did_you_mean(call.function, protos.names())}")
    elif len(call.args) != len(p.params):
        diags.add(call.loc, key_path(path),
                  f"{call.function} takes {len(p.params)} arguments ({p.params_text}); "
                  f"the call passes {len(call.args)}")


def display(protos: Prototypes) -> str:
    from deeplink_gen.errors import display_path

    return f"the DIOPI prototypes ({display_path(protos.source)})"
