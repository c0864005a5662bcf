"""Segment reductions: OpCase rows against NumPy (forward, shapes, gradients), then errors,
names, static shapes and the TensorFlow semantics of empty and dropped segments."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

F32_64 = (tf.float32, tf.float64)
NUMERIC = (tf.float32, tf.float64, tf.int32, tf.int64)


def _unsorted_ref(ufunc, init):
    def ref(data, ids, num):
        num = int(num)
        out = np.full((num,) + data.shape[ids.ndim:], init(data.dtype), dtype=data.dtype)
        rows = data.reshape((ids.size,) + data.shape[ids.ndim:])
        for i, row in zip(ids.reshape(-1), rows):
            if i >= 0:
                out[i] = ufunc(out[i], row)
        return out
    return ref


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max


def _sorted_ref(reduce):
    def ref(data, ids):
        num = int(ids[-1]) + 1 if ids.size else 0
        out = np.zeros((num,) + data.shape[1:], dtype=data.dtype)
        for s in np.unique(ids):
            out[s] = reduce(data[ids == s])
        return out
    return ref


def _mean(rows):
    if rows.dtype.kind in "iu":
        total = rows.sum(axis=0)
        return np.sign(total) * (np.abs(total) // len(rows))
    return rows.mean(axis=0)


def _randn(*shape):
    return lambda rng, dt: (rng.randn(*shape) * 4).astype(dt)


def _distinct(*shape):
    """Distinct values (no ties) so max/min gradients are well defined."""
    n = int(np.prod(shape))
    return lambda rng, dt: (rng.permutation(n).reshape(shape) - n / 2).astype(dt)


def _ids(*values):
    return lambda rng, dt: np.array(values, np.int32)


I32 = tf.int32
U_SUM = _unsorted_ref(np.add, lambda dt: 0)
U_MAX = _unsorted_ref(np.maximum, _lowest)
U_MIN = _unsorted_ref(np.minimum, _highest)

def _unsorted(name, fn, ref, data, ids, num, dtypes, grad=True):
    """A row with a constant segment count, so the output's static shape is known."""
    return OpCase(name, lambda d, i: fn(d, i, num), lambda d, i: ref(d, i, num), [data, ids],
                  dtypes, fixed_dtypes=[None, I32], grad=grad)


def _sorted(name, fn, ref, data, ids, dtypes, rows):
    """A row of a sorted segment op; its gradient row reshapes the output to its known size
    (the op's static shape leaves the segment count unknown)."""
    plain = OpCase(name, fn, ref, [data, ids], dtypes, fixed_dtypes=[None, I32], grad=False)
    fixed = OpCase(name + "_grad", lambda d, i: tf.reshape(fn(d, i), rows), ref, [data, ids],
                   F32_64, fixed_dtypes=[None, I32])
    return [plain, fixed]


def _u_mean(d, i, n):
    counts = np.maximum(np.bincount(i.reshape(-1), minlength=n), 1)
    return (U_SUM(d, i, n) / counts.reshape((-1,) + (1,) * (d.ndim - i.ndim))).astype(d.dtype)


def _u_sqrt_n(d, i, n):
    counts = np.maximum(np.bincount(i.reshape(-1), minlength=n), 1)
    return (U_SUM(d, i, n) / np.sqrt(counts).reshape((-1,) + (1,) * (d.ndim - i.ndim))
            ).astype(d.dtype)


_IDS_2D = lambda rng, dt: np.array([[0, 1, 0], [2, 2, 1]], np.int32)  # noqa: E731
SUM = lambda r: r.sum(axis=0)  # noqa: E731

CASES = [
    _unsorted("unsorted_segment_sum", tf.unsorted_segment_sum, U_SUM, _randn(5, 3),
              _ids(0, 2, 0, 3, 2), 4, NUMERIC),
    _unsorted("unsorted_segment_sum_dropped", tf.unsorted_segment_sum, U_SUM, _randn(4, 2),
              _ids(1, -1, 1, 0), 3, F32_64),
    _unsorted("unsorted_segment_sum_2d_ids", tf.unsorted_segment_sum, U_SUM, _randn(2, 3, 2),
              _IDS_2D, 3, F32_64),
    _unsorted("unsorted_segment_sum_1d", tf.unsorted_segment_sum, U_SUM, _randn(6),
              _ids(0, 1, 0, 1, 4, 4), 5, NUMERIC),
    _unsorted("unsorted_segment_sum_empty", tf.unsorted_segment_sum, U_SUM, _randn(0, 3),
              lambda rng, dt: np.zeros(0, np.int32), 2, F32_64, grad=False),
    _unsorted("unsorted_segment_max", tf.unsorted_segment_max, U_MAX, _distinct(5, 2),
              _ids(0, 2, 0, -1, 1), 3, NUMERIC),
    _unsorted("unsorted_segment_min", tf.unsorted_segment_min, U_MIN, _distinct(5, 2),
              _ids(0, 2, 0, 2, 1), 3, NUMERIC),
    _unsorted("unsorted_segment_mean", tf.unsorted_segment_mean, _u_mean, _randn(5, 3),
              _ids(0, 2, 0, 3, 2), 4, F32_64),
    _unsorted("unsorted_segment_mean_2d_ids", tf.unsorted_segment_mean, _u_mean,
              _randn(2, 3, 2), _IDS_2D, 4, F32_64),
    _unsorted("unsorted_segment_sqrt_n", tf.unsorted_segment_sqrt_n, _u_sqrt_n, _randn(5, 3),
              _ids(0, 2, 0, 3, 2), 4, F32_64),
    *_sorted("segment_sum", tf.segment_sum, _sorted_ref(SUM), _randn(5, 3),
             _ids(0, 0, 2, 2, 3), NUMERIC, [4, 3]),
    *_sorted("segment_sum_1d", tf.segment_sum, _sorted_ref(SUM), _randn(4), _ids(1, 1, 1, 2),
             F32_64, [3]),
    *_sorted("segment_mean", tf.segment_mean, _sorted_ref(_mean), _randn(5, 3),
             _ids(0, 0, 2, 2, 3), NUMERIC, [4, 3]),
    *_sorted("segment_max", tf.segment_max, _sorted_ref(lambda r: r.max(axis=0)),
             _distinct(5, 3), _ids(0, 0, 2, 2, 3), NUMERIC, [4, 3]),
    *_sorted("segment_min", tf.segment_min, _sorted_ref(lambda r: r.min(axis=0)),
             _distinct(5, 3), _ids(0, 1, 1, 1, 3), NUMERIC, [4, 3]),
]
for _case in CASES:
    if _case.name.endswith(("_mean", "_sqrt_n")):
        _case.rtol = 1e-5


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_names_and_static_shapes():
    with tf.Graph().as_default():
        data = tf.placeholder(tf.float32, [None, 4])
        ids = tf.placeholder(tf.int32, [None])
        s = tf.unsorted_segment_sum(data, ids, 7)
        assert s.op.name == "UnsortedSegmentSum" and s.shape.as_list() == [7, 4]
        assert tf.unsorted_segment_max(data, ids, 2).op.name == "UnsortedSegmentMax"
        n = tf.placeholder(tf.int32, [])
        assert tf.unsorted_segment_sum(data, ids, n).shape.as_list() == [None, 4]
        seg = tf.segment_sum(data, ids)
        assert seg.op.name == "SegmentSum" and seg.shape.as_list() == [None, 4]
        assert tf.segment_sum(tf.ones([3, 2]), [0, 0, 1]).shape.as_list() == [None, 2]
        mean = tf.unsorted_segment_mean(data, ids, 3)
        assert mean.op.name.startswith("UnsortedSegmentMean/")


