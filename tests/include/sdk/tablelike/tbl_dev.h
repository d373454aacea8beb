// Declarations of tbldev, the device-management library of the fictional "tbl" SDK
// (deeplink-gen's import tests). Its query structs are versioned: the caller sets
// .version before the call.
#pragma once

#include <cstdint>

extern "C" {

#define TBL_INFO_V1 1
#define TBL_INFO_V2 2

typedef enum { TBLDEV_SUCCESS = 0, TBLDEV_ERROR_UNKNOWN = 1, TBLDEV_ERROR_VERSION = 2 } tbldevRet_t;

typedef struct {
  int version;
  uint64_t totalMiB;
  uint64_t usedMiB;
} tbldevMemoryInfo_t;

typedef struct {
  int version;
  unsigned int driverMajor;
  unsigned int driverMinor;
} tbldevVersionInfo_t;

tbldevRet_t tbldevInit(int flags);
tbldevRet_t tbldevShutdown(void);
tbldevRet_t tbldevGetMemoryInfo(tbldevMemoryInfo_t* info, int device);
tbldevRet_t tbldevGetVersionInfo(tbldevVersionInfo_t* info, int device);

}  // extern "C"
