"""Timing helpers shared by the workloads: wall-clock, per-call medians over batches."""
import statistics
import time
from collections.abc import Callable

from bench.lockstep import SETTLE_SECONDS, next_turn


def elapsed_ms(fn: Callable[[], object]) -> float:
    """Wall-clock time of one call of `fn`, in milliseconds."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def per_call_us(fn: Callable[[], object], *, batches: int = 30, batch_seconds: float = 0.01,
                warmup_seconds: float = 0.2, min_calls: int = 2000) -> float:
    """Median over batches of the mean time of one call of `fn`, in microseconds.

    `fn` is first called for about `warmup_seconds` (caches, lazy initialization, allocator). The
    batch size is then chosen so one batch lasts about `batch_seconds` (a 1 us call and a 100 us
    call are both timed well above the clock's resolution), and at least `min_calls` calls are
    timed in all. The median of the batch means ignores batches hit by a GC pause or a
    scheduler hiccup. Under the runner's lockstep, the warm-up and each batch may start a turn
    (other frameworks' batches alternate with these), and a new turn first calls `fn` untimed
    for SETTLE_SECONDS.
    """
    return per_call_us_each({"": fn}, batches=batches, batch_seconds=batch_seconds,
                            warmup_seconds=warmup_seconds, min_calls=min_calls)[""]


def per_call_us_each(fns: dict[str, Callable[[], object]], *, batches: int = 30,
                     batch_seconds: float = 0.01, warmup_seconds: float = 0.2,
                     min_calls: int = 2000,
                     finish: dict[str, Callable[[], object]] | None = None) -> dict[str, float]:
    """`per_call_us` of several functions whose batches alternate, one of each per round, so
    that a drift of the machine within the process hits them alike (for ratios between them).
    `finish[name]()`, when given, runs inside that function's timed batches, after its calls:
    work the batch caused that would otherwise land in the next function's batch (a queue
    runner refilling what the batch consumed)."""
    means = batch_means_each(fns, batches=batches, batch_seconds=batch_seconds,
                             warmup_seconds=warmup_seconds, min_calls=min_calls, finish=finish)
    return {name: statistics.median(m) * 1e6 for name, m in means.items()}


def batch_means_each(fns: dict[str, Callable[[], object]], *, batches: int, batch_seconds: float,
                     warmup_seconds: float, min_calls: int,
                     finish: dict[str, Callable[[], object]] | None = None,
                     ) -> dict[str, list[float]]:
    """The per-batch mean call times (seconds) behind `per_call_us_each`, batch k of every
    function from the same round: their ratios pair up measurements taken moments apart."""
    finish = finish or {}
    next_turn()
    sizes = {}
    for name, fn in fns.items():
        calls, start = 0, time.perf_counter()
        while calls < 10 or time.perf_counter() - start < warmup_seconds:
            fn()
            calls += 1
        finish.get(name, _nothing)()
        per_call = (time.perf_counter() - start) / calls
        sizes[name] = max(1, int(batch_seconds / per_call), -(-min_calls // batches))
    means: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(batches):
        if next_turn():
            for name, fn in fns.items():
                _call_for(fn, SETTLE_SECONDS / len(fns))
                finish.get(name, _nothing)()
        for name, fn in fns.items():
            batch, done = sizes[name], finish.get(name, _nothing)
            start = time.perf_counter()
            for _ in range(batch):
                fn()
            done()
            means[name].append((time.perf_counter() - start) / batch)
    return means


def _nothing() -> None:
    return None


def _call_for(fn: Callable[[], object], seconds: float) -> None:
    """Calls `fn` (at least once) until `seconds` have passed."""
    end = time.perf_counter() + seconds
    fn()
    while time.perf_counter() < end:
        fn()