@pytest.mark.parametrize("build,message", [
    (lambda: tf.unsorted_segment_sum(tf.ones([3, 2]), [0, 1], 3),
     "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.segment_sum(tf.ones([3, 2]), [[0, 1]]), "Shape must be rank 1 but is rank 2"),
    (lambda: tf.unsorted_segment_sum(tf.ones([3, 2]), [0, 1, 0], [3, 3]),
     "Shape must be rank 0 but is rank 1"),
])
def test_static_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message.replace("[", r"\[")):
            build()


@pytest.mark.parametrize("build,ids,message", [
    (lambda d, i: tf.unsorted_segment_sum(d, i, 3), [0, 5],
     "segment_ids[1] = 5 is out of range [0, 3)"),
    (lambda d, i: tf.unsorted_segment_sum(d, i, 3), [0, 1, 1],
     "data.shape = [2,4] does not start with segment_ids.shape = [3]"),
    (lambda d, i: tf.segment_sum(d, i), [1, 0], "segment ids are not increasing"),
    (lambda d, i: tf.segment_sum(d, i), [0, 1, 2],
     "segment_ids should be the same size as dimension 0 of input."),
    (lambda d, i: tf.segment_sum(d, i), [-1, 0],
     "Segment id -1 out of range [0, 1), possibly because 'segment_ids' input is not sorted."),
])
def test_runtime_errors(build, ids, message):
    with tf.Graph().as_default():
        data = tf.placeholder(tf.float32)
        i = tf.placeholder(tf.int32)
        out = build(data, i)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(out, {data: np.ones((2, 4)), i: ids})
    assert message in str(info.value)


def test_empty_segments_of_max_hold_the_lowest_value():
    with tf.Graph().as_default():
        out = tf.unsorted_segment_max(tf.constant([1.0, 2.0]), [0, 0], 2)
        with tf.Session() as sess:
            got = sess.run(out)
    assert got[0] == 2.0 and got[1] == np.finfo(np.float32).min


def test_sums_rows_in_order_like_tensorflow():
    """Float sums accumulate row by row (so results round like TensorFlow's loop)."""
    data = np.array([1e8, 1.0, -1e8, 1.0], np.float32)
    with tf.Graph().as_default():
        out = tf.unsorted_segment_sum(data, [0, 0, 0, 0], 1)
        with tf.Session() as sess:
            got = sess.run(out)
    expected = np.float32(0)
    for x in data:
        expected = np.float32(expected + x)
    assert got[0] == expected


def test_max_gradient_splits_among_ties():
    with tf.Graph().as_default():
        data = tf.constant([3.0, 3.0, 1.0])
        out = tf.unsorted_segment_max(data, [0, 0, 0], 1)
        (grad,) = tf.gradients(out, data)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(grad), [0.5, 0.5, 0.0])


def test_second_derivative_through_segment_ops():
    """The gradients are built from differentiable ops, so they differentiate again."""
    x0 = np.array([1.0, -2.0, 3.0, 0.5])
    ids = [0, 2, 0, 1]
    weights = np.array([2.0, 3.0, 5.0])
    with tf.Graph().as_default():
        x = tf.constant(x0)
        y = tf.reduce_sum(tf.unsorted_segment_sum(x * x * x, ids, 3) * weights)
        (g,) = tf.gradients(y, x)
        (gg,) = tf.gradients(g, x)
        with tf.Session() as sess:
            got_g, got_gg = sess.run([g, gg])
    np.testing.assert_allclose(got_g, 3 * x0 ** 2 * weights[ids])
    np.testing.assert_allclose(got_gg, 6 * x0 * weights[ids])
