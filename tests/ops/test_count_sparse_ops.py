"""DenseCountSparseOutput and SparseCountSparseOutput via tf.sparse.bincount: forward against a
Python reference, shape functions, TensorFlow 2.21's graph structure, results captured from it,
and its build-time and run-time errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_sparse_reshape_ops import check_run_error, sparse, triple

INDEX = (tf.int32, tf.int64)
WEIGHTS = (tf.int32, tf.int64, tf.float32, tf.float64)
I64 = tf.int64
# A 5 x 6 SparseTensor, unordered, with an empty row (3).
SP_IND = np.array([[4, 1], [0, 5], [2, 0], [0, 1], [4, 3], [2, 2], [1, 0], [0, 2]], np.int64)
SP_SHAPE = np.array([5, 6], np.int64)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


def _ints(low, high, *shape):
    return lambda rng, dt: rng.randint(low, high, shape).astype(dt)


def _count_ref(minlength=-1, maxlength=-1, binary=False):
    """TensorFlow's counting, one element at a time: (batch, value) -> count, weight sum or 1,
    entries sorted; the last dimension maxlength, else max(largest counted + 1, minlength)."""
    def count(batches, values, weights, num_batches, is_1d, dtype):
        totals, largest = {}, 0
        for k, (b, v) in enumerate(zip(batches, values)):
            if maxlength >= 0 and v >= maxlength:
                continue
            largest = max(largest, int(v))
            add = 1 if weights is None else weights[k]
            totals[b, int(v)] = 1 if binary else totals.get((b, int(v)), 0) + add
        keys = sorted(totals)
        width = 1 if is_1d else 2
        indices = [[v] if is_1d else [b, v] for b, v in keys]
        size = maxlength if maxlength >= 0 else max(largest + 1, minlength)
        return [np.array(indices, np.int64).reshape(-1, width),
                np.array([totals[k] for k in keys], dtype),
                np.array([size] if is_1d else [num_batches, size], np.int64)]

    def dense(values, weights=None, axis=0):
        rows = values.reshape(1, -1) if axis == 0 or values.ndim == 1 else values
        flat_w = None if weights is None else weights.ravel()
        batches = np.repeat(np.arange(len(rows)), rows.shape[1])
        dtype = values.dtype if weights is None else weights.dtype
        return count(batches, rows.ravel(), flat_w, len(rows), axis == 0 or values.ndim == 1,
                     dtype)

    def sparse_rows(indices, values, shape, weights=None):
        dtype = values.dtype if weights is None else weights.dtype
        return count(indices[:, 0], values, weights, shape[0], False, dtype)

    def sparse_flat(indices, values, shape, weights=None):
        return dense(values, weights)

    return dense, sparse_rows, sparse_flat


def _dense(**kw):
    return _count_ref(**{k: v for k, v in kw.items() if k != "axis"})[0]


def _rows_ref(**kw):
    dense = _dense(**kw)
    return lambda v, w=None: dense(v, w, axis=-1)


def _bincount(**kw):
    return lambda v, w=None: triple(tf.sparse.bincount(v, weights=w, **kw))


def _sparse_bincount(**kw):
    return lambda i, v, s, w=None: triple(tf.sparse.bincount(
        sparse(i, v, s), weights=None if w is None else sparse(i, w, s), **kw))


_DOC = [[10, 20, 30, 20], [11, 101, 11, 10001]]
SP_VALUES = _value([3, 1, 1, 0, 9, 1, 4, 1])

CASES = [
    OpCase("bincount_flat", _bincount(), _dense(), [_ints(0, 7, 3, 4)], dtypes=INDEX),
    OpCase("bincount_rows", _bincount(axis=-1), _rows_ref(), [_value(_DOC)], dtypes=INDEX),
    OpCase("bincount_vector_rows", _bincount(axis=-1), _rows_ref(), [_value([2, 2, 0])],
           dtypes=INDEX),
    OpCase("bincount_weights", _bincount(), _dense(), [_ints(0, 5, 2, 6), _ints(-9, 9, 2, 6)],
           dtypes=WEIGHTS, fixed_dtypes=(tf.int32,)),
    OpCase("bincount_rows_weights", _bincount(axis=-1), _rows_ref(),
           [_value(_DOC), _value([[2, 0.25, 15, 0.5], [2, 17, 3, 0.9]])],
           dtypes=(tf.float32, tf.float64), fixed_dtypes=(tf.int64,)),
    OpCase("bincount_minlength", _bincount(minlength=9), _dense(minlength=9),
           [_value([1, 5, 1])], dtypes=INDEX),
    OpCase("bincount_minlength_below_max", _bincount(minlength=2), _dense(minlength=2),
           [_value([1, 5])], dtypes=INDEX),
    OpCase("bincount_maxlength", _bincount(maxlength=3), _dense(maxlength=3),
           [_value([1, 5, 2, 9, 1])], dtypes=INDEX),
    OpCase("bincount_maxlength_above_max", _bincount(maxlength=10), _dense(maxlength=10),
           [_value([1, 2])], dtypes=INDEX),
    OpCase("bincount_maxlength_zero", _bincount(maxlength=0), _dense(maxlength=0),
           [_value([1, 2])], dtypes=INDEX),
    OpCase("bincount_min_and_max", _bincount(axis=-1, minlength=500, maxlength=500),
           _rows_ref(minlength=500, maxlength=500), [_value(_DOC)], dtypes=INDEX),
    OpCase("bincount_binary", _bincount(axis=-1, binary_output=True),
           _rows_ref(binary=True), [_value([[1, 1, 2], [0, 0, 0]])], dtypes=INDEX),
    OpCase("bincount_empty", _bincount(), _dense(), [np.zeros(0)], dtypes=INDEX),
    OpCase("bincount_empty_rows", _bincount(axis=-1, minlength=3), _rows_ref(minlength=3),
           [np.zeros((2, 0))], dtypes=INDEX),
    OpCase("sparse_bincount_rows", _sparse_bincount(axis=-1), _count_ref()[1],
           [SP_IND, SP_VALUES, SP_SHAPE], dtypes=INDEX, fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_bincount_rows_weights", _sparse_bincount(axis=-1, maxlength=4),
           _count_ref(maxlength=4)[1],
           [SP_IND, SP_VALUES, SP_SHAPE, _value([0.5, 1, 2, 4, 8, 16, 32, 64])],
           dtypes=WEIGHTS, fixed_dtypes=(I64, tf.int32, I64)),
    OpCase("sparse_bincount_rows_binary", _sparse_bincount(axis=-1, binary_output=True,
                                                           minlength=12),
           _count_ref(minlength=12, binary=True)[1], [SP_IND, SP_VALUES, SP_SHAPE],
           dtypes=INDEX, fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_bincount_flat_weights", _sparse_bincount(), _count_ref()[2],
           [SP_IND, SP_VALUES, SP_SHAPE, _value([1, 2, 3, 4, 5, 6, 7, 8])],
           dtypes=(tf.float32, tf.int64), fixed_dtypes=(I64, tf.int64, I64)),
]

test_forward, test_shapes = case_tests(CASES)


def _run(st, feed=None):
    with tf.Session() as sess:
        return sess.run([st.indices, st.values, st.dense_shape], feed)


def _check(got, indices, values, shape, dtype):
    np.testing.assert_array_equal(got[0], np.array(indices, np.int64).reshape(-1, len(shape)))
    assert got[1].dtype == dtype
    np.testing.assert_array_equal(got[1], values)
    np.testing.assert_array_equal(got[2], shape)


def test_results_captured_from_tensorflow():
    with tf.Graph().as_default():
        _check(_run(tf.sparse.bincount(sparse([[0], [2]], np.int32([1, 3]), [4]),
                                       minlength=4)),
               [[1], [3]], [1, 1], [4], np.int32)
        _check(_run(tf.sparse.bincount(tf.constant([[1, 2], [3, 1]]),
                                       weights=tf.constant([[1., 2.], [3., 4.]]), axis=-1)),
               [[0, 1], [0, 2], [1, 1], [1, 3]], [1., 2., 4., 3.], [2, 4], np.float32)
        # TF counts an empty input as largest value 0: a dense shape of 1, not 0.
        _check(_run(tf.sparse.bincount(tf.constant([], tf.int32))), [], [], [1], np.int32)
        _check(_run(tf.sparse.bincount(tf.constant([1, 2]), minlength=8, maxlength=4)),
               [[1], [2]], [1, 1], [4], np.int32)
        # A 3-D SparseTensor with axis=-1 is counted per first index; the static rank says 3.
        st = tf.sparse.bincount(sparse([[0, 0, 0], [1, 0, 2]], np.int32([1, 3]), [2, 1, 4]),
                                axis=-1)
        assert st.indices.shape.as_list() == [None, 3]
        _check(_run(st), [[0, 1], [1, 3]], [1, 1], [2, 4], np.int32)


def test_graph_structure_as_in_tensorflow():
    with tf.Graph().as_default() as g:
        tf.sparse.bincount(tf.constant([[1, 2], [3, 1]]), minlength=4)
        assert [(op.type, op.name) for op in g.get_operations()][2:] == [
            ("Reshape", "count/Reshape"), ("Const", "count/Const"),
            ("DenseCountSparseOutput", "count/DenseCountSparseOutput")]
        op = g.get_operation_by_name("count/DenseCountSparseOutput")
        assert (op.get_attr("minlength"), op.get_attr("maxlength"),
                op.get_attr("binary_output")) == (4, -1, False)
        assert op.get_attr("output_type") == tf.int32 and op.get_attr("T") == tf.int32
    with tf.Graph().as_default() as g:
        st = tf.sparse.bincount(sparse([[0, 0], [1, 1]], np.int64([1, 3]), [2, 2]), axis=-1,
                                maxlength=7, binary_output=True, name="foo")
        assert st.values.op.name == "foo/SparseCountSparseOutput"
        assert [t.op.name for t in st.values.op.inputs] == [
            "SparseTensor/indices", "SparseTensor/values", "SparseTensor/dense_shape",
            "foo/Const"]
        assert st.values.dtype == tf.int64 and st.values.op.get_attr("maxlength") == 7
    with tf.Graph().as_default() as g:
        # axis=0 on a SparseTensor counts its values alone, with DenseCountSparseOutput.
        st = tf.sparse.bincount(sparse([[0, 1]], np.int32([5]), [1, 2]))
        assert st.values.op.type == "DenseCountSparseOutput"
        assert st.values.op.inputs[0].op.name == "SparseTensor/values"


def test_sparse_weights_are_checked_against_the_values():
    with tf.Graph().as_default():
        v = tf.sparse_placeholder(tf.int32, shape=[4])
        w = tf.sparse_placeholder(tf.float32, shape=[4])
        st = tf.sparse.bincount(v, weights=w)
        weights = st.values.op.inputs[1]
        assert weights.op.type == "Identity" and weights.op.name == "count/Identity"
        assert len(weights.op.control_inputs) == 2
        feed = {v: tf.SparseTensorValue([[0], [2]], [1, 3], [4]),
                w: tf.SparseTensorValue([[0], [2]], [0.5, 2.0], [4])}
        _check(_run(st, feed), [[1], [3]], [0.5, 2.0], [4], np.float32)
        feed[w] = tf.SparseTensorValue([[0], [1]], [0.5, 2.0], [4])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="must have the same indices"):
            sess.run(st.values, feed)
        feed[w] = tf.SparseTensorValue([[0], [2]], [0.5, 2.0], [5])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="must have the same dense shape"):
            sess.run(st.values, feed)


def test_static_shapes():
    with tf.Graph().as_default():
        unknown = tf.sparse.bincount(tf.placeholder(tf.int32), axis=-1)
        assert unknown.indices.shape.as_list() == [None, None]
        assert unknown.dense_shape.shape.as_list() == [None]
        rows = tf.sparse.bincount(tf.placeholder(tf.int64, [None, 3]), axis=-1)
        assert rows.indices.shape.as_list() == [None, 2] and rows.values.dtype == tf.int64
        scalar = tf.sparse.bincount(tf.constant(3), axis=-1)
        assert scalar.indices.shape.as_list() == [None, 0]


@pytest.mark.parametrize("build,error,match", [
    (lambda: tf.sparse.bincount([1, 2], weights=[1., 2.], binary_output=True), ValueError,
     "`binary_output` and `weights` are mutually exclusive"),
    (lambda: tf.sparse.bincount([[1, 2]], axis=1), ValueError,
     "Unsupported value for argument axis=1. Only 0 and -1"),
    (lambda: tf.sparse.bincount([1, 2], axis=-2), ValueError, "axis=-2"),
    (lambda: tf.sparse.bincount([1., 2.]), TypeError,
     "'values' has DataType float32 not in list of allowed values"),
    (lambda: tf.sparse.bincount([1, 2], weights=[True, False]), TypeError,
     "'weights' has DataType bool not in list"),
    (lambda: tf.sparse.bincount([1, 2], minlength=-2), ValueError,
     "Attr 'minlength' of 'DenseCountSparseOutput' Op passed -2 less than minimum -1."),
    (lambda: tf.sparse.bincount([1, 2], maxlength=-2), ValueError, "'maxlength'"),
    (lambda: tf.sparse.bincount([1, 2], minlength=tf.constant(4)), TypeError,
     "Expected int for argument 'minlength'"),
    (lambda: tf.sparse.bincount([1, 2], weights=[1., 2., 3.]), ValueError,
     "Dimension 0 in both shapes must be equal, but are 3 and 2. Shapes are [3] and [2]"),
    (lambda: tf.sparse.bincount([[1, 2]], weights=[[1.], [2.]], axis=-1), ValueError,
     "Shapes are [2,1] and [1,2]"),
    (lambda: tf.sparse.bincount(sparse([[0]], np.int32([1]), [2]), weights=[1.]),
     ValueError, "Argument `weights` must be a SparseTensor if `values` is a SparseTensor"),
    (lambda: tf.sparse.bincount([1], weights=sparse([[0]], [1.], [1]), axis=-1),
     ValueError, "Argument `weights` must be a tf.Tensor if `values` is a tf.Tensor"),
    (lambda: tf.sparse.bincount([1], weights=sparse([[0]], [1.], [1])), TypeError,
     "Failed to convert elements of SparseTensor"),
])
def test_build_errors(build, error, match):
    with tf.Graph().as_default():
        with pytest.raises(error, match=match.replace("[", r"\[").replace("]", r"\]")
                           .replace("(", r"\(").replace(")", r"\)")):
            build()


@pytest.mark.parametrize("build,message", [
    (lambda: tf.sparse.bincount([1, -1, 2]), "Input values must all be non-negative"),
    (lambda: tf.sparse.bincount([[1, -1], [2, -5]], axis=-1),
     "Input values must all be non-negative"),
    (lambda: tf.sparse.bincount(sparse([[0, 0], [1, 2]], np.int32([1, -3]), [2, 4]), axis=-1),
     "Input values must all be non-negative"),
    (lambda: tf.sparse.bincount(tf.zeros([0, 3], tf.int32), axis=-1),
     "Invalid input: Shapes dimension cannot be 0."),
    (lambda: tf.sparse.bincount(3, axis=-1), "Input must be a 1 or 2-dimensional tensor. Got: []"),
    (lambda: tf.sparse.bincount([[[1, 2]]], axis=-1),
     "Input must be a 1 or 2-dimensional tensor. Got: [1,1,2]"),
    (lambda: tf.sparse.bincount([[1, 2]], weights=tf.placeholder_with_default(
        [[1.], [2.]], None), axis=-1),
     "Weights and data must have the same shape. Weight shape: [2,1]; data shape: [1,2]"),
    (lambda: tf.sparse.bincount(sparse(np.zeros((0, 2)), np.int32([]), [0, 4]), axis=-1),
     "Cannot allocate 0 batches, is the dense shape too wide?"),
    (lambda: tf.sparse.bincount(sparse([[0, 0], [3, 2]], np.int32([1, 3]), [2, 4]), axis=-1),
     "Invalid index value at 1: dimension 0 has value 3 which is not in [0, 2) (as given by "
     "dense shape Tensor<type: int64 shape: [2] values: 2 4>"),
])
def test_run_errors(build, message):
    with tf.Graph().as_default():
        check_run_error(build(), message)


def test_no_gradient_as_in_tensorflow():
    with tf.Graph().as_default():
        w = tf.constant([1., 2.])
        st = tf.sparse.bincount([1, 2], weights=w)
        with pytest.raises(LookupError, match="op type: DenseCountSparseOutput"):
            tf.gradients(st.values, w)
        w = sparse([[0, 0]], [1.], [1, 1])
        st = tf.sparse.bincount(sparse([[0, 0]], np.int32([1]), [1, 1]), weights=w, axis=-1)
        with pytest.raises(LookupError, match="op type: SparseCountSparseOutput"):
            tf.gradients(st.values, w.values)
