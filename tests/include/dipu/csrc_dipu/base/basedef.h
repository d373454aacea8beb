// Stand-in for csrc_dipu/base/basedef.h (DIPU 9dd38082): the device type and
// dispatch keys DIPU registers under. DIPU uses the XPU slot of PyTorch, not
// PrivateUse1.
#pragma once

#include <c10/core/Backend.h>
#include <c10/core/DeviceType.h>
#include <c10/core/DispatchKey.h>
#include <c10/macros/Macros.h>

// Token used inside c10::DispatchKey::<k> / at::DeviceType::<k> spellings.
#define DIPU_DEVICE_TYPE_MACRO XPU
#define DIPU_AUTOGRAD_DEVICE_TYPE_MACRO \
  C10_CONCATENATE(Autograd, DIPU_DEVICE_TYPE_MACRO)

namespace dipu {

constexpr at::DeviceType DIPU_DEVICE_TYPE = at::DeviceType::DIPU_DEVICE_TYPE_MACRO;
constexpr c10::DispatchKey DIPU_DISPATCH_KEY = c10::DispatchKey::DIPU_DEVICE_TYPE_MACRO;
constexpr c10::DispatchKey DIPU_DISPATCH_AUTOGRAD_KEY =
    c10::DispatchKey::DIPU_AUTOGRAD_DEVICE_TYPE_MACRO;
constexpr c10::Backend DIPU_BACKEND_TYPE = c10::Backend::DIPU_DEVICE_TYPE_MACRO;
constexpr const char* DICL_BACKEND_NAME = "dicl";

}  // namespace dipu
