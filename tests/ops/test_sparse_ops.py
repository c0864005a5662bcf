"""SparseToDense (tf.sparse_to_dense, tf.sparse.to_dense) and SparseTensor: forward against
NumPy, shapes, gradient, TF's index validation, and fetching / feeding SparseTensors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

INDICES = np.array([[0, 1], [1, 0], [2, 3]], np.int64)


def _dense(indices, shape, values, default):
    out = np.full(shape, default, dtype=np.asarray(values).dtype)
    out[tuple(np.reshape(indices, (len(indices), -1)).T)] = values
    return out


CASES = [
    OpCase("sparse_to_dense",
           lambda i, s, v, d: tf.sparse_to_dense(i, s, v, d),
           _dense, [INDICES, np.array([3, 4], np.int64), lambda rng, dt: rng.randn(3),
                    lambda rng, dt: rng.randn()],
           dtypes=(tf.float32, tf.float64), fixed_dtypes=(tf.int64, tf.int64)),
    OpCase("sparse_to_dense_vector_scalar_value",
           lambda i, s, v: tf.sparse_to_dense(i, s, v, default_value=7),
           lambda i, s, v: _dense(i.reshape(-1, 1), s, v, 7),
           [np.array([1, 3], np.int32), np.array([5], np.int32), np.array(9)],
           dtypes=(tf.int32,), grad=False),
    OpCase("sparse_tensor_to_dense",
           lambda i, v, s: tf.sparse.to_dense(tf.SparseTensor(i, v, s)),
           lambda i, v, s: _dense(i, s, v, b""),
           [INDICES, np.array([b"a", b"b", b"c"], dtype=object), np.array([3, 4], np.int64)],
           dtypes=(tf.string,), fixed_dtypes=(tf.int64, tf.string, tf.int64), grad=False),
]


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [3, 4])
        dense = tf.sparse_tensor_to_dense(sp)
        assert [t.op.name for t in (sp.indices, sp.values, sp.dense_shape)] == [
            "SparseTensor/indices", "SparseTensor/values", "SparseTensor/dense_shape"]
        assert sp.indices.dtype == tf.int64 and sp.dense_shape.dtype == tf.int64
        assert sp.dtype == tf.float32 and sp.shape.as_list() == [3, 4]
        assert dense.op.type == "SparseToDense" and dense.op.name == "SparseToDense"
        assert [t.op.name for t in dense.op.inputs] == [
            "SparseTensor/indices", "SparseTensor/dense_shape", "SparseTensor/values", "zeros"]
        assert dense.op.get_attr("Tindices") == tf.int64
        assert dense.op.get_attr("validate_indices") is True
        assert dense.shape.as_list() == [3, 4]
        partial = tf.sparse_to_dense(tf.placeholder(tf.int64, [None, 2]),
                                     tf.placeholder(tf.int64, [2]), 1)
        assert partial.shape.as_list() == [None, None]
        assert tf.sparse_to_dense(tf.placeholder(tf.int64), tf.placeholder(tf.int64, [None]),
                                  1).shape.ndims is None


@pytest.mark.parametrize("indices,message", [
    ([[2, 1], [0, 1]], "indices[1] = [0,1] is out of order. Many sparse ops require sorted "
                       "indices."),
    ([[0, 1], [0, 1]], "indices[1] = [0,1] is repeated"),
    ([[0, 1], [5, 1]], "indices[1] = [5,1] is out of bounds: need 0 <= index < [3,4]"),
    ([[5, 1], [0, 1]], "indices[0] = [5,1] is out of bounds: need 0 <= index < [3,4]"),
])
def test_index_validation(indices, message):
    with tf.Graph().as_default():
        dense = tf.sparse.to_dense(tf.SparseTensor(indices, [1, 2], [3, 4]))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(dense)
    assert message in info.value.message


def test_unvalidated_indices_scatter_in_given_order():
    with tf.Graph().as_default():
        dense = tf.sparse.to_dense(tf.SparseTensor([[2, 1], [0, 1]], [1, 2], [3, 4]),
                                   validate_indices=False)
        with tf.Session() as sess:
            got = sess.run(dense)
    np.testing.assert_array_equal(got, [[0, 2, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]])


def test_fetch_sparse_tensor_as_value():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [3, 4])
        with tf.Session() as sess:
            value = sess.run(sp)
            both = sess.run({"sp": sp, "values": sp.values})
            evaluated = sp.eval(session=sess)
    assert isinstance(value, tf.SparseTensorValue)
    np.testing.assert_array_equal(value.indices, [[0, 1], [2, 3]])
    assert value.indices.dtype == np.int64 and value.values.dtype == np.float32
    np.testing.assert_array_equal(value.dense_shape, [3, 4])
    np.testing.assert_array_equal(both["sp"].values, both["values"])
    np.testing.assert_array_equal(evaluated.values, [1.0, 2.0])


def test_sparse_placeholder_feeds():
    with tf.Graph().as_default():
        ph = tf.sparse_placeholder(tf.float32, [None, 4])
        assert ph.values.op.name == "Placeholder" and ph.indices.op.name == "Placeholder_1"
        assert ph.dense_shape.op.type == "PlaceholderWithDefault"
        assert ph.indices.shape.as_list() == [None, 2]
        dense = tf.sparse.to_dense(ph)
        unknown = tf.sparse.placeholder(tf.int64)
        assert unknown.shape.ndims is None
        assert [t.op.name for t in (unknown.dense_shape, unknown.values, unknown.indices)] == [
            "Placeholder_2", "Placeholder_3", "Placeholder_4"]
        named = tf.sparse_placeholder(tf.float32, [2, 3], name="sp")
        assert named.values.op.name == "sp/values" and named.dense_shape.op.name == "sp/shape"
        assert named.shape.as_list() == [2, 3]
        with tf.Session() as sess:
            from_value = sess.run(dense, {ph: tf.SparseTensorValue([[0, 1]], [5.0], [2, 4])})
            from_tuple, fetched = sess.run([dense, ph], {ph: ([[1, 3]], [6.0], [2, 4])})
            again = sess.run(dense, {ph: ([[1, 2]], [7.0], [2, 4])})
            with pytest.raises(TypeError, match="SparseTensorValue"):
                sess.run(dense, {ph: [1.0]})
    np.testing.assert_array_equal(from_value, [[0, 5, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(from_tuple, [[0, 0, 0, 0], [0, 0, 0, 6]])
    np.testing.assert_array_equal(fetched.values, [6.0])
    assert again[1, 2] == 7.0 and again.sum() == 7.0


def test_sparse_tensor_checks_components():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.SparseTensor([[0, 1]], [1.0, 2.0], [3, 4])
        with pytest.raises(TypeError, match="indices must be int64"):
            tf.SparseTensor(tf.constant([[0, 1]]), [1.0], [3, 4])
        with pytest.raises(TypeError, match="Neither a SparseTensor nor SparseTensorValue"):
            tf.sparse.to_dense(tf.constant([1.0]))


def test_sparse_times_and_over_dense_operators():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [1, 2]], [2.0, 4.0], [2, 3])
        product = sp * tf.constant([[1.0, 10.0, 100.0]])
        quotient = sp / 2.0
        assert isinstance(product, tf.SparseTensor)
        assert (product.values.op.type, product.values.op.name) == ("SparseDenseCwiseMul", "mul")
        assert (quotient.values.op.type, quotient.values.op.name) == ("SparseDenseCwiseDiv",
                                                                      "truediv")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(product.values), [20.0, 400.0])
            np.testing.assert_allclose(sess.run(quotient.values), [1.0, 2.0])


def test_sparse_shape_rank_from_the_dense_shape():
    with tf.Graph().as_default():
        sp = tf.SparseTensor(tf.placeholder(tf.int64, [None, None]),
                             tf.placeholder(tf.float32, [None]), tf.placeholder(tf.int64, [3]))
        assert sp.shape.as_list() == [None, None, None]


def test_set_shape_refines_the_static_dense_shape():
    """TF 2.x's SparseTensor.set_shape: merged with what is known, ValueError on a conflict."""
    with tf.Graph().as_default():
        sp = tf.SparseTensor(tf.placeholder(tf.int64, [None, 2]),
                             tf.placeholder(tf.float32, [None]), tf.placeholder(tf.int64, [2]))
        sp.set_shape([3, None])
        sp.set_shape([None, 7])
        assert sp.shape.as_list() == [3, 7]
        with pytest.raises(ValueError, match=r"Shapes \(3, 7\) and \(4, 7\) are not compatible"):
            sp.set_shape([4, 7])
        with pytest.raises(ValueError, match="are not compatible"):
            sp.set_shape([3, 7, 1])
