"""hostsim's DIOPI library (diopi_library: aten_cpu), as rendered: built with its own
CMakeLists.txt against the installed torch and DIOPI headers written from the
prototype snapshot, loaded beside a DIOPI runtime over plain memory
(fixtures/host_diopi/diopirt_shim.cpp), and every function manifest.json lists as
implemented called on inputs torch CPU accepts: each result must equal torch's,
bit for bit, in the memory the caller passed. With -DTEST=ON the same build makes
diopi_test's runtime and Python modules from the rendered test/ folder (against
stand-ins of diopi_test's sources, fixtures/diopi_test), which must import and
move bytes through hostsim's device memory; and the CMakeLists.txt refuses a torch
other than the one it was rendered for."""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deeplink_gen.interfaces.aten import installed_torch_version
from helpers import REPO, coverage_report, diopi_include, dipu_torch_python, torch_root

try:
    import pybind11
except ImportError:          # the diopi_test build is then left out (pip install -e '.[test]' has it)
    pybind11 = None

torch = pytest.importorskip("torch")

IMPL = "dipu/third_party/DIOPI/impl/hostsim"
SHIM = REPO / "tests" / "fixtures" / "host_diopi" / "diopirt_shim.cpp"
STAND_IN = REPO / "tests" / "fixtures" / "diopi_test"
COMMITTED = REPO / "generated" / "hostsim"      # rendered for the bundled workspace's torch, 2.2.2
# The functions every DIOPI library defines besides operators.
RUNTIME = {"diopiGetVendorName", "diopiGetImplVersion", "diopiGetLastErrorString"}
# Functions drawing random numbers (they take the caller's generator).
RANDOM = {"diopiBernoulli", "diopiBernoulliScalar", "diopiNormalInp", "diopiNormalTensorScalar", "diopiUniformInp"}


class Tensor(ctypes.Structure):       # the shim's struct diopiTensor
    _fields_ = [("data", ctypes.c_void_p), ("ndim", ctypes.c_int64), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("stride", ctypes.POINTER(ctypes.c_int64)), ("dtype", ctypes.c_int64), ("numel", ctypes.c_int64)]


class Generator(ctypes.Structure):    # the shim's struct diopiGenerator
    _fields_ = [("seed", ctypes.c_uint64), ("offset", ctypes.c_uint64)]


class Gen:
    """A generator argument: the seed and offset the caller's generator holds."""

    def __init__(self, seed: int, offset: int):
        self.seed, self.offset = seed, offset

    def torch(self):
        """The CPU generator the library is specified to draw from for this seed and offset."""
        return torch.Generator().manual_seed(self.seed ^ ((self.offset + 1) * 0x9E3779B97F4A7C15) & (2**64 - 1))


class Size(ctypes.Structure):         # diopiSize_t
    _fields_ = [("data", ctypes.POINTER(ctypes.c_int64)), ("len", ctypes.c_int64)]


class _Value(ctypes.Union):
    _fields_ = [("fval", ctypes.c_double), ("ival", ctypes.c_int64)]


class Scalar(ctypes.Structure):       # diopiScalar_t
    _anonymous_ = ("value",)
    _fields_ = [("stype", ctypes.c_int), ("value", _Value)]


DTYPES = {torch.int8: 0, torch.uint8: 1, torch.int16: 2, torch.int32: 4, torch.int64: 6, torch.float16: 8,
          torch.float32: 9, torch.float64: 10, torch.bool: 11, torch.bfloat16: 12, torch.complex64: 15,
          torch.complex128: 16}
POINTEES = {"int64_t*": ctypes.c_int64, "double*": ctypes.c_double, "bool*": ctypes.c_bool}
PLAIN = {"int64_t": ctypes.c_int64, "double": ctypes.c_double, "bool": ctypes.c_bool, "float": ctypes.c_float,
         "int32_t": ctypes.c_int32, "int": ctypes.c_int}


@pytest.fixture(scope="module")
def hostsim(rendered: Path) -> Path:
    return rendered / "hostsim"


@pytest.fixture(scope="module")
def built(hostsim: Path, tmp_path_factory) -> Path:
    """The rendered impl folder in a DIOPI-shaped tree, built by its CMakeLists.txt; with pybind11 at
    hand also with -DTEST=ON, against the stand-in diopi_test sources (fixtures/diopi_test, with the
    stand-in headers of tests/include/sdk/common): returns the tree's root (build/ holds the build)."""
    root = tmp_path_factory.mktemp("host-diopi")
    shutil.copytree(hostsim / IMPL, root / "impl" / "hostsim")
    shutil.copytree(STAND_IN, root / "diopi_test")
    include = root / "diopi_test" / "diopi_stub" / "include"
    include.mkdir()
    for header in ("conform_test.h", "litert.hpp"):
        shutil.copy(REPO / "tests" / "include" / "sdk" / "common" / header, include)
    test = ["-DTEST=ON", f"-Dpybind11_DIR={pybind11.get_cmake_dir()}", f"-DPython_EXECUTABLE={sys.executable}"] \
        if pybind11 is not None else []
    configure = subprocess.run(["cmake", "-S", str(root / "impl" / "hostsim"), "-B", str(root / "build"),
                                f"-DTORCH_DIR={torch_root()}", f"-DDIOPI_INCLUDE_DIR={diopi_include()}",
                                "-DCMAKE_BUILD_TYPE=Release", *test], capture_output=True, text=True, timeout=600)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    made = subprocess.run(["cmake", "--build", str(root / "build"), "-j2"], capture_output=True, text=True,
                          timeout=1800)
    assert made.returncode == 0, made.stdout[-6000:] + made.stderr[-6000:]
    return root


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    """The DIOPI runtime over plain memory, as a library to load first."""
    path = tmp_path_factory.mktemp("diopirt-shim") / "libdiopirt_shim.so"
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", f"-I{diopi_include()}",
                    str(SHIM), "-o", str(path)], check=True, capture_output=True, text=True)
    return path


