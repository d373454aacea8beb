"""What the rendered runtime conformance test may expect of each DIPU function,
from how the vendor file implements it: a function that is left out or
`unsupported` is not called, and each check that would call it is skipped
with a line naming it, so a vendor file still being filled in gets no false
failure; a `noop` or a constant `return:` is called, but
behaviour it cannot have (a pinned-pointer answer, a version, an elapsed
time) is not asked of it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from deeplink_gen.interfaces.dipu import COMM_FUNCTIONS, DEVICE_FUNCTIONS
from deeplink_gen.model import Impl, RuntimeSpec
from deeplink_gen.model.runtime import ImplKind

# ScalarTypes a collective might be asked for, in the order the test looks for
# one that the vendor's map leaves out (every torch DIPU builds with has them).
_UNMAPPED_CANDIDATES = ("ComplexDouble", "ComplexFloat", "ComplexHalf", "Double", "Short", "BFloat16", "Half")
_FLOATING = ("Float", "Double", "Half", "BFloat16")


class Expect(Enum):
    """What the test may expect of one DIPU function."""

    ABSENT = "absent"              # not defined: not called
    UNSUPPORTED = "unsupported"    # defined to fail: not called
    NOOP = "noop"                  # called, but does nothing to check
    CONSTANT = "constant"          # called, but returns a constant
    RUNS = "runs"                  # does work of its own, which is checked


@dataclass(frozen=True)
class ConformancePlan:
    kinds: dict[str, Expect]       # DIPU function key -> what the test may expect of it
    comm_dtypes: tuple[str, ...]   # at::ScalarType names the collectives map, in the file's order
    reduce_ops: tuple[str, ...]    # c10d::ReduceOp names the collectives map
    reduce_dtype: str | None       # the dtype each reduce op is tried with
    unmapped_dtype: str | None     # a dtype outside the map, which a collective must reject

    def kind(self, key: str) -> Expect:
        return self.kinds.get(key, Expect.ABSENT)

    def calls(self, key: str) -> bool:
        """The function is defined and may be called."""
        return self.kind(key) not in (Expect.ABSENT, Expect.UNSUPPORTED)

    @property
    def not_called(self) -> tuple[str, ...]:
        """Every DIPU function the test may not call, in DIPU's order: the checks that need one skip."""
        return tuple(f.key for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS if not self.calls(f.key))

    def behaves(self, key: str) -> bool:
        """The function does work of its own: its result can be checked."""
        return self.kind(key) is Expect.RUNS


def _kind(impl: Impl | None) -> Expect:
    if impl is None:
        return Expect.ABSENT
    if impl.kind is ImplKind.UNSUPPORTED:
        return Expect.UNSUPPORTED
    if impl.kind is ImplKind.NOOP:
        return Expect.NOOP
    if impl.kind is ImplKind.CALL and not impl.calls and impl.ret is not None and not impl.ret.placeholders():
        return Expect.CONSTANT
    return Expect.RUNS


def plan_conformance(spec: RuntimeSpec) -> ConformancePlan:
    kinds = {impl.function.key: _kind(impl) for impl in spec.device_impls + spec.comm.impls}
    dtypes = tuple(name for name, _ in spec.comm.dtypes)
    ops = tuple(name for name, _ in spec.comm.reduce_ops if name != "PREMUL_SUM")
    return ConformancePlan(
        kinds=kinds,
        comm_dtypes=dtypes,
        reduce_ops=ops,
        reduce_dtype=next((d for d in _FLOATING if d in dtypes), dtypes[0] if dtypes else None),
        unmapped_dtype=next((d for d in _UNMAPPED_CANDIDATES if d not in dtypes), None),
    )
