// Compile-check declarations of the Cambricon CNNL handle and the random-state calls a
// generator makes (deeplink-gen tests).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cnrt.h>

extern "C" {
typedef enum { CNNL_STATUS_SUCCESS = 0 } cnnlStatus_t;
typedef struct cnnlContext* cnnlHandle_t;
typedef struct cnnlRandGenerator* cnnlRandGenerator_t;
cnnlStatus_t cnnlCreate(cnnlHandle_t* handle);
cnnlStatus_t cnnlDestroy(cnnlHandle_t handle);
cnnlStatus_t cnnlSetQueue(cnnlHandle_t handle, cnrtQueue_t queue);
cnnlStatus_t cnnlRandGetMTGP32StateSize(cnnlRandGenerator_t generator, size_t* size);
cnnlStatus_t cnnlRandMakeMTGP32KernelState(cnnlHandle_t handle, void* state, const void* params,
                                           const void* kernel_params, int seed);
}
