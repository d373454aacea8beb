/*
 * Compile-check stand-in for DIOPI's proto/include/diopi/functions.h
 * (DIOPI commit 02f03c6a, the submodule pinned by DIPU 9dd38082).
 *
 * Written for deeplink-gen's tests: it declares the operator prototypes only,
 * one per line in alphabetical order, so that generated DIPU kernels can be
 * type-checked with g++ -fsyntax-only without a DIOPI checkout. The list must
 * stay identical to deeplink_gen/data/diopi_prototypes.yaml.
 */
#ifndef DEEPLINK_GEN_TEST_DIOPI_FUNCTIONS_H_
#define DEEPLINK_GEN_TEST_DIOPI_FUNCTIONS_H_

#include <diopi/diopirt.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* Information hooks supplied by the vendor implementation library. */
DIOPI_RT_API DIOPI_ATTR_WEAK const char* diopiGetVendorName();
DIOPI_RT_API DIOPI_ATTR_WEAK const char* diopiGetImplVersion();
DIOPI_RT_API DIOPI_ATTR_WEAK const char* diopiGetLastErrorString();

/* Operators (341 entries). */
DIOPI_API diopiError_t diopiAbs(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiAbsInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiAdadelta(
    diopiContextHandle_t ctx, diopiTensorHandle_t param, diopiConstTensorHandle_t grad,
    diopiTensorHandle_t square_avg, diopiTensorHandle_t acc_delta, float lr, float rho, float eps,
    float weight_decay);
DIOPI_API diopiError_t diopiAdam(
    diopiContextHandle_t ctx, diopiTensorHandle_t param, diopiConstTensorHandle_t grad,
    diopiTensorHandle_t exp_avg, diopiTensorHandle_t exp_avg_sq, diopiTensorHandle_t max_exp_avg_sq,
    float lr, float beta1, float beta2, float eps, float weight_decay, int64_t step, bool amsgrad);
DIOPI_API diopiError_t diopiAdamW(
    diopiContextHandle_t ctx, diopiTensorHandle_t param, diopiConstTensorHandle_t grad,
    diopiTensorHandle_t exp_avg, diopiTensorHandle_t exp_avg_sq, diopiTensorHandle_t max_exp_avg_sq,
    float lr, float beta1, float beta2, float eps, float weight_decay, int64_t step, bool amsgrad);
DIOPI_API diopiError_t diopiAdaptiveAvgPool2d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    output_size);
DIOPI_API diopiError_t diopiAdaptiveAvgPool2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiAdaptiveAvgPool3d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    output_size);
DIOPI_API diopiError_t diopiAdaptiveAvgPool3dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiAdaptiveMaxPool2d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    output_size);
DIOPI_API diopiError_t diopiAdaptiveMaxPool2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t indices);
DIOPI_API diopiError_t diopiAdaptiveMaxPool2dWithIndices(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t indices,
    diopiConstTensorHandle_t input, diopiSize_t output_size);
DIOPI_API diopiError_t diopiAdaptiveMaxPool3d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    output_size);
DIOPI_API diopiError_t diopiAdaptiveMaxPool3dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t indices);
DIOPI_API diopiError_t diopiAdaptiveMaxPool3dWithIndices(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t indices,
    diopiConstTensorHandle_t input, diopiSize_t output_size);
DIOPI_API diopiError_t diopiAdd(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other, const diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiAddInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other, const
    diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiAddInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other, const
    diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiAddScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other, const diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiAddcdiv(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t tensor1, diopiConstTensorHandle_t tensor2, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiAddcdivInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t tensor1,
    diopiConstTensorHandle_t tensor2, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiAddcmul(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t tensor1, diopiConstTensorHandle_t tensor2, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiAddcmulInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t tensor1,
    diopiConstTensorHandle_t tensor2, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiAddmm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t mat1, diopiConstTensorHandle_t mat2, const diopiScalar_t* beta, const
    diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiAll(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    int64_t* dim);
DIOPI_API diopiError_t diopiAmax(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t self, diopiSize_t
    dim, bool keepdim);
DIOPI_API diopiError_t diopiAmpForeachNonFiniteCheckAndUnscaleInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t* scaled_grads, int64_t num_scaled_grads,
    diopiTensorHandle_t found_inf, diopiConstTensorHandle_t inv_scale);
DIOPI_API diopiError_t diopiAmpUpdateScaleInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t current_scale, diopiTensorHandle_t growth_tracker,
    diopiConstTensorHandle_t found_inf, double scale_growth_factor, double scale_backoff_factor,
    int32_t growth_interval);
DIOPI_API diopiError_t diopiAny(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    int64_t* dim);
DIOPI_API diopiError_t diopiArange(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, const diopiScalar_t* start, const
    diopiScalar_t* end, const diopiScalar_t* step);
DIOPI_API diopiError_t diopiArgmax(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    int64_t* dim, bool keepdim);
DIOPI_API diopiError_t diopiAsin(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiAsinInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiAtan(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiAtanInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiAvgPool2d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    kernel_size, diopiSize_t stride, diopiSize_t padding, bool ceil_mode, bool count_include_pad,
    const int64_t* divisor_override);
DIOPI_API diopiError_t diopiAvgPool2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiSize_t kernel_size, diopiSize_t stride, diopiSize_t
    padding, bool ceil_mode, bool count_include_pad, const int64_t* divisor_override);
DIOPI_API diopiError_t diopiBCELoss(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiConstTensorHandle_t weight, diopiReduction_t reduction);
DIOPI_API diopiError_t diopiBCELossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiConstTensorHandle_t
    weight, diopiReduction_t reduction);
