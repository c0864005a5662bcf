"""Bucketize against NumPy and the values TensorFlow 2.21 gives (NaN past the last bucket)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.bucketize_ops import bucketize
from tensorweave.testing.op_case import OpCase, case_tests

BOUNDARIES = [-0.5, 0.0, 1.5]
CASES = [
    OpCase("bucketize", lambda x: bucketize(x, BOUNDARIES),
           lambda x: np.searchsorted(BOUNDARIES, x, side="right").astype(np.int32),
           [np.array([[-1.0, -0.5, 0.2], [1.5, 7.0, 0.0]])],
           dtypes=(tf.float32, tf.float64), grad=False),
    OpCase("bucketize_int", lambda x: bucketize(x, [5, 7.5]),
           lambda x: np.searchsorted([5, 7.5], x, side="right").astype(np.int32),
           [np.array([[1, 5], [7, 10]])], dtypes=(tf.int32, tf.int64), grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def test_tensorflows_values_and_unsorted_boundaries():
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant([-1.0, 18.0, 17.9, 30.0, 50.0, 99.0, np.nan, np.inf])
        np.testing.assert_array_equal(sess.run(bucketize(x, [18, 30, 50])),
                                      [0, 1, 0, 2, 3, 3, 3, 3])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Expected sorted boundaries"):
            sess.run(bucketize([1.0], [3.0, 1.0]))
