"""tf.nn.experimental.stateless_dropout and general_dropout against TensorFlow 2.21's masks for
the same seeds (values recorded from TF running the same program)."""
import numpy as np
import pytest

import tensorweave as tf

X = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
E = tf.nn.experimental


def _run(make):
    with tf.Graph().as_default():
        out = make(tf.constant(X))
        with tf.Session() as sess:
            return sess.run(out).tolist()


HALF = [[2.0, 0.0, 6.0, 0.0], [0.0, 12.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]


@pytest.mark.parametrize("make, expected", [
    (lambda x: E.stateless_dropout(x, 0.5, seed=[1, 2]), HALF),
    (lambda x: E.stateless_dropout(x, 0.5, seed=[1, 2], rng_alg="philox"), HALF),
    (lambda x: E.stateless_dropout(x, 0.5, seed=[1, 2], rng_alg=3), HALF),
    (lambda x: E.general_dropout(x, 0.5, lambda shape, dtype: tf.random.stateless_uniform(
        shape, [1, 2], dtype=dtype)), HALF),
    (lambda x: E.stateless_dropout(x, 0.25, seed=[3, 4], noise_shape=[3, 1]),
     [[0.0] * 4, [20 / 3, 8.0, 28 / 3, 32 / 3], [0.0] * 4]),
    (lambda x: E.stateless_dropout(x, 0.0, seed=[1, 2]), X.tolist()),
])
def test_masks_are_tensorflows(make, expected):
    np.testing.assert_allclose(_run(make), expected, rtol=1e-6)


def test_graph_and_a_tensor_rate():
    with tf.Graph().as_default():
        x = tf.constant(X)
        assert E.stateless_dropout(x, 0.0, seed=[1, 2]) is x
        rate = tf.placeholder(tf.float32, [])
        out = E.stateless_dropout(x, rate, seed=[1, 2])
        assert out.op.name == "stateless_dropout_1/SelectV2" and out.shape.as_list() == [3, 4]
        assert "RealDiv" in {op.type for op in tf.get_default_graph().get_operations()}
        with tf.Session() as sess:
            assert sess.run(out, {rate: 0.5})[1].tolist() == [0.0, 12.0, 0.0, 0.0]


@pytest.mark.parametrize("kwargs, message", [
    ({"rate": 1.0}, r"in the range \[0, 1\). Received: rate=1.0"),
    ({"rate": -0.1}, r"in the range \[0, 1\). Received: rate=-0.1"),
    ({"rate": 0.5, "rng_alg": "bogus"}, "Argument `alg` got unsupported value bogus"),
    ({"rate": 0.5, "rng_alg": "threefry"}, "no CPU kernel"),
])
def test_argument_errors(kwargs, message):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
        E.stateless_dropout(tf.constant(X), seed=[1, 2], **kwargs)


def test_integer_input_is_refused_as_tensorflow_refuses_it():
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match="Received: x_dtype=<dtype: 'int32'>"):
        E.stateless_dropout(tf.constant([1, 2]), 0.5, seed=[1, 2])
