"""tf.data throughput: `Dataset.range(1_000_000).map(lambda x: x * 2 + 1).batch(256)` to the end.

Elements per second pulled through a one-shot iterator, one `sess.run(get_next)` per batch, in
three variants: plain, `map(..., num_parallel_calls=2)`, and plain followed by `prefetch(1)`.
Before timing, the first batches are checked against NumPy.
"""
import time

import numpy as np

from bench.metrics import Metric

ELEMENTS = 1_000_000
BATCH = 256

METRICS = {
    "plain_elements_s": Metric("elements/s", f"range({ELEMENTS}).map(x*2+1).batch({BATCH})",
                               lower_is_better=False),
    "parallel_elements_s": Metric("elements/s", "the same with map(num_parallel_calls=2)",
                                  lower_is_better=False),
    "prefetch_elements_s": Metric("elements/s", "the plain pipeline followed by prefetch(1)",
                                  lower_is_better=False),
}


def _elements_per_s(tf, parallel=None, prefetch=False) -> float:
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(ELEMENTS).map(lambda x: x * 2 + 1,
                                                 num_parallel_calls=parallel).batch(BATCH)
        if prefetch:
            ds = ds.prefetch(1)
        check = tf.data.make_one_shot_iterator(ds).get_next()
        batch = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session() as sess:
            first = sess.run(check)
            if not np.array_equal(first, np.arange(BATCH) * 2 + 1):
                raise AssertionError(f"wrong first batch: {first[:8]}")
            start, count = time.perf_counter(), 0
            try:
                while True:
                    count += len(sess.run(batch))
            except tf.errors.OutOfRangeError:
                pass
            elapsed = time.perf_counter() - start
    if count != ELEMENTS:
        raise AssertionError(f"pulled {count} elements, expected {ELEMENTS}")
    return ELEMENTS / elapsed


def run_tf1(tf):
    """Drain the pipeline through `sess.run(get_next)` in each variant."""
    return {"plain_elements_s": _elements_per_s(tf),
            "parallel_elements_s": _elements_per_s(tf, parallel=2),
            "prefetch_elements_s": _elements_per_s(tf, prefetch=True)}
