// Declarations of "gccl", the collective library of the fictional "gpl" SDK invented
// for deeplink-gen's import tests; only what tests/fixtures/dipu_vendors/gpulike calls.
#pragma once

#include <cstddef>

#include <gpl_runtime.h>

#define GCCL_MAJOR 2
#define GCCL_MINOR 12

#define GCCL_UNIQUE_ID_BYTES 128

extern "C" {

typedef struct gcclCommObject* gcclComm_t;

typedef struct {
  char internal[GCCL_UNIQUE_ID_BYTES];
} gcclUniqueId;

typedef enum {
  gcclSuccess = 0,
  gcclUnhandledGplError = 1,
  gcclSystemError = 2,
  gcclInternalError = 3,
  gcclInvalidArgument = 4,
  gcclInProgress = 7,
} gcclResult_t;

// gcclSum is 0: a value-initialized gcclRedOp_t is a sum.
typedef enum { gcclSum = 0, gcclProd = 1, gcclMax = 2, gcclMin = 3, gcclAvg = 4 } gcclRedOp_t;

typedef enum {
  gcclInt8 = 0,
  gcclUint8 = 1,
  gcclInt32 = 2,
  gcclInt64 = 4,
  gcclFloat16 = 6,
  gcclFloat32 = 7,
  gcclFloat64 = 8,
  gcclBfloat16 = 9,
} gcclDataType_t;

const char* gcclGetErrorString(gcclResult_t result);
gcclResult_t gcclGetUniqueId(gcclUniqueId* uniqueId);
gcclResult_t gcclCommInitRank(gcclComm_t* comm, int nranks, gcclUniqueId commId, int rank);
gcclResult_t gcclCommDestroy(gcclComm_t comm);
gcclResult_t gcclCommGetAsyncError(gcclComm_t comm, gcclResult_t* asyncError);

gcclResult_t gcclAllReduce(const void* sendbuff, void* recvbuff, size_t count, gcclDataType_t datatype,
                           gcclRedOp_t op, gcclComm_t comm, gplStream_t stream);
gcclResult_t gcclBroadcast(const void* sendbuff, void* recvbuff, size_t count, gcclDataType_t datatype,
                           int root, gcclComm_t comm, gplStream_t stream);
gcclResult_t gcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, gcclDataType_t datatype,
                           gcclComm_t comm, gplStream_t stream);
gcclResult_t gcclReduce(const void* sendbuff, void* recvbuff, size_t count, gcclDataType_t datatype,
                        gcclRedOp_t op, int root, gcclComm_t comm, gplStream_t stream);
gcclResult_t gcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               gcclDataType_t datatype, gcclRedOp_t op, gcclComm_t comm, gplStream_t stream);
gcclResult_t gcclAllToAll(const void* sendbuff, void* recvbuff, size_t count, gcclDataType_t datatype,
                          gcclComm_t comm, gplStream_t stream);
gcclResult_t gcclSend(const void* sendbuff, size_t count, gcclDataType_t datatype, int peer, gcclComm_t comm,
                      gplStream_t stream);
gcclResult_t gcclRecv(void* recvbuff, size_t count, gcclDataType_t datatype, int peer, gcclComm_t comm,
                      gplStream_t stream);

}  // extern "C"
