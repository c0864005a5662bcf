"""Intra-op parallelism for BLAS-heavy kernels: a kernel's independent blocks run on a few
threads at once, each calling BLAS single-threaded.

A multithreaded BLAS splits every GEMM over the cores and synchronizes them at its end; a
convolution is a copy (im2col) plus a GEMM per block of rows, so the copies ran on one core and
each small GEMM paid a fork and join of BLAS threads that spin while they wait (on a busy
machine, waiting for a descheduled partner made steps 10x slower). Here the blocks themselves
are the parallel work: `parallel_for(n, task)` runs task(0..n-1) on the calling thread plus
`threads() - 1` workers, which take the next block index as they finish one, and the process's
BLAS runs single-threaded for the duration (`runtime/blas_threads.py`), so copies and GEMMs
both use every core and nothing spins. Waiting is on a lock, never a spin. The calling thread
works through the blocks too, so a call completes even when the workers are busy with another
kernel's blocks.

The thread count is the BLAS thread count the running steps allow (`limiter.threads()`, which
ignores the single-threaded holds of other regions): a session that lowered it (concurrent
partitions, `intra_op_parallelism_threads`) gets that many here too, and at 1, or with no
BLAS library found to control, blocks run one after another on the calling thread.
"""
from __future__ import annotations

import itertools
import os
import queue
import threading
import time

import numpy as np

from tensorweave.runtime import blas_threads, float_env

# Seconds after the last non-GEMM intra-op region during which GEMMs stay on the pool: longer
# than OpenBLAS's threads spin after a call (about 130 ms here, 2^28 cycles).
QUIET_SECONDS = 0.25
_last_region = float("-inf")
_scratch = threading.local()


def scratch(size: int, dtype) -> np.ndarray:
    """A reusable 1-D buffer of at least `size` elements, private to the calling thread.

    Block tasks use it for temporaries that do not outlive the call (patch blocks, transformed
    tiles), so repeated steps neither allocate nor page-fault them again."""
    pool = getattr(_scratch, "pool", None)
    if pool is None:
        pool = _scratch.pool = {}
    dtype = np.dtype(dtype)
    buf = pool.get(dtype)
    if buf is None or buf.size < size:
        buf = pool[dtype] = np.empty(size, dtype)
    return buf[:size]


class _Job:
    """One parallel_for call: its task, the next block index, and how many blocks are left."""

    __slots__ = ("task", "n", "next_index", "left", "lock", "done", "error")

    def __init__(self, task, n: int):
        self.task, self.n = task, n
        self.next_index = itertools.count()   # next() is atomic under the GIL
        self.left = n
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error = None

    def work(self) -> None:
        """Runs blocks until none is left to take."""
        for i in self.next_index:
            if i >= self.n:
                return
            try:
                self.task(i)
            except BaseException as e:   # re-raised by the caller
                if self.error is None:
                    self.error = e
            with self.lock:
                self.left -= 1
                if not self.left:
                    self.done.set()


class _Pool:
    """Worker threads (daemons, started on first use) that take jobs from one queue."""

    def __init__(self):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._workers = 0
        self._lock = threading.Lock()

    def _ensure(self, workers: int) -> None:
        with self._lock:
            while self._workers < workers:
                threading.Thread(target=self._serve, name=f"tw-intra-op-{self._workers}",
                                 daemon=True).start()
                self._workers += 1

    def _serve(self) -> None:
        float_env.flush_in_this_thread()
        while True:
            self._jobs.get().work()

    def run(self, task, n: int, threads: int) -> None:
        job = _Job(task, n)
        helpers = min(threads, n) - 1
        self._ensure(helpers)
        for _ in range(helpers):
            self._jobs.put(job)
        job.work()
        job.done.wait()
        if job.error is not None:
            raise job.error


_pool = _Pool()


def _after_fork() -> None:
    """A forked child has none of the workers: start afresh (queued jobs would never run)."""
    global _pool
    _pool = _Pool()


os.register_at_fork(after_in_child=_after_fork)


def threads() -> int:
    """How many threads a parallel_for uses now (1: it runs serially)."""
    return max(1, blas_threads.limiter.threads())


def single_blas(fn, *args):
    """fn(*args) with BLAS single-threaded: for products too small to split but large enough
    that BLAS would wake its own threads, which then spin for a while after the call and take
    the cores the intra-op workers need."""
    if threads() == 1:
        return fn(*args)
    return blas_threads.limiter.one_thread(fn, *args)


def parallel_for(n: int, task, gemm: bool = False) -> None:
    """task(i) for every i in range(n), in any order and on several threads; each task must
    write only its own outputs. BLAS is single-threaded meanwhile. The first exception a task
    raised is re-raised here after every task has finished. `gemm`: the blocks are one GEMM's
    (see `gemm_on_blas_threads`); any other region marks the process as using the pool."""
    global _last_region
    count = threads()
    if count == 1 or n < 1:
        for i in range(n):
            task(i)
        return
    if not gemm:
        _last_region = time.monotonic()
    blas_threads.limiter.hold_single()
    try:
        _pool.run(task, n, count)
    finally:
        blas_threads.limiter.release_single()
        if not gemm:
            _last_region = time.monotonic()


def gemm_on_blas_threads() -> bool:
    """Whether a large GEMM should let BLAS thread it rather than split it over the pool.

    OpenBLAS partitions one GEMM over its threads better than blocks of the output do (they
    share packed panels): mlp_train's Adam step took 4.5 ms against 5.4 with split GEMMs, SGD
    3.2 against 4.1. But after each threaded call its threads spin for about 130 ms before
    sleeping, and a spinning thread takes the core an intra-op region (a convolution's blocks)
    needs: cnn_train went from 62 to 83 ms per step with threaded GEMMs. So GEMMs are threaded
    by BLAS only while no other kind of region has run for QUIET_SECONDS, i.e. in steps made of
    GEMMs and light kernels; the values are the same either way (neither splits an inner sum).
    """
    return time.monotonic() - _last_region > QUIET_SECONDS and threads() > 1
