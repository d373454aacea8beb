// Compile-check declarations of the Cambricon CNDEV API (deeplink-gen tests).
#pragma once

#include <cstdint>

extern "C" {

#define CNDEV_VERSION_5 5

typedef enum { CNDEV_SUCCESS = 0, CNDEV_ERROR_UNKNOWN = 1 } cndevRet_t;

typedef struct {
  int version;
  int64_t physicalMemoryTotal;  // MB
  int64_t physicalMemoryUsed;   // MB
  int64_t virtualMemoryTotal;
  int64_t virtualMemoryUsed;
} cndevMemoryInfo_t;

typedef struct {
  int version;
  unsigned int driverMajorVersion;
  unsigned int driverMinorVersion;
  unsigned int driverBuildVersion;
} cndevVersionInfo_t;

cndevRet_t cndevInit(int reserved);
cndevRet_t cndevRelease(void);
const char* cndevGetErrorString(cndevRet_t errorId);
cndevRet_t cndevGetMemoryUsage(cndevMemoryInfo_t* memInfo, int devId);
cndevRet_t cndevGetVersionInfo(cndevVersionInfo_t* versInfo, int devId);

}  // extern "C"
