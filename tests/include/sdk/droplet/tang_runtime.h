// Compile-check declarations of the tang runtime API (Droplet), written for
// deeplink-gen's tests: opaque handles, exact parameter lists, no definitions.
// Prototypes and flag macros as in TangRT tang_runtime_api.h, which takes its
// types from tang_rt/driver_types.h; only what the droplet vendor uses is declared.
#pragma once

#include <cstddef>

#include "tang_rt/driver_types.h"

extern "C" {

#define tangStreamDefault 0x00
#define tangEventDefault 0x00
#define tangEventDisableTiming 0x02

tangError_t tangGetDevice(int* device);
tangError_t tangSetDevice(int device);
tangError_t tangGetDeviceCount(int* count);
tangError_t tangDeviceSynchronize(void);
tangError_t tangGetLastError(void);
const char* tangGetErrorString(tangError_t error);
tangError_t tangDriverGetVersion(int* version);
tangError_t tangRuntimeGetVersion(int* version);
tangError_t tangStreamCreate(tangStream_t* stream);
tangError_t tangStreamCreateWithPriority(tangStream_t* stream, unsigned int flags, int priority);
tangError_t tangStreamDestroy(tangStream_t stream);
tangError_t tangStreamSynchronize(tangStream_t stream);
tangError_t tangStreamQuery(tangStream_t stream);
tangError_t tangStreamWaitEvent(tangStream_t stream, tangEvent_t event, unsigned int flags);
tangError_t tangEventCreateWithFlags(tangEvent_t* event, unsigned int flags);
tangError_t tangEventDestroy(tangEvent_t event);
tangError_t tangEventSynchronize(tangEvent_t event);
tangError_t tangEventRecord(tangEvent_t event, tangStream_t stream);
tangError_t tangEventElapsedTime(float* ms, tangEvent_t start, tangEvent_t end);
tangError_t tangEventQuery(tangEvent_t event);
tangError_t tangMallocHost(void** ptr, size_t size);
tangError_t tangFreeHost(void* ptr);
tangError_t tangMalloc(void** devPtr, size_t size);
tangError_t tangFree(void* devPtr);
tangError_t tangMemsetAsync(void* devPtr, int value, size_t count, tangStream_t stream);
tangError_t tangMemcpy(void* dst, const void* src, size_t count, tangMemcpyKind kind);
tangError_t tangMemcpyAsync(void* dst, const void* src, size_t count, tangMemcpyKind kind, tangStream_t stream);

}  // extern "C"
