"""TensorShape and Dimension convert to tensors as in TensorFlow (tf.reshape(x, y.shape))."""
import pytest

import tensorweave as tf


def test_a_fully_defined_shape_converts_to_an_int_vector():
    with tf.Graph().as_default():
        x = tf.constant([1, 2, 3, 4])
        y = tf.reshape(x, tf.zeros([2, 2]).shape)
        shape = tf.convert_to_tensor(tf.TensorShape([1, 2]))
        wide = tf.convert_to_tensor(tf.TensorShape([3 * 2**31]))
        dim = tf.convert_to_tensor(tf.Dimension(3))
        with tf.Session() as sess:
            assert sess.run(y).tolist() == [[1, 2], [3, 4]]
            assert sess.run(wide).tolist() == [3 * 2**31]
            assert sess.run(dim) == 3
    assert shape.dtype == tf.int32 and shape.op.name.startswith("shape_as_tensor")
    assert wide.dtype == tf.int64 and dim.dtype == tf.int32


def test_unknown_dimensions_do_not_convert():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="partially known"):
            tf.convert_to_tensor(tf.TensorShape([None, 2]))
        with pytest.raises(ValueError, match="unknown Dimension"):
            tf.convert_to_tensor(tf.Dimension(None))
        with pytest.raises(ValueError, match="too large"):
            tf.convert_to_tensor(tf.TensorShape([2**31]), dtype=tf.int32)
