"""Partial shape values as TensorFlow 2.21's ConstantPartialShape reads them: through Shape,
Pack, ConcatV2, integer Casts and StridedSlices, so reshapes get TF's static shapes."""
import pytest

import tensorweave as tf


def _partial():
    p = tf.placeholder(tf.float32, [None, 2, 5])
    return p, tf.shape(p), tf.placeholder(tf.float32, [None])


@pytest.mark.parametrize("target, expected", [
    (lambda s: tf.concat([[4], s[1:]], 0), [4, 2, 5]),
    (lambda s: s[1:], [2, 5]),
    (lambda s: tf.concat([[4], tf.cast(tf.cast(s, tf.int64), tf.int32)[1:]], 0), [4, 2, 5]),
    (lambda s: tf.cast(s, tf.int64), [None, 2, 5]),
    (lambda s: tf.cast(s, tf.int64)[:2], [None, 2]),
    (lambda s: tf.stack([s[1], s[2]]), [2, 5]),
    (lambda s: s[::2], [None, 5]),
])
def test_reshape_reads_partial_shapes(target, expected):
    with tf.Graph().as_default():
        _, s, x = _partial()
        assert tf.reshape(x, target(s)).shape.as_list() == expected


def test_cast_to_a_float_keeps_only_the_length():
    with tf.Graph().as_default():
        _, s, x = _partial()
        shape = tf.cast(tf.cast(s, tf.float32), tf.int32)
        assert tf.reshape(x, shape).shape.as_list() == [None, None, None]


def test_fill_zeros_and_broadcast_to_read_partial_shapes():
    with tf.Graph().as_default():
        _, s, _ = _partial()
        assert tf.fill(s[1:], 0.0).shape.as_list() == [2, 5]
        assert tf.zeros(s[1:]).shape.as_list() == [2, 5]
        assert tf.broadcast_to(1.0, tf.concat([[3], s[1:]], 0)).shape.as_list() == [3, 2, 5]


def test_gather_gradient_static_shapes():
    with tf.Graph().as_default():
        E = tf.Variable(tf.ones([5, 3]), name="E")
        ids = tf.placeholder(tf.int32, [None])
        g = tf.gradients(tf.reduce_sum(tf.nn.embedding_lookup(E, ids) ** 2), E)[0]
        assert (g.values.shape.as_list(), g.indices.shape.as_list()) == ([None, 3], [None])
        assert g.dense_shape.shape.as_list() == [2]
        ids2 = tf.placeholder(tf.int32, [None, 4])
        assert tf.gradients(tf.reduce_sum(tf.gather(E, ids2)), E)[0].values.shape.as_list() \
            == [None, 3]
        p3 = tf.placeholder(tf.float32, [None, 2, 5])
        g3 = tf.gradients(tf.reduce_sum(tf.gather(p3, [0, 1])), p3)[0]
        assert g3.values.shape.as_list() == [2, 2, 5]
        assert tf.convert_to_tensor(g3).shape.as_list() == [None, 2, 5]
        p = tf.placeholder(tf.float32, [None, 2])
        ge = tf.gradients(tf.reduce_sum(tf.nn.embedding_lookup(p, ids)), p)[0]
        assert ge.values.shape.as_list() == [None, 2]
        assert tf.convert_to_tensor(ge).shape.as_list() == [None, 2]
