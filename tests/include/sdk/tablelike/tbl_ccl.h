// Declarations of tblccl, the collective library of the fictional "tbl" SDK
// (deeplink-gen's import tests); only what the tablelike fixture calls.
#pragma once

#include <cstddef>

#include <tbl_rt.h>

#define TBLCCL_CLIQUE_ID_BYTES 64

extern "C" {

typedef enum { TBLCCL_SUCCESS = 0, TBLCCL_ERR_INTERNAL = 1, TBLCCL_ERR_ASYNC = 6 } tblcclResult_t;

// tblcclInt8 is 0: a value-initialized tblcclDataType_t reads as int8.
typedef enum {
  tblcclInt8 = 0,
  tblcclUint8 = 1,
  tblcclInt32 = 2,
  tblcclHalf = 3,
  tblcclFloat = 4,
  tblcclBfloat16 = 5,
} tblcclDataType_t;

// tblcclSum is 0: a value-initialized tblcclReduceOp_t is a sum.
typedef enum { tblcclSum = 0, tblcclProd = 1, tblcclMax = 2, tblcclMin = 3 } tblcclReduceOp_t;

typedef struct tblcclCommObject* tblcclComm_t;

typedef struct {
  char data[TBLCCL_CLIQUE_ID_BYTES];
} tblcclCliqueId;

const char* tblcclGetErrorStr(tblcclResult_t result);
tblcclResult_t tblcclGetCommAsyncError(tblcclComm_t comm);
tblcclResult_t tblcclGetCliqueId(tblcclCliqueId* clique);
tblcclResult_t tblcclInitComms(tblcclComm_t* comms, int count, const int* devices, const int* ranks,
                               int nranks, const tblcclCliqueId* clique);
tblcclResult_t tblcclDestroyComms(tblcclComm_t* comms, int count);
tblcclResult_t tblcclAllReduce(const void* send, void* recv, size_t count, tblcclDataType_t type,
                               tblcclReduceOp_t op, tblcclComm_t comm, tblQueue_t queue);
tblcclResult_t tblcclBroadcast(const void* send, void* recv, size_t count, tblcclDataType_t type, int root,
                               tblcclComm_t comm, tblQueue_t queue);
tblcclResult_t tblcclAllGather(const void* send, void* recv, size_t count, tblcclDataType_t type,
                               tblcclComm_t comm, tblQueue_t queue);
tblcclResult_t tblcclReduce(const void* send, void* recv, size_t count, tblcclDataType_t type,
                            tblcclReduceOp_t op, int root, tblcclComm_t comm, tblQueue_t queue);
tblcclResult_t tblcclReduceScatter(const void* send, void* recv, size_t count, tblcclDataType_t type,
                                   tblcclReduceOp_t op, tblcclComm_t comm, tblQueue_t queue);
tblcclResult_t tblcclSend(void* send, size_t count, tblcclDataType_t type, int peer, tblcclComm_t comm,
                          tblQueue_t queue);
tblcclResult_t tblcclRecv(void* recv, size_t count, tblcclDataType_t type, int peer, tblcclComm_t comm,
                          tblQueue_t queue);

}  // extern "C"
