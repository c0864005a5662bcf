"""Fake quantization: every op against a NumPy reference written from TensorFlow's kernel
description (OpCase rows: values, static shapes), TensorFlow 2.21's outputs recorded for
edge inputs, the straight-through gradients the forward ops register, names and errors.

The forward ops are step functions: their derivative is 0 almost everywhere, and what
TensorFlow (and so tensorweave) registers is the straight-through estimator instead. So the
rows check values, not numerical gradients, and the gradients are checked against that
estimator's formula below.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

F32 = np.float32


def _uniform(low, high, *shape):
    return lambda rng, dt: rng.uniform(low, high, shape).astype(dt)


def _value(v):
    return lambda rng, dt: np.asarray(v, dt)


def _nudged(lo, hi, num_bits, narrow_range):
    """(nudged_min, nudged_max, scale, inv_scale), one float32 scalar operation at a time."""
    qmin, qmax = F32(1 if narrow_range else 0), F32(2 ** num_bits - 1)
    lo, hi = F32(lo), F32(hi)
    scale, inv = (hi - lo) / (qmax - qmin), (qmax - qmin) / (hi - lo)
    from_min = qmin - lo / scale
    zero = qmin if from_min < qmin else qmax if from_min > qmax else \
        F32(np.floor(from_min + F32(.5)))
    return (qmin - zero) * scale, (qmax - zero) * scale, scale, inv


def _quantize_one(v, lo, hi, num_bits, narrow_range, divide):
    if lo == 0 and hi == 0:
        return F32(0)
    nmin, nmax, scale, inv = _nudged(lo, hi, num_bits, narrow_range)
    quant_zero = F32(np.floor(-nmin * inv + F32(.5)))
    shifted = max(min(F32(v), nmax), nmin) - nmin
    steps = shifted / scale if divide else shifted * inv
    return F32(np.floor(steps - quant_zero + F32(.5)) * scale)


def _ref_quantize(num_bits=8, narrow_range=False, divide=False, lo=None, hi=None):
    """Reference of the forward ops: per element, ranges from attrs or per channel."""
    def ref(x, *ranges):
        x = x.astype(F32)
        if ranges:
            lows, highs = (np.broadcast_to(np.asarray(r, F32), x.shape[-1:]) for r in ranges)
        else:
            lows, highs = np.full(x.shape[-1:], lo, F32), np.full(x.shape[-1:], hi, F32)
        out = np.empty_like(x)
        for index in np.ndindex(x.shape):
            c = index[-1] if x.ndim else 0
            out[index] = _quantize_one(x[index], lows[c], highs[c], num_bits, narrow_range,
                                       divide)
        return out
    return ref


def _ref_backprops(lo, hi, num_bits=8, narrow_range=False, per_channel=False):
    """Reference of the gradient ops: (inside, sum below, sum above), summed over all but the
    last axis per channel, else over everything."""
    def ref(g, x, *ranges):
        lows, highs = (np.broadcast_to(np.asarray(r, F32), x.shape[-1:])
                       for r in (ranges or (lo, hi)))
        bounds = [_nudged(a, b, num_bits, narrow_range)[:2] for a, b in zip(lows, highs)]
        nmin = np.array([b[0] for b in bounds], F32)
        nmax = np.array([b[1] for b in bounds], F32)
        inside = (x >= nmin) & (x <= nmax)
        axes = tuple(range(x.ndim - 1)) if per_channel else None
        below = np.where(x < nmin, g, 0).sum(axis=axes, dtype=np.float64)
        above = np.where(x > nmax, g, 0).sum(axis=axes, dtype=np.float64)
        return [np.where(inside, g, 0).astype(F32), below.astype(F32), above.astype(F32)]
    return ref


_X = _uniform(-8, 8, 3, 4)
_LO, _HI = [-1.0, -0.3, 0.5, -3.0], [1.0, 2.7, 3.0, -0.5]
qz = tf.quantization

CASES = [
    OpCase("args_default", qz.fake_quant_with_min_max_args, _ref_quantize(lo=-6, hi=6),
           [_X], grad=False),
    OpCase("args_4_bits_narrow",
           lambda x: qz.fake_quant_with_min_max_args(x, -0.3, 2.7, num_bits=4,
                                                     narrow_range=True),
           _ref_quantize(4, True, lo=-0.3, hi=2.7), [_uniform(-1, 4, 2, 3, 5)], grad=False),
    OpCase("args_positive_range",
           lambda x: qz.fake_quant_with_min_max_args(x, min=0.5, max=3.0),
           _ref_quantize(lo=0.5, hi=3.0), [_uniform(-1, 4, 7)], grad=False),
    OpCase("args_gradient",
           lambda g, x: qz.fake_quant_with_min_max_args_gradient(g, x, min=-1.0, max=1.0),
           lambda g, x: _ref_backprops(-1.0, 1.0)(g, x)[0], [_X, _X], grad=False),
    OpCase("vars", lambda x, lo, hi: qz.fake_quant_with_min_max_vars(x, lo, hi, num_bits=6),
           _ref_quantize(6, divide=True), [_X, _value(-2.2), _value(3.1)], grad=False),
    OpCase("vars_zero_range", qz.fake_quant_with_min_max_vars, _ref_quantize(divide=True),
           [_X, _value(0.0), _value(0.0)], grad=False),
    OpCase("vars_gradient",
           lambda g, x, lo, hi: qz.fake_quant_with_min_max_vars_gradient(g, x, lo, hi),
           lambda g, x, lo, hi: _ref_backprops(lo, hi)(g, x), [_X, _X, _value(-1.0),
                                                               _value(2.0)],
           rtol=1e-5, atol=1e-5, grad=False),
    OpCase("per_channel",
           lambda x, lo, hi: qz.fake_quant_with_min_max_vars_per_channel(x, lo, hi,
                                                                         narrow_range=True),
           _ref_quantize(narrow_range=True), [_uniform(-4, 4, 2, 3, 4), _value(_LO),
                                              _value(_HI)], grad=False),
    OpCase("per_channel_vector", qz.fake_quant_with_min_max_vars_per_channel,
           _ref_quantize(), [_uniform(-4, 4, 4), _value(_LO), _value(_HI)], grad=False),
    OpCase("per_channel_gradient",
           lambda g, x, lo, hi: qz.fake_quant_with_min_max_vars_per_channel_gradient(
               g, x, lo, hi, num_bits=5),
           lambda g, x, lo, hi: _ref_backprops(None, None, 5, per_channel=True)(g, x, lo, hi),
           [_uniform(-1, 1, 5, 4), _uniform(-4, 4, 5, 4), _value(_LO), _value(_HI)],
           rtol=1e-5, atol=1e-5, grad=False),
]

test_forward, test_shape_function = case_tests(CASES)

_EDGES = np.array([-7.0, -6.1, -0.3, 0.0, 0.013, 1.37, 5.99, 6.5], F32)


@pytest.mark.parametrize("lo, hi, num_bits, narrow_range, expected", [
    (-6.0, 6.0, 8, False, [-6.023529529571533, -6.023529529571533, -0.2823529541492462, 0.0,
                           0.0, 1.3647059202194214, 5.976470470428467, 5.976470470428467]),
    (-0.3, 2.7, 4, True, [-0.2142857164144516, -0.2142857164144516, -0.2142857164144516, 0.0,
                          0.0, 1.2857142686843872, 2.7857143878936768, 2.7857143878936768]),
    (0.5, 3.0, 8, False, [0.0, 0.0, 0.0, 0.0, 0.009803921915590763, 1.372549057006836, 2.5,
                          2.5]),
    (-3.0, -0.5, 3, False, [-2.5, -2.5, -0.3571428656578064, 0.0, 0.0, 0.0, 0.0, 0.0]),
])
def test_values_are_tensorflows_bit_for_bit(lo, hi, num_bits, narrow_range, expected):
    """Recorded from TensorFlow 2.21: the nudged range keeps 0.0 on the grid, and both the
    args and the vars forms give these exact float32 values."""
    with tf.Graph().as_default(), tf.Session() as sess:
        args = qz.fake_quant_with_min_max_args(_EDGES, lo, hi, num_bits, narrow_range)
        var = qz.fake_quant_with_min_max_vars(_EDGES, lo, hi, num_bits, narrow_range)
        for got in sess.run([args, var]):
            np.testing.assert_array_equal(got, np.array(expected, F32))


def test_per_channel_values_and_gradients_are_tensorflows():
    x = _EDGES.reshape(4, 2)
    g = np.arange(1, 9, dtype=F32).reshape(4, 2)
    with tf.Graph().as_default(), tf.Session() as sess:
        out, grads = sess.run([
            qz.fake_quant_with_min_max_vars_per_channel(x, [-1.0, 0.0], [1.0, 0.0]),
            qz.fake_quant_with_min_max_vars_per_channel_gradient(g, x, [-1.0, 0.0],
                                                                  [1.0, 0.0])])
        scalar = sess.run(qz.fake_quant_with_min_max_vars_gradient(g.ravel(), x.ravel(),
                                                                   -1.0, 1.0))
    np.testing.assert_array_equal(out.ravel(), np.array(
        [-0.9960784912109375, 0.0, -0.2980392277240753, 0.0, 0.01568627543747425, 0.0,
         1.003921627998352, 0.0], F32))
    # A channel whose range is [0, 0] gives zeros and passes its whole gradient on.
    np.testing.assert_array_equal(grads[0], [[0, 2], [3, 4], [5, 6], [0, 8]])
    np.testing.assert_array_equal(grads[1], [1, 0])
    np.testing.assert_array_equal(grads[2], [7, 0])
    np.testing.assert_array_equal(scalar[0], [0, 0, 3, 4, 5, 0, 0, 0])
    assert (scalar[1], scalar[2]) == (3.0, 21.0)


def test_registered_gradients_are_the_straight_through_estimator():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        lo, hi = tf.constant(-1.0), tf.constant(1.0)
        by_vars = tf.reduce_sum(qz.fake_quant_with_min_max_vars(x, lo, hi) * 3.0)
        by_args = tf.reduce_sum(qz.fake_quant_with_min_max_args(x, -1.0, 1.0) * 3.0)
        lo_c, hi_c = tf.constant([-1.0, 0.0]), tf.constant([1.0, 0.5])
        xc = tf.placeholder(tf.float32, [None, 2])
        by_channel = tf.reduce_sum(qz.fake_quant_with_min_max_vars_per_channel(xc, lo_c, hi_c))
        grads = tf.gradients(by_vars, [x, lo, hi]) + tf.gradients(by_args, [x]) + \
            tf.gradients(by_channel, [xc, lo_c, hi_c])
        assert grads[0].op.type == "FakeQuantWithMinMaxVarsGradient"
        with tf.Session() as sess:
            got = sess.run(grads, {x: [-2.0, 0.3, 1.5], xc: [[-2.0, 0.2], [0.5, 0.9]]})
    np.testing.assert_array_equal(got[0], [0.0, 3.0, 0.0])
    assert (got[1], got[2]) == (3.0, 3.0)
    np.testing.assert_array_equal(got[3], [0.0, 3.0, 0.0])
    np.testing.assert_array_equal(got[4], [[0, 1], [1, 0]])   # 0.9 > 0.5's nudged max
    np.testing.assert_array_equal(got[5], [1, 0])
    np.testing.assert_array_equal(got[6], [0, 1])


def test_names_and_aliases():
    assert tf.fake_quant_with_min_max_args is qz.fake_quant_with_min_max_args
    assert tf.fake_quant_with_min_max_vars_per_channel_gradient is \
        qz.fake_quant_with_min_max_vars_per_channel_gradient
    with tf.Graph().as_default():
        y = qz.fake_quant_with_min_max_vars(tf.zeros([2]), -1.0, 1.0)
        assert (y.op.name, y.op.get_attr("num_bits"), y.op.get_attr("narrow_range")) == (
            "FakeQuantWithMinMaxVars", 8, False)
        with pytest.raises(LookupError):   # TensorFlow registers no gradient for these
            tf.gradients(qz.fake_quant_with_min_max_args_gradient(y, y), y)


@pytest.mark.parametrize("build, error, message", [
    (lambda x: qz.fake_quant_with_min_max_args(x, min=1.0, max=-1.0),
     tf.errors.InvalidArgumentError, "min has to be smaller than max, was: 1 >= -1"),
    (lambda x: qz.fake_quant_with_min_max_args(x, num_bits=1),
     tf.errors.InvalidArgumentError, "num_bits must be between 2 and 16, inclusive"),
    (lambda x: qz.fake_quant_with_min_max_vars(x, -1.0, 1.0, num_bits=17),
     tf.errors.InvalidArgumentError, "num_bits must be between 2 and 16, inclusive"),
    (lambda x: qz.fake_quant_with_min_max_vars(
        x, tf.placeholder_with_default([-1.0], tf.TensorShape(None)), 1.0),
     tf.errors.InvalidArgumentError, "`min` must be rank 0 but is rank 1"),
    (lambda x: qz.fake_quant_with_min_max_vars_per_channel(
        tf.reshape(x, [4, 2]), tf.placeholder_with_default([-1.0] * 3, [None]), [1.0, 1.0]),
     tf.errors.InvalidArgumentError, "min has incorrect size, expected 2 was 3"),
])
def test_bad_attrs_and_ranges_fail_the_step_with_tensorflows_message(build, error, message):
    with tf.Graph().as_default(), tf.Session() as sess:
        y = build(tf.constant(_EDGES))
        with pytest.raises(error, match=message) as info:
            sess.run(y)
        assert y.op.name in str(info.value)


@pytest.mark.parametrize("build, message", [
    (lambda x: qz.fake_quant_with_min_max_vars(x, [-1.0], 1.0),
     "Shape must be rank 0 but is rank 1"),
    (lambda x: qz.fake_quant_with_min_max_vars_per_channel(tf.reshape(x, [4, 2]),
                                                           [-1.0] * 3, [1.0, 1.0]),
     "Dimensions must be equal, but are 2 and 3"),
    (lambda x: qz.fake_quant_with_min_max_args(tf.cast(x, tf.float64)),
     "Input 'inputs' of 'FakeQuantWithMinMaxArgs' Op has type float64 that does not match "
     "expected type of float32"),
])
def test_bad_shapes_and_dtypes_fail_at_build_time(build, message):
    with tf.Graph().as_default():
        with pytest.raises((ValueError, TypeError), match=message):
            build(tf.constant(_EDGES))
