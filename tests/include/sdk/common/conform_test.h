// Compile-check stand-in for DIOPI diopi_test/diopi_stub/include/conform_test.h
// (DIOPI 02f03c6a): the device runtime functions a vendor defines for diopi_test.
#pragma once

#include <stdint.h>

#include <diopi/diopirt.h>

#if defined(__cplusplus)
extern "C" {
#endif

typedef void* (*malloc_func_t)(uint64_t);
typedef void (*free_func_t)(void*);

void* device_malloc(uint64_t bytes);
void device_free(void* ptr);
diopiError_t device_make_stream(diopiStreamHandle_t*);
diopiError_t device_destroy_stream(diopiStreamHandle_t);
diopiError_t device_synchronize_stream(diopiStreamHandle_t stream);
diopiError_t device_memcpy_h2d_async(diopiStreamHandle_t stream, void* dst, const void* src, uint64_t bytes);
diopiError_t device_memcpy_d2h_async(diopiStreamHandle_t stream, void* dst, const void* src, uint64_t bytes);
diopiError_t device_memcpy_d2d_async(diopiStreamHandle_t stream, void* dst, const void* src, uint64_t bytes);
diopiError_t initLibrary();
diopiError_t finalizeLibrary();
diopiError_t buildGeneratorState(diopiContextHandle_t ctx, diopiTensorHandle_t out);

#if defined(__cplusplus)
}
#endif