DIOPI_API diopiError_t diopiBCEWithLogits(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiConstTensorHandle_t weight, diopiConstTensorHandle_t
    pos_weight, diopiReduction_t reduction);
DIOPI_API diopiError_t diopiBCEWithLogitsBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiConstTensorHandle_t
    weight, diopiConstTensorHandle_t pos_weight, diopiReduction_t reduction);
DIOPI_API diopiError_t diopiBaddbmm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t batch1, diopiConstTensorHandle_t batch2, double beta, double alpha);
DIOPI_API diopiError_t diopiBaddbmmInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t batch1,
    diopiConstTensorHandle_t batch2, double beta, double alpha);
DIOPI_API diopiError_t diopiBatchNorm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t save_mean,
    diopiTensorHandle_t save_invstd, diopiConstTensorHandle_t input, diopiConstTensorHandle_t
    weight, diopiConstTensorHandle_t bias, diopiTensorHandle_t running_mean, diopiTensorHandle_t
    running_var, bool training, double momentum, double eps);
DIOPI_API diopiError_t diopiBatchNormBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight, diopiConstTensorHandle_t running_mean,
    diopiConstTensorHandle_t running_var, diopiConstTensorHandle_t save_mean,
    diopiConstTensorHandle_t save_invstd, bool training, double eps);
DIOPI_API diopiError_t diopiBatchNormBackwardElemt(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_out,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t mean, diopiConstTensorHandle_t invstd,
    diopiConstTensorHandle_t weight, diopiConstTensorHandle_t sum_dy, diopiConstTensorHandle_t
    sum_dy_xmu, diopiConstTensorHandle_t count);
DIOPI_API diopiError_t diopiBatchNormBackwardReduce(
    diopiContextHandle_t ctx, diopiTensorHandle_t sum_dy, diopiTensorHandle_t sum_dy_xmu,
    diopiTensorHandle_t grad_weight, diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t
    grad_out, diopiConstTensorHandle_t input, diopiConstTensorHandle_t mean,
    diopiConstTensorHandle_t invstd, diopiConstTensorHandle_t weight, bool input_g, bool weight_g,
    bool bias_g);
DIOPI_API diopiError_t diopiBatchNormElemt(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t weight, diopiConstTensorHandle_t bias, diopiConstTensorHandle_t mean,
    diopiConstTensorHandle_t invstd, float eps);
DIOPI_API diopiError_t diopiBatchNormGatherStatsWithCounts(
    diopiContextHandle_t ctx, diopiTensorHandle_t mean, diopiTensorHandle_t invstd,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t mean_all, diopiConstTensorHandle_t
    invstd_all, diopiTensorHandle_t running_mean, diopiTensorHandle_t running_var, float momentum,
    float eps, diopiConstTensorHandle_t counts);
DIOPI_API diopiError_t diopiBatchNormStats(
    diopiContextHandle_t ctx, diopiTensorHandle_t mean, diopiTensorHandle_t invstd,
    diopiConstTensorHandle_t input, double eps);
