// Stand-in for csrc_dipu/runtime/device/deviceapis.h (DIPU 9dd38082): the 38
// device functions a vendor implements in namespace dipu::devapis. 35 are
// strong (DIPU_API, must be defined) and 3 are weak (DIPU_WEAK, optional).
#pragma once

#include "csrc_dipu/vendor/vendorapi.h"

#include "basedef.h"

namespace dipu {

// Defined by the core from the configured vendor name; vendors do not touch it.
extern const devapis::VendorDeviceType kDipuVendorDeviceType;

namespace devapis {

// lifetime
DIPU_WEAK void initializeVendor();
DIPU_WEAK void finalizeVendor();

// devices
DIPU_API deviceId_t current_device();
DIPU_API DIPUDeviceProperties getDeviceProperties(int32_t device_index);
DIPU_WEAK DIPUDeviceStatus getDeviceStatus(int32_t device_index);
DIPU_API void setDevice(deviceId_t devId);
DIPU_API void resetDevice(deviceId_t devId = 0);
DIPU_API void syncDevice();
DIPU_API void checkLastError();
DIPU_API int getDeviceCount();
DIPU_API void getDriverVersion(int* version);
DIPU_API void getRuntimeVersion(int* version);

// streams
DIPU_API void createStream(deviceStream_t* stream, bool prior = false);
DIPU_API void destroyStream(deviceStream_t stream);
DIPU_API void destroyStream(deviceStream_t stream, deviceId_t devId);
DIPU_API void releaseStream();
DIPU_API void syncStream(deviceStream_t stream);
DIPU_API bool streamNotNull(deviceStream_t stream);
DIPU_API void streamWaitEvent(deviceStream_t stream, deviceEvent_t event);
DIPU_API bool isStreamEmpty(deviceStream_t stream);

// events
DIPU_API void createEvent(deviceEvent_t* event);
DIPU_API void destroyEvent(deviceEvent_t event);
DIPU_API void waitEvent(deviceEvent_t event);
DIPU_API void recordEvent(deviceEvent_t event, deviceStream_t stream);
DIPU_API void eventElapsedTime(float* time, deviceEvent_t start, deviceEvent_t end);
DIPU_API EventStatus getEventStatus(deviceEvent_t event);

// memory (the parameter name "throwExcepion" is spelled as upstream has it)
DIPU_API void mallocHost(void** p, size_t nbytes);
DIPU_API void freeHost(void* p);
DIPU_API OpStatus mallocDevice(void** p, size_t nbytes, bool throwExcepion = true);
DIPU_API void freeDevice(void* p);
DIPU_API bool isPinnedPtr(const void* p);
DIPU_API void memSetAsync(deviceStream_t stream, void* ptr, int val, size_t size);

// copies
DIPU_API void memCopyD2D(size_t nbytes, deviceId_t dstDevId, void* dst, deviceId_t srcDevId,
                         const void* src);
DIPU_API void memCopyH2D(size_t nbytes, void* dst, const void* src);
DIPU_API void memCopyD2H(size_t nbytes, void* dst, const void* src);
DIPU_API void memCopyD2DAsync(deviceStream_t stream, size_t nbytes, deviceId_t dstDevId, void* dst,
                              deviceId_t srcDevId, const void* src);
DIPU_API void memCopyH2DAsync(deviceStream_t stream, size_t nbytes, void* dst, const void* src);
DIPU_API void memCopyD2HAsync(deviceStream_t stream, size_t nbytes, void* dst, const void* src);

}  // namespace devapis
}  // namespace dipu
