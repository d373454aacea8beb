// Stand-in for csrc_dipu/aten/ops/AutoCompareUtils.hpp (DIPU 9dd38082):
// comparison of a CPU reference result with the device result; returns a
// human-readable report string.
#pragma once

#include <string>

#include <ATen/core/TensorBody.h>
#include <c10/util/ArrayRef.h>

#include "OpUtils.hpp"

namespace dipu {
namespace native {

std::string allclose_autocompare(const at::Tensor& tensor_cpu, const at::Tensor& tensor_device,
                                 int indentation = 2);
std::string allclose_autocompare(const c10::ArrayRef<at::Tensor>& tensors_cpu,
                                 const c10::ArrayRef<at::Tensor>& tensors_device,
                                 int indentation = 2);
// Plain values (bools, scalars, ...).
template <typename T>
std::string allclose_autocompare(const T& value_cpu, const T& value_device, int indentation = 2);

}  // namespace native
}  // namespace dipu