DIOPI_API diopiError_t diopiBernoulli(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiBernoulliInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t inout, diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiBernoulliScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, double p, diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiBitwiseAnd(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiBitwiseAndInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiBitwiseAndInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiBitwiseAndScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiBitwiseNot(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiBitwiseNotInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiBitwiseOr(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiBitwiseOrInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiBitwiseOrInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiBitwiseOrScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiBmm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t mat2);
DIOPI_API diopiError_t diopiCTCLoss(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t neg_log_likelihood,
    diopiTensorHandle_t log_alpha, diopiConstTensorHandle_t log_probs, diopiConstTensorHandle_t
    targets, diopiConstTensorHandle_t input_lengths, diopiConstTensorHandle_t target_lengths,
    int64_t blank, diopiReduction_t reduction, bool zero_infinity);
DIOPI_API diopiError_t diopiCTCLossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t log_probs, diopiConstTensorHandle_t targets, diopiConstTensorHandle_t
    input_lengths, diopiConstTensorHandle_t target_lengths, diopiConstTensorHandle_t
    neg_log_likelihood, diopiConstTensorHandle_t log_alpha, int64_t blank, diopiReduction_t
    reduction, bool zero_infinity);
DIOPI_API diopiError_t diopiCastDtype(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiCat(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t* tensors, int64_t
    num_inputs, int64_t dim);
DIOPI_API diopiError_t diopiCdist(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input1,
    diopiConstTensorHandle_t input2, double p, const int64_t* compute_mode);
DIOPI_API diopiError_t diopiCdistBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input1, diopiConstTensorHandle_t input2, double p,
    diopiConstTensorHandle_t cdist);
DIOPI_API diopiError_t diopiCeil(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiCeilInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiCholesky(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t info,
    diopiConstTensorHandle_t mat, bool upper, bool checkerror);
DIOPI_API diopiError_t diopiCholeskyBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_mat, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t L, bool upper);
DIOPI_API diopiError_t diopiClamp(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t min, diopiConstTensorHandle_t max);
DIOPI_API diopiError_t diopiClampInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t min,
    diopiConstTensorHandle_t max);
DIOPI_API diopiError_t diopiClampInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* min, const
    diopiScalar_t* max);
DIOPI_API diopiError_t diopiClampMax(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t max);
DIOPI_API diopiError_t diopiClampMaxInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t max);
DIOPI_API diopiError_t diopiClampMaxInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* max);
DIOPI_API diopiError_t diopiClampMaxScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* max);
DIOPI_API diopiError_t diopiClampMin(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t min);
DIOPI_API diopiError_t diopiClampMinInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t min);
DIOPI_API diopiError_t diopiClampMinInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* min);
DIOPI_API diopiError_t diopiClampMinScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* min);
DIOPI_API diopiError_t diopiClampScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* min, const diopiScalar_t* max);
DIOPI_API diopiError_t diopiClipGradNorm(
    diopiContextHandle_t ctx, double* out, diopiTensorHandle_t* grads, int64_t num_grads, double
    max_norm, double norm_type, bool error_if_nonfinite);
DIOPI_API diopiError_t diopiCol2Im(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    output_size, diopiSize_t kernel_size, diopiSize_t dilation, diopiSize_t padding, diopiSize_t
    stride);
DIOPI_API diopiError_t diopiContiguous(
    diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiConstTensorHandle_t input,
    diopiMemoryFormat_t memoryFormat);
DIOPI_API diopiError_t diopiConvTranspose2d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t weight, diopiConstTensorHandle_t bias, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t output_padding, int64_t groups, diopiSize_t dilation);
DIOPI_API diopiError_t diopiConvTranspose2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight, diopiSize_t* bias_sizes, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, diopiSize_t output_padding, int64_t groups);
DIOPI_API diopiError_t diopiConvolution2d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t weight, diopiConstTensorHandle_t bias, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, int64_t groups);
DIOPI_API diopiError_t diopiConvolution2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight, diopiSize_t* bias_sizes, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, int64_t groups);
DIOPI_API diopiError_t diopiConvolution3d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t weight, diopiConstTensorHandle_t bias, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, int64_t groups);
DIOPI_API diopiError_t diopiConvolution3dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight, diopiSize_t* bias_sizes, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, int64_t groups);
DIOPI_API diopiError_t diopiCopyInp(
    diopiContextHandle_t ctx, diopiConstTensorHandle_t src, diopiTensorHandle_t dest);
DIOPI_API diopiError_t diopiCos(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiCosInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiCrossEntropyLoss(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiConstTensorHandle_t weight, diopiReduction_t reduction,
    int64_t ignore_index, double label_smoothing);
DIOPI_API diopiError_t diopiCrossEntropyLossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiConstTensorHandle_t
    weight, diopiReduction_t reduction, int64_t ignore_index, double label_smoothing);
