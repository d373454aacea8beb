/*
 * Compile-check stand-in for DIOPI's proto/include/diopi/diopirt.h
 * (DIOPI commit 02f03c6a, the submodule pinned by DIPU 9dd38082).
 *
 * Declares the runtime contract between a framework (DIPU) and a DIOPI
 * implementation: attribute macros, value types, enums with their exact
 * numeric values, and the 27 runtime entry points the framework supplies.
 * Declarations only; nothing here has a definition.
 */
#ifndef DEEPLINK_GEN_TEST_DIOPI_DIOPIRT_H_
#define DEEPLINK_GEN_TEST_DIOPI_DIOPIRT_H_

#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#include <stdbool.h>
#endif

/* ---- attribute and version macros ---------------------------------------- */
#define DIOPI_ATTR_WEAK __attribute__((weak))
/* Older DIOPI revisions spell the attribute macro this way; kept as an alias. */
#define DIOPI_ATTR_WEEK DIOPI_ATTR_WEAK
#define DIOPI_API DIOPI_ATTR_WEAK
#define DIOPI_RT_API

#define DIOPI_VER_MAJOR 1
#define DIOPI_VER_MINOR 0
#define DIOPI_VER_PATCH 0
#define DIOPI_VERSION (DIOPI_VER_MAJOR * 1000 + DIOPI_VER_MINOR * 100 + DIOPI_VER_PATCH)

