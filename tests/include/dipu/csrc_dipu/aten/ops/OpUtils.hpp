// Stand-in for csrc_dipu/aten/ops/OpUtils.hpp (DIPU 9dd38082): environment-driven
// switches, argument dumping, device checks and the host round-trip helpers
// used by the CPU-fallback and autocompare code in generated kernels.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/ATen_fwd.h>
#include <ATen/core/Generator.h>
#include <ATen/core/List.h>
#include <ATen/core/TensorBody.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/Optional.h>
#include <c10/util/SmallVector.h>

#include "csrc_dipu/runtime/core/DIPUStream.h"
#include "csrc_dipu/runtime/device/deviceapis.h"

namespace dipu {
namespace native {

// ---- env-driven behaviour -------------------------------------------------
bool checkTensorDevice();                          // DIPU_CHECK_TENSOR_DEVICE > 0
void synchronizeIfEnable();                        // DIPU_SYNC_EXEC_MODE set
bool dipuKeepTorchopDefaultImpl(const char* opname);  // DIPU_KEEP_TORCHOP_DEFAULT_IMPL_OPS
int dumpOpArgLevel();                              // DIPU_DUMP_OP_ARGS

// ---- argument dumping (one generic entry point is enough for type checks) -
template <typename T>
std::string dumpArg(const T& t);

// ---- device checks ----------------------------------------------------------
bool is_scalar_on_cpu(const at::Tensor& t);
bool is_scalar_tensor(const c10::optional<at::Tensor>& t);
bool ignore_device_check(const c10::optional<at::Tensor>& tensor);

// ---- helpers used by hand-written custom code ------------------------------
template <typename T1, typename T2, template <typename elem1> class container1,
          template <typename elem2> class container2>
c10::DimVector infer_reduce_op_shape(const container1<T1>& input_shape,
                                     const container2<T2>& dims, bool keepdim);

template <typename T>
decltype(auto) unwrap_or(T&& x, ...) noexcept;
template <typename T, typename U>
auto unwrap_or(T&& x, U&& fallback)
    -> decltype(std::forward<T>(x).value_or(std::forward<U>(fallback)));

template <typename... T>
bool is_mixed_type(const T&... tensors);
template <typename... Args>
at::ScalarType mixed_output_scalar_type(const at::Tensor& input, const Args&... parameters);

// ---- host round trips (ForceFallbackToCPU path and autocompare) -----------
at::Tensor tensor_clone_to_host(const at::Tensor& in);
c10::optional<at::Tensor> tensor_clone_to_host(const c10::optional<at::Tensor>& in);
c10::List<c10::optional<at::Tensor>> tensor_clone_to_host(
    const c10::List<c10::optional<at::Tensor>>& in);
// Any iterable of tensors (e.g. at::TensorList).
template <typename Range,
          typename = decltype(std::begin(std::declval<const Range&>()))>
std::vector<at::Tensor> tensor_clone_to_host(const Range& tensors);

// Returns the host clone of an input if `in` aliases that input, so that
// out= aliasing survives the round trip; otherwise clones `in`.
at::Tensor tensor_reference_or_clone_to_host(
    const at::Tensor& in,
    std::initializer_list<std::pair<const at::Tensor&, const at::Tensor&>> device_host_pairs);

void tensor_copy_host_to_device(at::Tensor& out, const at::Tensor& in, DIPUStream stream);

template <typename Range>
std::vector<at::Tensor> tensor_array_to_vector(const Range& tensors);

}  // namespace native
}  // namespace dipu
