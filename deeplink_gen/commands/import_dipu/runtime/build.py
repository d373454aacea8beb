"""A DIPU vendor folder's CMake as the vendor file's build: section, and the
sources its CMakeLists.txt compiles. DIPU's vendor CMake is a handful of
shapes: `file(GLOB ...)` and `set(...)` source lists (with paths into a
sibling folder, as muxi's into cuda's), a subfolder picked by an SDK version
variable (camb's cnrt_${CNRT_MAJOR_VERSION}.x), find_package of a Find module
that reads an environment variable and a default root, and DIPU_VENDOR_LIB.
What the import cannot read from them it says, and the vendor checks."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen import inputfile

_COMMAND = re.compile(r"(?is)\b(set|list|file|find_library|find_package|include)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_VAR = re.compile(r"\$\{(\w+)\}")
_BLOCK = re.compile(r"(?im)^\s*(if|endif)\s*\(")
_ENV = re.compile(r"\$ENV\{(\w+)\}")
_ROOT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*(?:ROOT|PATH|HOME)[A-Z0-9_]*$")
_FIND_CUDA_ROOTS = ("CUDA_TOOLKIT_ROOT_DIR", "CUDA_PATH")
_ABSOLUTE = re.compile(r"(?<![\w}$])(/(?:usr|opt)/[\w./-]*)")


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in text.split("\n"))


@dataclass(frozen=True)
class Sources:
    files: tuple[Path, ...]                   # what DIPU compiles, resolved
    conditional: tuple[Path, ...]             # compiled only under a condition the import cannot know
    variant: str | None                       # the version-picked subfolder chosen
    variants: tuple[str, ...]                 # every subfolder the pattern matches
    variant_line: int


def sources(folder: Path, chosen: str | None) -> Sources:
    """The sources the vendor folder's CMakeLists.txt compiles."""
    cmake = folder / "CMakeLists.txt"
    if not os.path.lexists(cmake):        # a folder or a FIFO in its place is an error where it is read
        return Sources(tuple(sorted(folder.glob("*.cpp"))), (), None, (), 0)
    raw = inputfile.read(cmake, key="--runtime").decode("utf-8", errors="replace")
    text = _strip_comments(raw)
    values = {"CMAKE_CURRENT_SOURCE_DIR": str(folder)}
    lists: dict[str, list[Path]] = {}
    conditional: set[str] = set()
    variant, variants, variant_line = None, (), 0
    # How deep in if() blocks each command is: the if( and endif( lines before it, counted once
    # over the file (counted again before each command, 30,000 commands took minutes).
    blocks = [(b.start(), 1 if b.group(1).lower() == "if" else -1) for b in _BLOCK.finditer(text)]
    depth, seen = 0, 0
    for m in _COMMAND.finditer(text):
        while seen < len(blocks) and blocks[seen][0] < m.start():
            depth += blocks[seen][1]
            seen += 1
        command, args = m.group(1).lower(), m.group(2).split()
        append = command == "list" and len(args) > 1 and args[0] == "APPEND"
        if append:      # list(APPEND X a b): X's items, then a and b
            command, args = "set", [args[1], f"${{{args[1]}}}", *args[2:]]
        if command == "set" and args:
            name, items = args[0], [a for a in args[1:] if a != "PARENT_SCOPE"]
            expanded = [_VAR.sub(lambda v: values.get(v.group(1), v.group(0)), a.strip('"')) for a in items]
            if len(expanded) == 1 and "${" not in expanded[0]:
                values[name] = expanded[0]
            # a relative name is relative to the CMakeLists.txt's folder, as CMake reads it, never the process's cwd
            paths = [folder / x for x in expanded if x.endswith((".cpp", ".cc", ".cxx"))]
            listed = [p for x in expanded if (ref := _VAR.fullmatch(x)) for p in lists.get(ref.group(1), [])]
            if paths or listed:
                lists[name] = listed + paths if append else paths + listed
                if depth:
                    conditional.add(name)
        elif command == "file" and len(args) > 2 and args[0].upper() == "GLOB":
            found: list[Path] = []
            for pattern in args[2:]:
                pattern = _VAR.sub(lambda v: values.get(v.group(1), v.group(0)), pattern.strip('"'))
                unknown = _VAR.search(pattern)
                if unknown is None:
                    base = Path(pattern) if Path(pattern).is_absolute() else folder / pattern
                    found += sorted(base.parent.glob(base.name))
                    continue
                # A subfolder picked by a variable the SDK decides: each folder the pattern matches is a variant.
                glob_dir = re.sub(r"\$\{\w+\}", "*", str(Path(pattern).parent))
                matches = sorted(p for p in folder.glob(glob_dir) if p.is_dir())
                if not matches:
                    continue
                variants = tuple(p.name for p in matches)
                variant_line = raw[:raw.find(m.group(0)[:20])].count("\n") + 1
                variant = chosen if chosen in variants else _newest(variants)
                found += sorted((folder / variant).glob(Path(pattern).name))
            lists[args[1]] = found
            if depth:
                conditional.add(args[1])
    files = _final(text, lists)
    cond = [p for name in conditional for p in lists.get(name, [])]
    return Sources(tuple(p for p in files if p not in cond), tuple(cond), variant, variants, variant_line)


