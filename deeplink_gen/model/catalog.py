"""The op catalog: ATen op -> DIOPI call, plus the optional pieces DIPU's op
config supports (custom C++ at hook points, ins/outs/sizes locals, autograd,
torch gates, flags)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from deeplink_gen.errors import Loc
from deeplink_gen.model.common import Located, TorchGate, TorchVersion


@dataclass(frozen=True)
class CallArg:
    """One argument of a DIOPI call: a bare name (converted by type) or C++ text."""

    text: str

    @property
    def is_name(self) -> bool:
        return self.text.isidentifier()


@dataclass(frozen=True)
class DiopiCall:
    function: str
    args: tuple[CallArg, ...]
    loc: Loc

    def __str__(self) -> str:
        return f"{self.function}({', '.join(a.text for a in self.args)})"


@dataclass(frozen=True)
class Autograd:
    """An autograd.Function around the wrapper: forward calls the wrapper of
    `forward` (default: the op itself), backward the wrapper of `backward`."""

    loc: Loc
    backward: Located[str]
    forward: Located[str] | None = None
    saved: tuple[str, ...] = ()
    forward_code: Located[str] | None = None     # the code texts, each where it starts (None: not written)
    grad_code: Located[str] | None = None
    return_code: Located[str] | None = None
    wrapper_return: Located[str] | None = None
    forward_args: tuple[str, ...] = ()    # arguments of the forward call (default: the op's)

    def texts(self) -> tuple[tuple[str, Located[str]], ...]:
        """(key, text) of each code text written, in AUTOGRAD_CODE's order."""
        return tuple((key, text) for key in AUTOGRAD_CODE for text in [getattr(self, key)] if text is not None)

    def ops(self) -> tuple[tuple[str, Located[str]], ...]:
        """("backward" | "forward", the op named there)."""
        return tuple((k, ref) for k, ref in (("backward", self.backward), ("forward", self.forward))
                     if ref is not None)


# An autograd entry's code texts.
AUTOGRAD_CODE = ("forward_code", "grad_code", "return_code", "wrapper_return")
# The hook points of custom code, in the order they appear in a wrapper.
HOOKS = ("beginning", "before_call", "before_return")


@dataclass(frozen=True)
class Alloc:
    """alloc.<name>: how the wrapper allocates a fresh return."""

    name: Located[str]           # where the name is written (its key)
    expr: Located[str]           # the C++ expression, where its text starts


@dataclass(frozen=True)
class CatalogEntry:
    op: str
    loc: Loc
    call: DiopiCall
    where: tuple = ()                                 # key path of the entry in its file
    schema_text: Located[str] | None = None
    alloc: tuple[Alloc, ...] = ()
    enabled: Located[bool] | None = None
    autocompare: Located[bool] | None = None
    fallback_to_cpu: Located[bool] | None = None
    device_guard: Located[bool | str] | None = None
    torch: TorchGate | None = None
    doc: str = ""
    # Escape hatches (DIPU op-config parity); see schemas/catalog.schema.json.
    code: tuple[tuple[str, Located[str]], ...] = ()   # hook -> free-form C++ (byte for byte)
    locals: tuple[str, ...] = ()                      # names declared by the custom code
    ins: tuple[tuple[str, bool], ...] = ()            # (local, optional) -> const handle
    outs: tuple[str, ...] = ()                        # local -> mutable handle
    no_device_check: tuple[str, ...] = ()
    dummy_call: Located[bool] | None = None
    custom_fallback: Located[bool] | None = None
    force_fallback: Located[bool] | None = None
    register: Located[bool] | None = None
    autograd: Autograd | None = None
    sizes: tuple[str, ...] = ()                       # locals converted to diopiSize_t
    returns: tuple[str, ...] = ()                     # names of the locals holding the returns
    includes: tuple[str, ...] = ()                    # headers its code needs (its own, then its file's)
    keys: tuple[Located[str], ...] = ()               # the list-valued keys written (locals, ins, ...), each where it is

    def hook(self, name: str) -> str:
        found = dict(self.code).get(name)
        return found.value if found is not None else ""

    def alloc_for(self, name: str) -> Alloc | None:
        return next((a for a in self.alloc if a.name.value == name), None)

    def key_loc(self, key: str) -> Loc:
        """Where list-valued *key* is written (the entry, when it is not)."""
        return next((k.loc for k in self.keys if k.value == key), self.loc)

    def flag(self, name: str) -> bool:
        """A true/false key that defaults to false (dummy_call, custom_fallback, force_fallback)."""
        located = getattr(self, name)
        return located is not None and bool(located.value)

    @property
    def is_registered_here(self) -> bool:
        """False when the entry itself says register: false."""
        return self.register is None or bool(self.register.value)


@dataclass(frozen=True)
class Catalog:
    entries: tuple[CatalogEntry, ...]
    files: tuple[str, ...]

    def get(self, op: str, version: TorchVersion | None = None) -> CatalogEntry | None:
        """The entry of *op* whose torch: gate admits *version* (any entry when
        None). An op may have several entries with disjoint gates."""
        for entry in self._index.get(op, ()):
            if version is None or entry.torch is None or entry.torch.admits(version):
                return entry
        return None

    def all(self, op: str) -> tuple[CatalogEntry, ...]:
        return tuple(self._index.get(op, ()))

    @cached_property
    def _index(self) -> dict[str, list[CatalogEntry]]:
        index: dict[str, list[CatalogEntry]] = {}
        for e in self.entries:
            index.setdefault(e.op, []).append(e)
        return index

    @cached_property
    def _names(self) -> tuple[str, ...]:
        return tuple(self._index)

    def names(self) -> tuple[str, ...]:
        """The ops with an entry, in catalog order: one tuple, which every
        did-you-mean among them shares."""
        return self._names
