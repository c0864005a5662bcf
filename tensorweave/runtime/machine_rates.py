"""This machine's single-thread GEMM and memory rates, measured once per process.

The parallel lines schedule a step's nodes over threads by estimated time
(`cost_model.estimate_us`): a contraction's multiply-adds at the GEMM rate, anything else its
bytes at the memory rate. Only their ratio shapes the schedule, and it differs by a factor of
three between machines and GEMM libraries (40 G multiply-adds/s against 20 GB/s with
single-threaded OpenBLAS on the machine the constants were first read off; 115 G against
100 GB/s with oneDNN on an AMD Zen 5). Fixed constants from one machine made another's
schedule put a tower step's variable updates where they waited: calibrated here, two towers at
intra-op 1 ran 0.955-0.97x the time of the fixed constants' schedule (in-process alternating
runs). The probe takes about 2 ms, on first use only: a float32 product on the calling thread
as the tower kernels run it, and an elementwise add over arrays the size of a layer's weights;
each is timed several times after a warm-up and the fastest run counts, the one least
disturbed by other threads.
"""
from __future__ import annotations

import functools
import time

import numpy as np

_RUNS = 5


def _fastest_us(fn) -> float:
    fn()
    fn()
    best = float("inf")
    for _ in range(_RUNS):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return max(best * 1e6, 1e-3)


@functools.cache
def rates() -> tuple[float, float]:
    """(multiply-adds per µs of a single-threaded float32 GEMM, bytes per µs moved by an
    elementwise kernel), measured on first call."""
    from tensorweave.kernels import linalg

    a, b = np.ones((64, 512), np.float32), np.ones((512, 512), np.float32)
    gemm_us = _fastest_us(lambda: linalg.one_thread_product(a, b))
    x, y, z = (np.ones(1 << 18, np.float32) for _ in range(3))
    add_us = _fastest_us(lambda: np.add(x, y, out=z))
    return a.shape[0] * a.shape[1] * b.shape[1] / gemm_us, 3 * x.nbytes / add_us
