// Vendor-neutral stand-in for csrc_dipu/vendor/vendorapi.h (DIPU 9dd38082).
//
// Upstream, each vendor's vendorapi.h is symlinked here at build time and maps
// these names to its SDK. For compile checks without any SDK, the handles are
// pointers to distinct incomplete structs, so mixing a stream and an event (or
// passing a plain void*) is still a type error.
#pragma once

#include <c10/util/Exception.h>

#include "csrc_dipu/common.h"

namespace dipu {

struct DeviceStreamStandIn;
struct DeviceEventStandIn;
struct DeviceHandleStandIn;
struct DiclCommStandIn;

using deviceStream_t = DeviceStreamStandIn*;
using deviceEvent_t = DeviceEventStandIn*;
using deviceHandle_t = DeviceHandleStandIn*;
using diclComm_t = DiclCommStandIn*;

#define deviceDefaultStreamLiteral nullptr

// Opaque communicator id, sized like the common 128-byte vendor ids.
struct commUniqueId {
  char internal[128];
};

}  // namespace dipu
