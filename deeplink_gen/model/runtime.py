"""A vendor's runtime and build sections: its SDK's headers and handle
types, how its status codes are checked, how each DIPU device/communicator
function is implemented, and where the build finds the SDK."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from deeplink_gen.errors import Loc
from deeplink_gen.model.common import Located
from deeplink_gen.model.interfaces import DipuFunction
from deeplink_gen.model.patterns import Part, Pattern

_HOLE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


@dataclass(frozen=True)
class CallTemplate:
    """C++ text with {placeholder} holes named after the DIPU function's
    parameters (plus a few provided names); `{{` and `}}` stand for literal
    braces. Expanded by plain substitution, byte for byte otherwise."""

    text: str
    loc: Loc
    is_call: bool = False

    def placeholders(self) -> tuple[str, ...]:
        return tuple(m.group(1) for m in _HOLE.finditer(self.text) if m.group(1) is not None)

    def without_holes(self) -> str:
        return _HOLE.sub(lambda m: "x", self.text)

    def expand(self, values: dict[str, str]) -> str:
        def sub(m: re.Match) -> str:
            if m.group(0) == "{{":
                return "{"
            if m.group(0) == "}}":
                return "}"
            return values[m.group(1)]
        return _HOLE.sub(sub, self.text)


class OnFailure(Enum):
    """What a checked call that fails does."""

    TORCH_CHECK = "torch_check"     # raises through TORCH_CHECK
    THROW = "throw"                 # throws std::runtime_error
    PRINT = "print"                 # prints to stderr and goes on


@dataclass(frozen=True)
class Checker:
    """How one vendor library reports status, and what a failed call does."""

    name: str
    macro: str
    status: str
    success: tuple[str, ...]
    not_ready: tuple[str, ...]
    out_of_memory: str | None
    clear_error: str | None          # a function called with no arguments
    message_fn: str | None           # a function taking the status, returning const char*
    message_call: CallTemplate | None    # an argument-free call returning const char*
    on_failure: OnFailure
    loc: Loc
    macro_loc: Loc


class ImplKind(Enum):
    """How a DIPU function's body is given: calls (with an optional return), nothing to do,
    not supported, the vendor's own C++, or a pattern (model/patterns.py)."""

    CALL = "call"
    NOOP = "noop"
    UNSUPPORTED = "unsupported"
    CUSTOM = "custom"
    PATTERN = "pattern"


@dataclass(frozen=True)
class Impl:
    """How one DIPU function is implemented."""

    function: DipuFunction
    kind: ImplKind
    loc: Loc
    calls: tuple[CallTemplate, ...] = ()
    checker: Located[str | None] | None = None     # its own (a value of None: `none`, unchecked); None: the section's
    locals: tuple[tuple[str, str], ...] = ()
    ret: CallTemplate | None = None
    guard: CallTemplate | None = None
    presync: bool = False
    pattern: Pattern | None = None
    templates: tuple[tuple[Part, CallTemplate], ...] = ()    # pattern parts: plain, with_priority, peer, ...
    fields: tuple[tuple[str, CallTemplate], ...] = ()        # struct pattern: DIPU field -> expression
    sets: tuple[tuple[str, CallTemplate], ...] = ()          # struct pattern: local.member -> value, before the calls
    sentinels: tuple[str, ...] = ()                      # not_null: stream values that count as null
    ready: tuple[str, ...] = ()                          # query_status: status values meaning done
    status_type: str | None = None                       # query_status
    custom: Located[str] | None = None

    def template(self, part: Part) -> CallTemplate | None:
        return dict(self.templates).get(part)

    def all_templates(self) -> tuple[CallTemplate, ...]:
        out = list(self.calls)
        out += [t for _, t in self.templates] + [t for _, t in self.fields] + [t for _, t in self.sets]
        out += [t for t in (self.ret, self.guard) if t is not None]
        return tuple(out)


@dataclass(frozen=True)
class HandleTypes:
    stream: str
    event: str
    comm: str
    unique_id: str
    default_stream: str
    handle: str | None
    loc: Loc
    key_locs: tuple[tuple[str, Loc], ...] = ()      # where each type written is

    def loc_of(self, key: str) -> Loc:
        return dict(self.key_locs).get(key, self.loc)


