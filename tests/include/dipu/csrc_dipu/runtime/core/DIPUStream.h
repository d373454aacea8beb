// Stand-in for csrc_dipu/runtime/core/DIPUStream.h (DIPU 9dd38082).
// DIPUStream wraps a c10::Stream of the DIPU device type; rawstream() yields
// the vendor stream handle that goes into the DIOPI context.
#pragma once

#include <cstdint>

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include "csrc_dipu/base/basedef.h"
#include "csrc_dipu/vendor/vendorapi.h"

namespace dipu {

class DIPUStream {
 public:
  explicit DIPUStream(c10::Stream stream);
  explicit DIPUStream(c10::DeviceIndex device_index, c10::StreamId stream_id);

  bool operator==(const DIPUStream& other) const noexcept;
  bool operator!=(const DIPUStream& other) const noexcept;

  operator c10::Stream() const;  // NOLINT(google-explicit-constructor)
  operator deviceStream_t() const;  // NOLINT(google-explicit-constructor)

  c10::DeviceType device_type() const;
  c10::DeviceIndex device_index() const;
  c10::Device device() const;
  c10::StreamId id() const;
  c10::Stream unwrap() const;

  deviceStream_t rawstream() const;
  void synchronize() const;
  bool isStreamEmpty() const;

 private:
  c10::Stream stream_;
};

DIPUStream getDIPUStreamFromPool(c10::DeviceIndex device_index = -1);
DIPUStream getDefaultDIPUStream(c10::DeviceIndex device_index = -1);
DIPUStream getCurrentDIPUStream(c10::DeviceIndex device_index = -1);
void setCurrentDIPUStream(DIPUStream stream);

}  // namespace dipu