@pytest.fixture(scope="module")
def library(built: Path, shim: Path):
    """(the loaded libdiopi_impl.so, its path), built by the rendered CMakeLists.txt."""
    ctypes.CDLL(str(shim), mode=os.RTLD_NOW | os.RTLD_GLOBAL)     # the runtime the library calls back into
    path = built / "build" / "libdiopi_impl.so"
    return ctypes.CDLL(str(path)), path


@pytest.fixture(scope="module")
def implemented(hostsim: Path) -> dict:
    return json.loads((hostsim / "manifest.json").read_text())["diopi_library"]["implemented"]


def aten_op(name: str):
    base, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, base), overload or "default")


class Call:
    """DIOPI arguments for one call, kept alive with what they point at."""

    def __init__(self):
        self.keep = []

    def tensor(self, t):
        if t is None:
            return None
        t = t if isinstance(t, torch.Tensor) else torch.as_tensor(t)
        shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
        stride = (ctypes.c_int64 * max(t.dim(), 1))(*t.stride())
        handle = Tensor(t.data_ptr() if t.numel() else None, t.dim(), shape, stride, DTYPES[t.dtype], t.numel())
        self.keep += [t, shape, stride, handle]
        return ctypes.pointer(handle)

    def scalar(self, value):
        if value is None:
            return None
        if isinstance(value, (bool, int)):
            s = Scalar(stype=6, ival=int(value))
        else:
            s = Scalar(stype=10, fval=float(value))
        self.keep.append(s)
        return ctypes.pointer(s)

    def generator(self, gen: Gen):
        handle = Generator(gen.seed, gen.offset)
        self.keep.append(handle)
        return ctypes.pointer(handle)

    def pointee(self, ctype, value):
        """const T*: null for an absent value."""
        if value is None:
            return None
        cell = ctype(value)
        self.keep.append(cell)
        return ctypes.pointer(cell)

    def size(self, values):
        if values is None:
            return Size(None, 0)
        array = (ctypes.c_int64 * max(len(values), 1))(*values)
        self.keep.append(array)
        return Size(array, len(values))


# Inputs to try, in order, until torch accepts the call: (tensor maker, int, int list, Scalar, float).
def _float(shape):
    return lambda g: torch.randn(shape, generator=g)


PROFILES = [
    dict(tensor=_float((3, 4)), int=1, ints=[1], scalar=2.5, float=0.5),
    dict(tensor=lambda g: torch.rand((3, 4), generator=g), int=1, ints=[1], scalar=0.5, float=0.5),
    dict(tensor=_float((2, 4, 4)), int=1, ints=[2], scalar=2.5, float=0.5),
    dict(tensor=_float((2, 3, 4, 4)), int=1, ints=[2, 2], scalar=2.5, float=0.5),
    dict(tensor=lambda g: torch.rand((4, 4), generator=g) + 0.5, int=0, ints=[0], scalar=2, float=0.25),
    dict(tensor=lambda g: torch.randint(0, 3, (3, 4), generator=g), int=1, ints=[1], scalar=2, float=0.5),
    dict(tensor=lambda g: torch.randint(0, 2, (3, 4), generator=g).bool(), int=1, ints=[1], scalar=True, float=0.5),
    dict(tensor=_float((6,)), int=0, ints=[0], scalar=2.5, float=0.5),
    dict(tensor=_float((2, 3, 4)), int=2, ints=[2], scalar=2.5, float=0.5),
]
OUT_DTYPES = (torch.float32, torch.int64, torch.bool)


# Arguments whose values a generic profile gets wrong, by name: (profile tensor shape) -> value.
HINTS = {
    "mask": lambda shape, g: torch.randint(0, 2, shape, generator=g).bool(),
    "value": lambda shape, g: torch.tensor(1.5),
    "index": lambda shape, g: torch.tensor([0, 1]),
    "indices": lambda shape, g: torch.tensor([0, 1]),
    "min": lambda shape, g: 0.25,
    "running_mean": lambda shape, g: torch.randn(shape[1], generator=g),
    "running_var": lambda shape, g: torch.rand(shape[1], generator=g) + 0.5,
    "normalized_shape": lambda shape, g: list(shape[-1:]),
    "padding": lambda shape, g: [0] * 2,
    "dilation": lambda shape, g: [1] * 2,
    "approximate": lambda shape, g: "tanh",
    "rounding_mode": lambda shape, g: "floor",
    "mode": lambda shape, g: "reduced",
    "start": lambda shape, g: 0,
    "end": lambda shape, g: 2,
}
# Inputs the generic profiles get wrong, by DIOPI function: torch arguments that replace the generated ones.
def _randn(*shape):
    return lambda g: torch.randn(shape, generator=g)


