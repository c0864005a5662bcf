"""BLAS threads: lowered while steps that run partitions in parallel (or ask for intra-op 1) run.

NumPy's BLAS parallelizes each matmul over every core. Partitions running at once on their own
threads would each do so and oversubscribe the cores (OpenBLAS threads spin: a tower step got
15x slower). TensorFlow shares one intra-op pool instead; here each concurrent step lowers the
process's BLAS thread count for its duration — `intra_op_parallelism_threads` if the session
set it, else one thread per partition — and the count returns to its default when the last such
step ends. The BLAS library is found through threadpoolctl when it is installed; without it
this is a no-op.
"""
from __future__ import annotations

import threading


class _BlasLimiter:
    """A process-wide multiset of requested limits; the smallest one is in force."""

    def __init__(self):
        self._lock = threading.Lock()
        self._libs = None          # BLAS controllers, found on first use
        self._default = 0
        self._active: dict[int, int] = {}   # limit -> number of steps asking for it
        self._holds = 0            # intra-op regions running (each wants BLAS single-threaded)
        self._current = 0

    def _find(self) -> list:
        try:
            import threadpoolctl
        except ImportError:
            return []
        libs = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
        if libs:
            self._default = self._current = libs[0].num_threads
        return libs

    def _wanted(self) -> int:
        return min(self._active) if self._active else self._default

    def _apply(self) -> None:
        want = 1 if self._holds else self._wanted()
        if want != self._current:
            for lib in self._libs:
                lib.set_num_threads(want)
            self._current = want

    def threads(self) -> int:
        """The BLAS thread count the running steps allow (0 when no BLAS library could be
        found), whatever intra-op regions hold meanwhile: how many threads such a region may
        use."""
        with self._lock:
            if self._libs is None:
                self._libs = self._find()
            return self._wanted() if self._libs else 0

    def hold_single(self) -> None:
        """BLAS single-threaded until the matching `release_single` (an intra-op region, whose
        own threads call BLAS), on top of the steps' limits."""
        with self._lock:
            if self._libs is None:
                self._libs = self._find()
            self._holds += 1
            if self._libs:
                self._apply()

    def release_single(self) -> None:
        with self._lock:
            self._holds -= 1
            if self._libs:
                self._apply()

    def acquire(self, limit: int) -> None:
        with self._lock:
            if self._libs is None:
                self._libs = self._find()
            self._active[limit] = self._active.get(limit, 0) + 1
            if self._libs:
                self._apply()

    def release(self, limit: int) -> None:
        with self._lock:
            n = self._active[limit] - 1
            if n:
                self._active[limit] = n
            else:
                del self._active[limit]
            if self._libs:
                self._apply()


limiter = _BlasLimiter()
