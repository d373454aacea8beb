// Stand-in for csrc_dipu/aten/ops/CustomFallbackFunctions.hpp (DIPU 9dd38082):
// hand-written CPU fallbacks selected by the WITH_CUSTOMFALLBACK_* macros.
// Name = "custom_fallback_" + wrapper name; signatures follow the wrapper's (the
// convolutions take int lists, as their catalog schema: and DIPU's functions do).
// Upstream defines most of them as static functions in the header; here they
// are plain declarations.
#pragma once

#include <array>
#include <tuple>

#include <ATen/core/ATen_fwd.h>
#include <ATen/core/List.h>
#include <ATen/core/TensorBody.h>
#include <c10/core/Scalar.h>
#include <c10/core/SymInt.h>
#include <c10/core/SymIntArrayRef.h>
#include <c10/util/Optional.h>

#include "csrc_dipu/aten/RegisterDIPU.hpp"
#include "csrc_dipu/aten/ops/OpUtils.hpp"

namespace dipu {
namespace native {

// addmm.out
at::Tensor& custom_fallback_dipu_addmm_out(const at::Tensor& self, const at::Tensor& mat1,
                                           const at::Tensor& mat2, const at::Scalar& beta,
                                           const at::Scalar& alpha, at::Tensor& out);
// convolution_overrideable
at::Tensor custom_fallback_dipu_convolution_overrideable(
    const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
    bool transposed, at::IntArrayRef output_padding, int64_t groups);
// convolution_backward_overrideable
std::tuple<at::Tensor, at::Tensor, at::Tensor> custom_fallback_dipu_convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
    bool transposed, at::IntArrayRef output_padding, int64_t groups,
    std::array<bool, 3> output_mask);
// linear
at::Tensor custom_fallback_dipu_linear(const at::Tensor& input, const at::Tensor& weight,
                                       const c10::optional<at::Tensor>& bias);
// linear_backward
std::tuple<at::Tensor, at::Tensor, at::Tensor> custom_fallback_dipu_linear_backward(
    const at::Tensor& self, const at::Tensor& grad_output, const at::Tensor& weight,
    std::array<bool, 3> output_mask);
// rsqrt, rsqrt.out
at::Tensor custom_fallback_dipu_rsqrt(const at::Tensor& self);
at::Tensor& custom_fallback_dipu_rsqrt_out(const at::Tensor& self, at::Tensor& out);
// _softmax.out
at::Tensor& custom_fallback_dipu__softmax_out(const at::Tensor& self, int64_t dim,
                                              bool half_to_float, at::Tensor& out);
// _softmax_backward_data.out
at::Tensor& custom_fallback_dipu__softmax_backward_data_out(const at::Tensor& grad_output,
                                                            const at::Tensor& output, int64_t dim,
                                                            at::ScalarType input_dtype,
                                                            at::Tensor& grad_input);
// bmm.out
at::Tensor& custom_fallback_dipu_bmm_out(const at::Tensor& self, const at::Tensor& mat2,
                                         at::Tensor& out);
// silu, silu.out
at::Tensor custom_fallback_dipu_silu(const at::Tensor& self);
at::Tensor& custom_fallback_dipu_silu_out(const at::Tensor& self, at::Tensor& out);
// mm, mm.out
at::Tensor custom_fallback_dipu_mm(const at::Tensor& self, const at::Tensor& mat2);
at::Tensor& custom_fallback_dipu_mm_out(const at::Tensor& self, const at::Tensor& mat2,
                                        at::Tensor& out);
// matmul_backward
std::tuple<at::Tensor, at::Tensor> custom_fallback_dipu_matmul_backward(
    const at::Tensor& grad, const at::Tensor& self, const at::Tensor& other,
    std::array<bool, 2> mask);
// sigmoid.out
at::Tensor& custom_fallback_dipu_sigmoid_out(const at::Tensor& self, at::Tensor& out);
// sigmoid_backward.grad_input
at::Tensor& custom_fallback_dipu_sigmoid_backward_grad_input(const at::Tensor& grad_output,
                                                             const at::Tensor& output,
                                                             at::Tensor& grad_input);
// index.Tensor_out
at::Tensor& custom_fallback_dipu_index_tensor_out(
    const at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices, at::Tensor& out);
// _index_put_impl_
at::Tensor& custom_fallback_dipu__index_put_impl_(
    at::Tensor& self, const c10::List<c10::optional<at::Tensor>>& indices,
    const at::Tensor& values, bool accumulate, bool unsafe);
// copy_
at::Tensor& custom_fallback_dipu_copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking);
// _amp_foreach_non_finite_check_and_unscale_
void custom_fallback_dipu__amp_foreach_non_finite_check_and_unscale_(at::TensorList self,
                                                                     at::Tensor& found_inf,
                                                                     const at::Tensor& inv_scale);
// _amp_update_scale_
at::Tensor& custom_fallback_dipu__amp_update_scale_(at::Tensor& self, at::Tensor& growth_tracker,
                                                    const at::Tensor& found_inf,
                                                    double scale_growth_factor,
                                                    double scale_backoff_factor,
                                                    int64_t growth_interval);

}  // namespace native
}  // namespace dipu
