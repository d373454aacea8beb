"""A vendor's dtypes section: which DIOPI dtypes its kernels take and how the
others are converted. Precedence is common < per function < per tensor
argument, merged per source dtype: a function rule for float64 replaces the
common float64 rule and keeps the common int64 rule. A rule from a dtype to
itself (``int64: int64``, per function or tensor) keeps that dtype as it is:
it cancels the lower level's rule for it, as DIOPI's replacing levels do."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.errors import Loc
from deeplink_gen.model.common import Located

# DIOPI's diopiDtype_t, in enum order (values 0..16).
DTYPES = (
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "bool", "bfloat16", "tfloat32",
    "complex32", "complex64", "complex128",
)
# What DIOPI's adaptor generator can read in convert_config.yaml (no bfloat16/tfloat32).
CONVERT_CONFIG_DTYPES = frozenset(DTYPES) - {"bfloat16", "tfloat32"}
# Other spellings of those names (torch's own aliases, and the short forms in common use).
DTYPE_ALIASES = {
    "half": "float16", "fp16": "float16", "float": "float32", "fp32": "float32", "double": "float64",
    "fp64": "float64", "bf16": "bfloat16", "tf32": "tfloat32", "char": "int8", "byte": "uint8", "short": "int16",
    "int": "int32", "long": "int64", "boolean": "bool", "chalf": "complex32", "cfloat": "complex64",
    "cdouble": "complex128",
}
LEVELS = ("common", "function", "tensor")
# The dtypes DIPU hands to DIOPI (its toDiopiDtype); a tensor of any other dtype fails in DIPU first.
FROM_DIPU = ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
             "complex64", "complex128")
# What happens to a tensor whose dtype is neither supported nor converted: the adaptor converts only
# dtypes with a rule (DIOPI's generated adaptor too: its cast's default case keeps the dtype).
UNCONVERTED_FATE = ("reach the vendor's DIOPI functions as they are, and the library's own checks decide: "
                    "an error status makes the op raise in DIPU, diopiForceFallbackToCPU runs it on the CPU "
                    "where its CPU fallback is rendered")


@dataclass(frozen=True)
class Rule:
    source: str
    target: str
    loc: Loc
    level: str          # one of LEVELS

    @property
    def keeps(self) -> bool:
        """A rule to the dtype itself: no conversion (cancels a lower level's rule)."""
        return self.source == self.target


@dataclass(frozen=True)
class FunctionDtypes:
    function: str
    loc: Loc
    convert: tuple[Rule, ...] = ()
    tensors: tuple[tuple[str, Loc, tuple[Rule, ...]], ...] = ()


@dataclass(frozen=True)
class DtypeRules:
    supported: Located[tuple[str, ...]] | None = None
    convert: tuple[Rule, ...] = ()
    functions: tuple[FunctionDtypes, ...] = ()
    # Dtypes the vendor hands to its library unconverted on purpose, though not supported.
    pass_through: Located[tuple[str, ...]] | None = None

    def of(self, function: str) -> FunctionDtypes | None:
        return next((f for f in self.functions if f.function == function), None)

    def accepted(self, function: str) -> tuple[str, ...]:
        """The dtypes *function* takes from callers: the supported ones plus
        those its (function-level) rules convert to a supported one; every
        dtype when the vendor declares no supported list. In DTYPES order."""
        if self.supported is None:
            return DTYPES
        supported = set(self.supported.value)
        accepted = supported | {r.source for r in self.rules(function) if r.target in supported}
        return tuple(d for d in DTYPES if d in accepted)

    def unconverted(self, function: str | None = None) -> tuple[str, ...]:
        """The dtypes DIPU hands to DIOPI that reach *function* (None: a function
        with only the common rules) as they are although not supported; none
        when the vendor declares no supported list. In DTYPES order."""
        if self.supported is None:
            return ()
        taken = accepted(self.supported.value, self.rules(function))
        return tuple(d for d in DTYPES if d in FROM_DIPU and d not in taken)

    def rules(self, function: str | None, tensor: str | None = None) -> tuple[Rule, ...]:
        """Merged rules for a tensor of *function* (or the function level), sorted
        by source; a dtype a level keeps as it is has no rule."""
        merged = {r.source: r for r in self.convert}
        f = self.of(function)
        if f is not None:
            merged.update({r.source: r for r in f.convert})
            if tensor is not None:
                for name, _loc, rules in f.tensors:
                    if name == tensor:
                        merged.update({r.source: r for r in rules})
        return tuple(merged[k] for k in sorted(merged, key=DTYPES.index) if not merged[k].keeps)


def accepted(supported: tuple[str, ...] | None, rules: tuple[Rule, ...]) -> tuple[str, ...]:
    """The dtypes a tensor may have when it reaches the vendor's code after *rules*:
    the supported ones, and those converted to a supported one (DTYPES order)."""
    keep = set(supported) if supported is not None else set(DTYPES)
    converted = {r.source for r in rules if r.target in keep}
    return tuple(d for d in DTYPES if d in keep or d in converted)
