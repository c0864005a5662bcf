"""Stateless random ops: TensorFlow's exact values, determinism, distributions and errors.

The expected values below came from TensorFlow 2.21 (tf.compat.v1.random.stateless_*, run on
CPU); the kernels reproduce them bit for bit, so the rows compare with zero tolerance.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

SHAPE, SEED = np.array([5]), np.array([1, 2])

# From TensorFlow 2.21, seed [1, 2], shape [5].
TF_UNIFORM = np.array([0.8440604209899902, 0.19204533100128174, 0.9962232112884521,
                       0.16038739681243896, 0.27199018001556396], np.float32)
TF_NORMAL = np.array([0.544110119342804, 0.20738030970096588, 0.0735643208026886,
                      0.04643455147743225, -1.301589846611023], np.float32)
TF_TRUNCATED = np.array([0.544110119342804, 0.20738030970096588, 0.0735643208026886,
                         0.04643455147743225, 0.16820591688156128], np.float32)
TF_INT32 = np.array([-10, -1, 4, 9, -3], np.int32)            # minval -10, maxval 10
# From TensorFlow 2.21, seed [11, 12], shape [2, 3], minval -1.5, maxval 1.0, float64.
TF_UNIFORM64 = np.array([[-1.093026868554953, 0.9123460498217364, -1.082521035316972],
                         [0.1311977293860629, -0.8028801538120681, -1.352237527130625]])
# From TensorFlow 2.21, seed [7, -9] (int64), shape [9], bfloat16 (exact in float32).
TF_NORMAL_BF16 = np.array([1.25, -0.81640625, -1.0625, -0.91796875, 0.7734375, -1.453125,
                           1.3203125, -0.765625, -0.51953125], np.float32)
TF_FULL_INT64 = np.array([-6256698534328148402, 2761130559679747117, 6464374128989234296,
                          -5572437093501105398, -7000528182660162761], np.int64)


def _const(value):
    return lambda *_: value


def _row(name, build, expected, inputs=(SHAPE, SEED)):
    return OpCase(name, build, _const(expected), list(inputs), dtypes=(tf.int32, tf.int64),
                  rtol=0, atol=0, grad=False)


CASES = [
    _row("uniform", lambda s, k: tf.random.stateless_uniform(s, k), TF_UNIFORM),
    _row("normal", lambda s, k: tf.random.stateless_normal(s, k), TF_NORMAL),
    _row("truncated_normal", lambda s, k: tf.random.stateless_truncated_normal(s, k),
         TF_TRUNCATED),
    _row("uniform_int32", lambda s, k: tf.random.stateless_uniform(
        s, k, minval=-10, maxval=10, dtype=tf.int32), TF_INT32),
    _row("uniform_float64_range", lambda s, k: tf.random.stateless_uniform(
        s, k, minval=-1.5, maxval=1.0, dtype=tf.float64), TF_UNIFORM64,
        (np.array([2, 3]), np.array([11, 12]))),
    _row("normal_bfloat16", lambda s, k: tf.random.stateless_normal(s, k, dtype=tf.bfloat16),
         TF_NORMAL_BF16, (np.array([9]), np.array([7, -9]))),
    _row("uniform_full_int64", lambda s, k: tf.random.stateless_uniform(
        s, k, minval=None, maxval=None, dtype=tf.int64), TF_FULL_INT64,
        (SHAPE, np.array([7, -9]))),
]

test_forward, test_shapes = case_tests(CASES)


def _run(tensors, feed=None):
    with tf.Session() as sess:
        return sess.run(tensors, feed)


def test_bits_equal_tensorflow():
    """Bitwise (not just within tolerance): the float32 values are TF's exact patterns."""
    with tf.Graph().as_default():
        got = _run([tf.random.stateless_uniform([5], [1, 2]),
                    tf.random.stateless_normal([5], [1, 2]),
                    tf.random.stateless_truncated_normal([5], [1, 2])])
    for value, expected in zip(got, (TF_UNIFORM, TF_NORMAL, TF_TRUNCATED)):
        assert value.dtype == np.float32
        assert value.tobytes() == expected.tobytes()


def test_prefix_and_seed_dtype_independent():
    """A longer draw starts with the shorter one (TF fills groups in counter order, odd sizes
    included); an int32 and an int64 seed of the same values draw the same numbers."""
    with tf.Graph().as_default():
        long_ = tf.random.stateless_truncated_normal([3, 7], tf.constant([1, 2], tf.int64))
        short = tf.random.stateless_truncated_normal([5], tf.constant([1, 2], tf.int32))
        a, b = _run([long_, short])
    np.testing.assert_array_equal(a.reshape(-1)[:5], b)
    np.testing.assert_array_equal(b, TF_TRUNCATED)


