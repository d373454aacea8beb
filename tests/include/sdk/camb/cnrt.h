// Compile-check declarations of the Cambricon CNRT 6.x API used by DIPU's camb
// vendor, written for deeplink-gen's tests: exact parameter lists, no definitions.
#pragma once

#include <cstddef>

extern "C" {

typedef enum {
  cnrtSuccess = 0,
  CNRT_RET_SUCCESS = 0,
  cnrtErrorNotReady = 1,
  cnrtErrorBusy = 632009,
  cnrtErrorNoMem = 100006,
  cnrtErrorInvalid = 632001,
} cnrtRet_t;

typedef struct CNqueue_st* cnrtQueue_t;
typedef struct CNnotifier_st* cnrtNotifier_t;

typedef enum {
  CNRT_MEM_TRANS_DIR_HOST2DEV = 0,
  CNRT_MEM_TRANS_DIR_DEV2DEV = 1,
  CNRT_MEM_TRANS_DIR_DEV2HOST = 2,
  CNRT_MEM_TRANS_DIR_HOST2HOST = 3,
  CNRT_MEM_TRANS_DIR_PEER2PEER = 4,
} cnrtMemTransDir_t;

typedef enum { cnrtMemTypeUnregistered = 0, cnrtMemTypeHost = 1, cnrtMemTypeDevice = 2 } cnrtMemType_t;

typedef struct {
  cnrtMemType_t type;
  int device;
  void* devicePointer;
  void* hostPointer;
} cnrtPointerAttributes_t;

typedef struct {
  char name[256];
  int clusterCount;
  int McorePerCluster;
  size_t availableGlobalMemorySize;
} cnrtDeviceProp_t;

typedef enum {
  cnrtAttrComputeCapabilityMajor = 0,
  cnrtAttrComputeCapabilityMinor = 1,
} cnrtDeviceAttr_t;

cnrtRet_t cnrtGetDevice(int* dev);
cnrtRet_t cnrtSetDevice(int dev);
cnrtRet_t cnrtGetDeviceCount(unsigned int* count);
cnrtRet_t cnrtSyncDevice(void);
cnrtRet_t cnrtDeviceReset(void);
cnrtRet_t cnrtGetLastError(void);
const char* cnrtGetErrorStr(cnrtRet_t error);
cnrtRet_t cnrtGetLibVersion(int* major, int* minor, int* patch);
cnrtRet_t cnrtGetDeviceProperties(cnrtDeviceProp_t* prop, int device);
cnrtRet_t cnrtDeviceGetAttribute(int* value, cnrtDeviceAttr_t attr, int device);
cnrtRet_t cnrtQueueCreate(cnrtQueue_t* queue);
cnrtRet_t cnrtQueueDestroy(cnrtQueue_t queue);
cnrtRet_t cnrtQueueSync(cnrtQueue_t queue);
cnrtRet_t cnrtQueueQuery(cnrtQueue_t queue);
cnrtRet_t cnrtQueueWaitNotifier(cnrtNotifier_t notifier, cnrtQueue_t queue, unsigned int flag);
cnrtRet_t cnrtNotifierCreate(cnrtNotifier_t* notifier);
cnrtRet_t cnrtNotifierDestroy(cnrtNotifier_t notifier);
cnrtRet_t cnrtWaitNotifier(cnrtNotifier_t notifier);
cnrtRet_t cnrtPlaceNotifier(cnrtNotifier_t notifier, cnrtQueue_t queue);
cnrtRet_t cnrtQueryNotifier(cnrtNotifier_t notifier);
cnrtRet_t cnrtNotifierElapsedTime(cnrtNotifier_t start, cnrtNotifier_t end, float* ms);
cnrtRet_t cnrtHostMalloc(void** pPtr, size_t bytes);
cnrtRet_t cnrtFreeHost(void* ptr);
cnrtRet_t cnrtMalloc(void** pPtr, size_t bytes);
cnrtRet_t cnrtFree(void* ptr);
cnrtRet_t cnrtPointerGetAttributes(cnrtPointerAttributes_t* attr, void* ptr);
cnrtRet_t cnrtMemsetAsync(void* ptr, int value, size_t bytes, cnrtQueue_t queue);
cnrtRet_t cnrtMemcpy(void* dst, void* src, size_t bytes, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemcpyAsync(void* dst, void* src, size_t bytes, cnrtQueue_t queue, cnrtMemTransDir_t dir);
cnrtRet_t cnrtMemcpyPeer(void* dst, int dstDev, void* src, int srcDev, size_t bytes);
cnrtRet_t cnrtMemcpyPeerAsync(void* dst, int dstDev, void* src, int srcDev, size_t bytes, cnrtQueue_t queue);

}  // extern "C"
