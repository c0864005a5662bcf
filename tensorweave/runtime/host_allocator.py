"""Host memory policy: a step's freed buffers stay in the process for the next step.

A training step allocates the same tensors every run. glibc's malloc returns freed memory
at the top of its heap to the kernel once it exceeds the trim threshold (by default twice the
adaptive mmap threshold, a few MB), so every step of an MLP re-faults the pages of its
megabyte-sized gradients (~350 minor page faults per mlp_train step, each one a trap and a
zeroed page). TensorFlow's CPU allocator keeps its pool for the life of the process; here the
same effect comes from raising glibc's trim and mmap thresholds once, when the first CPU device
is made: buffers up to `MMAP_THRESHOLD` come from the heap and freed ones are reused, not
returned. Peak resident memory is unchanged (it is the step's high-water mark either way);
memory freed after that peak stays with the process, as TensorFlow's pool does.

`TW_RETAIN_HOST_MEMORY=0` leaves malloc's defaults alone. On a C library without `mallopt`
(not glibc) this does nothing.
"""
from __future__ import annotations

import ctypes
import os
import threading

# glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 << 20      # glibc's own ceiling for the adaptive threshold on 64-bit
TRIM_THRESHOLD = 256 << 20     # free memory at the heap top kept before any is returned

_lock = threading.Lock()
_applied: bool | None = None


def retain_freed_memory() -> bool:
    """Applies the policy once per process; True if malloc now keeps freed step buffers."""
    global _applied
    with _lock:
        if _applied is None:
            _applied = _apply()
        return _applied


def _apply() -> bool:
    if os.environ.get("TW_RETAIN_HOST_MEMORY", "1") == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
