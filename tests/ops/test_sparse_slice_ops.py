"""SparseSlice(+Grad), SparseSplit, SparseConcat, sparse_merge and sparse_to_indicator: forward
against NumPy, shapes, the slice gradient, TF's graph structure and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import sparse_slice_ops
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_sparse_reshape_ops import check_run_error, sparse, triple, values_of

I64 = tf.int64
F32_64 = (tf.float32, tf.float64)
IND = np.array([[0, 1], [1, 0], [1, 3], [2, 2]], np.int64)
SHAPE = np.array([3, 4], np.int64)
B_IND = np.array([[0, 0], [2, 1]], np.int64)


def _slice_ref(i, v, s, start, size):
    stop = np.minimum(start + size, s)
    keep = np.all((i >= start) & (i < stop), axis=1)
    return [i[keep] - start, v[keep], np.maximum(stop - start, 0)]


def _split_ref(i, v, s, n, axis):
    dim = s[axis]
    sizes = [dim // n + (p < dim % n) for p in range(n)]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    out = []
    for p in range(n):
        start, size = np.zeros_like(s), s.copy()
        start[axis], size[axis] = starts[p], sizes[p]
        out.append(_slice_ref(i, v, s, start, size))
    return [part[k] for k in range(3) for part in out]


def _concat_ref(axis, *parts):
    """Shifted along `axis` by the sizes before, then in row-major order."""
    offset, indices, values = 0, [], []
    for i, v, s in parts:
        moved = i.copy()
        moved[:, axis] += offset
        offset += s[axis]
        indices.append(moved)
        values.append(v)
    indices, values = np.concatenate(indices), np.concatenate(values)
    order = np.lexsort(indices.T[::-1])
    shape = parts[0][2].copy()
    shape[axis] = offset
    return [indices[order], values[order], shape]


def _merge_ref(i, ids, v, s, vocab):
    merged = np.concatenate([i[:, :-1], ids[:, None]], axis=1)
    order = np.lexsort(merged.T[::-1])
    return [merged[order], v[order], np.append(s[:-1], vocab)]


CASES = [
    OpCase("sparse_slice",
           lambda i, v, s: triple(tf.sparse_slice(sparse(i, v, s), [1, 1], [2, 2])),
           lambda i, v, s: _slice_ref(i, v, s, np.array([1, 1]), np.array([2, 2])),
           [IND, values_of(4), SHAPE], dtypes=(tf.float32, tf.float64, tf.int32),
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_slice_values",
           lambda i, v, s: tf.sparse.slice(sparse(i, v, s), [1, 0], [5, 5]).values,
           lambda i, v, s: _slice_ref(i, v, s, np.array([1, 0]), np.array([5, 5]))[1],
           [IND, values_of(4), SHAPE], dtypes=F32_64, fixed_dtypes=(I64, None, I64)),
    OpCase("sparse_slice_outside",
           lambda i, v, s: triple(tf.sparse.slice(sparse(i, v, s), [4, 0], [5, 5])),
           lambda i, v, s: _slice_ref(i, v, s, np.array([4, 0]), np.array([5, 5])),
           [IND, values_of(4), SHAPE], fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_slice_grad",
           lambda g, i, st, o: apply_op(sparse_slice_ops.SparseSliceGrad, [g, i, st, o]),
           lambda g, i, st, o: np.array([0, g[0], g[1], 0], g.dtype),
           [values_of(2), IND, np.array([1, 0], np.int64), np.array([[0, 0], [0, 3]], np.int64)],
           dtypes=F32_64, fixed_dtypes=(None, I64, I64, I64), grad=False),
    OpCase("sparse_split_axis1",
           lambda i, v, s: [t for sp in tf.sparse_split(sp_input=sparse(i, v, s), num_split=2,
                                                         axis=1) for t in triple(sp)],
           lambda i, v, s: [x for p in range(2) for x in _split_ref(i, v, s, 2, 1)[p::2]],
           [IND, values_of(4), SHAPE], dtypes=(tf.float32, tf.int64),
           fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_split_uneven",
           lambda i, v, s: [t for sp in tf.sparse.split(sp_input=sparse(i, v, s), num_split=3,
                                                         axis=-1) for t in triple(sp)],
           lambda i, v, s: [x for p in range(3) for x in _split_ref(i, v, s, 3, 1)[p::3]],
           [IND, values_of(4), SHAPE], fixed_dtypes=(I64, None, I64), grad=False),
    OpCase("sparse_concat_axis1",
           lambda i, v, s, bi, bv, bs: triple(tf.sparse_concat(1, [sparse(i, v, s),
                                                                    sparse(bi, bv, bs)])),
           lambda i, v, s, bi, bv, bs: _concat_ref(1, (i, v, s), (bi, bv, bs)),
           [IND, values_of(4), SHAPE, B_IND, values_of(2), np.array([3, 2], np.int64)],
           dtypes=(tf.float32, tf.float64, tf.int32),
           fixed_dtypes=(I64, None, I64, I64, None, I64), grad=False),
    OpCase("sparse_concat_axis0_three",
           lambda i, v, s, bi, bv: triple(tf.sparse.concat(
               0, [sparse(i, v, s), sparse(bi, bv, [3, 4]), sparse(bi, bv, [3, 4])])),
           lambda i, v, s, bi, bv: _concat_ref(0, (i, v, s), (bi, bv, np.array([3, 4])),
                                               (bi, bv, np.array([3, 4]))),
           [IND, values_of(4), SHAPE, B_IND, values_of(2)],
           fixed_dtypes=(I64, None, I64, I64, None), grad=False),
    OpCase("sparse_merge",
           lambda i, ids, v, s: triple(tf.sparse_merge(sparse(i, ids, s), sparse(i, v, s), 5)),
           lambda i, ids, v, s: _merge_ref(i, ids, v, s, 5),
           [IND, np.array([3, 1, 0, 4], np.int64), values_of(4), SHAPE],
           fixed_dtypes=(I64, I64, None, I64), grad=False),
    OpCase("sparse_to_indicator",
           lambda i, ids, s: tf.sparse_to_indicator(sparse(i, ids, s), 5),
           lambda i, ids, s: _indicator(i, ids, s, 5),
           [IND, np.array([3, 1, 0, 4], np.int64), SHAPE], dtypes=(tf.int64,),
           fixed_dtypes=(I64, tf.int32, I64), grad=False),
]


def _indicator(i, ids, s, vocab):
    out = np.zeros(tuple(s[:-1]) + (vocab,), bool)
    out[tuple(i[:, :-1].T) + (ids,)] = True
    return out


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        a = tf.SparseTensor(IND, [1.0, 2.0, 3.0, 4.0], SHAPE)
        b = tf.SparseTensor(B_IND, [5.0, 6.0], [3, 2])
        joined = tf.sparse_concat(1, [a, b])
        assert (joined.indices.op.type, joined.indices.op.name) == ("SparseConcat",
                                                                    "SparseConcat")
        assert joined.indices.shape.as_list() == [6, 2] and joined.shape.as_list() == [3, 6]
        assert joined.dense_shape.op.type == "Const"
        assert tf.sparse_concat(0, [a]) is a
        assert tf.gradients(joined.values, a.values) == [None]
        part = tf.sparse_slice(a, [1, 1], [2, 2])
        assert part.indices.op.name == "SparseSlice" and part.indices.shape.as_list() == [None, 2]
        grad = tf.gradients(tf.reduce_sum(part.values), a.values)[0]
        assert grad.op.type == "SparseSliceGrad" and grad.shape.as_list() == [4]
        pieces = tf.sparse_split(sp_input=a, num_split=2, axis=1)
        assert [p.indices.op.name for p in pieces] == ["SparseSplit"] * 2
        merged = tf.sparse_merge(tf.SparseTensor(IND, tf.constant([3, 1, 0, 4], tf.int64),
                                                 SHAPE), a, 5)
        assert merged.indices.op.name == "SparseMerge/SparseReorder"
        assert merged.shape.as_list() == [3, 5]
        flags = tf.sparse_to_indicator(tf.SparseTensor(IND, tf.constant([3, 1, 0, 4], tf.int64),
                                                       SHAPE), 5)
        assert (flags.op.type, flags.op.name, flags.dtype) == ("SparseToDense",
                                                               "SparseToIndicator", tf.bool)
        assert flags.op.get_attr("validate_indices") is False
        with tf.Session() as sess:
            got = sess.run(grad)
    np.testing.assert_array_equal(got, [0, 0, 0, 1])


def test_build_errors():
    with tf.Graph().as_default():
        a = tf.SparseTensor(IND, [1.0, 2.0, 3.0, 4.0], SHAPE)
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.sparse_concat(1, [a, tf.SparseTensor([[0, 0, 0]], [7.0], [3, 2, 1])])
        with pytest.raises(TypeError, match="Inputs must be a list or tuple"):
            tf.sparse_concat(1, a)
        with pytest.raises(ValueError, match="Cannot specify both 'expand_nonconcat_dim'"):
            tf.sparse.concat(0, [a, a], expand_nonconcat_dims=True)
        with pytest.raises(ValueError, match="Keyword arguments are required"):
            tf.sparse_split(a, 2, 1)
        with pytest.raises(ValueError, match="axis is required"):
            tf.sparse_split(sp_input=a, num_split=2)
        with pytest.raises(TypeError, match="vocab_size has to be a Tensor or Python int"):
            tf.sparse_merge(a, a, 4.0)
        with pytest.raises(ValueError, match="equal lengths"):
            tf.sparse_merge([a, a], a, [4])


@pytest.mark.parametrize("build,message", [
    (lambda a: tf.sparse_concat(1, [a, tf.SparseTensor([[0, 0]], [7.0], [2, 2])]),
     "Input shapes must match: expected 3 for dimension 0 but got 2 at position 1"),
    (lambda a: tf.sparse.slice(a, [1, 0], [-1, 5]), "Expected a non-negative size, got -1"),
    (lambda a: tf.sparse.slice(a, [1], [1]),
     "Expected start to be a vector of length 2 but got length 1"),
    (lambda a: tf.sparse_split(sp_input=a, num_split=5, axis=1)[0],
     "Input num_split should be between 1 and the splitting dimension size (4), got 5"),
    (lambda a: tf.sparse_split(sp_input=a, num_split=2, axis=2)[0],
     "Input axis should be in range [-2, 2), got 2"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default():
        check_run_error(build(tf.SparseTensor(IND, [1.0, 2.0, 3.0, 4.0], SHAPE)), message)
