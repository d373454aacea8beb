"""A vendor's tests section: what diopi_test skips or loosens (DIOPI's
impl/<vendor>/device_configs.py) and which DIPU PyTorch tests are disabled or
get another precision (dipu/tests/pytorch_config_<type>.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from deeplink_gen.errors import Loc
from deeplink_gen.model.common import Located, TorchGate, TorchVersion

# DIOPI dtype name -> numpy attribute used in device_configs.py.
NUMPY = {
    "int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16", "int32": "int32",
    "uint32": "uint32", "int64": "int64", "uint64": "uint64", "float16": "float16",
    "float32": "float32", "float64": "float64", "bool": "bool_", "complex64": "complex64",
    "complex128": "complex128",
}
TOLERANCES = ("atol", "rtol", "atol_half", "rtol_half", "mismatch_ratio_threshold")


@dataclass(frozen=True)
class TensorSkip:
    tensors: tuple[str, ...]
    dtypes: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    loc: Loc


@dataclass(frozen=True)
class DiopiTestRule:
    key: str
    loc: Loc
    names: tuple[str, ...]
    tolerances: tuple[tuple[str, float], ...] = ()
    skip_all: bool = False
    skip_dtypes: tuple[str, ...] = ()
    skip_params: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    skip_tensors: tuple[TensorSkip, ...] = ()
    reason: str = ""
    dtype_items: tuple[tuple[tuple, str, Loc], ...] = ()   # (key path below the rule, dtype, where)
    torch: TorchGate | None = None                          # the torch versions the rule applies to


@dataclass(frozen=True)
class DisabledTest:
    name: Located[str]                 # a test name or a regular expression over test names
    torch: TorchGate | None = None     # the torch versions it is disabled for (None: every version)


@dataclass(frozen=True)
class DisabledClass:
    name: str
    loc: Loc
    tests: tuple[DisabledTest, ...]


@dataclass(frozen=True)
class Precision:
    test: str
    value: float
    torch: TorchGate | None = None     # the torch versions this precision is for (None: every version)


@dataclass(frozen=True)
class TestConfig:
    diopi: tuple[DiopiTestRule, ...] = ()
    disabled: tuple[DisabledClass, ...] = ()
    precision: tuple[Precision, ...] = ()

    def at(self, version: TorchVersion) -> "TestConfig":
        """The settings whose torch: gates admit *version* (a class whose every
        test is gated out is left out)."""
        def admits(gate: TorchGate | None) -> bool:
            return gate is None or gate.admits(version)

        disabled = []
        for cls in self.disabled:
            kept = tuple(t for t in cls.tests if admits(t.torch))
            if len(kept) == len(cls.tests):
                disabled.append(cls)
            elif kept:
                disabled.append(dataclasses.replace(cls, tests=kept))
        return TestConfig(tuple(r for r in self.diopi if admits(r.torch)), tuple(disabled),
                          tuple(p for p in self.precision if admits(p.torch)))
