"""Executor behaviour: concurrency of expensive kernels, async kernels, errors, determinism."""
import re
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.kernels.registry import kernel

# Test-only ops (names start with "_Test" so the op-coverage meta-test skips them).
_SLOW = define_op("_TestSlowSquare", inputs=["x: T"], outputs=["y: T"],
                  shape_fn=shape_fns.unchanged, not_differentiable=True)
_WAIT = define_op("_TestWaitForever", inputs=["x: T"], outputs=["y: T"],
                  shape_fn=shape_fns.unchanged, not_differentiable=True)
_LATE = define_op("_TestLateIdentity", inputs=["x: T"], outputs=["y: T"],
                  shape_fn=shape_fns.unchanged, not_differentiable=True)
_MEET = define_op("_TestMeetSquare", inputs=["x: T"], outputs=["y: T"],
                  shape_fn=shape_fns.unchanged, not_differentiable=True)
SLEEP = 0.3
_meeting = threading.Barrier(2, timeout=10)   # passes only if two kernels run at once


@kernel("_TestSlowSquare", expensive=True)
def _slow_square(ctx, x):
    time.sleep(SLEEP)  # releases the GIL, like a large NumPy kernel
    return x * x


@kernel("_TestMeetSquare", expensive=True)
def _meet_square(ctx, x):
    _meeting.wait()   # BrokenBarrierError after 10 s if the other kernel never starts
    return x * x


@kernel("_TestWaitForever")
class _WaitForever:
    """Asynchronous: completes only when the step is cancelled."""

    def __init__(self, ctx):
        pass

    def compute_async(self, ctx, step, inputs, done):
        token = step.register_cancellation(
            lambda err: done(error=tf.errors.CancelledError(None, None, "cancelled")))
        if token is None:
            done(error=tf.errors.CancelledError(None, None, "cancelled"))


@kernel("_TestLateIdentity")
class _LateIdentity:
    """Asynchronous: completes from another thread a little later."""

    def __init__(self, ctx):
        pass

    def compute_async(self, ctx, step, inputs, done):
        threading.Timer(0.05, lambda: done(inputs[0])).start()


def test_independent_expensive_kernels_run_concurrently():
    """Each kernel waits at a two-party barrier, so a step completes only if both run at once
    (no wall-clock bound that a loaded machine could miss)."""
    data = np.full((512, 512), 2.0, np.float32)  # large enough to count as expensive
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [512, 512])
        a = apply_op(_MEET, [x])
        b = apply_op(_MEET, [x + 1.0])
        total = a + b
        with tf.Session() as sess:
            assert sess.run(total, {x: data})[0, 0] == 13.0
            assert sess.run(total, {x: data + 1.0})[0, 0] == 25.0


def test_dependent_expensive_kernels_keep_their_order():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = apply_op(_SLOW, [apply_op(_SLOW, [x])])
        with tf.Session() as sess:
            assert sess.run(y, {x: 2.0}) == 16.0


def test_async_kernel_completes_later():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = apply_op(_LATE, [x]) * 2.0
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])


def _plan_executors(sess):
    return [ex for plan in sess._core._plans.values() for ex in plan.executors]


def test_a_single_async_kernel_is_waited_for_in_straight_line_code():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = apply_op(_LATE, [x]) * 2.0 + 1.0
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [3.0, 5.0])
            assert [ex.uses_dataflow for ex in _plan_executors(sess)] == [False]


def test_an_enqueue_and_dequeue_of_one_step_still_overlap():
    # Two asynchronous nodes: the dequeue (first in topological order) waits for the enqueue
    # of the same step, which only the dataflow executor can run meanwhile.
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(4, tf.float32, shapes=[[]])
        x = tf.placeholder(tf.float32, [])
        dequeued = queue.dequeue()
        with tf.Session() as sess:
            got, _ = sess.run([dequeued + 0.0, queue.enqueue(x)], {x: 7.0},
                              options=tf.RunOptions(timeout_in_ms=5000))
            assert got == 7.0
            assert True in [ex.uses_dataflow for ex in _plan_executors(sess)]


def test_deadline_cancels_a_waiting_step():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = apply_op(_WAIT, [x])
        with tf.Session() as sess:
            start = time.perf_counter()
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(y, {x: 1.0}, options=tf.RunOptions(timeout_in_ms=200))
            assert time.perf_counter() - start < 3.0


def test_kernel_error_names_node_type_device_and_user_line():
    with tf.Graph().as_default():
        params = tf.constant([1.0, 2.0])
        index = tf.placeholder(tf.int32, [])
        picked = tf.gather(params, index, name="pick")  # this line is reported
        line = picked.op.creation_site[1]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(picked, {index: 5})
    message = str(info.value)
    assert "pick" in message and "GatherV2" in message and "CPU:0" in message
    assert f"test_executor.py:{line}" in message
    assert info.value.op is picked.op


def test_results_are_bitwise_identical_run_after_run():
    rng = np.random.RandomState(0)
    data = rng.randn(300, 300).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [300, 300])
        branches = [tf.reduce_sum(tf.matmul(x * float(k), x), axis=0) for k in range(4)]
        out = tf.add_n(branches)
        with tf.Session() as sess:
            first = sess.run(out, {x: data})
            for _ in range(5):
                assert np.array_equal(sess.run(out, {x: data}), first)


