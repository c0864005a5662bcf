"""Parallel lines: steps whose partitions have work to share run list-scheduled over the cores."""
import os
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels.registry import kernel
from tensorweave.runtime import cost_model, machine_rates
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
        m = tf.placeholder(tf.float32, [256, 256], name="m")
        with tf.device("/device:MEETDEV:0"):
            alone = tf.square(x, name="alone")   # waits at a barrier nobody else reaches
        with tf.device("/cpu:0"):   # the heavier branch: `out` follows it on its thread
            out = tf.add(alone, tf.reduce_sum(tf.matmul(m, m)), name="out")
    config = tf.ConfigProto(device_count={"CPU": 1, "MEETDEV": 1}, allow_soft_placement=True,
                            intra_op_parallelism_threads=1, inter_op_parallelism_threads=2)
    feed = {x: [1.0, 2.0, 3.0], m: np.ones([256, 256], np.float32)}
    with tf.Session(graph=g, config=config) as sess:
        assert sess._core.plan((x, m), (out,), ()).parallel is not None
        _meeting.update(barrier=threading.Barrier(2, timeout=1.5), threads=set())
        options = tf.RunOptions(timeout_in_ms=100)
        with pytest.raises(tf.errors.DeadlineExceededError):   # not the barrier's later error
            run_bounded(lambda: sess.run(out, feed, options=options))


def _line_devices(plan) -> list[set]:
    """The devices of the nodes each parallel line runs (puts and takes included)."""
    return [{item.node.device[-5:] for item in items.values()}
            for _, items in plan.parallel._lines]


def test_the_towers_tail_on_cpu0_is_shared_between_the_threads():
    g, x, w, total, _ = _towers(2)
    with g.as_default():
        with tf.device("/cpu:0"):
            v = tf.Variable(np.ones([256, 256], np.float32), name="v")
        outs = []
        for k, xs in enumerate(tf.split(x, 2)):
            with tf.device(f"/cpu:{k}"):
                outs.append(tf.reduce_sum(tf.matmul(tf.matmul(xs, w), v)))
        loss = tf.add_n(outs)
        grads = [tf.gradients(o, [w, v]) for o in outs]
        with tf.device("/cpu:0"):   # both averages and updates placed on /cpu:0
            train = tf.group(*[tf.assign_sub(var, 0.01 * tf.add_n([gw, gv]) / 2)
                               for var, gw, gv in zip((w, v), *grads)])
    with _session(g, 2, intra_op_parallelism_threads=1, inter_op_parallelism_threads=2) as sess:
        sess.run(tf.global_variables_initializer())
        plan = sess._core.plan((x,), (loss,), (train,))
        assert len(plan.parallel._lines) == 2
        updates = [[it.node.name for it in items.values() if it.node.op == "AssignSub" and
                    it.fn.__name__ not in ("_put", "_take")] for _, items in plan.parallel._lines]
        assert sorted(len(u) for u in updates) == [1, 1]   # one update on each thread
        assert all("CPU:0" in devices for devices in _line_devices(plan))
        feed = {x: np.full([64, 256], 0.01, np.float32)}
        first = sess.run(loss, feed)
        sess.run(train, feed)
        assert sess.run(loss, feed) < first


def test_reads_of_a_variable_see_the_step_s_starting_value_whatever_the_threads_do():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            m = tf.placeholder(tf.float32, [256, 256], name="m")
            w = tf.Variable(0.0, name="w")
            bump = tf.assign_add(w, 1.0, name="bump")
        with tf.device("/cpu:1"):   # a read behind a heavy product, on the other thread
            late = tf.add(tf.reduce_sum(tf.matmul(m, m)) * 0.0, w, name="late")
    with _session(g, 2, intra_op_parallelism_threads=1, inter_op_parallelism_threads=2) as sess:
        sess.run(w.initializer)
        assert sess._core.plan((m,), (late, bump), ()).parallel is not None
        feed = {m: np.ones([256, 256], np.float32)}
        seen = [sess.run([late, bump], feed)[0] for _ in range(20)]
        assert seen == [float(k) for k in range(20)]


