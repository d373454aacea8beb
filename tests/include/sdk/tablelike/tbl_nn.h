// Declarations of tblnn, the C++ kernel library of the fictional "tbl" SDK
// (deeplink-gen's import tests); only what the tablelike fixture calls.
#pragma once

#include <cstddef>
#include <cstdint>

#include <tbl_rt.h>

namespace tblsoft {
namespace nn {

enum Status { STATUS_OK = 0, STATUS_BAD_PARAM = 1, STATUS_EXECUTION_FAILED = 2 };

struct Context;

// Memory layouts tblnn kernels accept, numbered as the kernels number them.
enum Layout { LAYOUT_ARRAY = 0, LAYOUT_NHWC = 1, LAYOUT_TILE32 = 2 };

Status createContext(Context** ctx);
Status destroyContext(Context* ctx);
Status setQueue(Context* ctx, tblQueue_t queue);
Status randStateBytes(size_t* bytes);
Status randMakeState(Context* ctx, void* state, uint64_t seed);
Status relayout(Context* ctx, const void* src, Layout src_layout, void* dst, Layout dst_layout,
                const int64_t* shape, int ndim, size_t element_bytes);

}  // namespace nn
}  // namespace tblsoft
