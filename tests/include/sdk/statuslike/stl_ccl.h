// Declarations of stlccl, the collective library of the fictional "stl" SDK
// (deeplink-gen's import tests); only what the statuslike fixture calls.
// Results are plain ints: 0 is success.
#pragma once

#include <cstddef>

#include <stl_runtime.h>

#define STLCCL_UNIQUE_ID_BYTES 256

extern "C" {

typedef int stlcclResult_t;

// stlccl transports bytes only.
typedef enum { stlcclByte = 0 } stlcclDataType_t;

typedef enum { stlcclSum = 0, stlcclProd = 1, stlcclMax = 2, stlcclMin = 3 } stlcclRedOp_t;

typedef struct stlcclCommObject* stlcclComm_t;

typedef struct {
  char bytes[STLCCL_UNIQUE_ID_BYTES];
} stlcclUniqueId;

stlcclResult_t stlcclGetUniqueId(stlcclUniqueId* id);
stlcclResult_t stlcclCommInitRank(stlcclComm_t* comm, int nranks, stlcclUniqueId id, int rank);
stlcclResult_t stlcclCommDestroy(stlcclComm_t comm);
stlcclResult_t stlcclCommGetAsyncError(stlcclComm_t comm, stlcclResult_t* asyncError);
stlcclResult_t stlcclCommGetName(stlcclComm_t comm, char* name, size_t capacity);
stlcclResult_t stlcclAllReduce(const void* send, void* recv, size_t count, stlcclDataType_t type,
                               stlcclRedOp_t op, stlcclComm_t comm, stlStream_t stream);
stlcclResult_t stlcclBroadcast(const void* send, void* recv, size_t count, stlcclDataType_t type, int root,
                               stlcclComm_t comm, stlStream_t stream);
stlcclResult_t stlcclAllGather(const void* send, void* recv, size_t count, stlcclDataType_t type,
                               stlcclComm_t comm, stlStream_t stream);
stlcclResult_t stlcclReduce(const void* send, void* recv, size_t count, stlcclDataType_t type,
                            stlcclRedOp_t op, int root, stlcclComm_t comm, stlStream_t stream);
stlcclResult_t stlcclReduceScatter(const void* send, void* recv, size_t count, stlcclDataType_t type,
                                   stlcclRedOp_t op, stlcclComm_t comm, stlStream_t stream);
stlcclResult_t stlcclSend(const void* send, size_t count, stlcclDataType_t type, int peer, stlcclComm_t comm,
                          stlStream_t stream);
stlcclResult_t stlcclRecv(void* recv, size_t count, stlcclDataType_t type, int peer, stlcclComm_t comm,
                          stlStream_t stream);

}  // extern "C"
