"""tf.nn.dropout / tf.layers.dropout as TensorFlow 2.21 builds them: SelectV2(U >= rate,
x * 1/(1 - rate), 0), so dropped inf, NaN and negative entries are +0.0. Expected values are
TF 2.21's (float32 bit patterns) under tf.set_random_seed(1) and op seed 2."""
import numpy as np
import pytest

import tensorweave as tf

_X = np.array([np.inf, -np.inf, np.nan, -1.0, 1.0, 3.0, -0.0, 0.1, 1e30, -7.5] * 3, np.float32)

# rate 0.3 (keep_prob 0.7) with tf.set_random_seed(1), seed=2: TF 2.21's output.
_RATE_03 = ("7f800000 ff800000 00000000 00000000 3fb6db6e 00000000 80000000 00000000 71903fb5 "
            "00000000 7f800000 00000000 00000000 bfb6db6e 3fb6db6e 40892492 80000000 3e124925 "
            "71903fb5 c12b6db7 00000000 ff800000 7fc00000 bfb6db6e 00000000 40892492 80000000 "
            "3e124925 71903fb5 c12b6db7").split()
_RATE_05 = ("00000000 ff800000 00000000 00000000 00000000 00000000 80000000 00000000 71c9f2ca "
            "00000000 00000000 00000000 00000000 00000000 40000000 40c00000 80000000 00000000 "
            "71c9f2ca c1700000 00000000 ff800000 7fc00000 c0000000 00000000 40c00000 80000000 "
            "00000000 71c9f2ca c1700000").split()

_SCALAR_RATE_OPS = ["Const", "Mul", "Const", "RandomUniform", "Const", "GreaterEqual", "Const",
                    "SelectV2"]
_TENSOR_RATE_OPS = ["Const", "Sub", "RealDiv", "Const", "RandomUniform", "GreaterEqual",
                    "Const", "SelectV2"]


def _bits(a):
    return [format(v, "08x") for v in np.asarray(a, np.float32).ravel().view(np.uint32)]


def _dropout_ops(graph, scope="dropout/"):
    return [op.type for op in graph.get_operations() if op.name.startswith(scope)]


@pytest.mark.parametrize("build, expected, ops", [
    (lambda x: tf.nn.dropout(x, rate=0.3, seed=2), _RATE_03, _SCALAR_RATE_OPS),
    (lambda x: tf.nn.dropout(x, rate=0.5, seed=2), _RATE_05, _SCALAR_RATE_OPS),
    (lambda x: tf.nn.dropout(x, keep_prob=0.7, seed=2), _RATE_03, _SCALAR_RATE_OPS),
    (lambda x: tf.nn.dropout(x, keep_prob=tf.constant(0.7), seed=2), _RATE_03,
     _TENSOR_RATE_OPS),
])
def test_dropped_entries_are_positive_zero(build, expected, ops):
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(1)
        y = build(tf.constant(_X))
        assert y.op.name == "dropout/SelectV2" and y.shape == (30,)
        assert _dropout_ops(graph) == ops
        with tf.Session() as sess:
            assert _bits(sess.run(y)) == expected


def test_rate_placeholder_and_layers_dropout_match():
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(1)
        x = tf.constant(_X)
        rate = tf.placeholder(tf.float32, [])
        y = tf.nn.dropout(x, rate=rate, seed=2)
        assert _dropout_ops(graph) == _TENSOR_RATE_OPS
        with tf.Session() as sess:
            assert _bits(sess.run(y, {rate: 0.3})) == _RATE_03
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        y = tf.layers.dropout(tf.constant(_X), 0.3, seed=2, training=True)
        assert y.op.name == "dropout/dropout/SelectV2"
        with tf.Session() as sess:
            assert _bits(sess.run(y)) == _RATE_03


def test_keep_prob_tensor_of_one_still_builds_the_graph():
    with tf.Graph().as_default() as graph:
        x = tf.constant(_X)
        y = tf.nn.dropout(x, keep_prob=tf.constant(1.0), seed=2)
        # TF: `1. - keep_prob` outside the scope ("sub"), then the tensor-rate graph.
        assert [op.name for op in graph.get_operations()][2:5] == ["sub/x", "sub", "dropout/Const"]
        assert y.op.type == "SelectV2"
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), _X)
        assert tf.nn.dropout(x, keep_prob=1.0) is x


def test_noise_shape_drops_whole_rows_to_zero():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        y = tf.nn.dropout(tf.reshape(tf.constant(_X), [3, 10]), rate=0.3, noise_shape=[3, 1],
                          seed=2)
        with tf.Session() as sess:
            out = sess.run(y)
    assert _bits(out[2]) == ["00000000"] * 10
    assert _bits(out[0]) == ("7f800000 ff800000 7fc00000 bfb6db6e 3fb6db6e 40892492 80000000 "
                             "3e124925 71903fb5 c12b6db7").split()


def test_float64_dropout_values():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        y = tf.nn.dropout(tf.cast(tf.constant(_X), tf.float64), rate=0.3, seed=2)
        with tf.Session() as sess:
            out = sess.run(y)
    assert [v.hex() for v in out[:5].tolist()] == ["0x0.0p+0", "-inf", "0x0.0p+0", "0x0.0p+0",
                                                   "0x1.6db6db6db6db7p+0"]
    assert np.signbit(out[[0, 2, 3]]).tolist() == [False, False, False]


def test_rate_of_another_float_type_is_rejected():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="`x.dtype` must be compatible with `rate.dtype`"):
            tf.nn.dropout(tf.constant(_X), rate=tf.constant(0.3, tf.float64), seed=2)