DIOPI_API diopiError_t diopiCumsum(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim);
DIOPI_API diopiError_t diopiDiv(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other, diopiRoundMode_t rounding_mode);
DIOPI_API diopiError_t diopiDivInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other,
    diopiRoundMode_t rounding_mode);
DIOPI_API diopiError_t diopiDivInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other,
    diopiRoundMode_t rounding_mode);
DIOPI_API diopiError_t diopiDivScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other, diopiRoundMode_t rounding_mode);
DIOPI_API diopiError_t diopiDropout(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t mask,
    diopiConstTensorHandle_t input, double p, bool train, diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiDropoutInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiTensorHandle_t mask, double p, bool
    train, diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiEmbedding(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t weight,
    diopiConstTensorHandle_t indices, int64_t padding_idx, bool scale_grad_byfreq, bool sparse);
DIOPI_API diopiError_t diopiEmbeddingBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t grad,
    diopiConstTensorHandle_t indices, int64_t num_weights, int64_t padding_idx, bool
    scale_grad_byfreq, bool sparse);
DIOPI_API diopiError_t diopiEmbeddingRenorm_(
    diopiContextHandle_t ctx, diopiTensorHandle_t inout, diopiConstTensorHandle_t indices, double
    max_norm, double norm_type);
DIOPI_API diopiError_t diopiEq(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiEqInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiEqInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiEqScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiEqual(
    diopiContextHandle_t ctx, bool* out, diopiConstTensorHandle_t input, diopiConstTensorHandle_t
    other);
DIOPI_API diopiError_t diopiErf(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiErfInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiErfinv(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiErfinvInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiExp(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiExpInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiExpand(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiFill(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiFlip(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    dims);
DIOPI_API diopiError_t diopiFloor(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiFloorInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiForeachaddInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t* inputs, int64_t inputSize, const diopiScalar_t*
    other);
DIOPI_API diopiError_t diopiForeachaddScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t* outs, diopiConstTensorHandle_t* inputs, int64_t
    inputSize, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiForeachmulInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t* inputs, int64_t inputSize, const diopiScalar_t*
    other);
DIOPI_API diopiError_t diopiForeachmulInpTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t* inputs, int64_t inputSize, const
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiForeachmulScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t* outs, diopiConstTensorHandle_t* inputs, int64_t
    inputSize, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiForeachmulTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t* outs, diopiConstTensorHandle_t* inputs, int64_t
    inputSize, const diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiForeachnormScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t* outs, diopiConstTensorHandle_t* inputs, int64_t
    inputSize, const diopiScalar_t* ord);
DIOPI_API diopiError_t diopiGather(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    diopiConstTensorHandle_t index);
DIOPI_API diopiError_t diopiGatherBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, int64_t dim, diopiConstTensorHandle_t index);
DIOPI_API diopiError_t diopiGe(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiGeInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiGeInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiGeScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiGelu(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const char*
    approximate);
DIOPI_API diopiError_t diopiGeluBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, const char* approximate);
DIOPI_API diopiError_t diopiGetNativeMemoryFormat(
    diopiContextHandle_t ctx, diopiConstTensorHandle_t input, int64_t* format);
DIOPI_API diopiError_t diopiGroupNorm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t save_mean,
    diopiTensorHandle_t save_invstd, diopiConstTensorHandle_t input, diopiConstTensorHandle_t
    weight, diopiConstTensorHandle_t bias, int64_t num_groups, double eps);
DIOPI_API diopiError_t diopiGroupNormBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight, diopiConstTensorHandle_t mean, diopiConstTensorHandle_t
    rstd, int64_t num_groups);
DIOPI_API diopiError_t diopiGt(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiGtInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiGtInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiGtScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiHardswish(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiHardswishBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiHardswishInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiHardtanh(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* min_val, const diopiScalar_t* max_val);
DIOPI_API diopiError_t diopiHardtanhBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, const diopiScalar_t* min_val, const diopiScalar_t* max_val);
DIOPI_API diopiError_t diopiHardtanhInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* min_val, const
    diopiScalar_t* max_val);
DIOPI_API diopiError_t diopiIm2Col(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    kernel_size, diopiSize_t dilation, diopiSize_t padding, diopiSize_t stride);
DIOPI_API diopiError_t diopiIndex(
    diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t* indices, int64_t nums);
DIOPI_API diopiError_t diopiIndexBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t zeros_like_input,
    diopiConstTensorHandle_t* indices, int64_t nums, diopiConstTensorHandle_t grad_output);
