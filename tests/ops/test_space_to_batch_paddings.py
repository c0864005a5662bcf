"""tf.required_space_to_batch_paddings, against TensorFlow 2.21's values."""
import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("shape, block, base, paddings, crops", [
    ([5, 7], [2, 3], [[1, 0], [0, 2]], [[1, 0], [0, 2]], [[0, 0], [0, 0]]),
    ([5, 7], [2, 4], None, [[0, 1], [0, 1]], [[0, 1], [0, 1]]),
    ([5, 7], [2, 3], None, [[0, 1], [0, 2]], [[0, 1], [0, 2]]),
])
def test_paddings_make_every_dimension_divisible(shape, block, base, paddings, crops):
    with tf.Graph().as_default():
        fed = tf.placeholder(tf.int32, [2])
        static = tf.required_space_to_batch_paddings(shape, block, base_paddings=base)
        dynamic = tf.required_space_to_batch_paddings(fed, block, base_paddings=base)
        assert static[0].op.type == "Const" and dynamic[0].name.endswith("/paddings:0")
        assert dynamic[1].shape.as_list() == [2, 2]
        with tf.Session() as sess:
            for got in sess.run([static, dynamic], {fed: shape}):
                np.testing.assert_array_equal(got[0], paddings)
                np.testing.assert_array_equal(got[1], crops)


def test_no_block_dimensions_and_bad_shapes():
    with tf.Graph().as_default(), tf.Session() as sess:
        paddings, crops = sess.run(tf.required_space_to_batch_paddings(
            tf.zeros([0], tf.int32), tf.zeros([0], tf.int32)))
        assert paddings.shape == (0, 2) and crops.shape == (0, 2)
        with pytest.raises(ValueError):
            tf.required_space_to_batch_paddings([5, 7, 9], [2, 3])


def test_deprecated_scope_spellings():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        with tf.op_scope([x], "outer", "unused") as scope:
            assert scope == "outer/"
            assert tf.identity(x).name == "outer/Identity:0"
        with tf.variable_op_scope([x], None, "layer") as vs:
            assert vs.name == "layer"
            assert tf.get_variable("w", [1]).name == "layer/w:0"