#if defined(__cplusplus)
extern "C" {
#endif

/* ---- value types ---------------------------------------------------------- */
typedef struct {
    const int64_t* data;
    int64_t len;
} diopiSize_t;

typedef enum {
    diopiSuccess = 0,
    diopiErrorOccurred = 1,
    diopiNotInited = 2,
    diopiNoRegisteredStreamCreateFunction = 3,
    diopiNoRegisteredStreamDestoryFunction = 4,
    diopiNoRegisteredStreamSyncFunction = 5,
    diopiNoRegisteredDeviceMemoryMallocFunction = 6,
    diopiNoRegisteredDeviceMemoryFreeFunction = 7,
    diopiNoRegisteredDevice2DdeviceMemoryCopyFunction = 8,
    diopiNoRegisteredDevice2HostMemoryCopyFunction = 9,
    diopiNoRegisteredHost2DeviceMemoryCopyFunction = 10,
    diopiNoRegisteredGetLastErrorFunction = 11,
    diopi5DNotSupported = 12,
    diopiNoImplement = 13,
    diopiForceFallbackToCPU = 14,
    diopiDtypeNotSupported = 1000,
} diopiError_t;

typedef enum {
    diopi_host = 0,
    diopi_device = 1,
} diopiDevice_t;

typedef int8_t diopiDeviceIndex_t;

/* Values grow with precision; diopi_test's dtype promotion depends on that. */
typedef enum {
    diopi_dtype_int8 = 0,
    diopi_dtype_uint8 = 1,
    diopi_dtype_int16 = 2,
    diopi_dtype_uint16 = 3,
    diopi_dtype_int32 = 4,
    diopi_dtype_uint32 = 5,
    diopi_dtype_int64 = 6,
    diopi_dtype_uint64 = 7,
    diopi_dtype_float16 = 8,
    diopi_dtype_float32 = 9,
    diopi_dtype_float64 = 10,
    diopi_dtype_bool = 11,
    diopi_dtype_bfloat16 = 12,
    diopi_dtype_tfloat32 = 13,
    diopi_dtype_complex32 = 14,
    diopi_dtype_complex64 = 15,
    diopi_dtype_complex128 = 16,
    diopi_dtype_unsupported = 255
} diopiDtype_t;

typedef struct {
    diopiDtype_t stype;
    union {
        double fval;
        int64_t ival;
    };
} diopiScalar_t;

typedef enum {
    Contiguous = 0,
    ChannelsLast = 1,
    ChannelsLast3d = 2,
    Preserve = 3,
    ChannelsLast1d = 4
} diopiMemoryFormat_t;

typedef enum { ReductionNone = 0, ReductionMean = 1, ReductionSum = 2, ReductionEND = 3 } diopiReduction_t;

typedef enum { RoundModeNone = 0, RoundModeTrunc = 1, RoundModeFloor = 2, RoundModeEND = 3 } diopiRoundMode_t;

/* ---- opaque handles (the framework defines the structs) ------------------ */
struct diopiContext;
typedef struct diopiContext* diopiContextHandle_t;

struct diopiTensor;
typedef struct diopiTensor* diopiTensorHandle_t;
typedef const struct diopiTensor* diopiConstTensorHandle_t;

struct diopiGenerator;
typedef struct diopiGenerator* diopiGeneratorHandle_t;
typedef const struct diopiGenerator* diopiConstGeneratorHandle_t;

typedef void* diopiStreamHandle_t;

/* ---- runtime API supplied by the framework (27 functions) ---------------- */
extern DIOPI_API const char* diopiGetVersion();

/* tensor queries */
extern DIOPI_RT_API diopiError_t diopiGetTensorData(diopiTensorHandle_t th, void**);
extern DIOPI_RT_API diopiError_t diopiGetTensorDataConst(diopiConstTensorHandle_t th, const void**);
extern DIOPI_RT_API diopiError_t diopiGetTensorShape(diopiConstTensorHandle_t th, diopiSize_t* size);
extern DIOPI_RT_API diopiError_t diopiGetTensorStride(diopiConstTensorHandle_t th, diopiSize_t* stride);
extern DIOPI_RT_API diopiError_t diopiGetTensorDtype(diopiConstTensorHandle_t th, diopiDtype_t* dtype);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorDevice(diopiConstTensorHandle_t th, diopiDevice_t* device);
extern DIOPI_RT_API diopiError_t diopiGetTensorNumel(diopiConstTensorHandle_t th, int64_t* numel);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorElemSize(diopiConstTensorHandle_t th, int64_t* itemsize);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorStoragePtr(diopiConstTensorHandle_t th, void** pStoragePtr);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorStorageOffset(diopiConstTensorHandle_t th, int64_t* pOffset);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorStorageNbytes(diopiConstTensorHandle_t th, size_t* pNbytes);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorDeviceIndex(diopiConstTensorHandle_t th,
                                                                           diopiDeviceIndex_t* pDevIndex);

/* sparse tensor queries */
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorCrowIndices(diopiConstTensorHandle_t th,
                                                                           diopiConstTensorHandle_t* crow_indices);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorColIndices(diopiConstTensorHandle_t th,
                                                                          diopiConstTensorHandle_t* col_indices);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetTensorValues(diopiConstTensorHandle_t th,
                                                                      diopiConstTensorHandle_t* values);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiIsTensorSparse(diopiConstTensorHandle_t th, bool* is_sparse);

/* device */
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGetCurrentDeviceIndex(diopiDeviceIndex_t* pDevIndex);

/* context: stream and scratch tensors */
extern DIOPI_RT_API diopiError_t diopiGetStream(diopiContextHandle_t ctx, diopiStreamHandle_t* stream);
extern DIOPI_RT_API diopiError_t diopiRequireTensor(diopiContextHandle_t ctx, diopiTensorHandle_t* tensor,
                                                    const diopiSize_t* size, const diopiSize_t* stride,
                                                    const diopiDtype_t dtype, const diopiDevice_t device);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiRequireBuffer(diopiContextHandle_t ctx, diopiTensorHandle_t* tensor,
                                                                    int64_t num_bytes, diopiDevice_t device);

/* random generators */
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGeneratorGetState(diopiContextHandle_t ctx,
                                                                        diopiConstGeneratorHandle_t th,
                                                                        diopiTensorHandle_t* data);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGeneratorSetState(diopiGeneratorHandle_t th,
                                                                        diopiConstTensorHandle_t state);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGeneratorGetSeedAndOffset(diopiGeneratorHandle_t th,
                                                                                uint64_t* ptrSeed,
                                                                                uint64_t* ptrOffset);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiGeneratorSetSeedAndOffset(diopiGeneratorHandle_t th, uint64_t seed,
                                                                                uint64_t offset);

/* profiler records */
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiRecordStart(const char* record_name, void** record);
extern DIOPI_RT_API DIOPI_ATTR_WEAK diopiError_t diopiRecordEnd(void** record);

#if defined(__cplusplus)
}  // extern "C"
#endif

#endif  // DEEPLINK_GEN_TEST_DIOPI_DIOPIRT_H_
