"""DIPU's link contract, checked on an object file the way linking and
loading libtorch_dipu.so would: every function DIPU core expects from the
kernels file is defined in it (interfaces/data/dipu_link.json.gz), and every
symbol it leaves undefined is provided by DIPU core (the same data), DIOPI
(a weak operator of the prototype snapshot, or a runtime function), torch or
the C/C++ runtime."""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen.interfaces.diopi import load_snapshot
from deeplink_gen.interfaces.dipu_link import contract

from helpers import syntax_check, torch_root

# Symbols the static linker defines for every shared library.
LINKER_SYMBOLS = frozenset({"_GLOBAL_OFFSET_TABLE_", "__dso_handle"})
# The C and C++ runtime libraries a g++ -shared library links against.
_RUNTIME_LIBRARIES = ("libstdc++.so.6", "libm.so.6", "libc.so.6", "libgcc_s.so.1")


@dataclass(frozen=True)
class ObjectSymbols:
    defined: frozenset[str]      # global, mangled
    undefined: frozenset[str]    # strong undefined
    weak: frozenset[str]         # weak undefined


def object_symbols(obj: Path) -> ObjectSymbols:
    out = subprocess.run(["nm", "-P", "-g", str(obj)], capture_output=True, text=True, check=True).stdout
    defined, undefined, weak = set(), set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        {"U": undefined, "w": weak, "v": weak}.get(fields[1], defined).add(fields[0])
    return ObjectSymbols(frozenset(defined), frozenset(undefined), frozenset(weak))


def _dynamic_symbols(library: Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "-P", "--defined-only", str(library)], capture_output=True, text=True,
                         check=True).stdout
    # Versioned names (memcpy@GLIBC_2.14) are referenced unversioned by an object file.
    return {line.split()[0].split("@", 1)[0] for line in out.splitlines() if line.strip()}


@functools.lru_cache(maxsize=4)
def torch_symbols(python: Path) -> frozenset[str]:
    found = set()
    for library in sorted((torch_root(python) / "lib").glob("*.so*")):
        found |= _dynamic_symbols(library)
    return frozenset(found)


@functools.lru_cache(maxsize=1)
def runtime_symbols() -> frozenset[str]:
    found = set()
    for name in _RUNTIME_LIBRARIES:
        path = subprocess.run(["g++", f"-print-file-name={name}"], capture_output=True, text=True,
                              check=True).stdout.strip()
        if not Path(path).is_absolute():
            path = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
        candidates = [Path(path)] + [Path(d) / name for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                                               "/lib64", "/usr/lib64")]
        library = next((c for c in candidates if c.is_absolute() and c.is_file()), None)
        assert library is not None, f"{name} not found"
        found |= _dynamic_symbols(library)
    return frozenset(found)


def demangle(names) -> list[str]:
    names = sorted(names)
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


@dataclass(frozen=True)
class LinkReport:
    missing: tuple[str, ...]      # functions DIPU core expects that the object does not define (demangled)
    unresolved: tuple[str, ...]   # undefined symbols nothing provides (demangled)
    strong_diopi: tuple[str, ...]  # DIOPI operators referenced strongly: a library without them fails to load

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unresolved or self.strong_diopi)


def check(obj: Path, python: Path) -> LinkReport:
    symbols = object_symbols(obj)
    dipu = contract()
    protos = load_snapshot()
    operators, runtime_functions = set(protos.functions), set(protos.runtime_functions)
    missing = [d for m, d in dipu.expected if m not in symbols.defined]
    provided = dipu.provided | torch_symbols(python) | runtime_symbols() | runtime_functions | LINKER_SYMBOLS
    unresolved = sorted(s for s in symbols.undefined | symbols.weak if s not in provided and s not in operators)
    # What DIPU's headers define (inline functions, templates) a real build compiles into the object itself.
    unresolved = [d for d in demangle(unresolved) if not dipu.defined_by_headers(d)]
    strong = sorted(s for s in symbols.undefined if s in operators)
    return LinkReport(tuple(missing), tuple(unresolved), tuple(strong))


def compile_object(source: Path, python: Path, obj: Path, warnings: list[str] = ("-w",)) -> subprocess.CompletedProcess:
    """*source* compiled to *obj* the way DIPU's build compiles it (DIPU's torch, its ABI), without optimization,
    so that every reference the source makes stays in the object."""
    return syntax_check(source, python=python, warnings=warnings, mode=("-c", "-O0", "-fPIC", "-o", str(obj)))