def test_deterministic_across_runs_and_sessions():
    def build():
        with tf.Graph().as_default() as g:
            seed = tf.placeholder(tf.int64, [2])
            outs = [tf.random.stateless_uniform([33], seed, minval=-4, maxval=9, dtype=tf.int64),
                    tf.random.stateless_normal([33], seed, dtype=tf.float64),
                    tf.random.stateless_truncated_normal([33], seed, dtype=tf.float16)]
        return g, seed, outs

    g, seed, outs = build()
    with tf.Session(graph=g) as sess:
        first = sess.run(outs, {seed: [5, 6]})
        second = sess.run(outs, {seed: [5, 6]})
        other = sess.run(outs, {seed: [5, 7]})
    g2, seed2, outs2 = build()
    with tf.Session(graph=g2) as sess:
        fresh = sess.run(outs2, {seed2: [5, 6]})
    for a, b, c, d in zip(first, second, fresh, other):
        assert a.tobytes() == b.tobytes() == c.tobytes()
        assert not np.array_equal(a, d)


def test_ops_are_stateless_and_not_differentiable():
    with tf.Graph().as_default():
        x = tf.random.stateless_normal([3], [1, 2])
        op = x.op.inputs[0].op.inputs[0].op
        assert op.type == "StatelessRandomNormal"
        assert not op.op_def.is_stateful
        assert tf.gradients(x, op.inputs[1]) == [None]


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_distributions(dtype):
    n = 200_001
    with tf.Graph().as_default():
        u, z, t = _run([tf.random.stateless_uniform([n], [3, 4], -2.0, 3.0, dtype=dtype),
                        tf.random.stateless_normal([n], [3, 4], dtype=dtype),
                        tf.random.stateless_truncated_normal([n], [3, 4], dtype=dtype)])
    for v in (u, z, t):
        assert v.dtype == dtype.as_numpy_dtype and v.shape == (n,)
    u, z, t = (v.astype(np.float64) for v in (u, z, t))
    assert u.min() >= -2.0 and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.02
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01
    assert np.abs(t).max() <= 2.0 and abs(t.mean()) < 0.01
    assert abs(t.std() - 0.8796) < 0.01     # the standard deviation of N(0,1) cut at +-2


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_uniform_int_covers_range(dtype):
    with tf.Graph().as_default():
        v = _run(tf.random.stateless_uniform([10_001], [9, 9], minval=-3, maxval=4,
                                             dtype=dtype))
    assert v.dtype == dtype.as_numpy_dtype
    counts = np.bincount(v - -3, minlength=7)
    assert counts.size == 7 and counts.min() > 1300


def test_shape_inference():
    with tf.Graph().as_default():
        assert tf.random.stateless_uniform([2, 3], [1, 2]).shape.as_list() == [2, 3]
        dim = tf.placeholder(tf.int32, [])
        partial = tf.random.stateless_normal(tf.stack([3, dim]), [1, 2])
        assert partial.shape.as_list() == [3, None]
        unknown = tf.random.stateless_truncated_normal(tf.placeholder(tf.int32, [None]),
                                                       tf.placeholder(tf.int64, None))
        assert unknown.shape.ndims is None


def test_graph_construction_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
            tf.random.stateless_uniform([2], [1, 2, 3])
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
            tf.random.stateless_normal([2], 5)
        with pytest.raises(ValueError, match="must be both None or not None"):
            tf.random.stateless_uniform([2], [1, 2], dtype=tf.int32)
        with pytest.raises(ValueError, match="Accepted dtypes"):
            tf.random.stateless_uniform([2], [1, 2], dtype=tf.bool)
        with pytest.raises(ValueError, match="minval must be a scalar"):
            tf.random.stateless_uniform([2], [1, 2], minval=[1, 2], maxval=5, dtype=tf.int32)
        with pytest.raises(TypeError):
            tf.random.stateless_normal([2], [1.0, 2.0])


def test_runtime_errors():
    with tf.Graph().as_default():
        shape, seed = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int64, None)
        u = tf.random.stateless_uniform(shape, seed)
        lo = tf.placeholder(tf.int32, [])
        ints = tf.random.stateless_uniform(shape, [1, 2], minval=lo, maxval=3, dtype=tf.int32)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"seed must have shape \[2\], "
                               r"not \[3\]"):
                sess.run(u, {shape: [2], seed: [1, 2, 3]})
            with pytest.raises(errors.InvalidArgumentError, match="must be >= 0"):
                sess.run(u, {shape: [-2], seed: [1, 2]})
            with pytest.raises(errors.InvalidArgumentError, match="Need minval < maxval, got 5 "
                               ">= 3"):
                sess.run(ints, {shape: [3], lo: 5})
            with pytest.raises(errors.InvalidArgumentError, match="got 3 >= 3"):
                sess.run(ints, {shape: [3], lo: 3})
            # Nothing to draw: an empty range is fine, as in TF.
            assert sess.run(ints, {shape: [0], lo: 5}).shape == (0,)
