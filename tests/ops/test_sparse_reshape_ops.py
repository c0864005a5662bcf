"""SparseReorder, SparseReshape, SparseFillEmptyRows(+Grad) and the compositions sparse_retain,
sparse_reset_shape, sparse_transpose, sparse.expand_dims / eye / from_dense: forward against
NumPy, shapes, value gradients, TF's graph structure and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import sparse_reshape_ops
from tensorweave.testing.op_case import OpCase, case_tests

I64 = tf.int64
F32_64 = (tf.float32, tf.float64)
# An unordered 3 x 4 SparseTensor with an empty row (1) and an entry in the last row.
IND = np.array([[2, 3], [0, 1], [0, 0], [2, 1]], np.int64)
SHAPE = np.array([4, 4], np.int64)
EMPTY_IND = np.zeros((0, 2), np.int64)


def values_of(n):
    """An OpCase input generator of n random values (shared by the sparse test files)."""
    return lambda rng, dt: rng.randn(n)


def sparse(i, v, s):
    return tf.SparseTensor(i, v, s)


def triple(sp):
    """A SparseTensor's components, as an OpCase builder's outputs."""
    return [sp.indices, sp.values, sp.dense_shape]


def check_run_error(out, message: str) -> None:
    """Running `out` (a Tensor or SparseTensor) raises InvalidArgumentError with `message`."""
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(out)
    assert message in info.value.message


def _reorder_ref(i, v, s):
    order = np.lexsort(i.T[::-1])
    return [i[order], v[order], s]


def _reshape_ref(i, v, s, new):
    new = np.array(new, np.int64)
    new[new == -1] = np.prod(s) // np.prod(new[new != -1])
    linear = np.ravel_multi_index(tuple(i.T), tuple(s))
    return [np.stack(np.unravel_index(linear, tuple(new)), 1).astype(np.int64), v, new]


def _fill_ref(i, v, s, d):
    """Row by row: the row's entries in input order, or one default entry at [row, 0...]."""
    out_i, out_v, empty, where = [], [], [], np.zeros(len(i), np.int64)
    for row in range(s[0]):
        members = np.flatnonzero(i[:, 0] == row)
        empty.append(len(members) == 0)
        if not len(members):
            out_i.append([row] + [0] * (len(s) - 1))
            out_v.append(d)
        for m in members:
            where[m] = len(out_i)
            out_i.append(i[m])
            out_v.append(v[m])
    return [np.array(out_i, np.int64).reshape(-1, len(s)), np.array(out_v, v.dtype), s,
            np.array(empty), where]


def _fill(i, v, s, d):
    sp, empty = tf.sparse_fill_empty_rows(sparse(i, v, s), d)
    reverse = sp.indices.op.outputs[3]
    return triple(sp) + [empty, reverse]


def _fill_grad_ref(reverse, grad):
    return [grad[reverse], np.asarray(grad.sum() - grad[reverse].sum(), grad.dtype)]


def _transpose_ref(i, v, s, perm):
    moved = i[:, perm]
    order = np.lexsort(moved.T[::-1])
    return [moved[order], v[order], s[list(perm)]]


