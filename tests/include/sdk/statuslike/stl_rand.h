// Declarations of stlrand, the host-side generator-state library of the fictional "stl"
// SDK (deeplink-gen's import tests).
#pragma once

#include <cstddef>
#include <cstdint>

#include <stl_runtime.h>

extern "C" {

// Bytes of one generator state.
size_t stlRandStateBytes(void);
// Fill *state* (stlRandStateBytes() bytes) for *seed*.
stlError_t stlRandInitState(void* state, size_t bytes, uint64_t seed);

}  // extern "C"
