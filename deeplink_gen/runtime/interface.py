"""DIPU's vendor interface as data: every function of deviceapis.h and
diclapis.h (DIPU 9dd38082) with its exact return type, parameters and linkage.
Rendering takes signatures from here, so a vendor file can never drift from
the header; validation uses it to know which placeholders a call may name."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    type: str
    name: str

    def decl(self) -> str:
        return f"{self.type} {self.name}"


@dataclass(frozen=True)
class Function:
    key: str            # the key in the vendor file (the C++ name, or a distinct name for an overload)
    name: str           # the C++ function name
    returns: str
    params: tuple[Param, ...]
    strong: bool
    section: str        # "device" or "comm"

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def signature(self) -> str:
        return f"{self.returns} {self.name}({', '.join(p.decl() for p in self.params)})"


def _p(spec: str) -> tuple[Param, ...]:
    out = []
    for part in filter(None, (s.strip() for s in spec.split(","))):
        cut = max(part.rfind(" "), part.rfind("*"), part.rfind("&"))
        out.append(Param(part[: cut + 1].strip(), part[cut + 1:].strip()))
    return tuple(out)


def _dev(key, returns, params, strong=True, name=None):
    return Function(key, name or key, returns, _p(params), strong, "device")


def _comm(key, params, strong=True):
    return Function(key, key, "diclResult_t", _p(params), strong, "comm")


DEVICE_FUNCTIONS: tuple[Function, ...] = (
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

COMM_FUNCTIONS: tuple[Function, ...] = (
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

# at::ScalarType enumerators a collective dtype map may name.
SCALAR_TYPES = (
    "Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "ComplexHalf", "ComplexFloat",
    "ComplexDouble", "Bool", "BFloat16", "UInt16", "UInt32", "UInt64",
)

# c10d::ReduceOp::RedOpType enumerators.
REDUCE_OPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")