DIOPI_API diopiError_t diopiIndexFill(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    diopiConstTensorHandle_t index, diopiConstTensorHandle_t value);
DIOPI_API diopiError_t diopiIndexFillInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, int64_t dim, diopiConstTensorHandle_t
    index, diopiConstTensorHandle_t value);
DIOPI_API diopiError_t diopiIndexFillInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, int64_t dim, diopiConstTensorHandle_t
    index, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiIndexFillScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    diopiConstTensorHandle_t index, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiIndexPut(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t values, diopiConstTensorHandle_t* indices, int64_t indices_counts, bool
    accumulate);
DIOPI_API diopiError_t diopiIndexPutInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t values,
    diopiConstTensorHandle_t* indices, int64_t indices_counts, bool accumulate);
DIOPI_API diopiError_t diopiIndexSelect(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    diopiConstTensorHandle_t index);
DIOPI_API diopiError_t diopiIndexSelectBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad,
    diopiSize_t input_sizes, int64_t dim, diopiConstTensorHandle_t index);
DIOPI_API diopiError_t diopiIsNan(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiLayerNorm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t save_mean,
    diopiTensorHandle_t save_invstd, diopiConstTensorHandle_t input, diopiConstTensorHandle_t
    weight, diopiConstTensorHandle_t bias, diopiSize_t normalized_shape, double eps);
DIOPI_API diopiError_t diopiLayerNormBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight, diopiConstTensorHandle_t bias, diopiConstTensorHandle_t
    mean, diopiConstTensorHandle_t rstd, diopiSize_t normalized_shape);
DIOPI_API diopiError_t diopiLe(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLeInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLeInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiLeScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiLeakyRelu(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* negative_slope);
DIOPI_API diopiError_t diopiLeakyReluBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, const diopiScalar_t* negative_slope, bool input_is_result);
DIOPI_API diopiError_t diopiLeakyReluInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* negative_slope);
DIOPI_API diopiError_t diopiLerpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t end, const diopiScalar_t* weight);
DIOPI_API diopiError_t diopiLerpTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t end, diopiConstTensorHandle_t weight);
DIOPI_API diopiError_t diopiLinalgQR(
    diopiContextHandle_t ctx, diopiConstTensorHandle_t A, const char* mode, diopiTensorHandle_t Q,
    diopiTensorHandle_t R);
DIOPI_API diopiError_t diopiLinalgVecNorm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiScalar_t* ord, diopiSize_t dim, bool keepdim);
DIOPI_API diopiError_t diopiLinear(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t weight, diopiConstTensorHandle_t bias);
DIOPI_API diopiError_t diopiLinearBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight);
DIOPI_API diopiError_t diopiLinspace(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, const diopiScalar_t* start, const
    diopiScalar_t* end, int64_t steps);
DIOPI_API diopiError_t diopiLog(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiLog10(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiLog10Inp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiLog2(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiLog2Inp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiLogInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiLogSoftmax(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim);
DIOPI_API diopiError_t diopiLogSoftmaxBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t output, int64_t dim);
DIOPI_API diopiError_t diopiLogicalAnd(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLogicalAndInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLogicalNot(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiLogicalNotInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiLogicalOr(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLogicalOrInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLt(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLtInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiLtInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiLtScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiMSELoss(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiReduction_t reduction);
DIOPI_API diopiError_t diopiMSELossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiReduction_t reduction);
DIOPI_API diopiError_t diopiMaskedFill(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t mask, diopiConstTensorHandle_t value);
DIOPI_API diopiError_t diopiMaskedFillInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t mask,
    diopiConstTensorHandle_t value);
DIOPI_API diopiError_t diopiMaskedFillInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t mask, const
    diopiScalar_t* value);
DIOPI_API diopiError_t diopiMaskedFillScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t mask, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiMaskedScatter(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t mask, diopiConstTensorHandle_t source);
DIOPI_API diopiError_t diopiMaskedSelect(
    diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t mask);
DIOPI_API diopiError_t diopiMaskedSelectBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t mask);
DIOPI_API diopiError_t diopiMatmul(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiMatmulBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_other,
    diopiConstTensorHandle_t grad_out, diopiConstTensorHandle_t input, diopiConstTensorHandle_t
    other);
DIOPI_API diopiError_t diopiMax(
    diopiContextHandle_t ctx, diopiTensorHandle_t max, diopiTensorHandle_t max_indices,
    diopiConstTensorHandle_t input, int64_t dim);
DIOPI_API diopiError_t diopiMaxAll(
    diopiContextHandle_t ctx, diopiTensorHandle_t max, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiMaxPool2d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    kernel_size, diopiSize_t stride, diopiSize_t padding, diopiSize_t dilation, bool ceil_mode);
DIOPI_API diopiError_t diopiMaxPool2dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiSize_t kernel_size, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, bool ceil_mode, diopiConstTensorHandle_t indices);
DIOPI_API diopiError_t diopiMaxPool2dWithIndices(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t indices,
    diopiConstTensorHandle_t input, diopiSize_t kernel_size, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, bool ceil_mode);
DIOPI_API diopiError_t diopiMaxPool3d(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    kernel_size, diopiSize_t stride, diopiSize_t padding, diopiSize_t dilation, bool ceil_mode);
DIOPI_API diopiError_t diopiMaxPool3dBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiSize_t kernel_size, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, bool ceil_mode, diopiConstTensorHandle_t indices);
DIOPI_API diopiError_t diopiMaxPool3dWithIndices(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t indices,
    diopiConstTensorHandle_t input, diopiSize_t kernel_size, diopiSize_t stride, diopiSize_t
    padding, diopiSize_t dilation, bool ceil_mode);
