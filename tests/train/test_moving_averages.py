"""ExponentialMovingAverage: shadow names, update values (num_updates, zero debiasing of
tensors), average_name and variables_to_restore, as TensorFlow computes them."""
import numpy as np
import pytest

import tensorweave as tf


def test_shadow_variables_and_updates():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        ema = tf.train.ExponentialMovingAverage(0.9)
        assert ema.name == "ExponentialMovingAverage"
        assert ema.average_name(w) == "w/ExponentialMovingAverage"
        assert ema.average(w) is None
        update = ema.apply([w])
        avg = ema.average(w)
        assert update.name == "ExponentialMovingAverage" and update.type == "NoOp"
        assert avg.name == "w/ExponentialMovingAverage:0" and not avg.trainable
        assert avg.op.get_attr("_class") == [b"loc:@w"]
        assert tf.moving_average_variables() == [w]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(avg), [1.0, 2.0])  # starts at the value
            expected = np.array([1.0, 2.0])
            value = np.array([1.0, 2.0])
            for _ in range(3):
                value = value * 0.5 + 1.0
                sess.run(w.assign(value))
                sess.run(update)
                expected = expected - (1 - 0.9) * (expected - value)
                np.testing.assert_allclose(sess.run(avg), expected, rtol=1e-6)


def test_num_updates_and_zero_debiased_tensors_match_tensorflow():
    """Reference values from TensorFlow 2.21 (tf.compat.v1) for the same program."""
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        x = tf.placeholder(tf.float32, [2], name="x")
        t = tf.identity(x * 2.0, name="t")
        step = tf.Variable(0, name="step", trainable=False)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step, zero_debias=True)
        op = ema.apply([w, t])
        assert ema.average(t).name == "t/ExponentialMovingAverage:0"
        assert sorted(v.name for v in tf.global_variables()) == [
            "step:0", "t/ExponentialMovingAverage/biased:0",
            "t/ExponentialMovingAverage/local_step:0", "t/ExponentialMovingAverage:0",
            "w/ExponentialMovingAverage:0", "w:0"]
        restore = ema.variables_to_restore()
        assert sorted((k, v.name) for k, v in restore.items()) == [
            ("step", "step:0"), ("t/ExponentialMovingAverage", "t/ExponentialMovingAverage:0"),
            ("t/ExponentialMovingAverage/biased", "t/ExponentialMovingAverage/biased:0"),
            ("t/ExponentialMovingAverage/local_step",
             "t/ExponentialMovingAverage/local_step:0"),
            ("w/ExponentialMovingAverage", "w:0")]
        inc = tf.assign_add(step, 10)
        got = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(3):
                sess.run(w.assign(w * 0.5 + 1.0))
                sess.run(op, {x: [i, -i]})
                got.append(sess.run([ema.average(w), ema.average(t)]))
            sess.run(inc)
            sess.run(op, {x: [3.0, 3.0]})
            got.append(sess.run([ema.average(w), ema.average(t)]))
    expected = [([1.45, 2.0], [0.0, 0.0]), ([1.72, 2.0], [1.8181818, -1.8181818]),
                ([1.8595, 2.0], [3.7837837, -3.7837837]),
                ([1.866475, 2.0], [5.260355, 0.6835485])]
    for (gw, gt), (ew, et) in zip(got, expected):
        np.testing.assert_allclose(gw, ew, rtol=1e-6)
        np.testing.assert_allclose(gt, et, rtol=1e-6)


def test_apply_defaults_to_trainable_variables_and_checks_dtypes():
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        tf.Variable(1.0, name="frozen", trainable=False)
        ema = tf.train.ExponentialMovingAverage(0.5, name="avg")
        ema.apply()
        assert ema.average(a).name == "a/avg:0"
        assert ema.average_name(a) == "a/avg"
        with pytest.raises(TypeError, match="The variables must be half, float, or double: i:0"):
            ema.apply([tf.Variable(1, name="i")])


def test_assign_moving_average():
    from tensorweave.train.moving_averages import assign_moving_average
    with tf.Graph().as_default():
        v = tf.Variable(10.0, name="v")
        upd = assign_moving_average(v, tf.constant(0.0), 0.75, zero_debias=False)
        assert upd.op.name == "AssignMovingAvg" and upd.op.type == "AssignSub"
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(upd)
            assert sess.run(v) == pytest.approx(7.5)