_VOLUME = _randn(1, 2, 4, 4, 4)
_CUBE = dict(kernel_size=lambda g: [2, 2, 2], stride=lambda g: [2, 2, 2], padding=lambda g: [0, 0, 0],
             dilation=lambda g: [1, 1, 1])
_CLASSES = dict(self=_randn(3, 5), target=lambda g: torch.randint(0, 5, (3,), generator=g))
INPUTS = {
    "diopiAdaptiveAvgPool3d": dict(self=_VOLUME, output_size=lambda g: [2, 2, 2]),
    "diopiAdaptiveMaxPool3d": dict(self=_VOLUME, output_size=lambda g: [2, 2, 2]),
    "diopiAdaptiveMaxPool3dWithIndices": dict(self=_VOLUME, output_size=lambda g: [2, 2, 2]),
    "diopiMaxPool3d": dict(self=_VOLUME, **_CUBE),
    "diopiMaxPool3dWithIndices": dict(self=_VOLUME, **_CUBE),
    "diopiConvolution3d": dict(input=_VOLUME, weight=_randn(3, 2, 2, 2, 2), bias=None, stride=lambda g: [1, 1, 1],
                               padding=lambda g: [0, 0, 0], dilation=lambda g: [1, 1, 1], groups=lambda g: 1),
    "diopiConvTranspose2d": dict(input=_randn(1, 2, 4, 4), weight=_randn(2, 3, 2, 2), bias=None,
                                 stride=lambda g: [1, 1], padding=lambda g: [0, 0], dilation=lambda g: [1, 1],
                                 output_padding=lambda g: [0, 0], groups=lambda g: 1),
    "diopiEmbeddingBackward": dict(grad=_randn(3, 4), indices=lambda g: torch.tensor([0, 2, 1]),
                                   num_weights=lambda g: 5, padding_idx=lambda g: -1),
    "diopiNLLLoss": _CLASSES,
    "diopiNLLLossV2": _CLASSES,
    "diopiCrossEntropyLoss": _CLASSES,
    "diopiOneHot": dict(self=lambda g: torch.randint(0, 4, (5,), generator=g), num_classes=lambda g: 4),
    "diopiPolar": dict(abs=lambda g: torch.rand(3, generator=g), angle=_randn(3)),
    "diopiLerpTensor": dict(end=_randn(3, 4), weight=lambda g: torch.rand(3, 4, generator=g)),
    "diopiLerpScalar": dict(end=_randn(3, 4)),
    "diopiSelectScatter": dict(self=_randn(3, 4), src=_randn(4), dim=lambda g: 0, index=lambda g: 1),
    "diopiSelectBackward": dict(grad_output=_randn(4), input_sizes=lambda g: [3, 4], dim=lambda g: 0,
                                index=lambda g: 1),
    "diopiSliceBackward": dict(grad_output=_randn(2, 4), input_sizes=lambda g: [3, 4], dim=lambda g: 0,
                               start=lambda g: 0, end=lambda g: 2, step=lambda g: 1),
    "diopiUnfoldBackward": dict(grad_in=_randn(3, 2, 2), input_sizes=lambda g: [3, 4], dim=lambda g: 1,
                                size=lambda g: 2, step=lambda g: 2),
    "diopiIndexSelectBackward": dict(grad=_randn(2, 4), self_sizes=lambda g: [3, 4], dim=lambda g: 0,
                                     index=lambda g: torch.tensor([0, 2])),
    "diopiCol2Im": dict(self=_randn(1, 4, 9), output_size=lambda g: [4, 4], kernel_size=lambda g: [2, 2],
                        dilation=lambda g: [1, 1], padding=lambda g: [0, 0], stride=lambda g: [1, 1]),
    "diopiCholesky": dict(self=lambda g: torch.eye(3) * 2, upper=lambda g: False, check_errors=lambda g: False),
}
# DIOPI's numbering of the values some parameters take (diopirt.h's enums).
ROUND_MODES = {None: 0, "trunc": 1, "floor": 2}


def _value(arg, profile, g):
    kind = str(arg.type)
    hint = HINTS.get(arg.name)
    if hint is not None and kind in ("Tensor", "Optional[Tensor]", "Optional[number]", "SymInt[]", "List[int]",
                                     "List[SymInt]", "str", "Optional[str]", "Optional[int]"):
        value = hint(tuple(profile["tensor"](torch.Generator()).shape), g)
        if kind in ("Tensor", "Optional[Tensor]") and not isinstance(value, torch.Tensor):
            value = torch.full(tuple(profile["tensor"](torch.Generator()).shape), float(value))
        return value
    if kind == "Tensor":
        return profile["tensor"](g)
    if kind == "Optional[Generator]":
        return Gen(1234, 5)
    if kind.startswith("Optional["):
        return None
    if kind in ("int", "SymInt"):
        return profile["int"]
    if kind in ("List[int]", "SymInt[]", "List[SymInt]") or kind.startswith("int["):
        return list(profile["ints"])
    if kind in ("Scalar", "number"):
        return profile["scalar"]
    if kind == "float":
        return profile["float"]
    if kind == "bool":
        return False
    if kind == "ScalarType":
        return torch.float32
    raise LookupError(kind)


