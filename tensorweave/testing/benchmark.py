"""tf.test.Benchmark: timing an op in a session and reporting the entry, as TF1 benchmarks do.

`run_op_benchmark` runs the op `burn_iters` times untimed, then `min_iters` times, and reports
the median wall time per run (TensorFlow's statistic); `report_benchmark` logs one entry in
TensorFlow's BenchmarkEntry text form and keeps it on `self.entries`.
"""
from __future__ import annotations

import logging
import time

import numpy as np

_log = logging.getLogger("tensorweave.test")


class Benchmark:
    """Base class of TF1 benchmarks (methods named benchmark*)."""

    def __init__(self):
        self.entries: list[dict] = []

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None) -> None:
        entry = {"name": name or type(self).__name__, "iters": iters, "cpu_time": cpu_time,
                 "wall_time": wall_time, "throughput": throughput, "extras": extras or {},
                 "metrics": metrics or []}
        self.entries.append(entry)
        fields = " ".join(f"{key}: {value}" for key, value in entry.items()
                          if value not in (None, {}, []))
        _log.info("entries { %s }", fields)

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2, min_iters=10,
                         store_trace=False, store_memory_usage=True, name=None, extras=None,
                         mbs=0) -> dict:
        """Times `sess.run(op_or_tensor, feed_dict)`; returns and reports the median."""
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        deltas = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            deltas.append(time.perf_counter() - start)
        wall_time = float(np.median(deltas))
        throughput = mbs / wall_time if mbs else None
        values = {"iters": min_iters, "wall_time": wall_time, "extras": dict(extras or {}),
                  "name": name, "throughput": throughput}
        self.report_benchmark(iters=min_iters, wall_time=wall_time, throughput=throughput,
                              extras=extras, name=name)
        return values

    def evaluate(self, tensors):
        """The values of `tensors` in the default session."""
        from tensorweave.runtime.session import get_default_session
        sess = get_default_session()
        if sess is None:
            raise ValueError("Benchmark.evaluate needs a default session")
        return sess.run(tensors)
