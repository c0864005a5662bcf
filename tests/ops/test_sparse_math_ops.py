"""SparseAdd(+Grad), SparseTensorDenseAdd, SparseTensorDenseMatMul, SparseMatMul and sparse_mask:
forward against NumPy, shapes, gradients, TF's graph structure and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import sparse_math_ops
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_sparse_reshape_ops import check_run_error, sparse

I64 = tf.int64
F32_64 = (tf.float32, tf.float64)
A_IND = np.array([[0, 1], [1, 0], [2, 2]], np.int64)
B_IND = np.array([[0, 1], [1, 1], [2, 2], [2, 3]], np.int64)
SHAPE = np.array([3, 4], np.int64)


def _values(n):
    return lambda rng, dt: rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n)


def _dense(i, v, s):
    out = np.zeros(tuple(s), v.dtype)
    np.add.at(out, tuple(i.T), v)
    return out


def _add_ref(ai, av, bi, bv, s, thresh=0):
    """The union of entries in row-major order; a shared entry with |sum| < thresh dropped."""
    positions = {tuple(r): v for r, v in zip(ai.tolist(), av)}
    shared = set()
    for r, v in zip(bi.tolist(), bv):
        if tuple(r) in positions:
            shared.add(tuple(r))
        positions[tuple(r)] = positions.get(tuple(r), 0) + v
    keep = sorted(k for k, v in positions.items() if k not in shared or abs(v) >= thresh)
    return [np.array(keep, np.int64).reshape(-1, len(s)),
            np.array([positions[k] for k in keep], av.dtype), s]


def _add(ai, av, bi, bv, s, **kw):
    out = tf.sparse_add(sparse(ai, av, s), sparse(bi, bv, s), **kw)
    return [out.indices, out.values, out.dense_shape]


def _add_grad_ref(g, ai, bi, si):
    where = {tuple(r): k for k, r in enumerate(si.tolist())}
    return [np.array([g[where[tuple(r)]] if tuple(r) in where else 0 for r in ind.tolist()],
                     g.dtype) for ind in (ai, bi)]


def _adjoint(m, flag):
    return m.conj().T if flag else m


def _matmul_case(adj_a, adj_b, dtypes=F32_64):
    a_shape = np.array([4, 3] if adj_a else [3, 4], np.int64)
    a_ind = A_IND[:, ::-1].copy() if adj_a else A_IND
    b_shape = (2, 4) if adj_b else (4, 2)
    return OpCase(
        f"sparse_tensor_dense_matmul_{int(adj_a)}{int(adj_b)}",
        lambda i, v, s, b: tf.sparse_tensor_dense_matmul(sparse(i, v, s), b, adjoint_a=adj_a,
                                                         adjoint_b=adj_b),
        lambda i, v, s, b: _adjoint(_dense(i, v, s), adj_a) @ _adjoint(b, adj_b),
        [a_ind, _values(3), a_shape, lambda rng, dt: rng.randn(*b_shape)], dtypes=dtypes,
        fixed_dtypes=(I64, None, I64))


CASES = [
    OpCase("sparse_add", _add, _add_ref,
           [A_IND, _values(3), B_IND, _values(4), SHAPE],
           dtypes=(tf.float32, tf.float64, tf.int32), fixed_dtypes=(I64, None, I64, None, I64),
           grad=False),
    OpCase("sparse_add_values", lambda *a: _add(*a)[1], lambda *a: _add_ref(*a)[1],
           [A_IND, _values(3), B_IND, _values(4), SHAPE], dtypes=F32_64,
           fixed_dtypes=(I64, None, I64, None, I64)),
    OpCase("sparse_add_threshold", lambda *a: _add(*a, threshold=0.6),
           lambda *a: _add_ref(*a, thresh=0.6),
           [A_IND, np.array([1.0, 2.0, 0.25]), B_IND, np.array([-1.0, 5.0, 0.1, 0.5]), SHAPE],
           fixed_dtypes=(I64, None, I64, None, I64), grad=False),
    OpCase("sparse_add_empty", _add, _add_ref,
           [np.zeros((0, 2), np.int64), np.zeros(0), B_IND, _values(4), SHAPE],
           fixed_dtypes=(I64, None, I64, None, I64), grad=False),
    OpCase("sparse_add_grad",
           lambda g, ai, bi, si: apply_op(sparse_math_ops.SparseAddGrad, [g, ai, bi, si]),
           _add_grad_ref, [_values(3), A_IND, B_IND, np.array([[0, 1], [1, 0], [2, 3]])],
           dtypes=F32_64, fixed_dtypes=(None, I64, I64, I64), grad=False),
    OpCase("sparse_tensor_dense_add",
           lambda i, v, s, d: tf.sparse_add(sparse(i, v, s), d),
           lambda i, v, s, d: _dense(i, v, s) + d,
           [A_IND, _values(3), SHAPE, lambda rng, dt: rng.randn(3, 4)],
           dtypes=(tf.float32, tf.float64, tf.int32, tf.complex64),
           fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_tensor_dense_add_dense_first",
           lambda i, v, s, d: tf.sparse.add(d, sparse(i, v, s)),
           lambda i, v, s, d: _dense(i, v, s) + d,
           [A_IND, _values(3), SHAPE, lambda rng, dt: rng.randn(3, 4)], dtypes=(tf.float64,),
           fixed_dtypes=(I64, None, I64)),
    _matmul_case(False, False, (tf.float32, tf.float64, tf.int32, tf.complex128)),
    _matmul_case(True, False),
    _matmul_case(False, True),
    _matmul_case(True, True, (tf.float64, tf.complex128)),
    OpCase("sparse_dense_matmul_dense_sparse",
           lambda d, i, v, s: tf.sparse.sparse_dense_matmul(d, sparse(i, v, s)),
           lambda d, i, v, s: d @ _dense(i, v, s),
           [lambda rng, dt: rng.randn(2, 3), A_IND, _values(3), SHAPE], dtypes=F32_64,
           fixed_dtypes=(None, I64, None, I64)),
    OpCase("sparse_matmul", lambda a, b: tf.sparse_matmul(a, b, a_is_sparse=True),
           lambda a, b: a @ b,
           [lambda rng, dt: rng.randn(2, 3), lambda rng, dt: rng.randn(3, 4)],
           dtypes=(tf.float32,), grad=False),   # float32 only: gradients tested below
    OpCase("sparse_matmul_transposed",
           lambda a, b: tf.sparse_matmul(a, b, transpose_a=True, transpose_b=True,
                                         b_is_sparse=True),
           lambda a, b: (a.T @ b.T).astype(np.float32),
           [lambda rng, dt: rng.randn(3, 2), lambda rng, dt: rng.randn(4, 3)],
           dtypes=(tf.float32, tf.bfloat16), rtol=2e-2, atol=2e-2, grad=False),
    OpCase("sparse_mask",
           lambda v, i: [tf.sparse_mask(tf.IndexedSlices(v, i, [20, 2]), [12]).values,
                         tf.sparse_mask(tf.IndexedSlices(v, i, [20, 2]), [12]).indices],
           lambda v, i: [v[[0, 2]], i[[0, 2]]],
           [lambda rng, dt: rng.randn(3, 2), np.array([4, 12, 8], np.int32)], dtypes=F32_64,
           fixed_dtypes=(None, tf.int32)),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


@pytest.mark.parametrize("adj_a,adj_b", [(False, False), (True, False), (False, True),
                                         (True, True)])
def test_sparse_matmul_gradients_match_sparse_tensor_dense_matmul(adj_a, adj_b):
    """SparseMatMul's gradients (float32 only, so not in the float64 checker) against the
    ones of a dense matmul of the same operands."""
    rng = np.random.RandomState(0)
    a = rng.randn(3, 2).astype(np.float32) if adj_a else rng.randn(2, 3).astype(np.float32)
    b = rng.randn(4, 3).astype(np.float32) if adj_b else rng.randn(3, 4).astype(np.float32)
    with tf.Graph().as_default():
        ta, tb = tf.constant(a), tf.constant(b)
        w = tf.constant(rng.randn(2, 4).astype(np.float32))
        hinted = tf.sparse_matmul(ta, tb, transpose_a=adj_a, transpose_b=adj_b,
                                  a_is_sparse=True)
        plain = tf.matmul(ta, tb, transpose_a=adj_a, transpose_b=adj_b)
        got = tf.gradients(tf.reduce_sum(hinted * w), [ta, tb])
        want = tf.gradients(tf.reduce_sum(plain * w), [ta, tb])
        assert any(g.op.type == "SparseMatMul" for g in got)
        with tf.Session() as sess:
            got, want = sess.run([got, want])
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        a = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [3, 3])
        b = tf.SparseTensor([[0, 1], [2, 2]], [-1.0, 0.5], [3, 3])
        total = tf.sparse_add(a, b)
        assert (total.indices.op.type, total.indices.op.name) == ("SparseAdd", "SparseAdd")
        assert total.indices.shape.as_list() == [None, 2] and total.shape.as_list() == [3, 3]
        assert total.dense_shape.op.type == "Const"
        grads = tf.gradients(tf.reduce_sum(total.values), [a.values, b.values])
        assert grads[0].op.type == "SparseAddGrad" and grads[0].shape.as_list() == [2]
        dense = tf.sparse_add(a, tf.ones([3, 3]))
        assert (dense.op.type, dense.op.name) == ("SparseTensorDenseAdd", "SparseTensorDenseAdd")
        product = tf.sparse_tensor_dense_matmul(a, tf.ones([3, 2]))
        assert product.op.name == "SparseTensorDenseMatMul/SparseTensorDenseMatMul"
        assert product.shape.as_list() == [3, 2]
        hinted = tf.sparse_matmul(tf.ones([2, 3]), tf.ones([3, 2]), a_is_sparse=True)
        assert hinted.op.type == "SparseMatMul" and hinted.op.get_attr("a_is_sparse") is True
        masked = tf.sparse_mask(tf.IndexedSlices(tf.ones([3, 2]), tf.constant([4, 12, 8]),
                                                 tf.constant([20, 2])), [12])
        assert masked.values.op.name == "sparse_mask" and masked.indices.dtype == tf.int32


def test_build_errors():
    with tf.Graph().as_default():
        a = tf.SparseTensor([[0, 1]], [1.0], [3, 3])
        with pytest.raises(TypeError, match="At least one input should be SparseTensor"):
            tf.sparse_add(tf.ones([3]), tf.ones([3]))
        with pytest.raises(ValueError, match="are incompatible"):
            tf.sparse_add(a, tf.SparseTensor([[0, 1]], [1.0], [3, 4]))
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.sparse_tensor_dense_matmul(a, tf.ones([4, 2]))
        with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
            tf.sparse_tensor_dense_matmul(a, tf.ones([3]))
        with pytest.raises(TypeError):
            tf.sparse_tensor_dense_matmul(a, tf.ones([3, 2], tf.float64))
        with pytest.raises(TypeError):
            tf.sparse_matmul(tf.ones([2, 2], tf.float64), tf.ones([2, 2], tf.float64))
        with pytest.raises(ValueError, match="Cannot specify both"):
            tf.sparse_add(a, a, threshold=1, thresh=1)


@pytest.mark.parametrize("build,message", [
    (lambda: tf.sparse_add(tf.SparseTensor([[0, 1]], [1.0], [3, 3]), tf.ones([3, 4])),
     "Dimension 1 does not equal (no broadcasting is supported): sparse side 3 vs dense side 4"),
    (lambda: tf.sparse_tensor_dense_matmul(tf.SparseTensor([[0, 5]], [1.0], [3, 3]),
                                           tf.ones([3, 2])),
     "k (5) from index[0,1] out of bounds (>=3)"),
    (lambda: tf.sparse_tensor_dense_matmul(tf.SparseTensor([[4, 1]], [1.0], [3, 3]),
                                           tf.ones([3, 2])),
     "m (4) from index[0,0] out of bounds (>=3)"),
    (lambda: tf.sparse_add(tf.SparseTensor([[0, 1]], [1.0], [3, 3]), tf.SparseTensor(
        [[0, 1]], [1.0], tf.placeholder_with_default(np.array([3, 4], np.int64), [2]))).values,
     "Operands' shapes do not match"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default():
        check_run_error(build(), message)