def _inputs(op, profile, seed: int, fixed: dict):
    """(kwargs for torch, names of the out arguments) for one profile; *fixed*: the values the
    library passes for arguments no DIOPI parameter gives."""
    g = torch.Generator().manual_seed(seed)
    kwargs, outs = {}, []
    for arg in op._schema.arguments:
        writes = arg.alias_info is not None and arg.alias_info.is_write
        if writes and arg.kwarg_only:
            outs.append(arg.name)
            continue
        kwargs[arg.name] = fixed[arg.name] if arg.name in fixed else _value(arg, profile, g)
    return kwargs, outs


def _clone(kwargs):
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}


def _for_torch(kwargs):
    return {k: (v.torch() if isinstance(v, Gen) else v) for k, v in kwargs.items()}


def reference(op, seed: int, fixed: dict | None = None, given: dict | None = None):
    """Inputs torch accepts and what it computes: (inputs, out dtypes, result, inputs after the call);
    *given* makes some of the inputs."""
    for profile in PROFILES:
        try:
            kwargs, outs = _inputs(op, profile, seed, fixed or {})
        except LookupError:
            return None
        g = torch.Generator().manual_seed(seed)
        kwargs.update({k: make(g) if callable(make) else make for k, make in (given or {}).items()})
        first = next((v for v in kwargs.values() if isinstance(v, torch.Tensor)), None)
        for dtype, empty in [(d, e) for e in (True, False) for d in OUT_DTYPES] if outs else [(None, True)]:
            if not empty and first is None:
                continue
            args = _clone(kwargs)
            for name in outs:       # empty (torch sizes it), else shaped like the first input
                out_dtype = torch.int64 if name == "indices" else dtype
                args[name] = torch.empty(0, dtype=out_dtype) if empty else torch.zeros(first.shape, dtype=out_dtype)
            try:
                result = op(**_for_torch(args))
            except Exception:
                continue
            return kwargs, outs, result, args
    return None


def _return_index(op: str, name: str) -> int:
    """Which of the op's returns a fresh return is: by torch's name, else the catalog's out<i>."""
    names = [r.name for r in aten_op(op)._schema.returns]
    return names.index(name) if name in names else int(name.removeprefix("out"))


def run_diopi(lib, name: str, entry: dict, kwargs: dict, after: dict, result, swap: tuple[str, str] | None = None):
    """Call *name* on copies of *kwargs* (outs and fresh returns allocated like torch's); returns
    (status, the values to compare, torch's values)."""
    from deeplink_gen.interfaces.diopi import load_snapshot

    proto = load_snapshot().get(name)
    call, args = Call(), _clone(kwargs)
    results = result if isinstance(result, tuple) else (result,)
    fresh = {}
    mine, theirs = [], []
    for param, aten in entry["args"]:
        if aten in args or aten not in after:
            continue
        args[aten] = torch.zeros_like(after[aten])        # an out argument, shaped as torch made it
    values = []
    names = [aten for _, aten in entry["args"]]
    if swap:
        i, j = names.index(swap[0]), names.index(swap[1])
        names[i], names[j] = names[j], names[i]
    for p, aten in zip((q for q in proto.params if q.type != "diopiContextHandle_t"), names):
        t = p.type.replace("const ", "").strip()
        if aten not in args:                               # a fresh return: the caller allocates it
            index = _return_index(entry["op"], aten) if len(results) > 1 else 0
            fresh[aten] = torch.zeros_like(results[index])
            values.append(call.tensor(fresh[aten]))
            mine.append(fresh[aten])
            theirs.append(results[index])
        elif t in ("diopiTensorHandle_t", "diopiConstTensorHandle_t"):
            values.append(call.tensor(args[aten]))
        elif t == "diopiScalar_t*":
            values.append(call.scalar(args[aten]))
        elif t == "diopiSize_t":
            values.append(call.size(args[aten]))
        elif t == "diopiGeneratorHandle_t":
            values.append(call.generator(args[aten]))
        elif t in POINTEES:
            values.append(call.pointee(POINTEES[t], args[aten]))
        elif t == "diopiSize_t*":
            values.append(None if args[aten] is None else ctypes.pointer(call.size(args[aten])))
        elif t == "char*":
            values.append(None if args[aten] is None else ctypes.c_char_p(args[aten].encode()))
        elif t == "diopiRoundMode_t":
            values.append(ctypes.c_int(ROUND_MODES[args[aten]]))
        elif t == "diopiReduction_t":
            values.append(ctypes.c_int(args[aten]))
        else:
            values.append(PLAIN[t](args[aten]))
    for key, value in args.items():                     # inputs, outs and in-place arguments after the call
        if isinstance(value, torch.Tensor):
            mine.append(value)
            theirs.append(after[key])
    status = getattr(lib, name)(None, *values)
    return status, mine, theirs


def same(mine, theirs) -> bool:
    return all(a.shape == b.shape and a.dtype == b.dtype and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
               for a, b in zip(mine, theirs))


