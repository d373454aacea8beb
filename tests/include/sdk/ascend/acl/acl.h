// Compile-check declarations of the Ascend ACL runtime API (CANN), written for
// deeplink-gen's tests: exact parameter lists, no definitions.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef int aclError;
typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef void* aclrtContext;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
} aclrtMemMallocPolicy;

typedef enum aclrtEventRecordedStatus {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

typedef enum aclrtFloatOverflowMode {
  ACL_RT_OVERFLOW_MODE_SATURATION = 0,
  ACL_RT_OVERFLOW_MODE_INFNAN = 1,
} aclrtFloatOverflowMode;

typedef enum aclrtMemAttr { ACL_DDR_MEM, ACL_HBM_MEM } aclrtMemAttr;

aclError aclInit(const char* configPath);
aclError aclFinalize();
const char* aclGetRecentErrMsg();
const char* aclrtGetSocName();
aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total);
aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtSynchronizeDevice();
aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtDeviceCanAccessPeer(int32_t* canAccessPeer, int32_t deviceId, int32_t peerDeviceId);
aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtCreateEvent(aclrtEvent* event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent);
aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status);
aclError aclrtMallocHost(void** hostPtr, size_t size);
aclError aclrtFreeHost(void* hostPtr);
aclError aclrtMallocAlign32(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream);

}  // extern "C"
