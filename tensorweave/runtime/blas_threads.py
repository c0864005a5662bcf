"""BLAS threads: lowered while steps that run partitions in parallel (or ask for intra-op 1) run,
while intra-op regions run, and for mid-size products.

NumPy's BLAS parallelizes each matmul over every core. Partitions running at once on their own
threads would each do so and oversubscribe the cores (OpenBLAS threads spin: a tower step got
15x slower). TensorFlow shares one intra-op pool instead; here each concurrent step lowers the
process's BLAS thread count for its duration — `intra_op_parallelism_threads` if the session
set it, else one thread per partition — and the count returns to its default when the last such
step ends. The BLAS library is found through threadpoolctl when it is installed; without it
this is a no-op.

Mid-size products (`one_thread`, through kernels/intra_op.single_blas from linalg.matmul:
the GEMMs of an RNN step) run on the calling thread alone. OpenBLAS splits them over its
threads, and the calling thread then waits for a worker that, on a busy machine, may not be
scheduled for a timeslice: measured with other processes running, a [32,192]x[192,512]
product took 2.5-57 ms on two threads against 0.2-0.3 ms on one. Splitting the rows or
columns, never the inner sum, OpenBLAS gives the same values either way. Switching costs two C
calls (about 3 us).
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
        self._raw: list = []       # (set, get) C functions of each library's thread count
        self._version = 0          # changes whenever _apply sets a limit

    def _find(self) -> list:
        """The BLAS controllers (threadpoolctl), and OpenBLAS's own thread-count calls."""
        try:
            import threadpoolctl
        except ImportError:
            return []
        libs = threadpoolctl.ThreadpoolController().select(user_api="blas").lib_controllers
        if libs:
            self._default = self._current = libs[0].num_threads
            raw = [_raw_calls(lib) for lib in libs]
            self._raw = raw if all(raw) else []
        return libs

    def _wanted(self) -> int:
        return min(self._active) if self._active else self._default

    def _apply(self) -> None:
        want = 1 if self._holds else self._wanted()
        # OpenBLAS is asked for its count: a threadpoolctl user may have changed it meanwhile.
        in_force = self._raw[0][1]() if self._raw else self._current
        if want != in_force:
            for lib in self._libs:
                lib.set_num_threads(want)
            self._current = want
            self._version += 1

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

    def one_thread(self, fn, *args):
        """fn(*args) with BLAS on the calling thread only (see the module docstring); the
        thread count in force before (set by us or by threadpoolctl's user) comes back."""
        if self._libs is None:
            with self._lock:
                if self._libs is None:
                    self._libs = self._find()
        calls = self._raw
        if not calls:
            return fn(*args)
        before = [get() for _, get in calls]
        if max(before) <= 1:
            return fn(*args)
        version = self._version
        for set_threads, _ in calls:
            set_threads(1)
        try:
            return fn(*args)
        finally:
            with self._lock:
                if self._version == version:    # else _apply has set the new limit meanwhile
                    for (set_threads, _), n in zip(calls, before):
                        set_threads(n)

    def release(self, limit: int) -> None:
        with self._lock:
            n = self._active[limit] - 1
            if n:
                self._active[limit] = n
            else:
                del self._active[limit]
            if self._libs:
                self._apply()


def _raw_calls(lib):
    """OpenBLAS's `openblas_set_num_threads` and `openblas_get_num_threads` as C functions
    (threadpoolctl's setter also checks which Python thread controls the library: about 10 us
    a call), or None for other libraries."""
    if getattr(lib, "internal_api", None) != "openblas":
        return None
    try:
        return tuple(getattr(lib.dynlib, f"{lib._symbol_prefix}openblas_{what}_num_threads"
                                         f"{lib._symbol_suffix}") for what in ("set", "get"))
    except AttributeError:
        return None


limiter = _BlasLimiter()