def test_large_intermediates_are_released_at_their_last_use():
    import weakref

    seen = []

    class Probe(np.ndarray):
        pass

    probe_def = define_op("_TestProbe", inputs=["x: T"], outputs=["y: T"],
                          shape_fn=shape_fns.unchanged, not_differentiable=True)

    @kernel("_TestProbe")
    def _probe(ctx, x):
        out = np.array(x).view(Probe)
        seen.append(weakref.ref(out))
        return out

    check_def = define_op("_TestCheckReleased", inputs=["x: T"], outputs=["y: T"],
                          shape_fn=shape_fns.unchanged, not_differentiable=True)

    @kernel("_TestCheckReleased")
    def _check(ctx, x):
        return np.asarray(seen[-1]() is None, dtype=x.dtype)

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        big = apply_op(probe_def, [x])
        after = tf.reduce_sum(big)            # last use of `big`
        flag = apply_op(check_def, [after])   # runs after `big` was dropped
        with tf.Session() as sess:
            assert sess.run(flag, {x: np.ones(10, np.float32)}) == 1.0


def _expensive_ops(sess) -> set:
    return {it.node.op for ex in _plan_executors(sess) for it in ex.items if it.expensive}


def test_kernels_that_split_their_own_work_run_inline():
    # A compiled NHWC pooling pass over a large input (and its gradient, fused with ReluGrad
    # or not) and a compiled Adam update of a large variable spread over the intra-op threads
    # themselves: the step keeps them inline, as it does BLAS kernels.
    with tf.Graph().as_default():
        x = tf.ones([8, 64, 64, 8]) * tf.Variable(1.0)
        pooled = tf.nn.max_pool(tf.nn.relu(x), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        plain = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        w = tf.Variable(tf.zeros([1024, 1024]))
        loss = tf.reduce_sum(pooled) + tf.reduce_sum(plain) + tf.reduce_sum(w * w)
        train = tf.train.AdamOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            ops = {it.node.op for ex in _plan_executors(sess) for it in ex.items}
            assert {"MaxPool", "MaxPoolGrad", "_FusedMaxPoolGradReluGrad", "ApplyAdam"} <= ops
            assert not _expensive_ops(sess) & {"MaxPool", "MaxPoolGrad",
                                               "_FusedMaxPoolGradReluGrad", "ApplyAdam"}


@pytest.mark.parametrize("ksize, stride, shape, dtype", [
    (3, 2, [8, 64, 64, 8], tf.float32),      # overlapping windows: the gradient is not compiled
    (2, 2, [8, 64, 64, 8], tf.float16),      # not a dtype of the compiled pass
])
def test_pool_gradients_that_do_not_split_stay_on_the_pool(ksize, stride, shape, dtype):
    with tf.Graph().as_default():
        x = tf.placeholder(dtype, shape)
        y = tf.nn.max_pool(x, [1, ksize, ksize, 1], [1, stride, stride, 1], "VALID")
        grad = tf.gradients(y, x)[0]
        with tf.Session() as sess:
            sess.run(grad, {x: np.ones(shape, dtype.as_numpy_dtype)})
            assert "MaxPoolGrad" in _expensive_ops(sess)


@pytest.mark.parametrize("with_matmul", [False, True])
def test_a_partition_with_a_contraction_on_every_core_runs_everything_inline(with_matmul):
    # On the pool, an elementwise kernel would only take cores from the BLAS threads.
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [512, 512])
        fetches = [tf.square(a)]
        if with_matmul:
            fetches.append(tf.matmul(a, a))
        with tf.Session() as sess:
            sess.run(fetches, {a: np.ones([512, 512], np.float32)})
            assert ("Square" in _expensive_ops(sess)) != with_matmul


_WRITEABLE = define_op("_TestInputWriteable", inputs=["x: T"], outputs=["y: bool"],
                       attrs=[TypeAttr("T")], shape_fn=shape_fns.scalar, is_stateful=True)


@kernel("_TestInputWriteable")
def _input_writeable(ctx, x):
    return np.bool_(x.flags.writeable)


def test_a_constant_is_read_only_to_kernels_and_fetched_as_a_writable_copy():
    """Every step shares a constant's array, so kernels get it read-only; a fetch of it is
    the user's own copy."""
    with tf.Graph().as_default():
        const = tf.constant(np.arange(6, dtype=np.float32))
        seen = apply_op(_WRITEABLE, [const])
        with tf.Session() as sess:
            fetched, writeable = sess.run([const, seen])
            assert not writeable and fetched.flags.writeable


def test_operands_that_do_not_broadcast_fail_in_tensorflows_words():
    """NumPy's "operands could not be broadcast together" becomes TF 2.21's message."""
    with tf.Graph().as_default():
        a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        with tf.Session() as sess:
            for x, y, shapes in (([[1.0, 2.0, 3.0]] * 2, [[1.0, 2.0]], "[2,3] vs. [1,2]"),
                                 ([1.0, 2.0], [1.0, 2.0, 3.0], "[2] vs. [3]")):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=re.escape(f"Incompatible shapes: {shapes}")):
                    sess.run(a * b, {a: x, b: y})
