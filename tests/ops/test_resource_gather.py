"""ResourceGather and VariableShape: rows of a resource variable read without copying the rest
(tf.gather, tf.nn.embedding_lookup and sparse_read on a resource variable), their gradient as
IndexedSlices of the variable, sparse SGD updates that read nothing back, and TensorFlow 2.21's
graphs, values and messages."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops import state_ops
from tensorweave.testing.op_case import OpCase, case_tests
from tensorweave.testing.variable_builders import on_resource_variable

NUMERIC = (tf.float32, tf.float64, tf.int32, tf.int64)
I32, I64 = tf.int32, tf.int64


def _table(*shape):
    return lambda rng, dt: (rng.randn(*shape) * 4).astype(dt)


def _indices(values):
    return lambda rng, dt: np.array(values, dt)


def _batched_take(params, indices):
    return np.stack([np.take(p, i, axis=0) for p, i in zip(params, indices)])


CASES = [
    OpCase("resource_gather_rows", on_resource_variable(lambda v, i: tf.gather(v, i)),
           lambda p, i: np.take(p, i, axis=0), [_table(5, 3), _indices([2, 0, 2, 4])], NUMERIC,
           grad=False, fixed_dtypes=[None, I32]),
    OpCase("resource_gather_int64_2d_indices", on_resource_variable(lambda v, i: v.sparse_read(i)),
           lambda p, i: np.take(p, i, axis=0), [_table(4, 2, 3), _indices([[1, 0], [3, 3]])],
           (tf.float32,), grad=False, fixed_dtypes=[None, I64]),
    OpCase("resource_gather_scalar_index_of_a_vector",
           on_resource_variable(lambda v, i: tf.nn.embedding_lookup(v, i)),
           lambda p, i: np.take(p, i, axis=0), [_table(6), _indices(3)], (tf.float64,),
           grad=False, fixed_dtypes=[None, I32]),
    OpCase("resource_gather_batch_dims",
           on_resource_variable(lambda v, i: state_ops.resource_gather(v.handle, i, v.dtype,
                                                                       batch_dims=1)),
           _batched_take, [_table(2, 3, 4), _indices([[0, 2], [1, 1]])], (tf.float32,),
           grad=False, fixed_dtypes=[None, I32]),
    OpCase("variable_shape",
           on_resource_variable(lambda v: state_ops.variable_shape_op(v.handle, tf.int64)),
           lambda p: np.array(p.shape, np.int64), [_table(3, 5)], (tf.float32,), grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _variable(name="rv"):
    return tf.get_variable(name, initializer=np.arange(12, dtype=np.float32).reshape(4, 3),
                           use_resource=True)


def test_gather_embedding_lookup_and_sparse_read_build_tensorflows_graph():
    with tf.Graph().as_default():
        rv, idx = _variable(), tf.constant([2, 0, 2])
        ref = tf.get_variable("v", initializer=np.ones((4, 3), np.float32), use_resource=False)
        gathered = tf.gather(rv, idx)
        assert (gathered.op.type, gathered.op.name) == ("ResourceGather", "Gather")
        assert [t.op.type for t in gathered.op.inputs] == ["VarHandleOp", "Const"]
        assert (gathered.op.get_attr("batch_dims"), gathered.op.get_attr("validate_indices"),
                gathered.op.get_attr("dtype"), gathered.op.get_attr("Tindices")) == \
            (0, True, tf.float32, tf.int32)
        looked_up = tf.nn.embedding_lookup(rv, idx)
        assert (looked_up.op.type, looked_up.op.name) == ("Identity", "embedding_lookup/Identity")
        assert looked_up.op.inputs[0].op.type == "ResourceGather"
        assert rv.sparse_read(idx, name="my_read").op.name == "my_read"
        assert rv.sparse_read(idx).op.name == "Gather_1"
        assert tf.gather(rv, idx, name="gg").op.name == "gg"
        with tf.name_scope("scope"):
            assert tf.gather(rv, idx).op.name == "scope/Gather"
        assert tf.gather(ref, idx).op.type == "GatherV2"            # ref variables read whole
        assert tf.gather(rv, idx, axis=1).op.type == "GatherV2"    # other axes: on the read
        assert tf.gather(rv, tf.constant([[0, 1]])).shape.as_list() == [1, 2, 3]


def test_gather_defaults_its_axis_to_batch_dims_as_tensorflow():
    with tf.Graph().as_default():
        params = tf.constant(np.arange(24).reshape(2, 3, 4))
        out = tf.gather(params, tf.constant([[0, 2], [1, 1]]), batch_dims=1)
        assert out.op.type == "GatherV2" and out.shape.as_list() == [2, 2, 4]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), _batched_take(
                np.arange(24).reshape(2, 3, 4), np.array([[0, 2], [1, 1]])))


@pytest.mark.parametrize("index", [5, -1])
def test_an_index_out_of_range_fails_the_step_naming_the_gather(index):
    with tf.Graph().as_default():
        bad = tf.gather(_variable(), tf.constant([index]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(errors.InvalidArgumentError,
                               match=rf"indices\[0\] = {index} is not in \[0, 4\)") as info:
                sess.run(bad)
            assert info.value.op.name == "Gather"


def test_an_uninitialized_variable_and_a_scalar_variable_are_errors():
    with tf.Graph().as_default():
        rv = _variable()
        with tf.Session() as sess, pytest.raises(errors.FailedPreconditionError,
                                                 match="Could not find variable rv"):
            sess.run(rv.sparse_read([0]))
        scalar = tf.get_variable("s", initializer=1.0, use_resource=True)
        with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
            tf.gather(scalar, [0])


def test_variable_shape_of_a_variable_of_unknown_static_shape():
    with tf.Graph().as_default():
        value = tf.placeholder(tf.float32, [None, 2])
        rv = tf.Variable(value, use_resource=True, validate_shape=False)
        shape = state_ops.variable_shape_tensor(rv.handle)
        assert shape.op.type == "VariableShape" and shape.shape.as_list() == [2]
        assert state_ops.variable_shape_tensor(_variable().handle).op.type == "Const"
        with tf.Session() as sess:
            sess.run(rv.initializer, {value: np.zeros((3, 2), np.float32)})
            assert sess.run(shape).tolist() == [3, 2]


def test_the_gradient_is_indexed_slices_of_the_variable_matching_numerical_differences():
    rng = np.random.RandomState(0)
    weights = rng.randn(5, 3)
    with tf.Graph().as_default():
        rv = tf.get_variable("rv", initializer=rng.randn(4, 3), use_resource=True)
        rows = tf.gather(rv, tf.constant([2, 0, 2, 3, 1]))
        loss = tf.reduce_sum(tf.sin(rows) * weights)
        grad = tf.gradients(loss, [rv])[0]
        assert isinstance(grad, tf.IndexedSlices)
        assert grad.dense_shape.op.type == "Const"
        dense = tf.convert_to_tensor(grad)
        point = tf.placeholder(tf.float64, [4, 3])
        set_value = rv.assign(point, read_value=False)
        with tf.Session() as sess:
            base = rng.randn(4, 3)
            sess.run(set_value, {point: base})
            analytic = sess.run(dense)
            numeric = np.zeros_like(base)
            for k in np.ndindex(base.shape):
                values = []
                for step in (1e-6, -1e-6):
                    shifted = base.copy()
                    shifted[k] += step
                    sess.run(set_value, {point: shifted})
                    values.append(sess.run(loss))
                numeric[k] = (values[0] - values[1]) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_sgd_on_an_embedding_updates_the_rows_and_reads_nothing_back():
    with tf.Graph().as_default() as g:
        rv, idx = _variable(), tf.constant([2, 0, 2])
        rows, looked_up = tf.gather(rv, idx), tf.nn.embedding_lookup(rv, idx)
        loss = tf.reduce_sum(rows * rows) + tf.reduce_sum(looked_up)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        update_types = {op.type for op in g.get_operations()
                        if op.name.startswith("GradientDescent")}
        assert "ResourceScatterSub" in update_types and "ReadVariableOp" not in update_types
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(rv), [   # TensorFlow 2.21's values
                [-0.1, 0.7, 1.5], [3.0, 4.0, 5.0], [3.4000003, 4.0, 4.6000004],
                [9.0, 10.0, 11.0]], rtol=1e-6)
