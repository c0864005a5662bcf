"""MulNoNan, NextAfter, LeftShift/RightShift, BesselI0/I1, EuclideanNorm, CumulativeLogsumexp
and the compositions reciprocal_no_nan, polyval, is_non_decreasing, is_strictly_increasing,
accumulate_n: OpCase rows against NumPy/SciPy (forward, shape functions, gradients), values
recorded from TensorFlow 2.21, names and op types, build-time and run-time errors."""
import numpy as np
import pytest
import scipy.special as sp

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
HALF_TO_DOUBLE = (tf.float16, tf.float32, tf.float64)
INTS = (tf.int8, tf.int32, tf.int64, tf.uint8, tf.uint16)


def _randn(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape) * 2).astype(dt)


def _uniform(low, high, *shape):
    return lambda rng, dt: rng.uniform(low, high, shape).astype(dt)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


def _mul_no_nan_ref(x, y):
    with np.errstate(invalid="ignore"):  # inf * 0: replaced by 0
        return np.where(y == 0, 0, x * y).astype(x.dtype)


def _logcumsumexp(x, axis, exclusive=False, reverse=False):
    x64 = np.flip(x.astype(np.float64), axis) if reverse else x.astype(np.float64)
    total = np.cumsum(np.exp(x64), axis=axis)
    with np.errstate(divide="ignore"):  # the exclusive scan starts at log(0) = -inf
        out = np.log(total - np.exp(x64) if exclusive else total)
    out = np.flip(out, axis) if reverse else out
    return out.astype(x.dtype)


def _euclid(axis=None, keepdims=False):
    def ref(x):
        out = np.sqrt(np.sum(np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else
                                               np.float64)) ** 2, axis=axis, keepdims=keepdims))
        return np.asarray(out).astype(x.dtype)
    return ref


def _shift_ref(op):
    def ref(x, y):
        bits = x.dtype.itemsize * 8
        u = np.dtype(f"u{x.dtype.itemsize}")
        y = np.clip(y, 0, bits - 1)
        if op == "left":
            return np.left_shift(x.astype(u), y.astype(u)).astype(x.dtype)
        return np.right_shift(x, y.astype(x.dtype))
    return ref


_SHIFT_X = _value([[1, 3, 7, 100], [5, 0, 2, 127]])
_SHIFT_Y = _value([[0, 1, 7, 9], [2, 3, 1, 8]])   # 9 and 8 clamp to bits - 1 for 8-bit types