def _final(text: str, lists: dict[str, list[Path]]) -> list[Path]:
    m = re.search(r"(?is)set\s*\(\s*VENDOR_FILES\s+([^)]*)\)", text)
    if m is None:
        return [p for paths in lists.values() for p in paths]
    out: list[Path] = []
    for ref in _VAR.findall(m.group(1)):
        out += [p for p in lists.get(ref, []) if p not in out]
    return out


def _newest(variants: tuple[str, ...]) -> str:
    def key(name: str):
        return [int(x) for x in re.findall(r"\d+", name)] or [0]
    return max(variants, key=key)


def toolkit(vendor: str, folder: Path, headers: list[str]) -> tuple[dict, list[str]]:
    """build.toolkit from the folder's CMake and Find modules, and what the import
    could not read from them (for the report)."""
    texts = [_strip_comments(inputfile.read(p, key="--runtime").decode("utf-8", errors="replace"))
             for p in [folder / "CMakeLists.txt", *sorted((folder / "cmake").glob("Find*.cmake"))] if p.is_file()]
    text = "\n".join(texts)
    roots: list[str] = []
    if re.search(r"(?i)find_package\s*\(\s*CUDA\b", text):
        roots += list(_FIND_CUDA_ROOTS)         # CMake's FindCUDA reads these
    for name in _ENV.findall(text) + _VAR.findall(text):
        if _ROOT_NAME.match(name) and not name.startswith("CMAKE_") and name not in roots:
            roots.append(name)
    # install roots: the absolute paths named, less a trailing include/, lib/ or bin/ part
    defaults = list(dict.fromkeys(re.sub(r"/(include|lib|lib64|bin)(/.*)?$", "", p.rstrip("/"))
                                  for p in _ABSOLUTE.findall(text)))
    defaults = [p for p in defaults if p not in ("/usr", "/usr/local", "/opt")]
    if "CUDA_TOOLKIT_ROOT_DIR" in roots and "/usr/local/cuda" not in defaults:
        defaults.insert(0, "/usr/local/cuda")
    libraries: list[str] = []
    found_libs = {m.group(1): m.group(2) for m in re.finditer(r"(?i)find_library\s*\(\s*(\w+)\s+(?:NAMES\s+)?([\w.+-]+)", text)}
    lib_line = re.search(r"(?is)set\s*\(\s*DIPU_VENDOR_LIB\s+([^)]*)\)", text)
    notes = []
    for word in (lib_line.group(1).split() if lib_line else []):
        if word in ("PARENT_SCOPE", "${DIPU_VENDOR_LIB}"):
            continue
        ref = _VAR.fullmatch(word)
        if ref is None:
            libraries.append(word)
        elif ref.group(1) in found_libs:
            libraries.append(found_libs[ref.group(1)])
        elif ref.group(1) == "CUDA_LIBRARIES":
            libraries.append("cudart")         # FindCUDA's CUDA_LIBRARIES: the CUDA runtime
        else:
            notes.append(f"DIPU_VENDOR_LIB names ${{{ref.group(1)}}}, which the import cannot resolve: add it to build.link")
    entry: dict = {"name": vendor.capitalize() + "Sdk"}
    if roots:
        entry["root_vars"] = roots
    else:
        notes.append("no root variable found in the vendor CMake: build.toolkit.root_vars is empty")
    if defaults:
        entry["default_roots"] = defaults
    entry["include_suffixes"] = ["include"]
    entry["lib_suffixes"] = ["lib64", "lib"]
    probes = [h for h in headers if "." in h][:2]
    if not probes:
        notes.append("vendorapi.h includes no SDK header: build.toolkit.headers names none to probe")
    entry["headers"] = probes or ["stdio.h"]
    if libraries:
        entry["libraries"] = list(dict.fromkeys(libraries))
    return entry, notes
