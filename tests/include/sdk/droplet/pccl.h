// Compile-check declarations of PCCL (Droplet's NCCL-style collectives),
// written for deeplink-gen's tests: exact parameter lists, no definitions.
// Names, values and prototypes as in the copy of the PCCL header that DIPU
// 9dd38082 keeps at vendor/droplet/pccl.h, whose include guard this file shares.
#ifndef __PCCL_API_H__
#define __PCCL_API_H__

#include <cstddef>

#include "tang_rt/driver_types.h"

extern "C" {

#define PCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[PCCL_UNIQUE_ID_BYTES];
} pcclUniqueId;

typedef struct pcclComm* pcclComm_t;

typedef enum {
  pcclSuccess = 0,
  pcclUnhandledTangError = 1,
  pcclSystemError = 2,
  pcclInternalError = 3,
  pcclInvalidArgument = 4,
  pcclInvalidUsage = 5,
  pcclRemoteError = 6,
  pcclInProgress = 7,
  pcclInvalidDeviceIndex = 8,
  pccl_NUM_RESULTS
} pcclResult_t;

pcclResult_t pcclGetUniqueId(pcclUniqueId* uniqueId);
pcclResult_t pcclCommInitRank(pcclComm_t* comm, int ndev, pcclUniqueId commId, int rank);
pcclResult_t pcclCommDestroy(pcclComm_t comm);
pcclResult_t pcclCommGetAsyncError(pcclComm_t comm, pcclResult_t* asyncError);
const char* pcclGetErrorString(pcclResult_t result);

typedef enum {
  pcclSum = 0,
  pcclProd = 1,
  pcclMax = 2,
  pcclMin = 3,
  pcclAvg = 4,
  pcclOpsNum = 5,
  pcclNull = pcclOpsNum
} pcclRedOp_t;

// No 64-bit floating-point and no 16-bit integer type.
typedef enum {
  pcclChar = 0,
  pcclInt8 = pcclChar,
  pcclUint8 = 1,
  pcclInt = 2,
  pcclInt32 = pcclInt,
  pcclUint32 = 3,
  pcclInt64 = 4,
  pcclUint64 = 5,
  pcclHalf = 6,
  pcclFloat16 = pcclHalf,
  pcclFloat = 7,
  pcclFloat32 = pcclFloat,
  pcclBfloat16 = 8,
  pcclTypesNum
} pcclDataType_t;

pcclResult_t pcclReduce(const void* sendbuff, void* recvbuf, size_t count, pcclDataType_t datatype, pcclRedOp_t op,
                        int root, pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclAllReduce(const void* sendbuff, void* recvbuff, size_t count, pcclDataType_t datatype,
                           pcclRedOp_t op, pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, pcclDataType_t datatype,
                               pcclRedOp_t op, pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclBroadcast(const void* sendbuff, void* recvbuff, size_t count, pcclDataType_t datatype, int root,
                           pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclAllGather(const void* sendbuff, void* recvbuff, size_t count, pcclDataType_t datatype,
                           pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclSend(const void* sendbuff, size_t count, pcclDataType_t datatype, int peer, pcclComm_t comm,
                      tangStream_t stream);
pcclResult_t pcclRecv(void* recvbuff, size_t count, pcclDataType_t datatype, int peer, pcclComm_t comm,
                      tangStream_t stream);

}  // extern "C"

#endif  // __PCCL_API_H__
