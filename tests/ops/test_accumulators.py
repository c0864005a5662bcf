"""Accumulators: ResourceConditionalAccumulator (and the ref-handle ConditionalAccumulator,
AccumulatorApplyGradient, AccumulatorTakeGradient, AccumulatorNumAccumulated,
AccumulatorSetGlobalStep), SparseConditionalAccumulator, SparseAccumulatorApplyGradient and
SparseAccumulatorTakeGradient: averaging, stale gradients, global step, asynchronous take.
"""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import accumulator_ops

# Takes that should succeed at once still carry a deadline, so a bug fails instead of hanging.
BOUNDED = tf.RunOptions(timeout_in_ms=5000)


def test_dense_accumulator_graph_matches_tensorflow():
    with tf.Graph().as_default() as g:
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="acc")
        acc.apply_grad([1.0, 2.0], local_step=0)
        take = acc.take_grad(2)
        acc.num_accumulated()
        acc.set_global_step(3)
    types = {op.name: op.type for op in g.get_operations() if op.type != "Const"}
    assert types == {   # TF 2.21 casts even a Python int step (Cast, Cast_1)
        "conditional_accumulator": "ResourceConditionalAccumulator",
        "Cast": "Cast", "Cast_1": "Cast",
        "ResourceAccumulatorApplyGradient": "ResourceAccumulatorApplyGradient",
        "ResourceAccumulatorTakeGradient": "ResourceAccumulatorTakeGradient",
        "conditional_accumulator_NumAccumulated": "ResourceAccumulatorNumAccumulated",
        "ResourceAccumulatorSetGlobalStep": "ResourceAccumulatorSetGlobalStep"}
    assert take.shape.as_list() == [2] and acc.accumulator_ref.dtype == tf.resource
    with pytest.raises(ValueError):
        acc.apply_grad([1.0, 2.0, 3.0])


def test_mean_stale_gradients_and_global_step():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
        step = tf.placeholder(tf.int64, [])
        grad = tf.placeholder(tf.float32, [2])
        apply, take = acc.apply_grad(grad, local_step=step), acc.take_grad(2)
        count, set_step = acc.num_accumulated(), acc.set_global_step(5)
        with tf.Session() as sess:
            sess.run(apply, {grad: [1.0, 2.0], step: 0})
            sess.run(apply, {grad: [3.0, 4.0], step: 0})
            assert sess.run(count) == 2
            np.testing.assert_allclose(sess.run(take, options=BOUNDED), [2.0, 3.0])
            assert sess.run(count) == 0
            sess.run(apply, {grad: [1.0, 1.0], step: 0})   # global step is 1 after the take
            assert sess.run(count) == 0
            sess.run(set_step)
            sess.run(apply, {grad: [1.0, 1.0], step: 4})
            sess.run(apply, {grad: [1.0, 1.0], step: 5})
            assert sess.run(count) == 1
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="num_required must be positive, but was 0"):
                sess.run(acc.take_grad(0))


def test_sum_reduction_and_ref_handle_ops():
    ops = accumulator_ops._REF_OPS
    with tf.Graph().as_default():
        handle = apply_op(ops["create"], [], {"dtype": tf.float64, "shape": [], "reduction_type":
                                              "SUM"}, name="acc")
        assert handle.op.type == "ConditionalAccumulator" and handle.dtype == tf.string_ref
        acc = accumulator_ops.ConditionalAccumulatorBase(tf.float64, [], handle)
        apply = apply_op(ops["apply"], [handle, np.int64(0), np.float64(1.5)])
        take = apply_op(ops["take"], [handle, 2], {"dtype": tf.float64})
        with tf.Session() as sess:
            sess.run(apply)
            sess.run(apply)
            assert sess.run(acc.num_accumulated()) == 2
            assert sess.run(take, options=BOUNDED) == 3.0
            sess.run(acc.set_global_step(9))
            sess.run(apply)
            assert sess.run(acc.num_accumulated()) == 0
    assert [ops[k].name for k in ("num", "set_step")] == ["AccumulatorNumAccumulated",
                                                          "AccumulatorSetGlobalStep"]


def test_take_grad_waits_asynchronously_and_is_cancellable():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[])
        apply, take = acc.apply_grad(2.0, local_step=0), acc.take_grad(2)
        with tf.Session() as sess:
            got = []
            taker = threading.Thread(
                target=lambda: got.append(sess.run(take, options=BOUNDED)), daemon=True)
            taker.start()
            time.sleep(0.2)
            assert taker.is_alive() and not got
            sess.run(apply)
            sess.run(apply)
            taker.join(10)
            assert got == [2.0]
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(take, options=tf.RunOptions(timeout_in_ms=50))


def test_sparse_accumulator_averages_rows_per_index():
    with tf.Graph().as_default() as g:
        acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 2])
        first = acc.apply_grad([0], [[1.0, 1.0]], grad_shape=[3, 2], local_step=0)
        second = acc.apply_indexed_slices_grad(
            tf.IndexedSlices(tf.constant([[1.0, 1.0], [3.0, 3.0]]),
                             tf.constant([2, 0], tf.int64), tf.constant([3, 2], tf.int64)))
        indices, values, shape = acc.take_grad(2)
        later = acc.apply_grad([1], [[4.0, 4.0]], grad_shape=[3, 2], local_step=1)
        slices = acc.take_indexed_slices_grad(1)
    assert {op.type for op in g.get_operations()} >= {
        "SparseConditionalAccumulator", "SparseAccumulatorApplyGradient",
        "SparseAccumulatorTakeGradient"}
    with tf.Session(graph=g) as sess:
        sess.run(first)
        sess.run(second)
        i, v, s = sess.run([indices, values, shape], options=BOUNDED)
        assert i.tolist() == [0, 2] and s.tolist() == [3, 2]
        np.testing.assert_allclose(v, [[2.0, 2.0], [1.0, 1.0]])
        sess.run(first)   # stale: the take advanced the global step to 1
        sess.run(later)
        got_indices, got_values = sess.run([slices.indices, slices.values], options=BOUNDED)
        assert got_indices.tolist() == [1] and got_values.tolist() == [[4.0, 4.0]]


def test_int32_steps_indices_and_shapes_are_cast_and_shape_is_a_prefix():
    with tf.Graph().as_default():
        dense = tf.ConditionalAccumulator(tf.float32, [])
        ops = [dense.apply_grad(1.0, local_step=tf.constant(0)),
               dense.set_global_step(tf.constant(0))]
        sparse = tf.SparseConditionalAccumulator(tf.float32, shape=())
        apply = sparse.apply_grad(tf.constant([1]), tf.constant([[1.0]]), tf.constant([2, 1]))
        ranked = tf.SparseConditionalAccumulator(tf.float32, shape=[3, None])
        wrong = ranked.apply_grad(tf.constant([1]), tf.constant([[1.0]]), tf.constant([2, 1]))
        taken = sparse.take_indexed_slices_grad(1)
        with tf.Session() as sess:
            sess.run(ops)
            sess.run(apply)
            result = sess.run(taken)
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="expected shape dim 0 to be 3, got 2"):
                sess.run(wrong)
    assert result.indices.tolist() == [1] and result.dense_shape.tolist() == [2, 1]
