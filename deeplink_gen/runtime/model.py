"""The runtime and build sections of a vendor file, as frozen dataclasses.
Each parsed value keeps its Loc; templates stay unexpanded until render."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.errors import Loc
from deeplink_gen.runtime.interface import Function
from deeplink_gen.runtime.template import Template

ON_FAILURE = ("torch_check", "throw", "print")
PATTERNS = ("stream_priority", "set_device", "not_null", "query", "query_status", "malloc", "peer_copy",
            "struct", "version")
GENERATOR_KINDS = ("seed_offset", "custom")


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
    message_call: Template | None    # an argument-free call returning const char*
    on_failure: str
    loc: Loc


@dataclass(frozen=True)
class Impl:
    """How one DIPU function is implemented. kind is one of: call, noop,
    unsupported, custom, pattern."""

    function: Function
    kind: str
    loc: Loc
    calls: tuple[Template, ...] = ()
    checker: str | None = None            # None: calls are not checked
    checker_loc: Loc | None = None
    locals: tuple[tuple[str, str], ...] = ()
    ret: Template | None = None
    guard: Template | None = None
    presync: bool = False
    pattern: str | None = None
    templates: tuple[tuple[str, Template], ...] = ()     # pattern fields: plain, with_priority, peer, ...
    fields: tuple[tuple[str, Template], ...] = ()        # struct pattern: DIPU field -> expression
    names: tuple[str, ...] = ()                          # not_null sentinels; query_status ready values
    status_type: str | None = None                       # query_status
    custom: str | None = None

    def template(self, key: str) -> Template | None:
        return dict(self.templates).get(key)

    def all_templates(self) -> tuple[Template, ...]:
        out = list(self.calls)
        out += [t for _, t in self.templates] + [t for _, t in self.fields]
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


@dataclass(frozen=True)
class CommSpec:
    checker: str | None
    checker_loc: Loc | None
    unique_id_bytes: str
    dtype_type: str
    reduce_op_type: str
    dtypes: tuple[tuple[str, str], ...]
    reduce_ops: tuple[tuple[str, str], ...]
    impls: tuple[Impl, ...]
    prelude: str
    loc: Loc


@dataclass(frozen=True)
class GeneratorSpec:
    kind: str
    code: str
    loc: Loc


@dataclass(frozen=True)
class DiopiTestSpec:
    init: tuple[Template, ...]
    finalize: tuple[Template, ...]
    overrides: tuple[tuple[str, Template], ...]
    checker: str | None
    loc: Loc


@dataclass(frozen=True)
class RuntimeSpec:
    headers: tuple[str, ...]
    types: HandleTypes
    checkers: tuple[Checker, ...]
    device_checker: str | None
    device_checker_loc: Loc | None
    memcpy_kinds: tuple[tuple[str, str], ...]
    device_impls: tuple[Impl, ...]
    device_prelude: str
    device_includes: tuple[str, ...]
    comm: CommSpec
    generator: GeneratorSpec
    diopi_test: DiopiTestSpec
    loc: Loc

    def checker(self, name: str | None) -> Checker | None:
        return next((c for c in self.checkers if c.name == name), None)

    def impl(self, key: str) -> Impl | None:
        return next((i for i in self.device_impls + self.comm.impls if i.function.key == key), None)


@dataclass(frozen=True)
class Toolkit:
    name: str
    root_vars: tuple[str, ...]
    default_roots: tuple[str, ...]
    include_suffixes: tuple[str, ...]
    lib_suffixes: tuple[str, ...]
    headers: tuple[str, ...]
    libraries: tuple[str, ...]
    loc: Loc


@dataclass(frozen=True)
class BuildSpec:
    toolkit: Toolkit
    link: tuple[str, ...]
    sources: tuple[str, ...]
    loc: Loc
