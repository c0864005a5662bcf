"""A run that updates a variable in place: what its reads and its fetches see (as TF 2.21).

Reads of the variable that the update does not depend on run before it and see the step's
starting value; a fetch of the variable itself is copied when the step ends and sees the
update (TensorFlow's fetched tensor aliases the variable's buffer). The figures below are
TensorFlow's outputs for the same programs.
"""
import numpy as np
import pytest

import tensorweave as tf


@pytest.mark.parametrize("parallel", [False, True])
def test_reads_see_the_start_and_fetches_the_end_of_the_step(parallel):
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=2,
                            device_count={"CPU": 2}) if parallel else None
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        train = tf.assign_add(gs, 1)
        squared = gs * gs
        w = tf.Variable(1.0)
        minimize = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=gs)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([train, squared, gs]) == [1, 0, 1]
            assert sess.run([gs, squared, train]) == [2, 1, 2]
            _, step, weight = sess.run([minimize, gs, w])
    assert step == 3
    np.testing.assert_allclose(weight, 0.8)      # w - 0.1 * 2w: the updated value


def test_fetched_values_do_not_change_with_later_steps():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        add = tf.assign_add(v, [1.0, 1.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            first = sess.run(v)
            sess.run(add)
            assert first.tolist() == [1.0, 2.0]
            assert sess.run([add, v])[1].tolist() == [3.0, 4.0]


def test_the_hooks_global_step_read_is_the_step_the_run_started_from():
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        train = tf.assign_add(gs, 1)
        read = tf.train.training_util.get_or_create_global_step_read()
        assert read is tf.train.training_util.get_or_create_global_step_read()
        assert read.op.name.startswith("global_step/")
        with tf.Session() as sess:
            sess.run(gs.initializer)
            assert [sess.run([train, read, gs])[1:] for _ in range(2)] == [[0, 1], [1, 2]]
