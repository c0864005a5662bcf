"""gather_nd with batch_dims and Range's fed 1-element vectors, as TensorFlow 2.21 computes them
(`tf.compat.v1`, graph mode). Expected values are TF 2.21's printed outputs."""
import numpy as np
import pytest

import tensorweave as tf

_P = np.arange(24).reshape(2, 3, 4)


def _run(t, feed=None):
    with tf.Session() as s:
        return s.run(t, feed_dict=feed)


@pytest.mark.parametrize("indices, batch_dims, expected", [
    ([[[0, 1]], [[2, 3]]], 1, [[1], [23]]),
    ([[[0], [2]], [[1], [1]]], 1,
     [[[0, 1, 2, 3], [8, 9, 10, 11]], [[16, 17, 18, 19], [16, 17, 18, 19]]]),
    ([[[1], [3], [0]], [[0], [1], [2]]], 2, [[1, 7, 8], [12, 17, 22]]),
    ([[[[0, 1], [1, 2]]], [[[2, 3], [0, 0]]]], 1, [[[1, 6]], [[23, 12]]]),
    (np.zeros((2, 3, 0), np.int32), 2, _P),
])
def test_gather_nd_batch_dims_values(indices, batch_dims, expected):
    with tf.Graph().as_default():
        out = tf.gather_nd(tf.constant(_P), indices, batch_dims=batch_dims)
        expected = np.asarray(expected)
        assert out.shape.as_list() == list(expected.shape)
        value = _run(out)
        assert value.dtype == np.int64
        np.testing.assert_array_equal(value, expected)


def test_gather_nd_batch_dims_int64_indices_and_tensor_batch_dims():
    with tf.Graph().as_default():
        p = tf.constant(_P)
        by_int64 = tf.gather_nd(p, tf.constant([[1, 1], [0, 0]], tf.int64), batch_dims=1)
        by_tensor = tf.gather_nd(p, [[1], [0]], batch_dims=tf.constant(1))
        a, b = _run([by_int64, by_tensor])
        np.testing.assert_array_equal(a, [5, 12])
        np.testing.assert_array_equal(b, [[4, 5, 6, 7], [12, 13, 14, 15]])


def test_gather_nd_batch_dims_unknown_shapes_and_static_shape():
    with tf.Graph().as_default():
        known = tf.gather_nd(tf.placeholder(tf.float32, [5, 3, 4]),
                             tf.placeholder(tf.int32, [5, 7, 1]), batch_dims=1)
        assert known.shape.as_list() == [5, 7, 4]
        params = tf.placeholder(tf.int32, [None, 3])
        indices = tf.placeholder(tf.int32, [None, None, 1])
        out = tf.gather_nd(params, indices, batch_dims=1)
        value = _run(out, {params: np.arange(6).reshape(2, 3),
                           indices: [[[2], [0]], [[1], [1]]]})
        np.testing.assert_array_equal(value, [[2, 0], [4, 4]])


def test_gather_nd_batch_dims_empty_batch():
    with tf.Graph().as_default():
        out = tf.gather_nd(tf.constant(np.zeros((0, 3))), tf.constant(np.zeros((0, 1), np.int32)),
                           batch_dims=1)
        value = _run(out)
        assert value.shape == (0,) and value.dtype == np.float64


def test_gather_nd_batch_dims_gradient():
    with tf.Graph().as_default():
        p = tf.constant(np.arange(24.).reshape(2, 3, 4))
        y = tf.gather_nd(p, [[[0, 1]], [[2, 3]]], batch_dims=1)
        grad = _run(tf.gradients(tf.reduce_sum(y * 2.), p)[0])
        expected = np.zeros((2, 3, 4))
        expected[0, 0, 1] = expected[1, 2, 3] = 2.
        np.testing.assert_array_equal(grad, expected)


@pytest.mark.parametrize("indices, batch_dims, error", [
    ([[0]], -1, ValueError),                 # negative batch_dims
    ([[0]], 2, ValueError),                  # not below rank(indices)
    ([[0], [0], [0]], 1, ValueError),        # batch of 3 against params' 2
])
def test_gather_nd_batch_dims_static_errors(indices, batch_dims, error):
    with tf.Graph().as_default():
        with pytest.raises(error):
            tf.gather_nd(tf.constant(_P), indices, batch_dims=batch_dims)


def test_gather_nd_batch_dims_out_of_range_index():
    with tf.Graph().as_default():
        out = tf.gather_nd(tf.constant(_P), [[5], [0]], batch_dims=1)
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(out)


def test_range_takes_fed_one_element_vectors():
    """TF's Range kernel accepts a [1]-shaped start/limit/delta (its shape function does not)."""
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, None)
        np.testing.assert_array_equal(_run(tf.range(i), {i: [3]}), [0, 1, 2])
        np.testing.assert_array_equal(_run(tf.range(i, 5), {i: [3]}), [3, 4])
        delta = tf.raw_ops.Range(start=tf.constant(0), limit=tf.constant(5), delta=i)
        np.testing.assert_array_equal(_run(delta, {i: [2]}), [0, 2, 4])
        for bad in ([3, 4], [[3]]):
            with pytest.raises(tf.errors.InvalidArgumentError):
                _run(tf.range(i), {i: bad})
        f = tf.placeholder(tf.float32, None)
        with pytest.raises(tf.errors.InvalidArgumentError):   # LinSpace stays strict
            _run(tf.raw_ops.LinSpace(start=f, stop=tf.constant(1.), num=tf.constant(3)),
                 {f: [0.]})