@pytest.mark.slow
def test_the_library_defines_what_the_manifest_says(library, implemented: dict):
    _, path = library
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.split()[-1].startswith("diopi")}
    assert defined == set(implemented) | RUNTIME
    assert len(implemented) >= 100


@pytest.mark.slow
def test_each_implemented_function_computes_what_torch_does(library, implemented: dict):
    lib, _ = library
    lib.diopiGetLastErrorString.restype = ctypes.c_char_p
    unexercised, wrong = [], []
    for seed, (name, entry) in enumerate(sorted(implemented.items())):
        op = aten_op(entry["op"])
        found = reference(op, seed, entry.get("fixed"), INPUTS.get(name))
        if found is None:
            unexercised.append(f"{name} ({entry['op']})")
            continue
        kwargs, _, result, after = found
        status, mine, theirs = run_diopi(lib, name, entry, kwargs, after, result)
        if status != 0:
            wrong.append(f"{name}: status {status}: {lib.diopiGetLastErrorString().decode()}")
        elif not same(mine, theirs):
            wrong.append(f"{name}: results differ from torch's {entry['op']}")
    assert not wrong, "\n".join(wrong)
    # Each function whose op torch accepts the generic inputs for is checked; the rest are named.
    assert len(unexercised) <= len(implemented) // 20, "not exercised:\n" + "\n".join(unexercised)


@pytest.mark.slow
def test_a_wrong_argument_order_is_caught(library, implemented: dict):
    """The comparison can fail: diopiSub with its input and other swapped differs from torch."""
    lib, _ = library
    entry = implemented["diopiSub"]
    kwargs, _, result, after = reference(aten_op(entry["op"]), 7)
    status, mine, theirs = run_diopi(lib, "diopiSub", entry, kwargs, after, result)
    assert status == 0 and same(mine, theirs)
    status, mine, theirs = run_diopi(lib, "diopiSub", entry, kwargs, after, result, swap=("self", "other"))
    assert status == 0 and not same(mine, theirs)


def test_coverage_names_what_the_library_lacks(hostsim: Path, implemented: dict):
    """`coverage --impl` reads the rendered folder: an op whose DIOPI function is not implemented
    is reported so, and DIPU falls back to the CPU for it."""
    manifest = json.loads((hostsim / "manifest.json").read_text())
    lacking = manifest["diopi_library"]["not_implemented"]
    assert "diopiCat" in lacking and "diopiAdd" in implemented
    assert lacking["diopiBatchNormStats"] == "torch has no CPU kernel for batch_norm_stats"
    ws = REPO
    report = coverage_report(ws, "--vendor", "hostsim", "--impl", f"hostsim={hostsim / IMPL}")
    cells = {o["op"]: o["vendors"]["hostsim"] for o in report["ops"] if "hostsim" in o["vendors"]}
    assert cells["cat.out"]["implemented"] is False
    assert cells["add.out"]["implemented"] is True
    # Every registered op's function is either implemented or listed with a reason.
    for o in manifest["ops"]:
        if o["enabled"] and o["flags"]["register"]:
            assert o["diopi"] in implemented or o["diopi"] in lacking, o["op"]


@pytest.mark.slow
def test_a_missing_tensor_asks_for_the_cpu_fallback(library):
    """DIOPI callers pass null for an absent optional tensor; where the op needs it the library
    cannot make the call, and says so with diopiForceFallbackToCPU (DIPU then runs the op on the CPU)."""
    lib, _ = library
    call = Call()
    x, out = torch.randn(3), torch.zeros(3)
    status = lib.diopiAdd(None, call.tensor(out), call.tensor(x), None, call.scalar(1))
    assert status == 14          # diopiForceFallbackToCPU
    assert torch.equal(out, torch.zeros(3))


@pytest.mark.slow
def test_an_output_it_cannot_resize_is_an_error(library):
    """The caller's memory is viewed in place and cannot grow: an output too small is an error,
    never a result written somewhere the caller does not see."""
    lib, _ = library
    lib.diopiGetLastErrorString.restype = ctypes.c_char_p
    call = Call()
    out = torch.zeros(0)
    assert lib.diopiAbs(None, call.tensor(out), call.tensor(torch.randn(3))) == 1     # diopiErrorOccurred
    assert b"diopiAbs" in lib.diopiGetLastErrorString()
    assert out.numel() == 0


@pytest.mark.slow
def test_random_functions_draw_from_the_callers_generator(library, implemented: dict):
    """A random function takes the caller's seed and offset, and moves the offset on: the same
    state draws the same numbers, the next call other ones."""
    lib, _ = library
    assert RANDOM <= set(implemented)
    call = Call()
    gen = call.generator(Gen(42, 0))
    first, second = torch.zeros(64), torch.zeros(64)
    assert lib.diopiNormalInp(None, call.tensor(first), ctypes.c_double(0.0), ctypes.c_double(1.0), gen) == 0
    assert gen.contents.seed == 42 and gen.contents.offset == 1
    assert lib.diopiNormalInp(None, call.tensor(second), ctypes.c_double(0.0), ctypes.c_double(1.0), gen) == 0
    assert gen.contents.offset == 2 and not torch.equal(first, second)
    again = torch.zeros(64)
    assert lib.diopiNormalInp(None, call.tensor(again), ctypes.c_double(0.0), ctypes.c_double(1.0),
                              call.generator(Gen(42, 0))) == 0
    assert torch.equal(first, again)
    # Not the CPU's numbers for the same seed: a device generator is another generator.
    assert not torch.equal(first, torch.randn(64, generator=torch.Generator().manual_seed(42)))


