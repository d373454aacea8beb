// Stand-in for csrc_dipu/diopirt/diopirt_impl.h (DIPU 9dd38082): DIPU's side of
// the DIOPI runtime -- the concrete diopiContext and the ATen <-> DIOPI handle
// conversions in dipu::diopi_helper.
#pragma once

#include <list>
#include <string>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/util/OptionalArrayRef.h>

#include <diopi/diopirt.h>
#include <diopi/functions.h>

#include "csrc_dipu/vendor/vendorapi.h"

using deviceStream_t = dipu::deviceStream_t;

extern "C" {
struct diopiContext {
  deviceStream_t stream;
  // Tensors handed out through diopiRequireTensor stay alive here; a list keeps
  // element addresses stable.
  std::list<at::Tensor> arrays;

  explicit diopiContext(const deviceStream_t& s) : stream(s) {}
};
}  // extern "C"

namespace dipu {
namespace diopi_helper {

at::Tensor* fromDiopiTensorHandle(::diopiTensorHandle_t tensor);

::diopiTensorHandle_t toDiopiTensorHandle(at::Tensor& tensor);
::diopiConstTensorHandle_t toDiopiTensorHandle(const at::Tensor& tensor);
::diopiConstTensorHandle_t toDiopiTensorHandle(const at::Tensor* tensor);
::diopiConstTensorHandle_t toDiopiTensorHandle(const c10::optional<at::Tensor>& tensor);

std::vector<diopiTensorHandle_t> toDiopiTensorHandleVector(at::TensorList tensors);
std::vector<diopiConstTensorHandle_t> toDiopiConstTensorHandleVector(at::TensorList tensors);

::diopiGeneratorHandle_t toDiopiGeneratorHandle(at::Generator& generator);
::diopiGeneratorHandle_t toDiopiGeneratorHandle(c10::optional<at::Generator>& generator);

::diopiScalar_t toDiopiScalar(const at::Scalar& scalar);
::diopiScalar_t toDiopiScalar(const at::Scalar& scalar, const c10::ScalarType& type);

::diopiDtype_t toDiopiDtype(c10::ScalarType type);
caffe2::TypeMeta toATenType(::diopiDtype_t dt);
int64_t getElemSize(::diopiDtype_t dt);
c10::DeviceType toATenDevice(::diopiDevice_t device);

::diopiSize_t toDiopiSize(const at::OptionalIntArrayRef& dim);

::diopiRoundMode_t toDiopiRoundMode(const std::string& rounding_mode);

}  // namespace diopi_helper
}  // namespace dipu
