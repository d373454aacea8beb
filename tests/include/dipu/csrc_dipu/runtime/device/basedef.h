// Stand-in for csrc_dipu/runtime/device/basedef.h (DIPU 9dd38082): the shared
// vocabulary of the vendor device contract (namespace dipu::devapis).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <c10/core/Device.h>

#define DIPU_API __attribute__((visibility("default")))
#define DIPU_WEAK __attribute__((weak))
#define DIPU_HIDDEN __attribute__((visibility("hidden")))

namespace dipu {

using enum_t = int32_t;

namespace devapis {

// MLU = Cambricon (camb), NPU = Ascend, GCU = Enflame (topsrider),
// KLX = Kunlunxin, SUPA = Biren.
enum class VendorDeviceType : enum_t { CUDA, MLU, NPU, MUXI, GCU, DROPLET, SUPA, KLX };

enum class EventStatus : enum_t { PENDING, RUNNING, DEFERRED, READY };

enum class OpStatus : enum_t { SUCCESS, ERR_UNKNOWN, ERR_NOMEM };

enum class MemCPKind : enum_t { D2H, H2D, D2D };

enum diclResult_t {
  DICL_SUCCESS = 0x0,
  DICL_ERR_UNDEF = 0x01000,
};

struct DIPUDeviceStatus {
  size_t freeGlobalMem = 0;
  size_t totalGlobalMem = 0;
};

struct DIPUDeviceProperties {
  std::string name;
  size_t totalGlobalMem = 0;
  int32_t major = 0;
  int32_t minor = 0;
  int32_t multiProcessorCount = 0;
};

using deviceId_t = c10::DeviceIndex;

}  // namespace devapis
}  // namespace dipu
