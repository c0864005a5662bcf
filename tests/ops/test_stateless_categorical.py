"""tf.random.stateless_categorical / stateless_multinomial: TensorFlow's exact indices.

The expected values below were captured from TensorFlow 2.21 (tf.compat.v1.random.stateless_*,
CPU, run with intra_op_parallelism_threads=1 and inter_op_parallelism_threads=1); the kernel
reproduces them exactly. With more intra-op threads TF shards the batch and skips Philox blocks
per shard, so its larger draws then differ from these (tensorweave follows the one-thread TF).
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

FLOATS = (tf.float16, tf.float32, tf.float64)

# Logits exact in float16, so each row's expected indices hold for every float dtype.
LOGITS = np.array([[0.0, 1.0, 2.0], [-1.0, 0.5, 0.25]])
# A row with no finite logit (-> num_classes); +inf and NaN count as probability 0, as in TF.
SPECIAL = np.array([[-np.inf, -np.inf, -np.inf, -np.inf], [np.inf, np.nan, 0.0, -np.inf],
                    [1.0, -np.inf, 2.0, 0.5]])
LOGITS64 = np.array([[0.1, -0.3, 2.5, 1.0, -1.0], [3.0, 3.0, -2.0, 0.0, 1.0],
                     [-5.0, 0.0, 0.0, 4.0, 1.5], [0.0, 0.0, 0.0, 0.0, 0.0]])

# From TensorFlow 2.21 (one thread): stateless_categorical(LOGITS, 7, seed=[1, 2]).
TF_BASIC = np.array([[2, 2, 1, 2, 2, 2, 2], [1, 2, 2, 2, 1, 1, 1]], np.int64)
# From TensorFlow 2.21 (one thread): stateless_multinomial(SPECIAL, 6, seed=[7, -9] int64,
# output_dtype=int32).
TF_SPECIAL = np.array([[4, 4, 4, 4, 4, 4], [2, 2, 2, 2, 2, 2], [3, 2, 2, 3, 2, 0]], np.int32)
# From TensorFlow 2.21 (one thread): stateless_categorical(LOGITS64, 5, seed=[11, 12],
# dtype=int32); 5 samples a row, so rows start mid-block in the Philox stream.
TF_FLOAT64 = np.array([[2, 3, 2, 2, 2], [0, 4, 3, 0, 1], [3, 1, 3, 4, 3], [3, 2, 1, 0, 0]],
                      np.int32)


def _const(value):
    return lambda *_: value


CASES = [
    OpCase("categorical", lambda x, n, s: tf.random.stateless_categorical(x, n, s),
           _const(TF_BASIC), [LOGITS, np.array(7), np.array([1, 2])], dtypes=FLOATS,
           fixed_dtypes=(None, tf.int32, tf.int32), rtol=0, atol=0, grad=False),
    OpCase("multinomial_special_logits",
           lambda x, n, s: tf.random.stateless_multinomial(x, n, s, output_dtype=tf.int32),
           _const(TF_SPECIAL), [SPECIAL, np.array(6), np.array([7, -9])], dtypes=FLOATS,
           fixed_dtypes=(None, tf.int32, tf.int64), rtol=0, atol=0, grad=False),
    OpCase("categorical_float64",
           lambda x, n, s: tf.random.stateless_categorical(x, n, s, dtype=tf.int32),
           _const(TF_FLOAT64), [LOGITS64, np.array(5), np.array([11, 12])],
           dtypes=(tf.float64,), fixed_dtypes=(None, tf.int32, tf.int64), rtol=0, atol=0,
           grad=False),
    OpCase("categorical_no_samples", lambda x, n, s: tf.random.stateless_categorical(x, n, s),
           _const(np.zeros((2, 0), np.int64)), [LOGITS, np.array(0), np.array([1, 2])],
           fixed_dtypes=(None, tf.int32, tf.int64), rtol=0, atol=0, grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(tensors, feed=None):
    with tf.Session() as sess:
        return sess.run(tensors, feed)


def test_deterministic_across_runs_and_sessions():
    def build():
        with tf.Graph().as_default() as g:
            seed = tf.placeholder(tf.int64, [2])
            out = tf.random.stateless_categorical(np.zeros((6, 50), np.float32), 40, seed)
        return g, seed, out

    g, seed, out = build()
    with tf.Session(graph=g) as sess:
        first, second = sess.run(out, {seed: [5, 6]}), sess.run(out, {seed: [5, 6]})
        other = sess.run(out, {seed: [5, 7]})
    g2, seed2, out2 = build()
    with tf.Session(graph=g2) as sess:
        fresh = sess.run(out2, {seed2: [5, 6]})
    assert first.tobytes() == second.tobytes() == fresh.tobytes()
    assert not np.array_equal(first, other)


def test_frequencies_follow_softmax():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    with tf.Graph().as_default():
        draws = _run(tf.random.stateless_categorical(np.log([probs, probs[::-1]]), 40_000,
                                                     [3, 4]))
    for row, p in zip(draws, (probs, probs[::-1])):
        np.testing.assert_allclose(np.bincount(row, minlength=4) / row.size, p, atol=0.01)


def test_names_stateless_and_not_differentiable():
    with tf.Graph().as_default():
        logits = tf.constant(LOGITS, tf.float32)
        a = tf.random.stateless_categorical(logits, 3, [1, 2])
        b = tf.random.stateless_multinomial(logits, 3, [1, 2])
        assert a.op.type == b.op.type == "StatelessMultinomial"
        assert a.name == "stateless_categorical/StatelessMultinomial:0"
        assert b.name == "stateless_multinomial/StatelessMultinomial:0"
        assert a.dtype == tf.int64 and a.shape.as_list() == [2, 3]
        assert not a.op.op_def.is_stateful
        assert tf.gradients(a, logits) == [None]


def test_graph_construction_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
            tf.random.stateless_categorical([1.0, 2.0], 3, [1, 2])
        with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
            tf.random.stateless_categorical([[1.0, 2.0]], 3, [1, 2, 3])
        with pytest.raises(ValueError, match="must be non-negative but is -1"):
            tf.random.stateless_categorical([[1.0, 2.0]], -1, [1, 2])
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            tf.random.stateless_categorical([[1.0, 2.0]], [3], [1, 2])
        with pytest.raises(ValueError, match="Accepted dtypes"):
            tf.random.stateless_categorical([[1.0, 2.0]], 3, [1, 2], dtype=tf.float32)


def test_runtime_errors():
    """TF's messages, and TF's order: the seed is checked first."""
    with tf.Graph().as_default():
        logits, n = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        seed = tf.placeholder(tf.int64)
        out = tf.random.stateless_categorical(logits, n, seed)
        with tf.Session() as sess:
            for shape, num, sd, message in (
                    ([3], -2, [1], r"seed must have shape \[2\], not \[1\]"),
                    ([3], 2, [1, 2], r"logits should be a matrix, got shape \[3\]"),
                    ([2, 3], [2], [1, 2], r"num_samples should be a scalar, got shape \[1\]"),
                    ([2, 3], -2, [1, 2], "num_samples should be non-negative, got -2"),
                    ([0, 0], 0, [1, 2], "num_classes should be positive, got 0")):
                with pytest.raises(errors.InvalidArgumentError, match=message):
                    sess.run(out, {logits: np.zeros(shape), n: num, seed: sd})
            assert sess.run(out, {logits: np.zeros([0, 3]), n: 4, seed: [1, 2]}).shape == (0, 4)
