// Stand-in for csrc_dipu/aten/ops/NodispatchUtils.hpp (DIPU 9dd38082):
// allocation helpers that create DIPU (or CPU) tensors without going through
// the dispatcher; used by custom code in generated kernels.
#pragma once

#include <vector>

#include <ATen/core/ATen_fwd.h>
#include <ATen/core/TensorBody.h>
#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/Optional.h>

namespace dipu {
namespace native {
namespace nodispatch {

at::Tensor empty(at::IntArrayRef size, at::TensorOptions options = {},
                 c10::optional<at::MemoryFormat> memory_format = c10::nullopt);

at::Tensor empty_cpu(at::IntArrayRef size, at::ScalarType dtype,
                     c10::optional<at::Device> device_opt = c10::nullopt,
                     c10::optional<at::MemoryFormat> memory_format = c10::nullopt);

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         at::TensorOptions options = {});

at::Tensor empty_strided_cpu(at::IntArrayRef size, at::IntArrayRef stride, at::ScalarType dtype,
                             c10::optional<at::Device> device_opt = c10::nullopt);

at::Tensor empty_like(const at::Tensor& self, at::TensorOptions options = {},
                      c10::optional<at::MemoryFormat> memory_format = c10::nullopt);

std::vector<at::Tensor> empty_tensorlist_like(at::TensorList tensors);

}  // namespace nodispatch
}  // namespace native
}  // namespace dipu