@pytest.mark.slow
def test_each_function_reached_is_noted_once(library, tmp_path, monkeypatch):
    """With DEEPLINK_GEN_REACHED naming a file, a function's first call in a process appends its
    name there, and later calls do not: how a test run counts the functions it reached."""
    lib, _ = library
    reached = tmp_path / "reached.txt"
    call = Call()
    x, out = torch.randn(3), torch.zeros(3)
    assert lib.diopiAbs(None, call.tensor(out), call.tensor(x)) == 0      # before: not noted
    monkeypatch.setenv("DEEPLINK_GEN_REACHED", str(reached))
    for _ in range(2):
        assert lib.diopiAbs(None, call.tensor(out), call.tensor(x)) == 0
        assert lib.diopiAbsInp(None, call.tensor(out)) == 0
    assert reached.read_text().splitlines() == ["diopiAbs", "diopiAbsInp"]


def test_every_snapshot_function_is_implemented_or_listed(hostsim: Path, implemented: dict):
    """The library is a reference implementation of the whole DIOPI snapshot: each function is
    implemented, or listed as not implemented with its reason."""
    from deeplink_gen.interfaces.diopi import load_snapshot

    lacking = json.loads((hostsim / "manifest.json").read_text())["diopi_library"]["not_implemented"]
    snapshot = set(load_snapshot().names())
    assert not set(implemented) & set(lacking)
    assert snapshot - set(implemented) - set(lacking) == set()
    assert all(why for why in lacking.values())
    assert len(implemented) >= 254


def test_a_wrong_stated_call_is_an_error_at_its_line(tmp_path: Path):
    """A stated call naming an argument the op lacks, or a parameter of a type no conversion
    takes, fails when the file is read, at the entry's line."""
    from deeplink_gen.errors import UserError
    from deeplink_gen.interfaces import torch_snapshots
    from deeplink_gen.interfaces.diopi import load_snapshot
    from deeplink_gen.model import TorchVersion
    from deeplink_gen.plan.host_diopi_calls import stated_calls

    data = tmp_path / "aten_calls.yaml"
    data.write_text("functions:\n"
                    "  diopiAsin:\n    op: asin.out\n    args: {self: input, out: out, alpha: input}\n"
                    "  diopiGelu:\n    op: gelu.out\n    args: {self: input, approximate: out, out: input}\n"
                    "  diopiSort:\n    op: sort.values_stable\n    args: {self: input, stable: {param: dim, absent: false},"
                    " dim: dim, descending: descending, values: values, indices: indices}\n"
                    "  diopiNLLLossV2:\n    op: nll_loss_forward\n    args: {self: {classes_last: weight}, target: target,"
                    " weight: {flat: input}, reduction: reduction, ignore_index: ignore_index}\n"
                    "    returns: [out, totalWeight]\n    classes_last: [input]\n")
    table = torch_snapshots.load(TorchVersion.parse("2.2.2"))
    with pytest.raises(UserError) as caught:
        stated_calls(table, load_snapshot(), data)
    text = str(caught.value)
    assert "aten_calls.yaml:4:" in text and "asin.out has no argument alpha" in text
    assert "aten_calls.yaml:7:" in text and "no conversion from out (diopiTensorHandle_t) to approximate (str)" in text
    assert "aten_calls.yaml:10:" in text and "param names a pointer parameter of diopiSort" in text
    assert "aten_calls.yaml:13:" in text and "expected a parameter name" in text      # flat: on an optional tensor
    assert "aten_calls.yaml:15:" in text and "input is not one of the returns" in text


