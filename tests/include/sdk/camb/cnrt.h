// Compile-check declarations of the Cambricon CNRT 6.x API used by DIPU's camb
// vendor, written for deeplink-gen's tests: exact parameter lists, no definitions.
// Names, values, struct members and prototypes as in CNRT 6.0.2 cnrt.h
// (CNRT_MAJOR/MINOR/PATCH_VERSION 6/0/2, the version DIPU's cnrt_6.x folder targets);
// only what the camb vendor uses is declared.
#pragma once

#include <cstddef>

extern "C" {

#define CNRT_MAJOR_VERSION 6
#define CNRT_MINOR_VERSION 0
#define CNRT_PATCH_VERSION 2

typedef enum {
  cnrtSuccess = 0,
  cnrtErrorNotReady = 1,
  cnrtErrorArgsInvalid = 100006,
  cnrtErrorNoMem = 100100,
  cnrtErrorNoAttribute = 632009,
  cnrtErrorBusy = 632014,
  cnrtErrorUnknown = 999991,
} cnrtRet_t;

#define CNRT_RET_SUCCESS cnrtSuccess

// CNRT 6 names the queue and notifier structs CNqueue_st and CNnotifier_st.
typedef struct CNqueue_st* cnrtQueue_t;
typedef struct CNnotifier_st* cnrtNotifier_t;

typedef enum {
  cnrtMemcpyHostToDev = 0,
  cnrtMemcpyDevToDev,
  cnrtMemcpyDevToHost,
  cnrtMemcpyHostToHost,
  cnrtMemcpyPeerToPeer,
  cnrtMemcpyNoDirection,
} cnrtMemTransDir_t;

#define CNRT_MEM_TRANS_DIR_HOST2DEV ((cnrtMemTransDir_t)0)
#define CNRT_MEM_TRANS_DIR_DEV2DEV ((cnrtMemTransDir_t)1)
#define CNRT_MEM_TRANS_DIR_DEV2HOST ((cnrtMemTransDir_t)2)
#define CNRT_MEM_TRANS_DIR_HOST2HOST ((cnrtMemTransDir_t)3)
#define CNRT_MEM_TRANS_DIR_PEER2PEER ((cnrtMemTransDir_t)4)
#define CNRT_MEM_TRANS_DIR_NODIR ((cnrtMemTransDir_t)5)

typedef enum {
  cnrtMemTypeUnregistered = 0,
  cnrtMemTypeHost,
  cnrtMemTypeDevice,
} cnrtMemType_t;

typedef enum {
  cnrtUvaNotSupport = -1,
  cnrtUvaUnknown = 0,
  cnrtUvaUnCached,
  cnrtUvaCached,
} cnrtUvaCacheMode_t;

typedef struct {
  cnrtMemType_t type;
  int device;
  size_t size;
  void* devicePointer;
  void* hostPointer;
  cnrtUvaCacheMode_t cacheMode;
  void* deviceBasePointer;
} cnrtPointerAttributes_t;

// CNRT 6.0.2 has no clusterCount (or any other member) here: the cluster count is
// cnrtDeviceGetAttribute(&n, cnrtAttrClusterCount, device).
typedef struct {
  char name[256];
} cnrtDeviceProp_t;

typedef enum {
  cnrtAttrComputeCapabilityMajor = 0x01,
  cnrtAttrComputeCapabilityMinor = 0x02,
  cnrtAttrClusterCount = 0x205,
  cnrtAttrMcorePerCluster = 0x206,
} cnrtDeviceAttr_t;

cnrtRet_t cnrtGetDevice(int* pOrdinal);
cnrtRet_t cnrtSetDevice(int ordinal);
cnrtRet_t cnrtGetDeviceCount(unsigned int* pCount);
cnrtRet_t cnrtSyncDevice(void);
cnrtRet_t cnrtDeviceReset(void);
cnrtRet_t cnrtGetLastError(void);
const char* cnrtGetErrorStr(cnrtRet_t error);
cnrtRet_t cnrtGetLibVersion(int* major, int* minor, int* patch);
cnrtRet_t cnrtGetDeviceProperties(cnrtDeviceProp_t* prop, int device);
cnrtRet_t cnrtDeviceGetAttribute(int* pValue, cnrtDeviceAttr_t attr, int device);
cnrtRet_t cnrtQueueCreate(cnrtQueue_t* pQueue);
cnrtRet_t cnrtQueueDestroy(cnrtQueue_t queue);
cnrtRet_t cnrtQueueSync(cnrtQueue_t queue);
cnrtRet_t cnrtQueueQuery(cnrtQueue_t queue);
cnrtRet_t cnrtQueueWaitNotifier(cnrtNotifier_t notifier, cnrtQueue_t queue, unsigned int flag);
cnrtRet_t cnrtNotifierCreate(cnrtNotifier_t* pNotifier);
cnrtRet_t cnrtNotifierDestroy(cnrtNotifier_t notifier);
cnrtRet_t cnrtWaitNotifier(cnrtNotifier_t notifier);
cnrtRet_t cnrtPlaceNotifier(cnrtNotifier_t notifier, cnrtQueue_t queue);
cnrtRet_t cnrtQueryNotifier(cnrtNotifier_t notifier);
cnrtRet_t cnrtNotifierElapsedTime(cnrtNotifier_t start, cnrtNotifier_t end, float* ms);
cnrtRet_t cnrtHostMalloc(void** pPtr, size_t bytes);
cnrtRet_t cnrtFreeHost(void* ptr);
cnrtRet_t cnrtMalloc(void** pPtr, size_t bytes);
cnrtRet_t cnrtFree(void* ptr);
cnrtRet_t cnrtPointerGetAttributes(cnrtPointerAttributes_t* attr, const void* ptr);
cnrtRet_t cnrtMemsetAsync(void* ptr, int value, size_t bytes, cnrtQueue_t queue);
cnrtRet_t cnrtMemcpy(void* dst, void* src, size_t bytes, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemcpyAsync(void* dst, void* src, size_t bytes, cnrtQueue_t queue, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemcpyPeer(void* dst, int dstDev, void* src, int srcDev, size_t bytes);
cnrtRet_t cnrtMemcpyPeerAsync(void* dst, int dstDev, void* src, int srcDev, size_t bytes, cnrtQueue_t queue);

}  // extern "C"
