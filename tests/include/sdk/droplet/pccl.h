// Compile-check declarations of PCCL (Droplet's NCCL-style collectives),
// written for deeplink-gen's tests: exact parameter lists, no definitions.
#pragma once

#include <cstddef>

#include <tang_runtime.h>

extern "C" {

#define PCCL_UNIQUE_ID_BYTES 128

typedef struct pcclComm* pcclComm_t;
typedef struct {
  char internal[PCCL_UNIQUE_ID_BYTES];
} pcclUniqueId;

typedef enum {
  pcclSuccess = 0,
  pcclUnhandledTangError = 1,
  pcclSystemError = 2,
  pcclInternalError = 3,
  pcclInvalidArgument = 4,
  pcclInvalidUsage = 5,
  pcclNumResults = 6,
} pcclResult_t;

typedef enum {
  pcclInt8 = 0,
  pcclUint8 = 1,
  pcclInt32 = 2,
  pcclUint32 = 3,
  pcclInt64 = 4,
  pcclUint64 = 5,
  pcclFloat16 = 6,
  pcclFloat32 = 7,
  pcclFloat64 = 8,
  pcclBfloat16 = 9,
} pcclDataType_t;

typedef enum { pcclSum = 0, pcclProd = 1, pcclMax = 2, pcclMin = 3, pcclAvg = 4 } pcclRedOp_t;

const char* pcclGetErrorString(pcclResult_t result);
pcclResult_t pcclGetUniqueId(pcclUniqueId* uniqueId);
pcclResult_t pcclCommInitRank(pcclComm_t* comm, int nranks, pcclUniqueId commId, int rank);
pcclResult_t pcclCommDestroy(pcclComm_t comm);
pcclResult_t pcclCommGetAsyncError(pcclComm_t comm, pcclResult_t* asyncError);
pcclResult_t pcclAllReduce(const void* sendbuff, void* recvbuff, size_t count, pcclDataType_t datatype,
                           pcclRedOp_t op, pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclBroadcast(const void* sendbuff, void* recvbuff, size_t count, pcclDataType_t datatype, int root,
                           pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, pcclDataType_t datatype,
                           pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclReduce(const void* sendbuff, void* recvbuff, size_t count, pcclDataType_t datatype,
                        pcclRedOp_t op, int root, pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, pcclDataType_t datatype,
                               pcclRedOp_t op, pcclComm_t comm, tangStream_t stream);
pcclResult_t pcclSend(const void* sendbuff, size_t count, pcclDataType_t datatype, int peer, pcclComm_t comm,
                      tangStream_t stream);
pcclResult_t pcclRecv(void* recvbuff, size_t count, pcclDataType_t datatype, int peer, pcclComm_t comm,
                      tangStream_t stream);

}  // extern "C"