@pytest.mark.slow
def test_norms_keep_diopis_statistics(library):
    """Layer norm's saved statistics have the shape input.shape[:axis]; batch norm takes absent
    running statistics, a half input with float statistics, and a non-contiguous input."""
    lib, _ = library
    x = torch.randn(2, 3, 4)
    out, mean, invstd = torch.zeros(2, 3, 4), torch.zeros(2, 3), torch.zeros(2, 3)
    call = Call()
    assert lib.diopiLayerNorm(None, call.tensor(out), call.tensor(mean), call.tensor(invstd), call.tensor(x), None,
                              None, call.size([4]), ctypes.c_double(1e-5)) == 0
    want = torch.ops.aten.native_layer_norm(x, [4], None, None, 1e-5)
    assert torch.equal(out, want[0]) and torch.equal(mean, want[1].reshape(2, 3))
    assert torch.equal(invstd, want[2].reshape(2, 3))
    for x, stats in [(torch.randn(2, 3, 4), False), (torch.randn(2, 3, 4).half(), True),
                     (torch.randn(4, 3, 2).permute(2, 1, 0), True)]:
        w, b = torch.rand(3), torch.rand(3)
        rm, rv = (torch.zeros(3), torch.ones(3)) if stats else (None, None)
        out, mean, invstd = torch.zeros(x.shape, dtype=x.dtype), torch.zeros(3), torch.zeros(3)
        call = Call()
        status = lib.diopiBatchNorm(None, call.tensor(out), call.tensor(mean), call.tensor(invstd), call.tensor(x),
                                    call.tensor(w), call.tensor(b), call.tensor(rm), call.tensor(rv),
                                    ctypes.c_bool(True), ctypes.c_double(0.1), ctypes.c_double(1e-5))
        assert status == 0
        want = torch.ops.aten.native_batch_norm(x, w, b, None if rm is None else torch.zeros(3),
                                                None if rv is None else torch.ones(3), True, 0.1, 1e-5)
        assert torch.equal(out, want[0]) and torch.equal(mean, want[1]) and torch.equal(invstd, want[2])
        if stats:
            assert not torch.equal(rm, torch.zeros(3))       # the running mean moved


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(6,), (4, 6), (2, 6, 5), (2, 6, 3, 4), (2, 6, 3, 2, 2), (0, 6, 3), (2, 6, 0, 3)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_v2_takes_any_rank(library, shape, reduction):
    """diopiNLLLossV2 and its backward take DIOPI's shapes, input (C), (N, C) or (N, C, d1, ..., dk)
    with the classes at dimension 1, as torch's nll_loss does (DIOPI's reference); totalWeight,
    DIOPI's one-element tensor, is the weight of the targets counted. A non-contiguous gradient
    buffer is written in place."""
    import torch.nn.functional as F

    lib, _ = library
    g = torch.Generator().manual_seed(len(shape) * 10 + len(reduction))
    x = torch.randn(shape, generator=g, dtype=torch.float64, requires_grad=True)
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = torch.randint(0, 6, target_shape, generator=g)
    if target.numel():
        target.view(-1)[0] = 2                                  # ignored below
    weight = torch.rand(6, generator=g, dtype=torch.float64)
    mode = {"none": 0, "mean": 1, "sum": 2}[reduction]
    want = F.nll_loss(x, target, weight, ignore_index=2, reduction=reduction)
    out = torch.zeros(want.shape, dtype=torch.float64)
    total = torch.zeros(1, dtype=torch.float64)
    call = Call()
    assert lib.diopiNLLLossV2(None, call.tensor(out), call.tensor(total), call.tensor(x.detach()),
                              call.tensor(target), call.tensor(weight), ctypes.c_int(mode), ctypes.c_int64(2)) == 0
    assert torch.allclose(out, want.detach(), equal_nan=True), (out, want)
    if reduction != "none":                                     # ATen computes no total weight for none
        assert torch.allclose(total, weight[target[target != 2]].sum().reshape(1))
    grad_out = torch.rand(want.shape, generator=g, dtype=torch.float64)
    want_grad, = torch.autograd.grad(want, x, grad_out) if x.numel() else (torch.zeros(shape, dtype=torch.float64),)
    grad = torch.zeros(tuple(reversed(shape)), dtype=torch.float64).permute(*reversed(range(len(shape))))
    assert lib.diopiNLLLossV2Backward(None, call.tensor(grad), call.tensor(grad_out), call.tensor(x.detach()),
                                      call.tensor(target), call.tensor(weight), call.tensor(total),
                                      ctypes.c_int(mode), ctypes.c_int64(2)) == 0
    assert torch.allclose(grad, want_grad), (grad, want_grad)


@pytest.mark.slow
def test_sort_without_stable_sorts_as_torch_does(library):
    """diopiSort's null pStable means an unstable sort (ATen's kernel asserts stable is given);
    a given one is passed on, descending too."""
    lib, _ = library
    x = torch.randint(0, 4, (3, 8)).float()
    for stable, descending in [(None, False), (None, True), (True, False), (False, True)]:
        values, indices = torch.zeros(3, 8), torch.zeros(3, 8, dtype=torch.int64)
        call = Call()
        status = lib.diopiSort(None, call.tensor(values), call.tensor(indices), call.tensor(x), ctypes.c_int64(1),
                               ctypes.c_bool(descending), call.pointee(ctypes.c_bool, stable))
        assert status == 0, (stable, descending)
        want = torch.sort(x, dim=1, descending=descending, stable=bool(stable))
        assert torch.equal(values, want.values)
        if stable:
            assert torch.equal(indices, want.indices)
        else:
            assert torch.equal(x.gather(1, indices), want.values)


@pytest.mark.slow
def test_diopi_test_modules_import_and_reach_the_device(built: Path, shim: Path):
    """test/CMakeLists.txt puts export_runtime and export_functions into diopi_test/python/diopilib/,
    linked to diopirt (litert.cpp and conform_test.cpp) and libdiopi_impl.so; the runtime's memory,
    stream and copies (host to device, device to device, back) and its generator state (seed 0 and
    offset 0, 16 bytes) work."""
    if pybind11 is None:
        pytest.skip("pybind11 is not installed (pip install -e '.[test]')")
    diopilib = built / "diopi_test" / "python" / "diopilib"
    assert sorted(p.name.split(".")[0] for p in diopilib.glob("export_*.so")) == ["export_functions", "export_runtime"]
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import diopilib as d; "
              "assert d.init_library() == 0; print(d.get_vendor_name()); print(d.get_impl_version()); "
              "assert d.through_device(b'hostsim bytes') == b'hostsim bytes'; "
              "assert d.generator_state() == bytes(16), d.generator_state(); assert d.finalize_library() == 0")
    # A fresh interpreter: the modules load the torch the library was built with, and nothing else.
    ran = subprocess.run([sys.executable, "-c", script, str(diopilib.parent)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "LD_PRELOAD": str(shim)})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines()[0] == "hostsim" and "ATen" in ran.stdout.splitlines()[1]


