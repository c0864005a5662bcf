"""Stateful kernels shared across run signatures: user nodes keep theirs, runtime-made do not."""
import os

import numpy as np

import tensorweave as tf


def test_sharded_save_and_restore_across_devices(tmp_path):
    """Save and restore are two run signatures whose transfers can reuse one generated name
    on one device for a _Send in one and a _Recv in the other; each must get its own kernel."""
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.Variable(1.0, name="a")
        with tf.device("/cpu:1"):
            b = tf.Variable(2.0, name="b")
        saver = tf.train.Saver(sharded=True)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, os.path.join(str(tmp_path), "model"))
            sess.run([tf.assign(a, 5.0), tf.assign(b, 6.0)])
            saver.restore(sess, path)
            assert sess.run([a, b]) == [1.0, 2.0]


def test_a_random_op_keeps_its_stream_across_signatures():
    """The same stateful user node run under two fetch signatures draws one stream."""
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        r = tf.random_uniform([4], seed=7)
        twice = r * 2.0
        with tf.Session() as sess:
            drawn = [sess.run(r), sess.run(twice) / 2.0, sess.run(r)]
        with tf.Session() as sess:
            expected = [sess.run(r) for _ in range(3)]
    np.testing.assert_allclose(drawn, expected, rtol=1e-6)
