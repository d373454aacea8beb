// Stand-in for csrc_dipu/aten/ops/DIPUCopy.hpp (DIPU 9dd38082), reduced to the
// copy-strategy hook: a vendor may install its own DIPUCopyBase subclass. Like the
// real header, these live in namespace dipu (not dipu::native).
#pragma once

#include <ATen/core/TensorBody.h>

namespace dipu {

class DIPUCopyBase {
 public:
  DIPUCopyBase() = default;
  virtual ~DIPUCopyBase() = default;
  virtual void run(at::Tensor& dst, const at::Tensor& src, bool non_blocking) = 0;
};

DIPUCopyBase* getDipuCopyInstance();

void setDipuCopyInstance(DIPUCopyBase* op);

}  // namespace dipu
