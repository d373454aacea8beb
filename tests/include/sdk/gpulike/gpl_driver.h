// Declarations of the driver layer of "gpl", a fictional CUDA-like SDK invented for
// deeplink-gen's import tests; only what tests/fixtures/dipu_vendors/gpulike calls.
#pragma once

extern "C" {

typedef enum gplDrvResult {
  GPL_DRV_SUCCESS = 0,
  GPL_DRV_ERROR_INVALID_VALUE = 1,
  GPL_DRV_ERROR_NOT_INITIALIZED = 3,
} gplDrvResult_t;

gplDrvResult_t gplDrvGetErrorString(gplDrvResult_t result, const char** text);
gplDrvResult_t gplDrvGetVersion(int* major, int* minor);
gplDrvResult_t gplDrvPointerIsHost(const void* ptr, int* isHost);

}  // extern "C"