@dataclass(frozen=True)
class CommSpec:
    checker: Located[str] | None
    unique_id_bytes: str
    dtype_type: str
    reduce_op_type: str
    dtypes: tuple[tuple[str, str], ...]
    reduce_ops: tuple[tuple[str, str], ...]
    impls: tuple[Impl, ...]
    prelude: Located[str] | None     # None: not written
    loc: Loc
    functions_loc: Loc               # its functions: key (a missing function is reported there)
    includes: tuple[str, ...] = ()   # extra headers communicatorimpl.cpp includes (for prelude and custom code)


class GeneratorKind(Enum):
    SEED_OFFSET = "seed_offset"     # DIPU's generator, keeping a seed and an offset
    CUSTOM = "custom"               # the vendor's own code


@dataclass(frozen=True)
class GeneratorSpec:
    kind: GeneratorKind
    code: Located[str] | None        # None: not written
    loc: Loc
    includes: tuple[str, ...] = ()   # headers the custom code needs, included before it


@dataclass(frozen=True)
class DiopiTestSpec:
    init: tuple[CallTemplate, ...]
    finalize: tuple[CallTemplate, ...]
    overrides: tuple[tuple[str, CallTemplate], ...]
    checker: Located[str] | None    # its own; None: the device section's
    loc: Loc


@dataclass(frozen=True)
class VendorApi:
    """What vendorapi.h carries of the vendor's own: the headers it includes and C++ pasted at
    file scope after the handle types and checkers (types, macros and namespace aliases that
    hand-written files and custom bodies share, since every runtime file includes the header)."""

    includes: tuple[str, ...]
    code: Located[str] | None        # None: not written
    loc: Loc


@dataclass(frozen=True)
class RuntimeSpec:
    headers: tuple[str, ...]
    types: HandleTypes
    checkers: tuple[Checker, ...]
    device_checker: Located[str] | None
    memcpy_kinds: tuple[tuple[str, str], ...]
    device_impls: tuple[Impl, ...]
    device_prelude: Located[str] | None      # None: not written
    device_includes: tuple[str, ...]
    comm: CommSpec
    generator: GeneratorSpec
    diopi_test: DiopiTestSpec
    vendorapi: VendorApi             # without runtime.vendorapi: no includes, no code
    loc: Loc
    device_functions_loc: Loc        # runtime.device.functions: (a missing function is reported there)

    def checker(self, name: str | None) -> Checker | None:
        return next((c for c in self.checkers if c.name == name), None)

    def checker_name(self, impl: Impl) -> str | None:
        """The checker *impl*'s calls go through: its own, else its section's."""
        if impl.checker is not None:
            return impl.checker.value
        section = self.comm.checker if impl.function.section == "comm" else self.device_checker
        return section.value if section is not None else None

    def checker_of(self, impl: Impl) -> Checker | None:
        return self.checker(self.checker_name(impl))

    def test_checker(self) -> Checker | None:
        """The checker diopi_test's own calls go through: its own, else the device section's."""
        named = self.diopi_test.checker or self.device_checker
        return self.checker(named.value) if named is not None else None

    def impl(self, key: str) -> Impl | None:
        return next((i for i in self.device_impls + self.comm.impls if i.function.key == key), None)


@dataclass(frozen=True)
class Toolkit:
    name: Located[str]
    root_vars: tuple[str, ...]
    default_roots: tuple[str, ...]
    include_suffixes: tuple[str, ...]
    lib_suffixes: tuple[str, ...]
    headers: tuple[str, ...]
    libraries: tuple[str, ...]
    loc: Loc


@dataclass(frozen=True)
class BuildSpec:
    toolkit: Toolkit | None      # None: the runtime needs only the C/C++ runtime
    link: tuple[str, ...]
    sources: tuple[str, ...]
    hand_written: tuple[Located[str], ...] | None     # None: not written (every file of vendors/<name>/)
    loc: Loc
