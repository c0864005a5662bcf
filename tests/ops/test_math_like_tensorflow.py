"""Elementwise and scan edge cases as TensorFlow 2.21 computes them (`tf.compat.v1`, graph
mode): FloorMod's signed zeros, div_no_nan of integers, float16 scans, and segment ops whose
data/segment_ids lengths disagree. Expected values are TF 2.21's printed outputs."""
import numpy as np
import pytest

import tensorweave as tf


def _run(t, feed=None):
    with tf.Session() as s:
        return s.run(t, feed_dict=feed)


def test_floormod_float_zero_keeps_dividend_sign():
    x = [-0., 0., -4., 4., 4., -4., 7.5, -7.5, 1., -1., np.inf, 3., np.nan]
    y = [2., 2., 2., 2., -2., -2., -2., 2., np.inf, np.inf, 2., 0., 1.]
    expected = [-0., 0., -0., 0., 0., -0., -0.5, 0.5, 1., np.inf, np.nan, np.nan, np.nan]
    with tf.Graph().as_default():
        value = _run(tf.floormod(tf.constant(x), tf.constant(y)))
        assert value.dtype == np.float32
        np.testing.assert_array_equal(value, expected)
        finite = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(value[finite]),
                                      np.signbit(np.asarray(expected)[finite]))
        for dtype in (tf.float16, tf.float64):
            v = _run(tf.floormod(tf.constant([-4., 4.], dtype), tf.constant([2., -2.], dtype)))
            assert list(np.signbit(v)) == [True, False]
        v = _run(tf.constant([[-4.], [4.]]) % tf.constant([2., -2.]))
        np.testing.assert_array_equal(np.signbit(v), [[True, True], [False, False]])


@pytest.mark.parametrize("x, y, dtype, expected, out_dtype", [
    ([1, 0, 7], [0, 0, 2], tf.int32, [0., 0., 3.5], np.float64),
    ([1, 7], [0, 2], tf.uint8, [0., 3.5], np.float32),
    ([1, 7], [0, 2], tf.int64, [0., 3.5], np.float64),
    ([3., 1.], [0., 2.], tf.float16, [0., 0.5], np.float16),
])
def test_div_no_nan_casts_integers_like_truediv(x, y, dtype, expected, out_dtype):
    with tf.Graph().as_default():
        value = _run(tf.div_no_nan(tf.constant(x, dtype), tf.constant(y, dtype)))
        assert value.dtype == out_dtype
        np.testing.assert_array_equal(value, expected)


def test_div_no_nan_python_operands_and_errors():
    with tf.Graph().as_default():
        np.testing.assert_array_equal(_run(tf.div_no_nan(3, tf.constant([0., 2.]))), [0., 1.5])
        np.testing.assert_array_equal(_run(tf.div_no_nan(tf.constant([3., 1.]), 2)), [1.5, 0.5])
        v = tf.Variable([2., 0.])
        out = tf.div_no_nan(3, v)
        with tf.Session() as s:
            s.run(v.initializer)
            np.testing.assert_array_equal(s.run(out), [1.5, 0.])
        for x, y in ((tf.constant([3.]), tf.constant([0.], tf.float64)),
                     (tf.constant([True]), tf.constant([False])),
                     (tf.constant(["a"]), tf.constant(["b"]))):
            with pytest.raises(TypeError):
                tf.div_no_nan(x, y)


def test_float16_scans_accumulate_in_float16():
    """TF's Cumsum/Cumprod round every partial result to float16 (reductions do not)."""
    with tf.Graph().as_default():
        ones = tf.fill([3000], tf.constant(1., tf.float16))
        cumsum, excl, prod, total = _run([
            tf.cumsum(ones)[-1],
            tf.cumsum(ones, exclusive=True, reverse=True)[0],
            tf.cumprod(tf.fill([20], tf.constant(1.5, tf.float16)))[-1],
            tf.reduce_sum(ones)])
        assert cumsum.dtype == np.float16
        assert (float(cumsum), float(excl), float(prod)) == (2048., 2048., 3324.)
        assert float(total) == 3000.


@pytest.mark.parametrize("fn", ["segment_sum", "segment_max", "segment_min", "segment_mean",
                                "segment_prod"])
def test_segment_length_mismatch_is_a_run_time_error(fn):
    """TF's sorted segment shape functions do not compare data's and segment_ids' lengths."""
    with tf.Graph().as_default():
        out = getattr(tf, fn)(tf.constant([1., 2., 3.]), [0, 0])
        assert out.shape.as_list() == [None]
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(out)
        with tf.Graph().as_default(), pytest.raises(ValueError):
            getattr(tf, fn)(tf.constant([1., 2.]), [[0, 0]])   # ids must still be rank 1
