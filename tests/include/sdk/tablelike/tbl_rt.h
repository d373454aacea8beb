// Declarations of the runtime of "tbl", a fictional Cambricon/Ascend-like SDK invented for
// deeplink-gen's import tests (tests/fixtures/dipu_vendors/tablelike). No such SDK exists.
// Its runtime renamed most calls between major versions 1 and 2; both sets are declared
// here so that either rt_<major>.x folder of the fixture compiles against this one header.
#pragma once

#include <cstddef>

#define TBL_RT_MAJOR_VERSION 2
#define TBL_RT_MINOR_VERSION 4

extern "C" {

typedef enum {
  tblSuccess = 0,
  tblErrorNotReady = 1,
  tblErrorInvalidArgs = 100,
  tblErrorNoMem = 200,
  tblErrorBusy = 300,
  tblErrorUnknown = 999,
} tblRet_t;

typedef struct tblQueueObject* tblQueue_t;
typedef struct tblNotifierObject* tblNotifier_t;
typedef struct tblDeviceObject* tblDev_t;

typedef enum {
  TBL_COPY_HOST_TO_DEVICE = 0,
  TBL_COPY_DEVICE_TO_DEVICE = 1,
  TBL_COPY_DEVICE_TO_HOST = 2,
} tblCopyDir_t;

typedef enum { tblMemTypeUnregistered = 0, tblMemTypeHost = 1, tblMemTypeDevice = 2 } tblMemType_t;

typedef struct {
  tblMemType_t type;
  int device;
} tblPointerAttributes_t;

typedef struct {
  char name[128];
  int major;
  int minor;
  int clusterCount;
} tblDeviceProp_t;

// Both versions.
const char* tblGetErrorStr(tblRet_t error);
tblRet_t tblGetDevice(int* ordinal);
tblRet_t tblGetDeviceCount(unsigned int* count);
tblRet_t tblSyncDevice(void);
tblRet_t tblDeviceReset(void);
tblRet_t tblGetDeviceProperties(tblDeviceProp_t* prop, int device);
tblRet_t tblQueueQuery(tblQueue_t queue);
tblRet_t tblQueueWaitNotifier(tblNotifier_t notifier, tblQueue_t queue, unsigned int flags);
tblRet_t tblWaitNotifier(tblNotifier_t notifier);
tblRet_t tblPlaceNotifier(tblNotifier_t notifier, tblQueue_t queue);
tblRet_t tblQueryNotifier(tblNotifier_t notifier);
tblRet_t tblNotifierElapsedTime(tblNotifier_t start, tblNotifier_t end, float* ms);
tblRet_t tblFreeHost(void* ptr);
tblRet_t tblMalloc(void** ptr, size_t bytes);
tblRet_t tblFree(void* ptr);
tblRet_t tblPointerGetAttributes(tblPointerAttributes_t* attr, const void* ptr);
tblRet_t tblMemcpy(void* dst, void* src, size_t bytes, tblCopyDir_t dir);
tblRet_t tblMemcpyAsync(void* dst, void* src, size_t bytes, tblQueue_t queue, tblCopyDir_t dir);
tblRet_t tblMemcpyPeer(void* dst, int dstDev, void* src, int srcDev, size_t bytes);
tblRet_t tblMemcpyPeerAsync(void* dst, int dstDev, void* src, int srcDev, size_t bytes, tblQueue_t queue);

// Runtime 1.x only.
typedef enum { TBL_HOST_MEM_PAGEABLE = 0, TBL_HOST_MEM_LOCKED = 1 } tblHostMemKind_t;
tblRet_t tblGetDeviceHandle(tblDev_t* dev, int ordinal);
tblRet_t tblSetCurrentDevice(tblDev_t dev);
tblRet_t tblGetLastErr(void);
tblRet_t tblGetVersion(unsigned int* version);
tblRet_t tblCreateQueue(tblQueue_t* queue);
tblRet_t tblDestroyQueue(tblQueue_t queue);
tblRet_t tblSyncQueue(tblQueue_t queue);
tblRet_t tblCreateNotifier(tblNotifier_t* notifier);
tblRet_t tblDestroyNotifier(tblNotifier_t* notifier);
tblRet_t tblMallocHost(void** ptr, size_t bytes, tblHostMemKind_t kind);

// Runtime 2.x only.
tblRet_t tblSetDevice(int ordinal);
tblRet_t tblGetLastError(void);
tblRet_t tblGetLibVersion(int* major, int* minor, int* patch);
tblRet_t tblQueueCreate(tblQueue_t* queue);
tblRet_t tblQueueDestroy(tblQueue_t queue);
tblRet_t tblQueueSync(tblQueue_t queue);
tblRet_t tblNotifierCreate(tblNotifier_t* notifier);
tblRet_t tblNotifierDestroy(tblNotifier_t notifier);
tblRet_t tblHostMalloc(void** ptr, size_t bytes);
tblRet_t tblMemsetAsync(void* ptr, int value, size_t bytes, tblQueue_t queue);

}  // extern "C"