CASES = [
    OpCase("sparse_reorder", lambda i, v, s: triple(tf.sparse_reorder(sparse(i, v, s))),
           _reorder_ref, [IND, values_of(4), SHAPE], dtypes=(tf.float32, tf.float64, tf.int32),
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_reorder_grad", lambda i, v, s: tf.sparse.reorder(sparse(i, v, s)).values,
           lambda i, v, s: _reorder_ref(i, v, s)[1], [IND, values_of(4), SHAPE],
           dtypes=F32_64, fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_reorder_empty", lambda i, v, s: triple(tf.sparse_reorder(sparse(i, v, s))),
           _reorder_ref, [EMPTY_IND, np.zeros(0), SHAPE], fixed_dtypes=(I64, None, I64),
           grad=False),
    OpCase("sparse_reshape",
           lambda i, v, s: triple(tf.sparse_reshape(sparse(i, v, s), [2, -1, 2])),
           lambda i, v, s: _reshape_ref(i, v, s, [2, -1, 2]), [IND, values_of(4), SHAPE],
           dtypes=(tf.float32, tf.int64), fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_reshape_to_vector",
           lambda i, v, s: triple(tf.sparse.reshape(sparse(i, v, s), [16])),
           lambda i, v, s: _reshape_ref(i, v, s, [16]), [IND, values_of(4), SHAPE],
           fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_fill_empty_rows", _fill, _fill_ref,
           [IND, values_of(4), SHAPE, lambda rng, dt: rng.randn()],
           dtypes=(tf.float32, tf.float64, tf.int32), fixed_dtypes=(I64, None, I64),
           grad=False),
    OpCase("sparse_fill_empty_rows_values", lambda i, v, s, d: _fill(i, v, s, d)[1],
           lambda i, v, s, d: _fill_ref(i, v, s, d)[1],
           [IND, values_of(4), SHAPE, lambda rng, dt: rng.randn()], dtypes=F32_64,
           fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_fill_empty_rows_all_empty", _fill, _fill_ref,
           [EMPTY_IND, np.zeros(0), np.array([3, 2], np.int64), np.array(-1.0)],
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_fill_empty_rows_grad",
           lambda r, g: apply_op(sparse_reshape_ops.SparseFillEmptyRowsGrad, [r, g]),
           _fill_grad_ref, [np.array([3, 0, 1], np.int64), values_of(5)], dtypes=F32_64,
           fixed_dtypes=(I64,), grad=False),
    OpCase("sparse_retain",
           lambda i, v, s, k: triple(tf.sparse_retain(sparse(i, v, s), k)),
           lambda i, v, s, k: [i[k], v[k], s],
           [IND, values_of(4), SHAPE, np.array([True, False, True, True])],
           dtypes=F32_64, fixed_dtypes=(I64, None, I64, tf.bool)),
    OpCase("sparse_reset_shape_tight",
           lambda i, v, s: triple(tf.sparse_reset_shape(sparse(i, v, s))),
           lambda i, v, s: [i, v, i.max(axis=0) + 1], [IND, values_of(4), SHAPE],
           fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_reset_shape_new",
           lambda i, v, s, n: triple(tf.sparse.reset_shape(sparse(i, v, s), n)),
           lambda i, v, s, n: [i, v, n], [IND, values_of(4), SHAPE, np.array([5, 7], np.int64)],
           fixed_dtypes=(I64, None, I64, I64)),
    OpCase("sparse_transpose",
           lambda i, v, s: triple(tf.sparse_transpose(sparse(i, v, s))),
           lambda i, v, s: _transpose_ref(i, v, s, (1, 0)), [IND, values_of(4), SHAPE],
           dtypes=F32_64, fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_transpose_3d",
           lambda i, v, s: triple(tf.sparse.transpose(sparse(i, v, s), [2, 0, 1])),
           lambda i, v, s: _transpose_ref(i, v, s, (2, 0, 1)),
           [np.array([[0, 1, 2], [1, 0, 0], [1, 2, 1]], np.int64), values_of(3),
            np.array([2, 3, 4], np.int64)], fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_expand_dims",
           lambda i, v, s: triple(tf.sparse.expand_dims(sparse(i, v, s), 1)),
           lambda i, v, s: [np.insert(i, 1, 0, axis=1), v, np.insert(s, 1, 1)],
           [IND, values_of(4), SHAPE], fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_expand_dims_last",
           lambda i, v, s: triple(tf.sparse.expand_dims(sparse(i, v, s), -1)),
           lambda i, v, s: [np.insert(i, 2, 0, axis=1), v, np.append(s, 1)],
           [IND, values_of(4), SHAPE], fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_eye",   # the sizes are scalars (a scalar of unknown rank is not a size)
           lambda r, c: triple(tf.sparse.eye(tf.reshape(r, []), tf.reshape(c, []),
                                              dtype=tf.float64)),
           lambda r, c: [np.stack([np.arange(min(r, c))] * 2, 1), np.ones(min(r, c)),
                         np.array([r, c])],
           [np.array(3), np.array(2)], dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("sparse_from_dense", lambda x: triple(tf.sparse.from_dense(x)),
           lambda x: [np.argwhere(x), x[x != 0], np.array(x.shape)],
           [np.array([[0, 1.5, 0], [2, 0, -3]])], dtypes=(tf.float32, tf.int32),
           grad=False),   # a perturbed zero becomes an entry: no numerical gradient
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[1, 0], [0, 2], [0, 1]], [1.0, 2.0, 3.0], [2, 3])
        ordered = tf.sparse_reorder(sp)
        assert (ordered.indices.op.type, ordered.indices.op.name) == ("SparseReorder",
                                                                      "SparseReorder")
        assert ordered.dense_shape.op.type == "Const"
        reshaped = tf.sparse_reshape(sp, [3, -1])
        assert reshaped.indices.op.name == "SparseReshape" and reshaped.shape.as_list() == [3, 2]
        assert reshaped.values.op.type == "Identity"
        filled, empty = tf.sparse_fill_empty_rows(tf.SparseTensor([[1, 0]], [1.0], [5, 3]), -1.0)
        assert filled.indices.op.name == "SparseFillEmptyRows/SparseFillEmptyRows"
        assert filled.indices.shape.as_list() == [None, 2] and empty.shape.as_list() == [5]
        transposed = tf.sparse_transpose(sp)
        assert transposed.indices.op.name == "SparseTranspose/SparseReorder"
        assert transposed.shape.as_list() == [3, 2]
        eye = tf.sparse.eye(3)
        assert eye.shape.as_list() == [3, 3] and eye.values.op.name == "eye/ones"
        dense = tf.sparse.from_dense([[0, 1], [2, 0]])
        assert dense.indices.op.name == "dense_to_sparse/Where" and dense.dtype == tf.int32


