// Stand-in for csrc_dipu/runtime/device/diclapis.h (DIPU 9dd38082): the
// collective-communication functions a vendor implements in dipu::devapis
// (11 strong, 3 weak) plus the id-size constant every vendor must define.
#pragma once

#include <cstddef>
#include <string>

#include <c10/core/ScalarType.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "csrc_dipu/vendor/vendorapi.h"

#include "basedef.h"

namespace dipu {
namespace devapis {

using ReduceOp = c10d::ReduceOp;

extern const int DICL_UNIQUE_ID_BYTES_SIZE;

DIPU_API diclResult_t diclGetCommAsyncError(diclComm_t comm);

DIPU_API diclResult_t diclGetUniqueId(commUniqueId* uniqueId);

DIPU_API diclResult_t diclCommInitRank(diclComm_t* comm, int nranks, commUniqueId uniqueId, int rank,
                                       int localDeviceId = -1);

DIPU_API diclResult_t diclCommDestroy(diclComm_t comm);

DIPU_API diclResult_t diclAllReduce(const void* sendBuf, void* recvBuf, size_t count,
                                    at::ScalarType datatype, const ReduceOp& reduceOp,
                                    diclComm_t comm, deviceStream_t stream);

DIPU_API diclResult_t diclBroadcast(const void* sendBuf, void* recvBuf, size_t count,
                                    at::ScalarType datatype, int root, diclComm_t comm,
                                    deviceStream_t stream);

DIPU_API diclResult_t diclAllGather(const void* sendBuf, void* recvBuf, size_t sendCount,
                                    at::ScalarType datatype, diclComm_t comm,
                                    deviceStream_t stream);

DIPU_API diclResult_t diclReduce(const void* sendbuf, void* recvBuf, size_t count,
                                 at::ScalarType datatype, const ReduceOp& reduceOp, int root,
                                 diclComm_t comm, deviceStream_t stream);

// sendBuf is non-const here, as upstream declares it.
DIPU_API diclResult_t diclReduceScatter(void* sendBuf, void* recvBuf, size_t recvCount,
                                        at::ScalarType datatype, const ReduceOp& op,
                                        diclComm_t comm, deviceStream_t stream);

DIPU_WEAK diclResult_t diclAllToAllEqualSplit(const void* sendBuf, void* recvBuf, size_t count,
                                              at::ScalarType dataType, diclComm_t comm,
                                              deviceStream_t stream);

DIPU_WEAK diclResult_t diclAllToAllUnequalSplit(
    const void* sendBuf, const size_t* sendCounts, const size_t* sendDisplacements, void* recvBuf,
    const size_t* recvCounts, const size_t* recvDisplacements, at::ScalarType dataType,
    diclComm_t comm, deviceStream_t stream);

DIPU_API diclResult_t diclSend(const void* sendBuf, size_t count, at::ScalarType datatype, int peer,
                               diclComm_t comm, deviceStream_t stream);

DIPU_API diclResult_t diclRecv(void* recvBuf, size_t count, at::ScalarType datatype, int peer,
                               diclComm_t comm, deviceStream_t stream);

DIPU_WEAK diclResult_t diclGetCommName(std::string& commName, diclComm_t comm);

}  // namespace devapis
}  // namespace dipu
