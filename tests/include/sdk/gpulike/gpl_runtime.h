// Declarations of "gpl", a fictional CUDA-like runtime invented for deeplink-gen's
// import tests (tests/fixtures/dipu_vendors/gpulike). No such SDK exists: this header
// declares exactly what the fixture folder calls, with parameter lists strict enough
// that a wrong call does not compile.
#pragma once

#include <cstddef>

// Set by the runtime when the bf16 storage type is available (gccl's capability checks read it).
#define GPL_BF16_AVAILABLE 1

extern "C" {

typedef enum gplError {
  gplSuccess = 0,
  gplErrorInvalidValue = 1,
  gplErrorMemoryAllocation = 2,
  gplErrorNotReady = 600,
  gplErrorPeerAccessUnsupported = 704,
} gplError_t;

typedef struct gplStreamObject* gplStream_t;
typedef struct gplEventObject* gplEvent_t;

// The stream every thread shares when no stream is named.
#define gplStreamLegacy ((gplStream_t)0x1)

#define gplStreamNonBlocking 0x1u

#define gplEventDefault 0x0u
#define gplEventDisableTiming 0x2u

typedef enum gplMemcpyKind {
  gplMemcpyHostToDevice = 1,
  gplMemcpyDeviceToHost = 2,
  gplMemcpyDeviceToDevice = 3,
} gplMemcpyKind;

typedef enum gplMemoryType {
  gplMemoryTypeUnregistered = 0,
  gplMemoryTypeHost = 1,
  gplMemoryTypeDevice = 2,
} gplMemoryType;

typedef struct gplPointerAttributes {
  gplMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
} gplPointerAttributes;

typedef struct gplDeviceProp {
  char name[256];
  size_t totalGlobalMem;
  int major;
  int minor;
  int multiProcessorCount;
} gplDeviceProp;

const char* gplGetErrorString(gplError_t error);

gplError_t gplGetDevice(int* device);
gplError_t gplSetDevice(int device);
gplError_t gplGetDeviceCount(int* count);
gplError_t gplGetDeviceProperties(gplDeviceProp* prop, int device);
gplError_t gplMemGetInfo(size_t* free, size_t* total);
gplError_t gplDeviceReset(void);
gplError_t gplDeviceSynchronize(void);
gplError_t gplGetLastError(void);
gplError_t gplRuntimeGetVersion(int* version);

gplError_t gplDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority);
gplError_t gplStreamCreate(gplStream_t* stream);
gplError_t gplStreamCreateWithPriority(gplStream_t* stream, unsigned int flags, int priority);
gplError_t gplStreamDestroy(gplStream_t stream);
gplError_t gplStreamSynchronize(gplStream_t stream);
gplError_t gplStreamQuery(gplStream_t stream);
gplError_t gplStreamWaitEvent(gplStream_t stream, gplEvent_t event, unsigned int flags);

gplError_t gplEventCreateWithFlags(gplEvent_t* event, unsigned int flags);
gplError_t gplEventDestroy(gplEvent_t event);
gplError_t gplEventSynchronize(gplEvent_t event);
gplError_t gplEventRecord(gplEvent_t event, gplStream_t stream);
gplError_t gplEventQuery(gplEvent_t event);
gplError_t gplEventElapsedTime(float* ms, gplEvent_t start, gplEvent_t end);

gplError_t gplMallocHost(void** ptr, size_t size);
gplError_t gplFreeHost(void* ptr);
gplError_t gplMalloc(void** devPtr, size_t size);
gplError_t gplFree(void* devPtr);
gplError_t gplPointerGetAttributes(gplPointerAttributes* attributes, const void* ptr);
gplError_t gplMemsetAsync(void* devPtr, int value, size_t count, gplStream_t stream);

gplError_t gplMemcpy(void* dst, const void* src, size_t count, gplMemcpyKind kind);
gplError_t gplMemcpyAsync(void* dst, const void* src, size_t count, gplMemcpyKind kind, gplStream_t stream);
gplError_t gplMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count);
gplError_t gplMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                              gplStream_t stream);

}  // extern "C"
