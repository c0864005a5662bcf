"""Constants and placeholders: dtype inference, shapes, feeding, placeholder_with_default."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.broadcast_grad_ops import broadcast_gradient_args, reduction_axes
from tensorweave.testing.op_case import OpCase, case_tests


def _axes(a, b):
    ra, rb = reduction_axes(list(a), list(b))
    return [np.array(ra, np.int32), np.array(rb, np.int32)]


CASES = [
    OpCase("placeholder_with_default", lambda x: tf.placeholder_with_default(x, x.shape),
           lambda x: x, [lambda rng, dt: rng.randn(2, 3).astype(dt)],
           dtypes=(tf.float32, tf.int64)),
    OpCase("broadcast_gradient_args", lambda a, b: broadcast_gradient_args(a, b), _axes,
           [np.array([3, 1, 5]), np.array([4, 5])], dtypes=(tf.int32,), grad=False),
]


test_forward, test_shapes = case_tests(CASES)


def test_constant_dtype_inference_and_errors():
    with tf.Graph().as_default():
        assert tf.constant([[1, 2], [3, 4]]).dtype == tf.int32
        assert tf.constant([1, 2.5]).dtype == tf.float32
        assert tf.constant(2 ** 40).dtype == tf.int64
        assert tf.constant(np.float64(1.0)).dtype == tf.float64
        assert tf.constant(["a", "bc"]).dtype == tf.string
        assert tf.constant(0.5, shape=[2, 3]).shape.as_list() == [2, 3]
        with pytest.raises(TypeError):
            tf.constant(1.5, dtype=tf.int32)
        with pytest.raises(TypeError):
            tf.constant(300, dtype=tf.uint8)
        with pytest.raises(ValueError):
            tf.constant([[1, 2], [3]])


def test_placeholder_feeding_and_missing_feed():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")  # a Placeholder op
        assert x.op.type == "Placeholder" and x.shape.as_list() == [None, 2]
        y = x * 2.0
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {x: [[1, 2]]}), [[2, 4]])
            with pytest.raises(tf.errors.InvalidArgumentError, match="x"):
                sess.run(y)


def test_placeholder_with_default_shape_is_checked_and_feed_overrides():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"^Dimension 0 in both shapes must be equal, but are "
                           r"2 and 3. Shapes are \[2\] and \[3\]. for '\{\{node "
                           r"PlaceholderWithDefault\}\}"):
            tf.placeholder_with_default([1.0, 2.0], shape=[3])
        with pytest.raises(ValueError, match="^Shapes must be equal rank, but are 1 and 2 for"):
            tf.placeholder_with_default([1.0, 2.0], shape=[None, 2])
        p = tf.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[None])
        total = tf.reduce_sum(p)
        with tf.Session() as sess:
            assert sess.run(total) == 3.0
            assert sess.run(total, {p: [1.0, 1.0, 1.0]}) == 3.0


def test_a_constant_holds_the_value_it_was_made_from():
    """Changing the NumPy array afterwards changes neither the constant nor a variable's initial
    value built from it (TensorFlow copies the value into the graph's TensorProto)."""
    values = np.ones((2, 3), np.float32)
    with tf.Graph().as_default():
        c = tf.constant(values)
        reshaped = tf.constant(values[0], shape=[3])
        v = tf.Variable(values)
        values[:] = 7
        with tf.Session() as sess:
            sess.run(v.initializer)
            got_c, got_reshaped, got_v = sess.run([c, reshaped, v])
    np.testing.assert_array_equal(got_c, np.ones((2, 3)))
    np.testing.assert_array_equal(got_reshaped, np.ones(3))
    np.testing.assert_array_equal(got_v, np.ones((2, 3)))


def test_str_in_object_arrays_becomes_utf8_bytes_as_in_tensorflow():
    """A NumPy object array of `str` (as `np.array(names, dtype=object)` makes) converts to
    UTF-8 bytes like a list of `str` does, in a constant and in a feed."""
    text = np.array(["a", "bé"], dtype=object)
    with tf.Graph().as_default():
        const = tf.constant(text)
        fed = tf.placeholder(tf.string)
        out = tf.identity(fed)
        with tf.Session() as sess:
            got_const, got_fed = sess.run([const, out], {fed: text})
    for got in (got_const, got_fed):
        assert got.tolist() == [b"a", "bé".encode()]
    with pytest.raises(TypeError, match="Expected string"):
        tf.constant(np.array(["a", 1], dtype=object))


def test_a_constants_value_attr_is_a_tensor_proto_that_make_ndarray_reads():
    """As in TensorFlow: get_attr("value") is a TensorProto; tf.make_ndarray gives a new,
    writable array, also after a session has bound the constant (read-only) for its steps."""
    with tf.Graph().as_default():
        c = tf.constant(np.arange(3.0))
        p = tf.placeholder(tf.float64, [3])
        with tf.Session() as sess:
            sess.run(c + p, {p: np.ones(3)})
        proto = c.op.get_attr("value")
        assert type(proto).__name__ == "TensorProto"
        value = tf.make_ndarray(proto)
        assert value.tolist() == [0.0, 1.0, 2.0] and value.flags.writeable
        static = tf.get_static_value(c)        # also a new array, as TF's
        assert static.tolist() == [0.0, 1.0, 2.0] and static.flags.writeable


def test_a_ref_dtype_gives_its_base_dtype():
    """TF 2.21: tf.constant(x, v.dtype) for a ref variable is a float64 Const (it used to be
    float64_ref and fail at run time), and so is a placeholder of a ref dtype."""
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], dtype=tf.float64)
        assert v.dtype == tf.float64_ref
        c = tf.constant([1.5, 2.5], v.dtype)
        scalar = tf.constant(1.5, dtype=v.dtype, shape=[2])
        ints = tf.constant([1, 2], tf.int32._as_ref)
        filled = tf.fill([2], tf.constant(1.5, v.dtype))
        p = tf.placeholder(v.dtype, [2])
        for t, dtype in ((c, tf.float64), (scalar, tf.float64), (ints, tf.int32),
                         (filled, tf.float64), (p, tf.float64)):
            assert t.dtype == dtype
        assert c.op.get_attr("dtype") == tf.float64 and p.op.get_attr("dtype") == tf.float64
        with tf.Session() as sess:
            got = sess.run([c, scalar, ints, filled, p], {p: [7.0, 8.0]})
    for g, want in zip(got, ([1.5, 2.5], [1.5, 1.5], [1, 2], [1.5, 1.5], [7.0, 8.0])):
        np.testing.assert_array_equal(g, want)
    assert [g.dtype for g in got] == [np.float64, np.float64, np.int32, np.float64, np.float64]
