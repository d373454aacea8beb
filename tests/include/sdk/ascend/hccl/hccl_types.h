// Compile-check declarations of HCCL's types (deeplink-gen tests).
#pragma once

#include <cstdint>

extern "C" {

#define HCCL_ROOT_INFO_BYTES 4108

typedef void* HcclComm;
typedef enum { HCCL_SUCCESS = 0, HCCL_E_PARA = 1, HCCL_E_INTERNAL = 4 } HcclResult;
typedef struct HcclRootInfoDef {
  char internal[HCCL_ROOT_INFO_BYTES];
} HcclRootInfo;

typedef enum {
  HCCL_DATA_TYPE_INT8 = 0,
  HCCL_DATA_TYPE_INT16 = 1,
  HCCL_DATA_TYPE_INT32 = 2,
  HCCL_DATA_TYPE_FP16 = 3,
  HCCL_DATA_TYPE_FP32 = 4,
  HCCL_DATA_TYPE_INT64 = 5,
  HCCL_DATA_TYPE_UINT64 = 6,
  HCCL_DATA_TYPE_UINT8 = 7,
  HCCL_DATA_TYPE_UINT16 = 8,
  HCCL_DATA_TYPE_UINT32 = 9,
  HCCL_DATA_TYPE_FP64 = 10,
  HCCL_DATA_TYPE_BFP16 = 11,
} HcclDataType;

typedef enum { HCCL_REDUCE_SUM = 0, HCCL_REDUCE_PROD = 1, HCCL_REDUCE_MAX = 2, HCCL_REDUCE_MIN = 3 } HcclReduceOp;

}  // extern "C"
