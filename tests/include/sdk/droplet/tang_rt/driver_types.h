// Compile-check declarations of TangRT's tang_rt/driver_types.h (Droplet),
// written for deeplink-gen's tests: the types and values the droplet vendor
// uses, as that header declares them. tang_runtime_api.h and PCCL's pccl.h
// include it.
#ifndef _TANG_RT_DRIVER_TYPES_H_
#define _TANG_RT_DRIVER_TYPES_H_

enum tangError {
  tangSuccess = 0,
  tangErrorInvalidValue = 1,
  tangErrorMemoryAllocation = 2,
  tangErrorNotReady = 600,
};

// No tangMemcpyDefault: TangRT leaves it out, having no unified addressing.
typedef enum tangMemcpyKind {
  tangMemcpyHostToHost = 0,
  tangMemcpyHostToDevice = 1,
  tangMemcpyDeviceToHost = 2,
  tangMemcpyDeviceToDevice = 3,
} tangMemcpyKind;

typedef enum tangError tangError_t;
typedef struct TActx_s* tangContext_t;
typedef struct TAstream_s* tangStream_t;
typedef struct TAevent_s* tangEvent_t;

#endif  // _TANG_RT_DRIVER_TYPES_H_