def test_a_torch_of_another_version_is_refused(tmp_path: Path):
    """Rendered for the bundled workspace's torch 2.2.2 (the committed output), configuring against
    the installed torch stops and names both versions and how to choose the right torch."""
    installed = str(installed_torch_version())
    if installed == "2.2.2":
        pytest.skip("the installed torch is the one the workspace renders for")
    configure = subprocess.run(["cmake", "-S", str(COMMITTED / IMPL), "-B", str(tmp_path / "build"),
                                f"-DTORCH_DIR={torch_root()}", f"-DDIOPI_INCLUDE_DIR={diopi_include()}"],
                               capture_output=True, text=True, timeout=300)
    assert configure.returncode != 0
    message = " ".join(configure.stderr.split())
    assert f"holds torch {installed}" in message and "rendered for torch 2.2.2" in message, message
    assert "-DTORCH_DIR=<the torch 2.2.2 package directory>" in message, message


def test_the_torch_it_was_rendered_for_is_accepted(tmp_path: Path):
    torch_222 = torch_root(dipu_torch_python())
    configure = subprocess.run(["cmake", "-S", str(COMMITTED / IMPL), "-B", str(tmp_path / "build"),
                                f"-DTORCH_DIR={torch_222}", f"-DDIOPI_INCLUDE_DIR={diopi_include()}"],
                               capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr


@pytest.mark.slow
def test_calls_go_through_the_adaptor(library, shim: Path, implemented: dict):
    """hostsim's layouts rules give it a DIOPI adaptor: the library defines each function in
    impl::hostsim and exports diopiX as the adaptor's wrapper, which copies a strided input of
    diopiMul into a contiguous tensor (asked of the runtime) first; the result is still torch's."""
    lib, path = library
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", str(path)], capture_output=True, text=True,
                         check=True).stdout
    namespaced = set(re.findall(r"\bimpl::hostsim::(diopi\w+)\(", out))
    assert namespaced == set(implemented)
    required = ctypes.CDLL(str(shim)).shimRequiredTensors
    required.restype = ctypes.c_int64
    call = Call()
    x, y = torch.randn(4, 3).t(), torch.randn(3, 4)
    for input, copies in ((x, 1), (x.contiguous(), 0)):
        result, before = torch.zeros(3, 4), required()
        assert lib.diopiMul(None, call.tensor(result), call.tensor(input), call.tensor(y)) == 0
        assert required() - before == copies and torch.equal(result, torch.mul(x, y))
    before = required()                  # diopiSub has no rule: its strided input is used as it is
    assert lib.diopiSub(None, call.tensor(torch.zeros(3, 4)), call.tensor(x), call.tensor(y),
                        call.scalar(1)) == 0
    assert required() == before



def _strided(t):
    """The same values laid out with gaps: every element of the last dimension two apart."""
    if not isinstance(t, torch.Tensor) or t.dim() == 0 or t.numel() == 0:
        return t
    wide = torch.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
    wide[..., ::2].copy_(t)
    return wide[..., ::2]


def _half(t):
    return t.half() if isinstance(t, torch.Tensor) and t.dtype == torch.float32 else t


@pytest.mark.slow
@pytest.mark.parametrize("variant", [_strided, _half], ids=["non-contiguous", "float16"])
def test_implemented_functions_on_other_inputs(library, implemented: dict, variant):
    """What DIOPI callers pass besides contiguous float32 tensors: inputs laid out with gaps (the
    library views them in place, through the adaptor's copies where a layout rule asks for them)
    and float16 inputs, each against torch CPU on the same inputs, wherever torch computes them."""
    lib, _ = library
    lib.diopiGetLastErrorString.restype = ctypes.c_char_p
    checked, wrong = 0, []
    for seed, (name, entry) in enumerate(sorted(implemented.items())):
        op = aten_op(entry["op"])
        plain = reference(op, seed, entry.get("fixed"), INPUTS.get(name))
        if plain is None:
            continue
        given = {k: variant(v) for k, v in plain[0].items() if isinstance(v, torch.Tensor)}
        if all(given[k] is plain[0][k] for k in given):
            continue                       # nothing this variant changes
        found = reference(op, seed, entry.get("fixed"), given)
        if found is None:
            continue                       # torch does not compute it either
        kwargs, _, result, after = found
        status, mine, theirs = run_diopi(lib, name, entry, kwargs, after, result)
        checked += 1
        if status != 0:
            wrong.append(f"{name}: status {status}: {lib.diopiGetLastErrorString().decode()}")
        elif not same(mine, theirs):
            wrong.append(f"{name}: results differ from torch's {entry['op']}")
    assert not wrong, "\n".join(wrong)
    assert checked >= len(implemented) // 2
