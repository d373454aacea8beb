"""DIPU core's link contract with the kernels file, as data extracted from a
built DIPU (interfaces/data/dipu_link.json.gz, written by `deeplink-gen
dipu-link-snapshot`): the functions DIPU core calls but leaves to the kernels
file to define (DIPUCopy.hpp's dipu::native::dipu_wrap_diopi_*), and the
global symbols DIPU core itself defines, which kernels may call. Symbols are
mangled, as the linker sees them, for the C++ ABI of DIPU's torch."""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "dipu_link.json.gz"


# The headers of DIPU core a kernels file includes (templates/kernels/AutoGenedKernels.cpp.j2).
KERNEL_HEADERS = (
    "csrc_dipu/aten/RegisterDIPU.hpp", "csrc_dipu/aten/ops/AutoCompareUtils.hpp", "csrc_dipu/aten/ops/DIPUCopy.hpp",
    "csrc_dipu/aten/ops/DIPUOpInferrer.h", "csrc_dipu/aten/ops/NodispatchUtils.hpp",
    "csrc_dipu/aten/ops/OpRegexMatch.hpp", "csrc_dipu/aten/ops/OpUtils.hpp", "csrc_dipu/base/basedef.h",
    "csrc_dipu/diopirt/diopirt_impl.h", "csrc_dipu/profiler/profiler.h",
    "csrc_dipu/runtime/core/DIPUGeneratorImpl.h", "csrc_dipu/runtime/core/DIPUStream.h",
    "csrc_dipu/aten/ops/CustomFallbackFunctions.hpp",
)


@dataclass(frozen=True)
class LinkContract:
    dipu_commit: str
    torch: str                           # the torch DIPU was built with (its C++ ABI decides the mangling)
    expected: tuple[tuple[str, str], ...]   # (mangled, demangled): DIPU core calls them, kernels define them
    provided: frozenset[str]             # mangled: DIPU core defines them
    # Qualified names of the functions (and function templates) DIPU's kernel headers define: a kernels
    # file compiled against the real headers defines its own copy of what it uses of them.
    header_defined: frozenset[str] = frozenset()

    def defined_by_headers(self, demangled: str) -> bool:
        return function_family(demangled) in self.header_defined


def function_family(demangled: str) -> str:
    """The qualified name of a demangled function symbol, without return type,
    template arguments and parameters: ``std::string dipu::native::dumpArg<long>(long const&)``
    -> ``dipu::native::dumpArg``; '' for what is not a function."""
    depth, cut = 0, -1
    for i, ch in enumerate(demangled):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    if cut < 0:
        return ""
    head = demangled[:cut]
    if head.endswith(">"):             # template arguments of the function itself
        depth = 0
        for i in range(len(head) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(head[i], 0)
            if depth == 0:
                head = head[:i]
                break
    depth, start = 0, 0
    for i, ch in enumerate(head):     # the last top-level word: drops a return type
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == " " and depth == 0:
            start = i + 1
    return head[start:]


def from_data(data: dict) -> LinkContract:
    return LinkContract(str(data["dipu_commit"]), str(data["torch"]),
                        tuple((str(m), str(d)) for m, d in sorted(data["expected"].items())),
                        frozenset(str(s) for s in data["provided"]),
                        frozenset(str(s) for s in data.get("header_defined", ())))


def to_data(contract: LinkContract) -> dict:
    return {"dipu_commit": contract.dipu_commit, "torch": contract.torch,
            "expected": dict(contract.expected), "provided": sorted(contract.provided),
            "header_defined": sorted(contract.header_defined)}


@functools.lru_cache(maxsize=1)
def contract() -> LinkContract:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        return from_data(json.load(f))
