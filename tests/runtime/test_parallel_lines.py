"""Parallel lines: partitions with work to share run at once, each on a thread of its own."""
import os
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.registry import kernel
from tensorweave.runtime.devices import Device, register_device_factory
from tensorweave.testing.bounded import run_bounded

# A device type whose Square meets the other partitions at a barrier: a step that runs those
# partitions one after the other breaks the barrier instead of passing it.
_meeting: dict = {}
register_device_factory("MEETDEV", lambda name, index: Device(name, "MEETDEV", np))


@kernel("Square", device="MEETDEV")
def _meet(ctx, x):
    _meeting["barrier"].wait()
    _meeting["threads"].add(threading.get_ident())
    return np.square(x)


def _towers(n, size=256):
    """n towers, each a matmul of its slice of x with a weight on /cpu:0; sum of the results."""
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [None, size], name="x")
            w = tf.Variable(np.eye(size, dtype=np.float32) * 0.5, name="w")
        outs = []
        for k, xs in enumerate(tf.split(x, n)):
            with tf.device(f"/cpu:{k}"):
                outs.append(tf.reduce_sum(tf.nn.relu(tf.matmul(xs, w))))
        with tf.device("/cpu:0"):
            total = tf.add_n(outs)
            step = tf.assign_sub(w, 0.01 * tf.gradients(total, w)[0])
    return g, x, w, total, step


def _session(g, n, **threads):
    return tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": n}, **threads))


@pytest.mark.parametrize("threads, parallel", [
    ({}, True),                                   # default threads: towers run at once
    ({"inter_op_parallelism_threads": 1}, False),  # one inter-op thread: cooperative
    ({"intra_op_parallelism_threads": 1, "inter_op_parallelism_threads": 2}, True),
])
def test_towers_run_in_parallel_unless_one_inter_op_thread(threads, parallel):
    g, x, w, total, _ = _towers(2)
    with _session(g, 2, **threads) as sess:
        sess.run(w.initializer)
        plan = sess._core.plan((x,), (total,), ())
        assert (plan.parallel is not None) is parallel
        assert (plan.cooperative is not None) is not parallel
        if parallel:   # BLAS threads shared out between the partitions, or intra-op's
            assert plan.blas_limit == threads.get("intra_op_parallelism_threads",
                                                  max(1, (os.cpu_count() or 1) // 2))
        feed = np.ones([512, 256], np.float32)
        assert sess.run(total, {x: feed}) == 512 * 256 * 0.5


def test_light_partitions_stay_on_one_thread():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        y = x
        for i in range(20):
            with tf.device(f"/cpu:{(i // 5) % 2}"):
                y = y + 1.0
    with _session(g, 2) as sess:
        plan = sess._core.plan((x,), (y,), ())
        assert plan.parallel is None and plan.cooperative.line is not None
        assert sess.run(y, {x: 1.0}) == 21.0


def test_partitions_run_concurrently_under_inter_op_threads():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [3], name="x")
        met = []
        for k in range(2):
            with tf.device(f"/device:MEETDEV:{k}"):
                met.append(tf.square(x, name=f"meet{k}"))
        with tf.device("/cpu:0"):
            out = tf.add(met[0], met[1], name="out")
    config = tf.ConfigProto(device_count={"CPU": 1, "MEETDEV": 2}, allow_soft_placement=True,
                            intra_op_parallelism_threads=1, inter_op_parallelism_threads=3)
    with tf.Session(graph=g, config=config) as sess:
        assert sess._core.plan((x,), (out,), ()).parallel is not None
        for _ in range(3):
            _meeting.update(barrier=threading.Barrier(2, timeout=10), threads=set())
            got = run_bounded(lambda: sess.run(out, {x: [1.0, 2.0, 3.0]}))
            assert got.tolist() == [2.0, 8.0, 18.0]
            assert len(_meeting["threads"]) == 2


def test_parallel_lines_compute_what_the_cooperative_line_computes():
    results = []
    for inter in (1, 2):   # cooperative, then parallel; both with single-threaded BLAS
        g, x, w, total, step = _towers(4, size=64)
        feed = np.random.RandomState(0).uniform(-1, 1, [256, 64]).astype(np.float32)
        with _session(g, 4, intra_op_parallelism_threads=1,
                      inter_op_parallelism_threads=inter) as sess:
            sess.run(w.initializer)
            assert (sess._core.plan((x,), (step,), ()).parallel is not None) is (inter == 2)
            for _ in range(3):
                sess.run(step, {x: feed})
            results.append((sess.run(total, {x: feed}), sess.run(w)))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_a_failure_aborts_the_other_partitions_and_its_error_reaches_the_user():
    g, x, w, total, step = _towers(2)
    with g.as_default():
        with tf.device("/cpu:1"):
            bad = tf.reshape(x, [7, -1], name="bad")   # fails on /cpu:1 for 512 rows
        with tf.device("/cpu:0"):
            both = tf.add(total, tf.reduce_sum(bad), name="both")
    with _session(g, 2) as sess:
        sess.run(w.initializer)
        assert sess._core.plan((x,), (both,), ()).parallel is not None
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad"):
            run_bounded(lambda: sess.run(both, {x: np.ones([512, 256], np.float32)}))
        ok = np.ones([448, 256], np.float32)   # splits in two and reshapes to 7 rows
        assert run_bounded(lambda: sess.run(both, {x: ok})) == 448 * 256 * 1.5


def test_traced_towers_run_each_partition_on_its_thread_and_record_both_devices():
    g, x, w, total, _ = _towers(2)
    feed = {x: np.ones([512, 256], np.float32)}
    with _session(g, 2) as sess:
        sess.run(w.initializer)
        meta = tf.RunMetadata()
        traced = run_bounded(lambda: sess.run(total, feed, run_metadata=meta, options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE)))
        assert traced == sess.run(total, feed) == 512 * 256 * 0.5
        devices = {d.device for d in meta.step_stats.dev_stats}
        assert devices == {f"/job:localhost/replica:0/task:0/device:CPU:{k}" for k in (0, 1)}


def test_the_deadline_ends_a_wait_and_is_the_error_reported():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device("/device:MEETDEV:0"):
            alone = tf.square(x, name="alone")   # waits at a barrier nobody else reaches
        with tf.device("/cpu:0"):
            out = tf.add(alone, 1.0, name="out")
    config = tf.ConfigProto(device_count={"CPU": 1, "MEETDEV": 1}, allow_soft_placement=True,
                            intra_op_parallelism_threads=1, inter_op_parallelism_threads=2)
    with tf.Session(graph=g, config=config) as sess:
        assert sess._core.plan((x,), (out,), ()).parallel is not None
        _meeting.update(barrier=threading.Barrier(2, timeout=1.5), threads=set())
        options = tf.RunOptions(timeout_in_ms=100)
        with pytest.raises(tf.errors.DeadlineExceededError):   # not the barrier's later error
            run_bounded(lambda: sess.run(out, {x: [1.0, 2.0, 3.0]}, options=options))
