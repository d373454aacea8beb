/*
 * Compile-check stand-in for DIOPI's proto/include/diopi/functions_ext.h
 * (DIOPI commit 02f03c6a). Only the extension operators deeplink-gen's op
 * list may call are declared here; generated kernels include
 * <diopi/functions.h> only, so include this header explicitly if needed.
 */
#ifndef DEEPLINK_GEN_TEST_DIOPI_FUNCTIONS_EXT_H_
#define DEEPLINK_GEN_TEST_DIOPI_FUNCTIONS_EXT_H_

#include <diopi/diopirt.h>

#if defined(__cplusplus)
extern "C" {
#endif

DIOPI_API diopiError_t diopiRMSNorm(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiTensorHandle_t inv_rms,
    diopiConstTensorHandle_t input, diopiSize_t normalized_shape, diopiConstTensorHandle_t weight,
    diopiConstTensorHandle_t bias, double eps);
DIOPI_API diopiError_t diopiRMSNormBackward(
    diopiContextHandle_t ctx, diopiTensorHandle_t grad_input, diopiTensorHandle_t grad_weight,
    diopiTensorHandle_t grad_bias, diopiConstTensorHandle_t grad_output, diopiConstTensorHandle_t
    input, diopiConstTensorHandle_t weight, diopiConstTensorHandle_t bias, diopiConstTensorHandle_t
    inv_rms, diopiSize_t normalized_shape, double eps);
DIOPI_API diopiError_t diopiRotaryEmbedding(
    diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t x,
    diopiConstTensorHandle_t cos, diopiConstTensorHandle_t sin, const bool conj, const bool
    interleaved);

#if defined(__cplusplus)
}  // extern "C"
#endif

#endif  // DEEPLINK_GEN_TEST_DIOPI_FUNCTIONS_EXT_H_
