"""DIPU's vendor interface as data (DIPU 9dd38082): every function of
runtime/device/deviceapis.h and diclapis.h with its exact return type,
parameters and linkage, the vendors DIPU already knows (their full identity),
the diopi_test device functions (DIOPI 02f03c6a conform_test.h) rendered from
them, and verbatim excerpts of the files the onboarding patches edit.
Rendering takes signatures from here, so a vendor file can never drift from
the header; validation uses it to know which placeholders a call may name."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen.cpptext import split_args
from deeplink_gen.model.interfaces import DipuFunction, DipuParam

DIPU_COMMIT = "9dd38082"
EDIT_SITES = Path(__file__).resolve().parent / "data" / "dipu_edit_sites.yaml"


@dataclass(frozen=True)
class UpstreamVendor:
    """A vendor DIPU 9dd38082 knows, as its own files spell it: the folder name
    (UsedVendor), the VendorDeviceType enumerator (basedef.h, vender_helper.hpp),
    the -DDEVICE= aliases of its DEVICE_<NAME> list and its DIOPI_IMPL_OPT
    (dipu/CMakeLists.txt)."""

    name: str
    device_type: str
    cmake_aliases: tuple[str, ...]
    diopi_impl: str

    @property
    def list_name(self) -> str:
        return f"DEVICE_{self.name.upper()}"


# In the order of dipu/CMakeLists.txt's DEVICE_* lists. Beware: cuda's
# DIOPI_IMPL_OPT is "torch", topsrider's "tops", and kunlunxin's aliases are
# only "kunlunxin" and "klx".
UPSTREAM: dict[str, UpstreamVendor] = {v.name: v for v in (
    UpstreamVendor("camb", "MLU", ("CAMB", "camb"), "camb"),
    UpstreamVendor("cuda", "CUDA", ("CUDA", "cuda"), "torch"),
    UpstreamVendor("muxi", "MUXI", ("MUXI", "muxi"), "muxi"),
    UpstreamVendor("ascend", "NPU", ("ASCEND", "ascend"), "ascend"),
    UpstreamVendor("topsrider", "GCU", ("TOPS", "tops", "TOPSRIDER", "topsrider"), "tops"),
    UpstreamVendor("supa", "SUPA", ("SUPA", "supa"), "supa"),
    UpstreamVendor("droplet", "DROPLET", ("DROPLET", "droplet"), "droplet"),
    UpstreamVendor("kunlunxin", "KLX", ("kunlunxin", "klx"), "kunlunxin"),
)}

# dipu::devapis::VendorDeviceType (runtime/device/basedef.h) and the vendor
# folder name of each enumerator (utils/vender_helper.hpp, dipu/CMakeLists.txt).
UPSTREAM_VENDORS = {v.name: v.device_type for v in UPSTREAM.values()}
UPSTREAM_DEVICE_TYPES = {device_type: name for name, device_type in UPSTREAM_VENDORS.items()}

# The device types whose dipu/tests/pytorch_config_<type>.py DIPU's
# dipu/tests/pytorch_test_base.py imports; any other type loads no config.
PYTORCH_CONFIG_TYPES = ("MLU", "GCU", "CUDA", "MUXI")
# DIPU_SUPPORT_TORCHS in dipu/CMakeLists.txt: configure stops for any other torch.
SUPPORTED_TORCHS = ("2.0.0", "2.1.0", "2.1.1", "2.2.2")


@dataclass(frozen=True)
class Excerpt:
    """Lines first_line.. of an upstream file, verbatim (each ending in a newline)."""

    path: str               # from the root of its repository
    repo: str               # "dipu" (deeplink.framework) or "diopi" (DIOPI)
    first_line: int
    lines: tuple[str, ...]
    blob: str               # the whole file's git blob id at the pinned commit

    def find(self, predicate, start: int = 0) -> int:
        """The upstream line number of the first line from *start* (a line
        number, 0: the beginning) for which predicate(line without newline) holds."""
        for i, line in enumerate(self.lines):
            number = self.first_line + i
            if number >= start and predicate(line.rstrip("\n")):
                return number
        raise LookupError(f"no such line in the {self.path} excerpt")

    def line(self, number: int) -> str:
        return self.lines[number - self.first_line]


@functools.lru_cache(maxsize=1)
def edit_sites() -> dict[str, Excerpt]:
    """The excerpts of DIPU 9dd38082's and DIOPI 02f03c6a's files that the
    onboarding patches edit (interfaces/data/dipu_edit_sites.yaml), by path."""
    import yaml

    data = yaml.safe_load(EDIT_SITES.read_text(encoding="utf-8"))
    return {path: Excerpt(path, f["repo"], int(f["first_line"]), tuple(f["text"].splitlines(keepends=True)),
                          f["blob"])
            for path, f in data["files"].items()}


def _params(spec: str) -> tuple[DipuParam, ...]:
    out = []
    for part in split_args(spec):
        cut = max(part.rfind(" "), part.rfind("*"), part.rfind("&"))
        out.append(DipuParam(part[: cut + 1].strip(), part[cut + 1:].strip()))
    return tuple(out)


def _dev(key, returns, params, strong=True, name=None):
    return DipuFunction(key, name or key, returns, _params(params), strong, "device")


def _comm(key, params, strong=True):
    return DipuFunction(key, key, "diclResult_t", _params(params), strong, "comm")


DEVICE_FUNCTIONS: tuple[DipuFunction, ...] = (
    _dev("initializeVendor", "void", "", strong=False),
    _dev("finalizeVendor", "void", "", strong=False),
    _dev("current_device", "deviceId_t", ""),
    _dev("getDeviceProperties", "DIPUDeviceProperties", "int32_t device_index"),
    _dev("getDeviceStatus", "DIPUDeviceStatus", "int32_t device_index", strong=False),
    _dev("setDevice", "void", "deviceId_t devId"),
    _dev("resetDevice", "void", "deviceId_t devId"),
    _dev("syncDevice", "void", ""),
    _dev("checkLastError", "void", ""),
    _dev("getDeviceCount", "int", ""),
    _dev("getDriverVersion", "void", "int* version"),
    _dev("getRuntimeVersion", "void", "int* version"),
    _dev("createStream", "void", "deviceStream_t* stream, bool prior"),
    _dev("destroyStream", "void", "deviceStream_t stream"),
    _dev("destroyStreamOnDevice", "void", "deviceStream_t stream, deviceId_t devId", name="destroyStream"),
    _dev("releaseStream", "void", ""),
    _dev("syncStream", "void", "deviceStream_t stream"),
    _dev("streamNotNull", "bool", "deviceStream_t stream"),
    _dev("streamWaitEvent", "void", "deviceStream_t stream, deviceEvent_t event"),
    _dev("isStreamEmpty", "bool", "deviceStream_t stream"),
    _dev("createEvent", "void", "deviceEvent_t* event"),
    _dev("destroyEvent", "void", "deviceEvent_t event"),
    _dev("waitEvent", "void", "deviceEvent_t event"),
    _dev("recordEvent", "void", "deviceEvent_t event, deviceStream_t stream"),
    _dev("eventElapsedTime", "void", "float* time, deviceEvent_t start, deviceEvent_t end"),
    _dev("getEventStatus", "EventStatus", "deviceEvent_t event"),
    _dev("mallocHost", "void", "void** p, size_t nbytes"),
    _dev("freeHost", "void", "void* p"),
    _dev("mallocDevice", "OpStatus", "void** p, size_t nbytes, bool throwExcepion"),
    _dev("freeDevice", "void", "void* p"),
    _dev("isPinnedPtr", "bool", "const void* p"),
    _dev("memSetAsync", "void", "deviceStream_t stream, void* ptr, int val, size_t size"),
    _dev("memCopyD2D", "void", "size_t nbytes, deviceId_t dstDevId, void* dst, deviceId_t srcDevId, const void* src"),
    _dev("memCopyH2D", "void", "size_t nbytes, void* dst, const void* src"),
    _dev("memCopyD2H", "void", "size_t nbytes, void* dst, const void* src"),
    _dev("memCopyD2DAsync", "void",
         "deviceStream_t stream, size_t nbytes, deviceId_t dstDevId, void* dst, deviceId_t srcDevId, const void* src"),
    _dev("memCopyH2DAsync", "void", "deviceStream_t stream, size_t nbytes, void* dst, const void* src"),
    _dev("memCopyD2HAsync", "void", "deviceStream_t stream, size_t nbytes, void* dst, const void* src"),
)

COMM_FUNCTIONS: tuple[DipuFunction, ...] = (
    _comm("diclGetCommAsyncError", "diclComm_t comm"),
    _comm("diclGetUniqueId", "commUniqueId* uniqueId"),
    _comm("diclCommInitRank", "diclComm_t* comm, int nranks, commUniqueId uniqueId, int rank, int localDeviceId"),
    _comm("diclCommDestroy", "diclComm_t comm"),
    _comm("diclAllReduce", "const void* sendBuf, void* recvBuf, size_t count, at::ScalarType datatype, "
                           "const ReduceOp& reduceOp, diclComm_t comm, deviceStream_t stream"),
    _comm("diclBroadcast", "const void* sendBuf, void* recvBuf, size_t count, at::ScalarType datatype, int root, "
                           "diclComm_t comm, deviceStream_t stream"),
    _comm("diclAllGather", "const void* sendBuf, void* recvBuf, size_t sendCount, at::ScalarType datatype, "
                           "diclComm_t comm, deviceStream_t stream"),
    _comm("diclReduce", "const void* sendbuf, void* recvBuf, size_t count, at::ScalarType datatype, "
                        "const ReduceOp& reduceOp, int root, diclComm_t comm, deviceStream_t stream"),
    _comm("diclReduceScatter", "void* sendBuf, void* recvBuf, size_t recvCount, at::ScalarType datatype, "
                               "const ReduceOp& op, diclComm_t comm, deviceStream_t stream"),
    _comm("diclAllToAllEqualSplit", "const void* sendBuf, void* recvBuf, size_t count, at::ScalarType dataType, "
                                    "diclComm_t comm, deviceStream_t stream", strong=False),
    _comm("diclAllToAllUnequalSplit",
          "const void* sendBuf, const size_t* sendCounts, const size_t* sendDisplacements, void* recvBuf, "
          "const size_t* recvCounts, const size_t* recvDisplacements, at::ScalarType dataType, diclComm_t comm, "
          "deviceStream_t stream", strong=False),
    _comm("diclSend", "const void* sendBuf, size_t count, at::ScalarType datatype, int peer, diclComm_t comm, "
                      "deviceStream_t stream"),
    _comm("diclRecv", "void* recvBuf, size_t count, at::ScalarType datatype, int peer, diclComm_t comm, "
                      "deviceStream_t stream"),
    _comm("diclGetCommName", "std::string& commName, diclComm_t comm", strong=False),
)

FUNCTIONS = {f.key: f for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS}

# Functions whose call templates may use {kind}: the vendor's memcpy-kind constant.
MEMCPY_KIND = {
    "memCopyD2D": "D2D", "memCopyD2DAsync": "D2D",
    "memCopyH2D": "H2D", "memCopyH2DAsync": "H2D",
    "memCopyD2H": "D2H", "memCopyD2HAsync": "D2H",
}

# The value a function returns after its calls succeed, when nothing else is said.
SUCCESS_RETURN = {"void": None, "OpStatus": "OpStatus::SUCCESS", "diclResult_t": "DICL_SUCCESS"}

# Fields of DIPU's result structs (runtime/device/basedef.h).
STRUCT_FIELDS = {
    "DIPUDeviceProperties": ("name", "totalGlobalMem", "major", "minor", "multiProcessorCount"),
    "DIPUDeviceStatus": ("freeGlobalMem", "totalGlobalMem"),
}

# diopi_test device function (conform_test.h) -> the DIPU device function whose calls it reuses.
# The rest of conform_test.h: initLibrary/finalizeLibrary reuse initializeVendor/finalizeVendor
# (or runtime.diopi_test.init/finalize), and buildGeneratorState follows runtime.generator.
DIOPI_TEST_SOURCES = {
    "device_malloc": "mallocDevice",
    "device_free": "freeDevice",
    "device_make_stream": "createStream",
    "device_destroy_stream": "destroyStream",
    "device_synchronize_stream": "syncStream",
    "device_memcpy_h2d_async": "memCopyH2DAsync",
    "device_memcpy_d2h_async": "memCopyD2HAsync",
    "device_memcpy_d2d_async": "memCopyD2DAsync",
}

# Names a call template may use besides the function's parameters, with the parameter type that provides each.
PROVIDED = {"dtype": "at::ScalarType", "op": "const ReduceOp&"}


def placeholder_names(fn: DipuFunction) -> tuple[str, ...]:
    """The placeholders a call template of *fn* may name, in order: its parameters
    as DIPU's header spells them, then {kind} for memcpy functions and {dtype}/{op}
    for collectives."""
    names = list(fn.param_names)
    if fn.key in MEMCPY_KIND:
        names.append("kind")
    for name, type_ in PROVIDED.items():
        if any(p.type == type_ for p in fn.params) and name not in names:
            names.append(name)
    return tuple(names)


def placeholders(fn: DipuFunction) -> set[str]:
    return set(placeholder_names(fn))


# The ATen ops DIPU registers itself for its device, whatever the vendor (the
# "always registered" DIPU_LIBRARY_IMPL(aten, DIPU_DEVICE_TYPE_MACRO, m) block of
# torch_dipu/csrc_dipu/aten/RegisterDIPU.cpp at 9dd38082): they never reach the CPU fallback.
DIPU_OWN_OPS = frozenset((
    "empty.memory_format", "empty_strided", "_reshape_alias", "_copy_from_and_resize", "resize_",
    "as_strided", "view", "view_as_real", "view_as_complex", "zero_", "unfold", "_local_scalar_dense",
    "set_.source_Storage", "set_.source_Storage_storage_offset", "set_.source_Tensor", "set_", "is_set_to",
    "is_pinned", "_pin_memory", "record_stream",
))