DIOPI_API diopiError_t diopiMaximum(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiMean(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    dim);
DIOPI_API diopiError_t diopiMeshGrid(
    diopiContextHandle_t ctx, diopiTensorHandle_t* outs, diopiConstTensorHandle_t* inputs, int64_t
    inputsNum);
DIOPI_API diopiError_t diopiMin(
    diopiContextHandle_t ctx, diopiTensorHandle_t min, diopiTensorHandle_t min_indices,
    diopiConstTensorHandle_t input, int64_t dim);
DIOPI_API diopiError_t diopiMinAll(
    diopiContextHandle_t ctx, diopiTensorHandle_t min, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiMinimum(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiMm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t mat2);
DIOPI_API diopiError_t diopiMul(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiMulInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiMulInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiMulScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiMultinomial(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t
    num_samples, bool replacement, diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiNLLLoss(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiConstTensorHandle_t weight, diopiReduction_t reduction,
    int64_t ignore_index);
DIOPI_API diopiError_t diopiNLLLossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiConstTensorHandle_t
    weight, diopiReduction_t reduction, int64_t ignore_index);
DIOPI_API diopiError_t diopiNLLLossV2(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t totalWeight,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiConstTensorHandle_t
    weight, diopiReduction_t reduction, int64_t ignore_index);
DIOPI_API diopiError_t diopiNLLLossV2Backward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiConstTensorHandle_t
    weight, diopiConstTensorHandle_t totalWeight, diopiReduction_t reduction, int64_t ignore_index);
DIOPI_API diopiError_t diopiNativeMemoryFormatCast(
    diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiTensorHandle_t in, int64_t format);
DIOPI_API diopiError_t diopiNe(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiNeInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiNeInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other);
DIOPI_API diopiError_t diopiNeScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiNeg(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiNegInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiNms(
    diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiConstTensorHandle_t boxes,
    diopiConstTensorHandle_t confidence, double iou_threshold);
DIOPI_API diopiError_t diopiNonzero(
    diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiNorm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* p, diopiSize_t dim);
DIOPI_API diopiError_t diopiNormal(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, double mean, double std,
    diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiNormalInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t inout, double mean, double std,
    diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiNormalScalarTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, double mean, diopiConstTensorHandle_t std,
    diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiNormalTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t mean,
    diopiConstTensorHandle_t std, diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiNormalTensorScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t mean, double std,
    diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiOneHot(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t
    num_classes);
DIOPI_API diopiError_t diopiOnes(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiSize_t size);
DIOPI_API diopiError_t diopiPad(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    pad, const char* mode, const double* value);
DIOPI_API diopiError_t diopiPermute(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    dims);
DIOPI_API diopiError_t diopiPolar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t abs,
    diopiConstTensorHandle_t angle);
DIOPI_API diopiError_t diopiPow(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* exponent);
DIOPI_API diopiError_t diopiPowInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* exponent);
DIOPI_API diopiError_t diopiPowInpTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t exponent);
DIOPI_API diopiError_t diopiPowScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, const diopiScalar_t* input,
    diopiConstTensorHandle_t exponent);
