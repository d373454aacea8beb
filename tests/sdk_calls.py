"""The SDK calls of a runtime function, error reporting aside: the names a
body calls, less check macros, the checkers' own functions, C++ and torch
helpers and the calls an error path makes. Used to hold an imported
function's rendered body to the DIPU body it came from."""

from __future__ import annotations

import re
from pathlib import Path

from deeplink_gen.commands.import_dipu.runtime import cxx

# Calls that report or format errors, or are C++/torch helpers: not SDK calls.
NOT_SDK = frozenset((
    "TORCH_CHECK", "AT_ERROR", "TORCH_WARN", "TORCH_INTERNAL_ASSERT", "DIPU_LOGW", "DIPU_LOGE", "printf", "fprintf",
    "fflush", "abort", "to_string", "string", "c_str", "runtime_error", "getenv", "atoi", "size", "data", "at",
    "find", "end", "begin", "str", "what", "defined", "static_cast", "reinterpret_cast", "max", "min", "move",
    "memcpy", "memset", "strlen", "ReduceOp", "toVendorDataType", "toVendorReduceOp", "EventStatus", "OpStatus",
    "DIPUDeviceProperties", "DIPUDeviceStatus", "TRACK_FUN_CALL", "cout", "endl", "get", "lock", "unlock",
))


def sdk_calls(body_code: str, macros: set[str]) -> list[str]:
    """The sorted SDK calls in masked *body_code*; *macros* are the folder's macro names."""
    names = [n for n in cxx.calls(body_code) if n not in NOT_SDK and n not in macros
             and not n.startswith("dipuCheck_") and not n.startswith("_")]
    return sorted(set(names))


def function_bodies(path: Path) -> dict[tuple[str, int], str]:
    """(name, parameter count) -> masked body of each function *path* defines."""
    f = cxx.read(str(path), path.read_text(encoding="utf-8"), cxx.Config())
    return {(i.name, len(i.params)): f.body_code(i) for i in f.functions()}


def macro_names(*texts: str) -> set[str]:
    return {m.group(1) for t in texts for m in re.finditer(r"#\s*define\s+([A-Za-z_]\w*)", t)}
