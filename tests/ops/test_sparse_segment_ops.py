"""SparseSegmentSum/Mean/SqrtN (+WithNumSegments) and their Grad ops: forward against NumPy,
shapes, gradients (dense and sparse_gradient=True), TF's graph names and index validation."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import sparse_segment_ops
from tensorweave.testing.op_case import OpCase, case_tests
from tests.ops.test_sparse_reshape_ops import check_run_error

F32_64 = (tf.float32, tf.float64)
INDICES = np.array([0, 2, 1, 4, 2], np.int32)
IDS = np.array([0, 0, 1, 3, 3], np.int32)
_NORM = {"sum": None, "mean": lambda c: c, "sqrt_n": np.sqrt}
_OP_KIND = {"sum": "Sum", "mean": "Mean", "sqrt_n": "SqrtN"}


def _reference(kind, data, indices, ids, num=None):
    """out[s] = reduce of data[indices[i]] over i with ids[i] == s (0 for empty segments)."""
    rows = int(num) if num is not None else (int(ids[-1]) + 1 if len(ids) else 0)
    out = np.zeros((rows,) + data.shape[1:], np.float64)
    np.add.at(out, ids, data[indices].astype(np.float64))
    if _NORM[kind] is not None:
        counts = np.maximum(np.bincount(ids, minlength=rows)[:rows], 1).astype(np.float64)
        out /= _NORM[kind](counts).reshape((-1,) + (1,) * (data.ndim - 1))
    return out.astype(data.dtype)


def _grad_reference(kind, grad, indices, ids, dim0):
    """The adjoint of `_reference`: out[indices[i]] += grad[ids[i]] * weight(ids[i])."""
    scale = np.ones(len(grad))
    if _NORM[kind] is not None:
        scale = 1 / _NORM[kind](np.maximum(np.bincount(ids, minlength=len(grad)), 1))
    out = np.zeros((int(dim0),) + grad.shape[1:], np.float64)
    np.add.at(out, indices, grad[ids] * scale[ids].reshape((-1,) + (1,) * (grad.ndim - 1)))
    return out.astype(grad.dtype)


def _data(shape):
    return lambda rng, dt: rng.randn(*shape)


def _fn(kind):
    return getattr(tf, f"sparse_segment_{kind}")


CASES = []
for _kind in ("sum", "mean", "sqrt_n"):
    _dtypes = (tf.float32, tf.float64, tf.int32) if _kind == "sum" else F32_64
    CASES += [
        OpCase(f"sparse_segment_{_kind}",
               lambda d, i, s, k=_kind: _fn(k)(d, i, s),
               lambda d, i, s, k=_kind: _reference(k, d, i, s),
               [lambda rng, dt: rng.randint(-5, 5, size=(5, 3)), INDICES, IDS],
               dtypes=_dtypes, fixed_dtypes=(None, tf.int32, tf.int32), grad=_kind != "sum"),
        OpCase(f"sparse_segment_{_kind}_num_segments_3d",
               lambda d, i, s, k=_kind: _fn(k)(d, i, s, num_segments=6),
               lambda d, i, s, k=_kind: _reference(k, d, i, s, 6),
               [_data((5, 2, 3)), INDICES.astype(np.int64), IDS.astype(np.int64)],
               dtypes=F32_64, fixed_dtypes=(None, tf.int64, tf.int64)),
        OpCase(f"sparse_segment_{_kind}_grad",
               lambda g, i, s, k=_kind: apply_op(
                   getattr(sparse_segment_ops, f"SparseSegment{_OP_KIND[k]}Grad"),
                   [g, i, s, 6]),
               lambda g, i, s, k=_kind: _grad_reference(k, g, i, s, 6),
               [_data((4, 3)), INDICES, IDS], dtypes=F32_64,
               fixed_dtypes=(None, tf.int32, tf.int32), grad=False),
    ]
CASES += [
    OpCase("sparse_segment_sum_float",
           lambda d, i, s: tf.sparse_segment_sum(d, i, s),
           lambda d, i, s: _reference("sum", d, i, s),
           [_data((5, 3)), INDICES, IDS], dtypes=F32_64, fixed_dtypes=(None, tf.int32, tf.int32)),
    OpCase("sparse_segment_mean_empty",
           lambda d, i, s: tf.sparse.segment_mean(d, i, s),
           lambda d, i, s: np.zeros((0, 3), d.dtype),
           [_data((4, 3)), np.zeros(0, np.int32), np.zeros(0, np.int32)],
           dtypes=F32_64, fixed_dtypes=(None, tf.int32, tf.int32), grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        plain = tf.sparse_segment_sum(data, [0, 2, 1], [0, 0, 2])
        counted = tf.sparse.segment_mean(data, [0, 2], [0, 1], num_segments=4)
        assert (plain.op.type, plain.op.name) == ("SparseSegmentSum", "SparseSegmentSum")
        assert counted.op.type == "SparseSegmentMeanWithNumSegments"
        assert counted.op.name == "SparseSegmentMeanWithNumSegments"
        assert plain.op.get_attr("Tidx") == tf.int32 and plain.op.get_attr("Tsegmentids") == \
            tf.int32 and plain.op.get_attr("sparse_gradient") is False
        assert plain.shape.as_list() == [None, 2] and counted.shape.as_list() == [4, 2]
        grad = tf.gradients(tf.sparse_segment_sqrt_n(data, [0, 2, 1], [0, 0, 2]), data)[0]
        assert grad.op.type == "SparseSegmentSqrtNGrad"
        with tf.Session() as sess:
            got = sess.run(grad)
    np.testing.assert_allclose(got, [[0.70710677] * 2, [1.0] * 2, [0.70710677] * 2],
                               rtol=1e-6)


@pytest.mark.parametrize("kind", ["sum", "mean", "sqrt_n"])
def test_sparse_gradient_is_indexed_slices_of_used_rows(kind):
    with tf.Graph().as_default():
        data = tf.constant(np.arange(12.0).reshape(6, 2))
        weights = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], tf.float64)
        loss = lambda sparse: tf.reduce_sum(weights * _fn(kind)(   # noqa: E731
            data, [4, 1, 4, 0], [0, 0, 2, 2], sparse_gradient=sparse))
        sparse_grad = tf.gradients(loss(True), data)[0]
        dense_grad = tf.gradients(loss(False), data)[0]
        assert isinstance(sparse_grad, tf.IndexedSlices)
        with tf.Session() as sess:
            values, indices, shape = sess.run([sparse_grad.values, sparse_grad.indices,
                                               sparse_grad.dense_shape])
            dense = sess.run(dense_grad)
    assert sorted(indices.tolist()) == [0, 1, 4] and shape.tolist() == [6, 2]
    rebuilt = np.zeros((6, 2))
    np.add.at(rebuilt, indices, values)
    np.testing.assert_allclose(rebuilt, dense)


def test_build_errors():
    with tf.Graph().as_default():
        data = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
            tf.sparse_segment_sum(data, [0, 1], [0])
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.sparse_segment_sum(data, [[0]], [0])
        with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
            tf.sparse_segment_sum(tf.constant(1.0), [0], [0])
        with pytest.raises(TypeError, match="float16, bfloat16, float32, float64|float32"):
            tf.sparse_segment_mean(tf.constant([1, 2]), [0], [0])


@pytest.mark.parametrize("indices,ids,num,message", [
    ([0, 5], [0, 1], None, "Bad: indices[1] == 5 out of range [0, 3)"),
    ([-1, 1], [0, 0], None, "Bad: indices[0] == -1 out of range [0, 3)"),
    ([0, 1], [1, 0], None, "segment ids are not increasing"),
    ([0, 1], [-1, 0], None, "Segment id -1 out of range [0, 1), possibly because "
                            "'segment_ids' input is not sorted."),
    ([0, 1], [0, 4], 3, "segment ids must be < num_segments"),
])
def test_run_time_errors(indices, ids, num, message):
    with tf.Graph().as_default():
        data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        check_run_error(tf.sparse_segment_mean(data, indices, ids, num_segments=num), message)