DIOPI_API diopiError_t diopiPowTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t exponent);
DIOPI_API diopiError_t diopiProd(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    int64_t* dim);
DIOPI_API diopiError_t diopiRandomInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t inout, int64_t from, const int64_t* to,
    diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiRandperm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, int64_t n, diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiReciprocal(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiReciprocalInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiRelu(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiReluInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiRemainder(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, const diopiScalar_t* input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiRemainderScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other);
DIOPI_API diopiError_t diopiRemainderTensor(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiRepeat(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    repeats_size);
DIOPI_API diopiError_t diopiRmsprop(
    diopiContextHandle_t ctx, diopiTensorHandle_t param, diopiConstTensorHandle_t grad,
    diopiTensorHandle_t square_avg, diopiTensorHandle_t grad_avg, diopiTensorHandle_t momentum_buf,
    float lr, float alpha, float eps, float weight_decay, float momentum, bool centered);
DIOPI_API diopiError_t diopiRoiAlign(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t rois, double spatial_scale, int64_t pooled_height, int64_t
    pooled_width, int64_t sampling_ratio, bool aligned);
DIOPI_API diopiError_t diopiRoiAlignBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t grad,
    diopiConstTensorHandle_t rois, double spatial_scale, int64_t pooled_height, int64_t
    pooled_width, int64_t batch_size, int64_t channels, int64_t height, int64_t width, int64_t
    sampling_ratio, bool aligned);
DIOPI_API diopiError_t diopiRoll(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    shifts, diopiSize_t dims);
DIOPI_API diopiError_t diopiRsqrt(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiRsqrtInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiScatter(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    diopiConstTensorHandle_t src, diopiConstTensorHandle_t index, const char* reduce);
DIOPI_API diopiError_t diopiScatterInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, int64_t dim, diopiConstTensorHandle_t src,
    diopiConstTensorHandle_t index, const char* reduce);
DIOPI_API diopiError_t diopiScatterInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, int64_t dim, const diopiScalar_t* value,
    diopiConstTensorHandle_t index, const char* reduce);
DIOPI_API diopiError_t diopiScatterScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    const diopiScalar_t* value, diopiConstTensorHandle_t index, const char* reduce);
DIOPI_API diopiError_t diopiSelect(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    int64_t index);
DIOPI_API diopiError_t diopiSelectBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiSize_t input_sizes, int64_t dim, int64_t index);
DIOPI_API diopiError_t diopiSelectScatter(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t src, int64_t dim, int64_t index);
DIOPI_API diopiError_t diopiSgd(
    diopiContextHandle_t ctx, diopiTensorHandle_t param, diopiTensorHandle_t grad,
    diopiTensorHandle_t buf, double lr, double momentum, double dampening, double weight_decay, bool
    nesterov);
DIOPI_API diopiError_t diopiSgn(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiSgnInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiSigmoid(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiSigmoidBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t output);
DIOPI_API diopiError_t diopiSigmoidFocalLoss(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t inputs,
    diopiConstTensorHandle_t targets, float alpha, float gamma, diopiReduction_t reduction);
DIOPI_API diopiError_t diopiSigmoidFocalLossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_output, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiTensorHandle_t grad_input, float gamma, float alpha,
    diopiReduction_t reduction);
DIOPI_API diopiError_t diopiSigmoidInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiSign(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiSilu(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiSiluBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiSiluInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiSin(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiSinInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiSlice(
    diopiContextHandle_t ctx, diopiTensorHandle_t null_out, diopiConstTensorHandle_t input, int64_t
    dim, int64_t start, int64_t end, int64_t step);
DIOPI_API diopiError_t diopiSliceBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiSize_t input_sizes, int64_t dim, int64_t start, int64_t end, int64_t step);
DIOPI_API diopiError_t diopiSliceScatter(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t src, int64_t dim, int64_t start, int64_t end, int64_t step);
DIOPI_API diopiError_t diopiSmoothL1Loss(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t target, diopiReduction_t reduction, double beta);
DIOPI_API diopiError_t diopiSmoothL1LossBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t target, diopiReduction_t reduction,
    double beta);
DIOPI_API diopiError_t diopiSoftmax(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim);
DIOPI_API diopiError_t diopiSoftmaxBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t output, int64_t dim);
DIOPI_API diopiError_t diopiSort(
    diopiContextHandle_t ctx, diopiTensorHandle_t values, diopiTensorHandle_t indices,
    diopiConstTensorHandle_t input, int64_t dim, bool descending, const bool* pStable);
