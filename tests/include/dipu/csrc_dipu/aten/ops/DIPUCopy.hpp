// Stand-in for csrc_dipu/aten/ops/DIPUCopy.hpp (DIPU 9dd38082), reduced to the
// copy-strategy hook (a vendor may install its own DIPUCopyBase subclass, in namespace
// dipu like the real header) and the two dipu::native functions the kernels file defines.
#pragma once

#include <ATen/core/TensorBody.h>

namespace dipu {
namespace native {

// Declared by DIPU core, defined by the kernels file (DIPU's copy strategies call them).
at::Tensor dipu_wrap_diopi_cast_dtype(const at::Tensor& self, at::ScalarType dtype);

at::Tensor& dipu_wrap_diopi_copy_inp(at::Tensor& self, const at::Tensor& src, bool non_blocking);

}  // namespace native

class DIPUCopyBase {
 public:
  DIPUCopyBase() = default;
  virtual ~DIPUCopyBase() = default;
  virtual void run(at::Tensor& dst, const at::Tensor& src, bool non_blocking) = 0;
};

DIPUCopyBase* getDipuCopyInstance();

void setDipuCopyInstance(DIPUCopyBase* op);

}  // namespace dipu