CASES = [
    # --- MulNoNan
    OpCase("multiply_no_nan", tf.math.multiply_no_nan, _mul_no_nan_ref,
           [_randn(2, 3), _value([[1.0, 0.0, -2.0], [0.0, 3.0, 0.5]])],
           dtypes=HALF_TO_DOUBLE, rtol=1e-3),
    OpCase("multiply_no_nan_nan_x", tf.math.multiply_no_nan, _mul_no_nan_ref,
           [_value([np.inf, np.nan, 2.0]), _value([0.0, 0.0, 3.0])], dtypes=FLOAT, grad=False),
    OpCase("multiply_no_nan_broadcast", tf.math.multiply_no_nan, _mul_no_nan_ref,
           [_randn(4, 1), _value([0.0, 2.0, -1.0])], dtypes=FLOAT),
    OpCase("multiply_no_nan_complex", tf.math.multiply_no_nan, _mul_no_nan_ref,
           [_value([1 + 2j, np.inf]), _value([3j, 0])], dtypes=(tf.complex64, tf.complex128),
           grad=False),
    OpCase("reciprocal_no_nan", tf.math.reciprocal_no_nan,
           lambda x: np.where(x == 0, 0, 1 / np.where(x == 0, 1, x)).astype(x.dtype),
           [_value([[0.0, 2.0], [-0.5, 4.0]])], dtypes=FLOAT, grad=False),
    OpCase("reciprocal_no_nan_nonzero", tf.math.reciprocal_no_nan, np.reciprocal,
           [_value([[1.5, 2.0], [-0.5, 4.0]])], dtypes=FLOAT),
    # --- NextAfter
    OpCase("nextafter", tf.math.nextafter, np.nextafter,
           [_value([1.0, 0.0, 1.0, -2.0]), _value([2.0, -1.0, 1.0, -3.0])], dtypes=FLOAT,
           grad=False),
    OpCase("nextafter_broadcast", tf.math.nextafter, np.nextafter,
           [_randn(3, 2), _value([0.0, 10.0])], dtypes=FLOAT),
    # --- LeftShift / RightShift
    OpCase("left_shift", tf.bitwise.left_shift, _shift_ref("left"), [_SHIFT_X, _SHIFT_Y],
           dtypes=INTS, grad=False),
    OpCase("right_shift", tf.bitwise.right_shift, _shift_ref("right"), [_SHIFT_X, _SHIFT_Y],
           dtypes=INTS, grad=False),
    OpCase("right_shift_negative", tf.bitwise.right_shift, _shift_ref("right"),
           [_value([-128, -1, -7]), _value([1, 2, 30])], dtypes=(tf.int8, tf.int32),
           grad=False),
    OpCase("shift_broadcast_empty", tf.bitwise.left_shift, _shift_ref("left"),
           [_value(np.zeros((0, 2))), _value([1, 2])], dtypes=(tf.int32,), grad=False),
    # --- BesselI0 / BesselI1
    OpCase("bessel_i0", tf.math.bessel_i0, lambda x: sp.i0(x.astype(np.float64)).astype(x.dtype),
           [_uniform(-3, 3, 2, 4)], dtypes=HALF_TO_DOUBLE, rtol=2e-3),
    OpCase("bessel_i1", tf.math.bessel_i1, lambda x: sp.i1(x.astype(np.float64)).astype(x.dtype),
           [_uniform(-3, 3, 5)], dtypes=HALF_TO_DOUBLE, rtol=2e-3),
    OpCase("bessel_i1_at_zero", tf.math.bessel_i1, lambda x: sp.i1(x).astype(x.dtype),
           [_value([0.0, 1.0])], dtypes=FLOAT),
    # --- EuclideanNorm
    OpCase("euclidean_norm_axis", lambda x: tf.math.reduce_euclidean_norm(x, 1),
           _euclid(1), [_randn(3, 4)], dtypes=FLOAT),
    OpCase("euclidean_norm_all", tf.math.reduce_euclidean_norm, _euclid(), [_randn(2, 3, 2)],
           dtypes=FLOAT),
    OpCase("euclidean_norm_keepdims",
           lambda x: tf.math.reduce_euclidean_norm(x, [0, -1], keepdims=True),
           _euclid((0, 2), True), [_randn(2, 3, 2)], dtypes=FLOAT),
    OpCase("euclidean_norm_int", lambda x: tf.math.reduce_euclidean_norm(x, 1),
           _euclid(1), [_value([[3, 4], [1, 1], [0, 0]])], dtypes=(tf.int32, tf.int64),
           grad=False),
    OpCase("euclidean_norm_complex", lambda x: tf.math.reduce_euclidean_norm(x, 0),
           _euclid(0), [_value([3 + 4j, 1j])], dtypes=(tf.complex64, tf.complex128),
           grad=False),
    OpCase("euclidean_norm_empty", lambda x: tf.math.reduce_euclidean_norm(x, 0),
           _euclid(0), [_randn(0, 3)], dtypes=FLOAT, grad=False),
    # --- CumulativeLogsumexp
    OpCase("cumulative_logsumexp", lambda x: tf.math.cumulative_logsumexp(x, 1),
           lambda x: _logcumsumexp(x, 1), [_randn(2, 4)], dtypes=HALF_TO_DOUBLE, rtol=2e-3),
    OpCase("cumulative_logsumexp_exclusive",
           lambda x: tf.math.cumulative_logsumexp(x, -1, exclusive=True),
           lambda x: _logcumsumexp(x, -1, exclusive=True), [_randn(3, 3)], dtypes=FLOAT,
           grad=False),
    # The gradient of the exclusive scan, without the -inf first column.
    OpCase("cumulative_logsumexp_exclusive_tail",
           lambda x: tf.math.cumulative_logsumexp(x, -1, exclusive=True)[:, 1:],
           lambda x: _logcumsumexp(x, -1, exclusive=True)[:, 1:], [_randn(3, 3)],
           dtypes=FLOAT),
    OpCase("cumulative_logsumexp_reverse",
           lambda x: tf.math.cumulative_logsumexp(x, 0, reverse=True),
           lambda x: _logcumsumexp(x, 0, reverse=True), [_randn(4, 2)], dtypes=FLOAT),
    OpCase("cumulative_logsumexp_both",
           lambda x: tf.math.cumulative_logsumexp(x, 0, exclusive=True, reverse=True),
           lambda x: _logcumsumexp(x, 0, exclusive=True, reverse=True), [_randn(3)],
           dtypes=FLOAT, grad=False),
    OpCase("cumulative_logsumexp_empty", lambda x: tf.math.cumulative_logsumexp(x, 1),
           lambda x: x, [_randn(2, 0)], dtypes=FLOAT),
    # --- compositions
    OpCase("polyval", lambda c0, c1, c2, x: tf.math.polyval([c0, c1, c2], x),
           lambda c0, c1, c2, x: (c0 * x + c1) * x + c2,
           [_randn(3), _randn(1), _randn(), _randn(2, 3)], dtypes=FLOAT),
    OpCase("polyval_constant", lambda x: tf.math.polyval([2.0], x),
           lambda x: np.float32(2.0), [_randn(2)], grad=False),
    OpCase("polyval_empty", lambda x: tf.math.polyval([], x), np.zeros_like, [_randn(2)],
           dtypes=FLOAT, grad=False),
    OpCase("accumulate_n", lambda a, b, c: tf.math.accumulate_n([a, b, c]),
           lambda a, b, c: a + b + c, [_randn(2, 3)] * 3, dtypes=FLOAT + (tf.int32,)),
    OpCase("is_non_decreasing", tf.is_non_decreasing, lambda x: np.all(np.diff(x.ravel()) >= 0),
           [_value([[1, 2], [2, 5]])], dtypes=FLOAT + (tf.int32,), grad=False),
    OpCase("is_non_decreasing_false", tf.math.is_non_decreasing,
           lambda x: np.all(np.diff(x.ravel()) >= 0), [_value([3, 2])], grad=False),
    OpCase("is_strictly_increasing", tf.is_strictly_increasing,
           lambda x: np.all(np.diff(x.ravel()) > 0), [_value([1, 1, 2])],
           dtypes=FLOAT + (tf.int64,), grad=False),
    OpCase("is_strictly_increasing_short", tf.math.is_strictly_increasing,
           lambda x: np.bool_(True), [_value([[5]])], grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_values_recorded_from_tensorflow():
    with tf.Graph().as_default():
        c = tf.constant([[0.5, -1.0, 2.0], [1.0, 3.0, 0.2]])
        w = tf.constant([[2.0, 0.0, 1.0], [0.0, -1.0, 3.0]])
        outs = [
            tf.bitwise.left_shift(tf.constant([1, -1, 3, 5, 1], tf.int8),
                                  tf.constant([1, 2, 9, -1, 7], tf.int8)),
            tf.bitwise.right_shift(tf.constant([-128, -1, 64, 5, 100], tf.int8),
                                   tf.constant([1, 2, 9, -1, 7], tf.int8)),
            tf.gradients(tf.math.cumulative_logsumexp(c, 1) * w, c)[0],
            tf.gradients(tf.math.nextafter(c, w), [c, w]),
        ]
        with tf.Session() as sess:
            ls, rs, g_cle, (g_x1, g_x2) = sess.run(outs)
    np.testing.assert_array_equal(ls, [2, -4, -128, 5, -128])
    np.testing.assert_array_equal(rs, [-64, -1, 0, 5, 0])
    np.testing.assert_allclose(g_cle, [[2.1753, 0.0391, 0.7856], [0.2202, 1.6273, 0.1525]],
                               atol=1e-4)
    np.testing.assert_array_equal(g_x1, np.ones((2, 3)))
    np.testing.assert_array_equal(g_x2, np.zeros((2, 3)))


def test_names_and_op_types():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert tf.math.multiply_no_nan(x, x).op.name == "multiply_no_nan"
        assert tf.math.multiply_no_nan(x, x).op.type == "MulNoNan"
        r = tf.math.reciprocal_no_nan(x)
        assert (r.op.type, r.op.name, r.op.inputs[0].op.name) == \
            ("DivNoNan", "reciprocal_no_nan", "reciprocal_no_nan/one")
        assert tf.math.bessel_i0(x).op.name == "bessel_i0/BesselI0"
        assert tf.math.bessel_i1(x).op.name == "bessel_i1/BesselI1"
        assert tf.math.nextafter(x, x).op.name == "NextAfter"
        assert tf.math.nextafter(1, 2).dtype == tf.float32   # T defaults to float32
        norm = tf.math.reduce_euclidean_norm(x, 1)
        assert (norm.op.type, norm.shape.as_list()) == ("EuclideanNorm", [None])
        assert tf.math.reduce_euclidean_norm(tf.placeholder(tf.float32)).shape.ndims == 0
        assert tf.math.cumulative_logsumexp(x).op.name == "CumulativeLogsumexp"
        assert tf.math.polyval([1.0, x], x).op.name == "polyval/add"
        assert tf.math.is_non_decreasing(x).op.name == "is_non_decreasing/All"
        assert tf.bitwise.left_shift(1, 2).op.type == "LeftShift"
        assert tf.bitwise.right_shift(1, 2).op.name == "RightShift"
        assert tf.accumulate_n([x, x]).op.type == "AddN"
        assert tf.accumulate_n([x]) is x
        assert tf.accumulate_n([x], name="one").op.type == "Identity"
        assert tf.accumulate_n([x, x], shape=[2, 3]).shape.as_list() == [None, 3]


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.math.polyval((1.0,), 1.0), ValueError, "coeffs must be list type"),
    (lambda: tf.math.accumulate_n([]), ValueError, "at least one Tensor"),
    (lambda: tf.math.accumulate_n([tf.constant(1.0), tf.constant(1)]), ValueError,
     "same dtype and shape"),
    (lambda: tf.math.accumulate_n([tf.zeros([2]), tf.zeros([3])]), ValueError,
     "are not compatible"),
    (lambda: tf.math.accumulate_n([tf.zeros([2])], tensor_dtype=tf.int32), TypeError,
     "The `tensor_dtype` argument is"),
    (lambda: tf.math.multiply_no_nan(tf.constant(1.0), tf.constant(1.0, tf.float64)),
     ValueError, "requested dtype float32"),
    (lambda: tf.math.is_non_decreasing(["a"]), TypeError, "Expected x to be numeric"),
    (lambda: tf.bitwise.left_shift(1.0, 1.0), TypeError, "DataType float32 not in list"),
    (lambda: tf.math.bessel_i0(1), TypeError, "DataType int32 not in list"),
    (lambda: tf.math.cumulative_logsumexp(tf.constant([1, 2])), TypeError,
     "DataType int32 not in list"),
    (lambda: tf.math.reduce_euclidean_norm(tf.constant([True])), TypeError,
     "DataType bool not in list"),
    (lambda: tf.math.reduce_euclidean_norm(tf.constant([1.0]), 2), ValueError,
     "Invalid reduction dimension 2 for input with 1 dimensions"),
])
def test_build_errors(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            build()


@pytest.mark.parametrize("build,message", [
    (lambda: tf.math.cumulative_logsumexp(tf.constant([1.0]), axis=3),
     r"ScanOp: Expected scan axis in the range \[-1, 1\), but got 3"),
    (lambda: tf.math.cumulative_logsumexp(tf.constant([1.0]), axis=tf.constant([0])),
     r"ScanOp: axis must be a scalar, not \[1\]"),
    (lambda: tf.math.reduce_euclidean_norm(tf.constant([1.0]),
                                           tf.placeholder_with_default(2, [])),
     r"Invalid reduction dimension \(2 for input with 1 dimension\(s\)"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default():
        t = build()
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=message):
                sess.run(t)