DIOPI_API diopiError_t diopiSplitWithSizes(
    diopiContextHandle_t ctx, diopiTensorHandle_t* outs, int64_t num_outs, diopiConstTensorHandle_t
    input, const diopiSize_t splitSizes, int64_t dim);
DIOPI_API diopiError_t diopiSqrt(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiSqrtInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiStack(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t* tensors, int64_t
    numTensors, int64_t dim);
DIOPI_API diopiError_t diopiStd(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    dim, bool unbiased);
DIOPI_API diopiError_t diopiSub(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input,
    diopiConstTensorHandle_t other, const diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiSubInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, diopiConstTensorHandle_t other, const
    diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiSubInpScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* other, const
    diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiSubScalar(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* other, const diopiScalar_t* alpha);
DIOPI_API diopiError_t diopiSum(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    dim);
DIOPI_API diopiError_t diopiTanh(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input);
DIOPI_API diopiError_t diopiTanhBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t output);
DIOPI_API diopiError_t diopiTanhInp(diopiContextHandle_t ctx, diopiTensorHandle_t input);
DIOPI_API diopiError_t diopiTensorDestructionHook(diopiContextHandle_t ctx, void* ptr);
DIOPI_API diopiError_t diopiThreshold(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, const
    diopiScalar_t* threshold, const diopiScalar_t* value);
DIOPI_API diopiError_t diopiThresholdBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiConstTensorHandle_t input, const diopiScalar_t* threshold);
DIOPI_API diopiError_t diopiThresholdInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, const diopiScalar_t* threshold, const
    diopiScalar_t* value);
DIOPI_API diopiError_t diopiTopk(
    diopiContextHandle_t ctx, diopiTensorHandle_t values, diopiTensorHandle_t indices,
    diopiConstTensorHandle_t input, int64_t k, int64_t dim, bool largest, bool sorted);
DIOPI_API diopiError_t diopiTranspose(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim0,
    int64_t dim1);
DIOPI_API diopiError_t diopiTriangularSolve(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t cloned_mat,
    diopiConstTensorHandle_t b, diopiConstTensorHandle_t mat, bool upper, bool transpose, bool
    unitriangular);
DIOPI_API diopiError_t diopiTriangularSolveBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_b, diopiTensorHandle_t grad_mat,
    diopiConstTensorHandle_t grad_x, diopiConstTensorHandle_t grad_cloned_mat,
    diopiConstTensorHandle_t x, diopiConstTensorHandle_t b, diopiConstTensorHandle_t mat, bool
    upper, bool transpose, bool unitriangular);
DIOPI_API diopiError_t diopiTril(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t
    diagonal);
DIOPI_API diopiError_t diopiTriu(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t
    diagonal);
DIOPI_API diopiError_t diopiTriuInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t input, int64_t diagonal);
DIOPI_API diopiError_t diopiUnfold(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, int64_t dim,
    int64_t size, int64_t step);
DIOPI_API diopiError_t diopiUnfoldBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiSize_t input_sizes, int64_t dim, int64_t size, int64_t step);
DIOPI_API diopiError_t diopiUniformInp(
    diopiContextHandle_t ctx, diopiTensorHandle_t inout, double from, double to,
    diopiGeneratorHandle_t generator);
DIOPI_API diopiError_t diopiUnique(
    diopiContextHandle_t ctx, diopiTensorHandle_t* out, diopiConstTensorHandle_t input, const
    int64_t* dim, bool sorted, bool return_counts, diopiTensorHandle_t indices, diopiTensorHandle_t*
    counts);
DIOPI_API diopiError_t diopiUpsampleLinear(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    size, bool align_corners, const char* mode);
DIOPI_API diopiError_t diopiUpsampleLinearBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiSize_t out_size, diopiSize_t in_size, bool align_corners, const char* mode);
DIOPI_API diopiError_t diopiUpsampleNearest(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input, diopiSize_t
    size);
DIOPI_API diopiError_t diopiUpsampleNearestBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiConstTensorHandle_t grad_output,
    diopiSize_t out_size, diopiSize_t in_size);
DIOPI_API diopiError_t diopiWhere(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t condition,
    diopiConstTensorHandle_t input, diopiConstTensorHandle_t other);
DIOPI_API diopiError_t diopiZeroInp(diopiContextHandle_t ctx, diopiTensorHandle_t self);
DIOPI_API diopiError_t diopiZeros(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiSize_t size);

#if defined(__cplusplus)
}  // extern "C"
#endif

#endif  // DEEPLINK_GEN_TEST_DIOPI_FUNCTIONS_H_