def test_update_orders_that_would_close_a_cycle_fall_back_to_a_thread_per_partition():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            a = tf.Variable(1.0, name="a")
            bump_a = tf.assign_add(a, 1.0, name="bump_a")
        with tf.device("/cpu:1"):
            b = tf.Variable(10.0, name="b")
            bump_b = tf.assign_add(b, 1.0, name="bump_b")
        with tf.control_dependencies([bump_a]):   # reads b after a's update, and a after b's
            read_b = tf.identity(b, name="read_b")
        with tf.control_dependencies([bump_b]):
            read_a = tf.identity(a, name="read_a")
    with _session(g, 2, intra_op_parallelism_threads=1, inter_op_parallelism_threads=2) as sess:
        sess.run(tf.global_variables_initializer())
        plan = sess._core.plan((), (read_a, read_b), ())
        assert plan.parallel is None and plan.cooperative is None
        assert run_bounded(lambda: sess.run([read_a, read_b])) == [2.0, 11.0]


@pytest.mark.parametrize("seed", range(4))
def test_interleaved_reads_and_updates_across_devices_never_wait_forever(seed):
    """Reads and in-place updates of shared variables scattered over two devices, with
    matmuls to give the threads work: every read sees the step's starting value."""
    rng = np.random.RandomState(seed)
    with tf.Graph().as_default() as g:
        m = tf.placeholder(tf.float32, [128, 128], name="m")
        with tf.device("/cpu:0"):
            vs = [tf.Variable(float(k), name=f"v{k}") for k in range(4)]
        reads, bumps = [], []
        for _ in range(12):
            k = rng.randint(4)
            if rng.rand() < 0.5:
                with tf.device(f"/cpu:{rng.randint(2)}"):
                    work = tf.reduce_sum(tf.matmul(m, m)) * 0.0
                    reads.append((k, work + vs[k]))
            else:   # on the variable's device (a ref's consumers are colocated with it)
                bumps.append(tf.assign_add(vs[k], 1.0).op)
    feed = {m: np.ones([128, 128], np.float32)}
    with _session(g, 2, intra_op_parallelism_threads=1, inter_op_parallelism_threads=2) as sess:
        sess.run(tf.global_variables_initializer())
        assert sess._core.plan((m,), tuple(r for _, r in reads), tuple(bumps)).parallel \
            is not None
        for _ in range(5):
            start = sess.run(vs)
            got = run_bounded(lambda: sess.run([r for _, r in reads] + bumps, feed))
            assert got[:len(reads)] == [start[k] for k, _ in reads]


def test_the_schedule_estimates_times_at_this_machine_s_measured_rates(monkeypatch):
    macs_per_us, bytes_per_us = machine_rates.rates()
    assert machine_rates.rates() == (macs_per_us, bytes_per_us)   # measured once
    assert 1e3 < macs_per_us < 1e7 and 1e3 < bytes_per_us < 1e7   # 1 G to 10 T per second
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [64, 256], name="x")
        w = tf.Variable(np.eye(256, dtype=np.float32), name="w")
        outs = []
        for k, xs in enumerate(tf.split(x, 2)):
            with tf.device(f"/cpu:{k}"):
                outs.append(tf.reduce_sum(tf.nn.relu(tf.matmul(xs, w))))
        total = tf.add_n(outs)
    with _session(g, 2, intra_op_parallelism_threads=1, inter_op_parallelism_threads=2) as sess:
        sess.run(tf.global_variables_initializer())
        plan = sess._core.plan((x,), (total,), ())
        nodes = {it.node.op: it.node for _, items in plan.parallel._lines
                 for it in items.values()}
    matmul, relu = nodes["MatMul"], nodes["Relu"]
    work = {}
    for rates in ((1e4, 1e4), (2e4, 1e4), (1e4, 4e4)):
        monkeypatch.setattr(machine_rates, "rates", lambda rates=rates: rates)
        work[rates] = [cost_model.estimate_us(n) - cost_model.KERNEL_US for n in (matmul, relu)]
    # [32, 256] @ [256, 256]: 2^21 multiply-adds; Relu reads and writes 32 x 256 floats.
    assert work[(1e4, 1e4)] == pytest.approx([2 ** 21 / 1e4, 2 * 32 * 256 * 4 / 1e4])
    assert work[(2e4, 1e4)] == pytest.approx([2 ** 21 / 2e4, 2 * 32 * 256 * 4 / 1e4])
    assert work[(1e4, 4e4)] == pytest.approx([2 ** 21 / 1e4, 2 * 32 * 256 * 4 / 4e4])
