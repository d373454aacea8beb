// Declarations of the runtime of "stl", a fictional SUPA/Kunlunxin-like SDK invented for
// deeplink-gen's import tests (tests/fixtures/dipu_vendors/statuslike). No such SDK
// exists; only what the fixture calls is declared. STL_NEW_API builds see the newer
// stream-creation call as well.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef enum { stlSuccess = 0, stlErrorInvalid = 1, stlErrorOutOfMemory = 2, stlErrorNotReady = 34 } stlError_t;

typedef struct stlStreamObject* stlStream_t;
typedef struct stlEventObject* stlEvent_t;

typedef enum { stlCopyH2D = 0, stlCopyD2H = 1, stlCopyD2D = 2 } stlCopyKind_t;

typedef struct {
  char name[64];
  size_t totalGlobalMem;
  int major;
  int minor;
  int multiProcessorCount;
} stlDeviceProp;

typedef struct {
  unsigned int major;
  unsigned int minor;
} stlDriverVersion;

const char* stlGetErrorString(stlError_t error);
stlError_t stlGetDevice(int* device);
stlError_t stlSetDevice(int device);
stlError_t stlGetDeviceCount(int* count);
stlError_t stlGetDeviceProperties(stlDeviceProp* prop, int device);
stlError_t stlMemGetInfo(int device, size_t* free, size_t* total);
stlError_t stlDeviceReset(void);
stlError_t stlDeviceSynchronize(void);
stlError_t stlGetLastError(void);
stlError_t stlGetDriverVersion(stlDriverVersion* version);
stlError_t stlGetRuntimeVersion(int* version);

stlError_t stlStreamCreate(stlStream_t* stream);
#ifdef STL_NEW_API
#define STL_STREAM_HIGH_PRIORITY 0x4u
stlError_t stlStreamCreateWithFlags(stlStream_t* stream, unsigned int flags);
#endif
stlError_t stlStreamDestroy(stlStream_t stream);
stlError_t stlStreamSynchronize(stlStream_t stream);
stlError_t stlStreamQuery(stlStream_t stream);
stlError_t stlStreamWaitEvent(stlStream_t stream, stlEvent_t event);

stlError_t stlEventCreate(stlEvent_t* event);
stlError_t stlEventDestroy(stlEvent_t event);
stlError_t stlEventSynchronize(stlEvent_t event);
stlError_t stlEventRecord(stlEvent_t event, stlStream_t stream);
stlError_t stlEventQuery(stlEvent_t event);
stlError_t stlEventElapsedTime(float* ms, stlEvent_t start, stlEvent_t end);

stlError_t stlMallocHost(void** ptr, size_t size);
stlError_t stlFreeHost(void* ptr);
stlError_t stlMalloc(void** ptr, size_t size);
stlError_t stlFree(void* ptr);
stlError_t stlIsHostPointer(const void* ptr, int* isHost);
stlError_t stlMemsetAsync(void* ptr, int value, size_t size, stlStream_t stream);
stlError_t stlMemcpy(void* dst, const void* src, size_t size, stlCopyKind_t kind);
stlError_t stlMemcpyAsync(void* dst, const void* src, size_t size, stlCopyKind_t kind, stlStream_t stream);
stlError_t stlMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t size);
stlError_t stlMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t size,
                              stlStream_t stream);

}  // extern "C"

// The SDK's C++ conveniences.
namespace stlsdk {
namespace ext {

// The calling thread's current device ordinal.
int currentOrdinal();

}  // namespace ext
}  // namespace stlsdk
