"""Iterator shapes: one-shot iterators' batches get the size their pipeline guarantees.

Structurally, the gradient's shape arithmetic folds away when `batch` follows an endless
`repeat`; numerically, steps agree exactly with every pass off; and pipelines whose last batch
may be short (finite input, `take` between repeat and batch, drop nothing) keep `None`, so a
short batch still computes right.
"""
import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.passes.arithmetic import simplify_arithmetic
from tensorweave.runtime.passes.iterator_shapes import refine_iterator_shapes

D = tf.data.Dataset
FEATS = np.random.RandomState(0).uniform(-1, 1, (10, 3)).astype(np.float32)
LABELS = np.arange(10, dtype=np.float32)
SHAPE_MATH = {"Shape", "BroadcastGradientArgs", "Size", "Tile", "FloorDiv"}


def regression(dataset):
    """A linear model's loss and its gradient on batches of `dataset` (features, label)."""
    x, y = tf.data.make_one_shot_iterator(dataset).get_next()
    w = tf.Variable(np.ones((3, 1), np.float32))
    pred = tf.matmul(x, w) + 0.5
    loss = tf.reduce_mean(tf.square(tf.squeeze(pred, 1) - y))
    return loss, tf.gradients(loss, w)[0], tf.shape(x)


def refined_shape(pt, dataset):
    loss, grad, _ = regression(dataset)
    graph, opts = pt.apply(refine_iterator_shapes, [loss, grad])
    get_next = next(n for n in graph if n.op == "IteratorGetNext")
    return get_next.output_shapes[0].as_list(), collections.Counter(n.op for n in graph), opts


def test_endless_batches_get_their_size_and_the_shape_math_folds(pt):
    shape, ops, opts = refined_shape(
        pt, D.from_tensor_slices((FEATS, LABELS)).shuffle(4, seed=1).repeat().batch(4)
        .prefetch(1))
    assert shape == [4, 3]
    assert not SHAPE_MATH & set(ops) and "refine_shape" in opts.log.kinds()


@pytest.mark.parametrize("make", [
    lambda: D.from_tensor_slices((FEATS, LABELS)).batch(4),
    lambda: D.from_tensor_slices((FEATS, LABELS)).repeat(2).batch(4),
    lambda: D.from_tensor_slices((FEATS, LABELS)).repeat().take(10).batch(4),
    lambda: D.from_tensor_slices((FEATS, LABELS)).repeat().batch(4).map(
        lambda x, y: (x[:2], y[:2])),
], ids=["finite", "repeat-twice", "take-before-batch", "map-after-batch"])
def test_batches_that_may_be_short_stay_unknown(pt, make):
    shape, ops, _ = refined_shape(pt, make())
    assert shape == [None, 3] and SHAPE_MATH & set(ops)


def steps(dataset, n, cfg):
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        fetches = regression(dataset())
        with tf.Session(config=cfg) as sess:
            sess.run(tf.global_variables_initializer())
            return [sess.run(fetches) for _ in range(n)]


@pytest.mark.parametrize("make, n", [
    (lambda: D.from_tensor_slices((FEATS, LABELS)).shuffle(4, seed=1).repeat().batch(4), 6),
    (lambda: D.from_tensor_slices((FEATS, LABELS)).batch(4), 3),
    (lambda: D.from_tensor_slices((FEATS, LABELS)).repeat().take(10).batch(4), 3),
])
def test_steps_agree_exactly_with_every_pass_off(pt, make, n):
    optimized, plain = steps(make, n, None), steps(make, n, pt.OFF)
    assert [list(s[2]) for s in optimized] == [list(s[2]) for s in plain]
    for a, b in zip(optimized, plain):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    assert optimized[-1][2][0] == (4 if n == 6 else 2)   # the finite ones end short


def test_reductions_over_no_axes_disappear(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.identity(tf.reduce_sum(x, axis=[]) + tf.reduce_max(x, axis=[]), name="y")
    graph, opts = pt.apply(simplify_arithmetic, y, feeds=[x])
    assert "Sum" not in pt.ops(graph) and "Max" not in pt.ops(graph)
    assert opts.log.kinds().count("reduce_no_axes") == 2
    pt.compare(y, {x: np.arange(6, dtype=np.float32).reshape(2, 3)})