def test_static_reshape_errors():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[1, 0]], [1.0], [2, 3])
        with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 6 elements to "
                                             r"shape \[4, 2\] \(8 elements\)"):
            tf.sparse_reshape(sp, [4, 2])
        with pytest.raises(ValueError, match=r"to shape \[None, 4\] \(4 elements\)"):
            tf.sparse_reshape(sp, [-1, 4])
        with pytest.raises(ValueError, match="At most one dimension can be inferred"):
            tf.sparse_reshape(sp, [-1, -1])
        with pytest.raises(ValueError, match="Requested new_shape should have dimension sizes"):
            tf.sparse_reset_shape(sp, [1, 5])
        with pytest.raises(ValueError):
            tf.sparse_retain(sp, [True, False])
        with pytest.raises(TypeError, match="axis must be an integer"):
            tf.sparse.expand_dims(sp, 1.5)


def _reshape_error(new):
    new = np.array(new, np.int64)
    return tf.sparse_reshape(tf.SparseTensor([[1, 0]], [1.0], [2, 3]),
                             tf.placeholder_with_default(new, [len(new)]))


@pytest.mark.parametrize("build,message", [
    (lambda: _reshape_error([-1, 4]), "Input to reshape is a SparseTensor with 6 dense values, "
                                      "but the requested shape requires a multiple of 4. "
                                      "input_shape=[2,3] output_shape=[1,4]"),
    (lambda: _reshape_error([-1, -1]), "only one output dimension may be -1, not both 0 and 1"),
    (lambda: _reshape_error([0, -1]), "reshape cannot infer the missing input size for an empty "
                                      "tensor unless all specified input sizes are non-zero"),
    (lambda: _reshape_error([5, -2]), "size 1 must be non-negative, not -2"),
    (lambda: _reshape_error([5, 2]), "Input to reshape is a tensor with 6 dense values, but the "
                                     "requested shape has 10"),
    (lambda: tf.sparse_fill_empty_rows(tf.SparseTensor([[1, 0], [7, 2]], [1.0, 2.0], [5, 3]),
                                       -1.0)[0],
     "indices(1, 0) is invalid: 7 >= 5"),
    (lambda: tf.sparse_reset_shape(tf.SparseTensor([[1, 0]], [1.0], [2, 3]),
                                   tf.placeholder_with_default(np.array([1, 5], np.int64), [2])),
     "Condition x <= y did not hold"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default():
        check_run_error(build(), message)
