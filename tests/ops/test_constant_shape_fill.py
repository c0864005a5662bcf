"""tf.constant with a `shape` and Python ints past int64: TensorFlow 2.21's results."""
import numpy as np
import pytest

import tensorweave as tf


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("value, shape, expected", [
    ([1, 2], [2, 2], [[1, 2], [2, 2]]),          # the last value fills the rest (TF1)
    ([], [2], [0.0, 0.0]),                        # no values: zeros
    ([[1, 2], [3, 4]], [5], [1, 2, 3, 4, 4]),
    ([7], [3], [7, 7, 7]),
    ([1, 2, 3, 4], [2, 2], [[1, 2], [3, 4]]),
])
def test_fewer_values_than_the_shape_are_padded_with_the_last(value, shape, expected):
    with tf.Graph().as_default():
        assert _run(tf.constant(value, shape=shape)).tolist() == expected


def test_more_values_than_the_shape_holds_is_an_error():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Too many elements provided. Takes at most 2"):
            tf.constant([1, 2, 3], shape=[2])


def test_a_python_int_past_int64_is_uint64():
    with tf.Graph().as_default():
        c = tf.constant(2**63)
        assert c.dtype == tf.uint64
        assert _run(c) == np.uint64(2**63)
        assert tf.constant(2**62).dtype == tf.int64
