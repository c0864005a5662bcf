"""The global step: creation, look-up (collection, then by name), checks and errors."""
import pytest

import tensorweave as tf


def test_get_or_create_global_step():
    with tf.Graph().as_default() as g:
        assert tf.train.get_global_step() is None
        gs = tf.train.get_or_create_global_step()
        assert gs.name == "global_step:0" and gs.dtype.base_dtype == tf.int64
        assert gs.shape.as_list() == [] and not gs.trainable
        assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [gs]
        assert gs in tf.global_variables() and gs not in tf.trainable_variables()
        assert g.get_operation_by_name("global_step/Initializer/zeros").type == "Const"
        assert tf.train.get_or_create_global_step() is gs
        assert tf.train.get_global_step(g) is gs
        with tf.Session() as sess:
            sess.run(gs.initializer)
            assert tf.train.global_step(sess, gs) == 0
            sess.run(tf.assign_add(gs, 5))
            step = tf.train.global_step(sess, gs)
            assert step == 5 and isinstance(step, int)


def test_created_in_the_variable_scope_but_not_the_name_scope():
    with tf.Graph().as_default():
        with tf.variable_scope("foo"), tf.name_scope("bar"):
            gs = tf.train.get_or_create_global_step()
        assert gs.name == "foo/global_step:0"
        assert gs.initializer.name == "foo/global_step/Assign"


def test_create_twice_is_an_error():
    with tf.Graph().as_default():
        tf.train.create_global_step()
        with pytest.raises(ValueError, match='"global_step" already exists.'):
            tf.train.create_global_step()


def test_found_by_name_and_checked():
    with tf.Graph().as_default():
        v = tf.Variable(0, name="global_step")
        assert tf.train.get_global_step() is v._ref()
    with tf.Graph().as_default():
        tf.Variable(0.5, name="global_step")
        with pytest.raises(TypeError, match='Existing "global_step" does not have integer type: '
                                            "<dtype: 'float32_ref'>"):
            tf.train.get_global_step()
    with tf.Graph().as_default():
        tf.Variable([1, 2], name="global_step")
        with pytest.raises(TypeError, match=r'Existing "global_step" is not scalar: \(2,\)'):
            tf.train.get_global_step()
    with pytest.raises(TypeError, match="must be a Variable or Tensor"):
        tf.train.assert_global_step("global_step")


def test_create_in_another_graph():
    g = tf.Graph()
    gs = tf.train.create_global_step(g)
    assert gs.graph is g and tf.train.get_global_step(g) is gs


def test_global_step_aggregates_only_first_replica_as_tensorflow():
    """TF 2.21 records ONLY_FIRST_REPLICA in the global step's VariableDef."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        assert step.aggregation == tf.VariableAggregation.ONLY_FIRST_REPLICA
        assert "aggregation: VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA" in str(step.to_proto())
