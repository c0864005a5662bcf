"""tf.layers dropout and batch_normalization with a `training` tensor build a tf.cond: only the
chosen mode runs; and Variable.initialized_value reads a dependency's value."""
import numpy as np

import tensorweave as tf


def test_dropout_with_a_training_tensor_only_drops_when_training():
    with tf.Graph().as_default():
        training = tf.placeholder(tf.bool, [])
        x = tf.ones([1000])
        y = tf.layers.dropout(x, rate=0.5, training=training, seed=1)
        assert any(op.type == "Merge" for op in tf.get_default_graph().get_operations())
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {training: False}), np.ones(1000))
            dropped = sess.run(y, {training: True})
            assert set(np.unique(dropped)) == {0.0, 2.0}


def test_batch_norm_updates_moving_statistics_only_in_training():
    with tf.Graph().as_default():
        training = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [None, 3])
        layer = tf.layers.BatchNormalization(momentum=0.5)
        y = layer(x, training=training)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        data = np.array([[1.0, 2.0, 3.0], [3.0, 6.0, 9.0]], np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run([y] + updates, {x: data, training: False})[0]
            np.testing.assert_allclose(out, data / np.sqrt(1.0 + 1e-3), rtol=1e-5)
            np.testing.assert_array_equal(sess.run(layer.moving_mean), [0.0, 0.0, 0.0])
            out = sess.run([y] + updates, {x: data, training: True})[0]
            np.testing.assert_allclose(out.mean(0), [0.0, 0.0, 0.0], atol=1e-5)
            np.testing.assert_allclose(sess.run(layer.moving_mean), 0.5 * data.mean(0))


def test_initialized_value_does_not_rerun_the_initializer():
    with tf.Graph().as_default():
        w = tf.Variable(tf.random_normal([3], seed=3), name="w")
        v = tf.Variable(w.initialized_value() * 2.0, name="v")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(w)
            np.testing.assert_allclose(sess.run(v), 2 * first)
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(w), first)
