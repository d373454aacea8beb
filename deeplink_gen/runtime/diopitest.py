"""The diopi_test device runtime (DIOPI conform_test.h at the pinned commit,
diopi.md §6.1): which DIPU device function each extern "C" entry point is
rendered from."""

from __future__ import annotations

# diopi_test function -> the DIPU device function whose calls it reuses.
SOURCES = {
    "device_malloc": "mallocDevice",
    "device_free": "freeDevice",
    "device_make_stream": "createStream",
    "device_destroy_stream": "destroyStream",
    "device_synchronize_stream": "syncStream",
    "device_memcpy_h2d_async": "memCopyH2DAsync",
    "device_memcpy_d2h_async": "memCopyD2HAsync",
    "device_memcpy_d2d_async": "memCopyD2DAsync",
}
