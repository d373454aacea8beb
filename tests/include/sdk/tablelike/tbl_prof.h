// Declarations of tblprof, the activity-tracing library of the fictional "tbl" SDK
// (deeplink-gen's import tests); only what the tablelike fixture's profiler calls.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef enum { TBLPROF_SUCCESS = 0, TBLPROF_ERROR = 1 } tblprofResult_t;

typedef enum { TBLPROF_KIND_KERNEL = 1, TBLPROF_KIND_MEMCPY = 2 } tblprofKind_t;

typedef struct {
  tblprofKind_t kind;
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t correlation_id;
  const char* name;
} tblprofRecord_t;

tblprofResult_t tblprofEnable(tblprofKind_t kind);
tblprofResult_t tblprofDisable(tblprofKind_t kind);
tblprofResult_t tblprofPushCorrelation(uint64_t id);
tblprofResult_t tblprofPopCorrelation(uint64_t* id);
tblprofResult_t tblprofFlush(tblprofRecord_t* records, size_t capacity, size_t* count);

}  // extern "C"
