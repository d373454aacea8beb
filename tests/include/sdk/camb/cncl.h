// Compile-check declarations of the Cambricon CNCL API (deeplink-gen tests).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cnrt.h>

extern "C" {

#define CNCL_CLIQUE_ID_BYTES_SIZE 128

typedef enum { CNCL_RET_SUCCESS = 0, CNCL_RET_ERR_INTERNAL = 1 } cnclResult_t;
typedef struct cnclComm* cnclComm_t;
typedef struct {
  uint64_t hash;
  char data[CNCL_CLIQUE_ID_BYTES_SIZE];
} cnclCliqueId;

typedef enum {
  cnclInvalid = -1,
  cnclInt8 = 0,
  cnclInt16 = 1,
  cnclInt32 = 2,
  cnclFloat16 = 3,
  cnclFloat32 = 4,
  cnclUint8 = 5,
  cnclUint16 = 6,
  cnclUint32 = 7,
  cnclBfloat16 = 8,
} cnclDataType_t;

typedef enum { cnclSum = 0, cnclProd = 1, cnclMax = 2, cnclMin = 3 } cnclReduceOp_t;

const char* cnclGetErrorStr(cnclResult_t result);
cnclResult_t cnclGetCliqueId(cnclCliqueId* clique_id);
cnclResult_t cnclInitComms(cnclComm_t* comms, int num_comm, const int* dev_list, const int* rank_list, int nrank,
                           const cnclCliqueId* clique_id);
cnclResult_t cnclDestroyComms(cnclComm_t* comms, int num_comm);
cnclResult_t cnclGetCommAsyncError(cnclComm_t comm, cnclResult_t* async_error);
cnclResult_t cnclAllReduce(const void* sendbuff, void* recvbuff, size_t count, cnclDataType_t datatype,
                           cnclReduceOp_t op, cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclBroadcast(const void* sendbuff, void* recvbuff, size_t count, cnclDataType_t datatype, int root,
                           cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, cnclDataType_t datatype,
                           cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclReduce(const void* sendbuff, void* recvbuff, size_t count, cnclDataType_t datatype,
                        cnclReduceOp_t op, int root, cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, cnclDataType_t datatype,
                               cnclReduceOp_t op, cnclComm_t comm, cnrtQueue_t queue);
cnclResult_t cnclSend(void* sendbuff, size_t count, cnclDataType_t datatype, int peer, cnclComm_t comm,
                      cnrtQueue_t queue);
cnclResult_t cnclRecv(void* recvbuff, size_t count, cnclDataType_t datatype, int peer, cnclComm_t comm,
                      cnrtQueue_t queue);

}  // extern "C"
