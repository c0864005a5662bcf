"""SparseReduceSum/Max(+Sparse), SparseSoftmax, SparseSparseMaximum/Minimum and
SparseDenseCwiseAdd/Mul/Div: forward against NumPy, shapes, gradients, graph and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import sparse_reduce_ops
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_sparse_reshape_ops import check_run_error, sparse, triple

I64 = tf.int64
F32_64 = (tf.float32, tf.float64)
IND = np.array([[0, 0, 1], [0, 1, 0], [0, 1, 2], [1, 0, 2], [1, 1, 1]], np.int64)
SHAPE = np.array([3, 2, 3], np.int64)   # row 2 has no entries


def _values(n):
    return lambda rng, dt: rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n)


def _reduce_ref(ufunc, i, v, s, axes, keepdims=False):
    """Reduces the stored entries only; positions without any entry are 0."""
    axes = tuple(sorted({a % len(s) for a in axes}))
    kept = np.array(s)
    kept[list(axes)] = 1
    grouped = i.copy()
    grouped[:, list(axes)] = 0
    out = np.zeros(tuple(kept), v.dtype)
    if ufunc is np.maximum:
        out[tuple(grouped.T)] = np.iinfo(v.dtype).min if v.dtype.kind == "i" else -np.inf
    ufunc.at(out, tuple(grouped.T), v)
    return out if keepdims else out.reshape(tuple(np.delete(s, axes)))


def _reduce_sparse_ref(ufunc, i, v, s, axes):
    dense = _reduce_ref(ufunc, i, v, s, axes, keepdims=True)
    present = np.zeros(dense.shape, bool)
    grouped = i.copy()
    grouped[:, list(axes)] = 0
    present[tuple(grouped.T)] = True
    coords = np.argwhere(present)
    return [np.delete(coords, axes, axis=1), dense[present], np.delete(s, axes)]


def _softmax_ref(i, v, s):
    rows = [tuple(r) for r in i[:, :-1].tolist()]
    out = np.empty_like(v)
    for row in set(rows):
        members = [k for k, r in enumerate(rows) if r == row]
        e = np.exp(v[members] - v[members].max())
        out[members] = e / e.sum()
    return out


def _sparse_sparse_ref(ufunc, ai, av, bi, bv, s):
    a, b = {tuple(r): x for r, x in zip(ai.tolist(), av)}, {tuple(r): x for r, x in
                                                           zip(bi.tolist(), bv)}
    keys = sorted(set(a) | set(b))
    return [np.array(keys, np.int64),
            np.array([ufunc(a.get(k, 0), b.get(k, 0)) for k in keys], av.dtype)]


_CWISE = {"SparseDenseCwiseAdd": np.add, "SparseDenseCwiseMul": np.multiply,
          "SparseDenseCwiseDiv": np.divide}


def _cwise_case(op_name, dense_shape, grad):
    op_def = getattr(sparse_reduce_ops, op_name)
    return OpCase(
        f"{op_name}_{'x'.join(map(str, dense_shape))}",
        lambda i, v, s, d: sparse_reduce_ops.sparse_dense_cwise(op_def, sparse(i, v, s), d).values,
        lambda i, v, s, d: _CWISE[op_name](v, np.broadcast_to(d, tuple(s))[tuple(i.T)]),
        [IND, _values(5), SHAPE, lambda rng, dt: rng.uniform(1, 2, dense_shape)],
        dtypes=F32_64, fixed_dtypes=(I64, None, I64), grad=grad)


CASES = [
    OpCase("sparse_reduce_sum_axis1",
           lambda i, v, s: tf.sparse_reduce_sum(sparse(i, v, s), 1),
           lambda i, v, s: _reduce_ref(np.add, i, v, s, [1]), [IND, _values(5), SHAPE],
           dtypes=(tf.float32, tf.float64, tf.int32), fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_reduce_sum_all",
           lambda i, v, s: tf.sparse.reduce_sum(sparse(i, v, s)),
           lambda i, v, s: _reduce_ref(np.add, i, v, s, [0, 1, 2]), [IND, _values(5), SHAPE],
           fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_reduce_sum_keepdims",
           lambda i, v, s: tf.sparse_reduce_sum(sparse(i, v, s), [0, -1], keepdims=True),
           lambda i, v, s: _reduce_ref(np.add, i, v, s, [0, -1], True), [IND, _values(5), SHAPE],
           dtypes=F32_64, fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_reduce_sum_sparse",
           lambda i, v, s: triple(tf.sparse_reduce_sum_sparse(sparse(i, v, s), 2)),
           lambda i, v, s: _reduce_sparse_ref(np.add, i, v, s, [2]), [IND, _values(5), SHAPE],
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_reduce_max",
           lambda i, v, s: tf.sparse_reduce_max(sparse(i, v, s), -1),
           lambda i, v, s: _reduce_ref(np.maximum, i, v, s, [-1]), [IND, _values(5), SHAPE],
           dtypes=(tf.float32, tf.float64, tf.int64), fixed_dtypes=(I64, None, I64),
           grad=False),
    OpCase("sparse_reduce_max_sparse",
           lambda i, v, s: triple(tf.sparse.reduce_max_sparse(sparse(i, v, s), [0, 1])),
           lambda i, v, s: _reduce_sparse_ref(np.maximum, i, v, s, [0, 1]),
           [IND, _values(5), SHAPE], dtypes=(tf.float32, tf.int32),
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_softmax", lambda i, v, s: tf.sparse_softmax(sparse(i, v, s)).values,
           _softmax_ref, [IND, _values(5), SHAPE], dtypes=F32_64,
           fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_maximum",
           lambda ai, av, bi, bv, s: triple(tf.sparse_maximum(sparse(ai, av, s),
                                                               sparse(bi, bv, s)))[:2],
           lambda ai, av, bi, bv, s: _sparse_sparse_ref(np.maximum, ai, av, bi, bv, s),
           [IND[:3], _values(3), IND[2:], _values(3), SHAPE],
           dtypes=(tf.float32, tf.int32), fixed_dtypes=(I64, None, I64, None, I64),
           grad=False),
    OpCase("sparse_minimum",
           lambda ai, av, bi, bv, s: triple(tf.sparse.minimum(sparse(ai, av, s),
                                                               sparse(bi, bv, s)))[:2],
           lambda ai, av, bi, bv, s: _sparse_sparse_ref(np.minimum, ai, av, bi, bv, s),
           [IND[:3], _values(3), IND[2:], _values(3), SHAPE], dtypes=F32_64,
           fixed_dtypes=(I64, None, I64, None, I64), grad=False),
    _cwise_case("SparseDenseCwiseAdd", (2, 1), grad=False),
    _cwise_case("SparseDenseCwiseMul", (3,), grad=True),
    _cwise_case("SparseDenseCwiseMul", (3, 2, 3), grad=True),
    _cwise_case("SparseDenseCwiseDiv", (2, 1), grad=True),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [1, 0], [2, 2]], [1.0, 2.0, 3.0], [3, 3])
        total = tf.sparse_reduce_sum(sp, 1)
        assert (total.op.type, total.op.name, total.shape.as_list()) == (
            "SparseReduceSum", "SparseReduceSum", [3])
        assert tf.sparse_reduce_sum(sp).shape.as_list() == []
        assert tf.sparse_reduce_max(sp, 1, keepdims=True).shape.as_list() == [3, 1]
        fed = tf.sparse_reduce_sum(tf.sparse_placeholder(tf.float32, [None, 4]), 1)
        assert fed.shape.ndims is None
        partial = tf.sparse_reduce_sum_sparse(sp, 1)
        assert partial.indices.op.type == "SparseReduceSumSparse"
        soft = tf.sparse_softmax(sp)
        assert soft.values.op.type == "SparseSoftmax" and soft.indices is sp.indices
        biggest = tf.sparse_maximum(sp, sp)
        assert biggest.indices.op.name == "SparseSparseMaximum"
        assert biggest.indices.shape.as_list() == [None, None]
        assert tf.gradients(tf.sparse_reduce_max(sp, 1), sp.values) == [None]


@pytest.mark.parametrize("build", [
    lambda sp: tf.sparse_maximum(sp, sp).values,
    lambda sp: sparse_reduce_ops.sparse_dense_cwise(sparse_reduce_ops.SparseDenseCwiseAdd, sp,
                                                    tf.ones([3])).values,
])
def test_gradients_tensorflow_does_not_implement(build):
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 3])
        with pytest.raises(NotImplementedError, match="is not implemented"):
            tf.gradients(build(sp), sp.values)


@pytest.mark.parametrize("build,message", [
    (lambda sp: tf.sparse_reduce_sum(sp, 2), "Invalid reduction dimension 2, for input with 2 "
                                             "dimensions."),
    (lambda sp: tf.sparse_softmax(tf.SparseTensor([[0]], [1.0], [3])).values,
     "Input should have rank >= 2, but received shape: 3"),
    (lambda sp: tf.sparse_maximum(sp, tf.SparseTensor([[0, 1]], [1.0], [2, 4])).values,
     "Operands' shapes do not match: got 3 and 4 for dimension 1"),
    (lambda sp: sparse_reduce_ops.sparse_dense_cwise(sparse_reduce_ops.SparseDenseCwiseMul, sp,
                                                     tf.ones([2])).values,
     "SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible shapes: "
     "[2,3] vs. [2]"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default():
        check_run_error(build(tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 3])), message)
