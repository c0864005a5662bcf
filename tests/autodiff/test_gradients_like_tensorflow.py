"""tf.gradients through the assign/scatter family and across graphs, as TensorFlow 2.21: its
state_grad.py makes Assign, AssignAdd, AssignSub, Scatter{Add,Sub,Mul,Div} and
ScatterNd{Update,Add,Sub} NotDifferentiable (None), while ScatterUpdate, ScatterMin and
ScatterMax have no gradient at all (LookupError)."""
import pytest

import tensorweave as tf

NONE_GRADIENT = {
    "assign": lambda x: x.assign(x * 2),
    "assign_add": lambda x: tf.assign_add(x, [1.0, 1.0]),
    "assign_sub": lambda x: tf.assign_sub(x, [1.0, 1.0]),
    "scatter_add": lambda x: tf.scatter_add(x, [0], [5.0]),
    "scatter_sub": lambda x: tf.scatter_sub(x, [0], [5.0]),
    "scatter_mul": lambda x: tf.scatter_mul(x, [0], [5.0]),
    "scatter_div": lambda x: tf.scatter_div(x, [0], [5.0]),
    "scatter_nd_update": lambda x: tf.scatter_nd_update(x, [[0]], [5.0]),
    "scatter_nd_add": lambda x: tf.scatter_nd_add(x, [[0]], [5.0]),
    "scatter_nd_sub": lambda x: tf.scatter_nd_sub(x, [[0]], [5.0]),
}
NO_GRADIENT = {
    "ScatterUpdate": lambda x: tf.scatter_update(x, [0], [5.0]),
    "ScatterMin": lambda x: tf.scatter_min(x, [0], [5.0]),
    "ScatterMax": lambda x: tf.scatter_max(x, [0], [5.0]),
}


@pytest.mark.parametrize("name", sorted(NONE_GRADIENT))
def test_not_differentiable_updates_give_none(name):
    with tf.Graph().as_default():
        x = tf.Variable([1.0, 2.0], name="x")
        assert tf.gradients(tf.reduce_sum(NONE_GRADIENT[name](x)), x) == [None]


@pytest.mark.parametrize("op_type", sorted(NO_GRADIENT))
def test_updates_without_gradient_raise_lookup_error(op_type):
    with tf.Graph().as_default():
        x = tf.Variable([1.0, 2.0], name="x")
        with pytest.raises(LookupError, match=f"\\(op type: {op_type}\\)"):
            tf.gradients(tf.reduce_sum(NO_GRADIENT[op_type](x)), x)


def test_gradient_with_respect_to_assigned_value_is_none():
    with tf.Graph().as_default():
        x = tf.Variable([1.0, 2.0], name="x")
        u = tf.placeholder(tf.float32, [1])
        assert tf.gradients(tf.reduce_sum(tf.assign(x, u * tf.ones([2]))), u) == [None]
        with pytest.raises(LookupError, match="ScatterUpdate"):
            tf.gradients(tf.reduce_sum(tf.scatter_update(x, [0], u)), u)


def test_xs_from_another_graph_is_a_value_error():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
    with tf.Graph().as_default():
        y = tf.constant(2.0) * 2
        with pytest.raises(ValueError, match="must be from the same graph as"):
            tf.gradients(y, x)
