"""tf.nn activations, their gradient helper ops, bias_add, xw_plus_b, in_top_k, top_k's
gradient, dropout, l2_normalize, moments and batch_normalization: OpCase rows against NumPy,
then names, errors, static shapes and TensorFlow's edge-case semantics."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import nn_ops
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

FLOATS = (tf.float16, tf.float32, tf.float64)
F32_64 = (tf.float32, tf.float64)
ALPHA, SCALE = nn_ops.SELU_ALPHA, nn_ops.SELU_SCALE


def _randn(*shape, scale=1.0):
    return lambda rng, dt: (rng.randn(*shape) * scale).astype(dt)


def _away_from(*kinks, shape=(3, 4), low=-8.0, high=8.0):
    """Uniform values at least 0.1 away from every kink (for gradient checks)."""
    def gen(rng, dt):
        x = rng.uniform(low, high, shape)
        for k in kinks:
            near = np.abs(x - k) < 0.1
            x[near] = k + 0.1 * np.sign(x[near] - k + 1e-9) + 0.05
        return x.astype(dt)
    return gen


def _ints(low, high, *shape):
    return lambda rng, dt: rng.randint(low, high, shape).astype(dt)


def _f64(fn):
    """A reference computed in float64 and cast back to the input's dtype."""
    def ref(*xs):
        return np.asarray(fn(*(x.astype(np.float64) for x in xs))).astype(xs[0].dtype)
    return ref


def _softplus(x):
    return np.logaddexp(0, x)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _elu(x):
    return np.where(x < 0, np.expm1(np.minimum(x, 0)), x)


def _selu(x):
    return SCALE * np.where(x < 0, ALPHA * np.expm1(np.minimum(x, 0)), x)


def _leaky(alpha):
    return lambda x: np.where(x > 0, x, alpha * x)


_X = _away_from(0.0, 6.0)
CASES = [
    OpCase("relu", tf.nn.relu, lambda x: np.maximum(x, 0), [_X],
           dtypes=FLOATS + (tf.int32, tf.int64, tf.uint8)),
    OpCase("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6), [_X],
           dtypes=FLOATS + (tf.int32, tf.int8)),
    OpCase("elu", tf.nn.elu, _f64(_elu), [_X], dtypes=FLOATS),
    OpCase("selu", tf.nn.selu, _f64(_selu), [_X], dtypes=FLOATS),
    OpCase("leaky_relu", tf.nn.leaky_relu, _f64(_leaky(0.2)), [_X], dtypes=FLOATS),
    OpCase("leaky_relu_alpha", lambda x: tf.nn.leaky_relu(x, alpha=0.01), _f64(_leaky(0.01)),
           [_X], dtypes=F32_64),
    OpCase("leaky_relu_alpha_above_1", lambda x: tf.nn.leaky_relu(x, alpha=3.0),
           _f64(_leaky(3.0)), [_X], dtypes=F32_64),
    OpCase("softplus", tf.nn.softplus, _f64(_softplus), [_randn(3, 4, scale=5)],
           dtypes=FLOATS),
    OpCase("softplus_extremes", tf.nn.softplus, _f64(_softplus),
           [lambda rng, dt: np.array([-80.0, -30.0, -1.0, 0.0, 1.0, 30.0, 80.0], dt)],
           dtypes=F32_64),
    OpCase("softsign", tf.nn.softsign, _f64(lambda x: x / (1 + np.abs(x))), [_X],
           dtypes=FLOATS),
    OpCase("crelu", tf.nn.crelu, lambda x: np.maximum(np.concatenate([x, -x], -1), 0), [_X],
           dtypes=F32_64),
    OpCase("crelu_axis0", lambda x: tf.nn.crelu(x, axis=0),
           lambda x: np.maximum(np.concatenate([x, -x], 0), 0), [_X]),
    OpCase("nn_sigmoid", tf.nn.sigmoid, _f64(_sigmoid), [_randn(3, 4)], dtypes=F32_64),
    OpCase("nn_tanh", tf.nn.tanh, _f64(np.tanh), [_randn(3, 4)], dtypes=F32_64),
    OpCase("relu_empty", tf.nn.relu, lambda x: np.maximum(x, 0), [_randn(0, 3)]),
    OpCase("elu_scalar", tf.nn.elu, _f64(_elu), [lambda rng, dt: np.array(-0.7, dt)]),
]
for _case in CASES:
    if tf.float16 in _case.dtypes:
        _case.rtol, _case.atol = 2e-3, 2e-3

# The gradient helper ops: (name, op, reference of (gradients, x), x's kinks)
_GRAD_HELPERS = [
    ("relu_grad", nn_ops.ReluGrad, lambda g, x: g * (x > 0), (0.0,)),
    ("relu6_grad", nn_ops.Relu6Grad, lambda g, x: g * ((x > 0) & (x < 6)), (0.0, 6.0)),
    ("elu_grad", nn_ops.EluGrad, lambda g, y: np.where(y < 0, g * (y + 1), g), (0.0,)),
    ("selu_grad", nn_ops.SeluGrad,
     lambda g, y: np.where(y < 0, g * (y + SCALE * ALPHA), g * SCALE), (0.0,)),
    ("leaky_relu_grad", nn_ops.LeakyReluGrad, lambda g, x: np.where(x > 0, g, 0.2 * g),
     (0.0,)),
    ("softplus_grad", nn_ops.SoftplusGrad, lambda g, x: g * _sigmoid(x), ()),
    ("softsign_grad", nn_ops.SoftsignGrad, lambda g, x: g / (1 + np.abs(x)) ** 2, (0.0,)),
]
for _name, _op_def, _ref, _kinks in _GRAD_HELPERS:
    CASES.append(OpCase(_name, lambda g, x, d=_op_def: apply_op(d, [g, x]), _f64(_ref),
                        [_randn(3, 4), _away_from(*_kinks, low=-4, high=8)],
                        dtypes=F32_64 + ((tf.int32,) if _name == "relu_grad" else ())))


def _scalar(value):
    return lambda rng, dt: np.array(value, dt)


# 0-d inputs reach a kernel as NumPy scalars, which a ufunc's `out=` cannot take (relu6,
# leaky_relu, softsign and the softplus/softsign gradients raised "return arrays must be of
# ArrayType"): every activation and helper once more on scalars either side of its kinks.
_SCALAR_ACTIVATIONS = [
    ("relu", tf.nn.relu, lambda x: np.maximum(x, 0)),
    ("relu6", tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("selu", tf.nn.selu, _f64(_selu)),
    ("leaky_relu", tf.nn.leaky_relu, _f64(_leaky(0.2))),
    ("leaky_relu_alpha_above_1", lambda x: tf.nn.leaky_relu(x, alpha=3.0), _f64(_leaky(3.0))),
    ("softplus", tf.nn.softplus, _f64(_softplus)),
    ("softsign", tf.nn.softsign, _f64(lambda x: x / (1 + np.abs(x)))),
]
for _name, _fn, _ref in _SCALAR_ACTIVATIONS:
    for _value in (-0.7, 2.5, 7.5):
        CASES.append(OpCase(f"{_name}_scalar_{_value}", _fn, _ref, [_scalar(_value)],
                            dtypes=F32_64))
for _name, _op_def, _ref, _ in _GRAD_HELPERS:
    CASES.append(OpCase(f"{_name}_scalar", lambda g, x, d=_op_def: apply_op(d, [g, x]),
                        _f64(_ref), [_scalar(1.5), _scalar(-0.7)], dtypes=F32_64))
CASES.append(OpCase("leaky_relu_grad_alpha",
                    lambda g, x: apply_op(nn_ops.LeakyReluGrad, [g, x], {"alpha": 0.5}),
                    _f64(lambda g, x: np.where(x > 0, g, 0.5 * g)),
                    [_randn(2, 3), _away_from(0.0, shape=(2, 3))]))


def _bias_nchw(x, b):
    return x + b.reshape((-1,) + (1,) * (x.ndim - 2))


CASES += [
    OpCase("bias_add", tf.nn.bias_add, np.add, [_randn(4, 3), _randn(3)],
           dtypes=FLOATS + (tf.int32, tf.int64)),
    OpCase("bias_add_4d", tf.nn.bias_add, np.add, [_randn(2, 3, 2, 5), _randn(5)]),
    OpCase("bias_add_nchw", lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"), _bias_nchw,
           [_randn(2, 3, 2, 2), _randn(3)], dtypes=F32_64),
    OpCase("bias_add_nchw_3d", lambda x, b: tf.nn.bias_add(x, b, data_format="NCW"),
           _bias_nchw, [_randn(2, 3, 4), _randn(3)]),
    OpCase("bias_add_nhwc_spelling", lambda x, b: tf.nn.bias_add(x, b, data_format="NWC"),
           np.add, [_randn(2, 4, 3), _randn(3)]),
    OpCase("bias_add_grad", lambda g: apply_op(nn_ops.BiasAddGrad, [g]),
           lambda g: g.reshape(-1, g.shape[-1]).sum(0).astype(g.dtype), [_randn(2, 3, 4)],
           dtypes=F32_64 + (tf.int32,)),
    OpCase("bias_add_grad_nchw",
           lambda g: apply_op(nn_ops.BiasAddGrad, [g], {"data_format": "NCHW"}),
           lambda g: g.sum((0, 2, 3)).astype(g.dtype), [_randn(2, 3, 2, 4)], dtypes=F32_64),
    OpCase("bias_add_grad_one_row", lambda g: apply_op(nn_ops.BiasAddGrad, [g]),
           lambda g: g.sum(0), [_randn(1, 5)]),
    OpCase("xw_plus_b", tf.nn.xw_plus_b, lambda x, w, b: x @ w + b,
           [_randn(4, 3), _randn(3, 2), _randn(2)], dtypes=F32_64, rtol=1e-5),
]


def _in_top_k_ref(k):
    def ref(p, t):
        target = p[np.arange(len(t)), t]
        return (p > target[:, None]).sum(1) < k
    return ref


# Rows of distinct values except the ties the row is about.
_PREDS = lambda rng, dt: rng.permutation(24).reshape(4, 6).astype(dt)
_TIED = lambda rng, dt: np.array([[1, 1, 1, 0], [2, 1, 1, 1], [3, 3, 3, 3]], dt)
CASES += [
    OpCase(f"in_top_k_{k}", lambda p, t, k=k: tf.nn.in_top_k(p, t, k), _in_top_k_ref(k),
           [_PREDS, _ints(0, 6, 4)], fixed_dtypes=(None, tf.int32), grad=False)
    for k in (1, 3, 6)]
CASES += [
    OpCase("in_top_k_ties", lambda p, t: tf.nn.in_top_k(p, t, 1), _in_top_k_ref(1),
           [_TIED, lambda rng, dt: np.array([2, 3, 1], dt)], fixed_dtypes=(None, tf.int64),
           grad=False),
    OpCase("in_top_k_tensor_k", lambda p, t, k: tf.nn.in_top_k(p, t, k),
           lambda p, t, k: _in_top_k_ref(int(k))(p, t),
           [_PREDS, _ints(0, 6, 4), lambda rng, dt: np.array(2, dt)],
           fixed_dtypes=(None, tf.int32, tf.int32), grad=False),
    OpCase("top_k_values", lambda x: tf.nn.top_k(x, 2).values, lambda x: -np.sort(-x)[..., :2],
           [lambda rng, dt: rng.permutation(24).reshape(2, 3, 4).astype(dt) / 4],
           dtypes=F32_64),
    OpCase("top_k_times_indices", lambda x: tf.nn.top_k(x, 3).values * tf.cast(
        tf.nn.top_k(x, 3).indices, x.dtype),
           lambda x: -np.sort(-x)[..., :3] * np.argsort(-x)[..., :3],
           [lambda rng, dt: rng.permutation(12).reshape(2, 6).astype(dt)]),
]


def _moments_ref(axes, keep=False):
    def ref(x):
        mean = x.astype(np.float64).mean(axis=tuple(axes), keepdims=True)
        var = ((x - mean) ** 2).mean(axis=tuple(axes), keepdims=True)
        if not keep:
            mean, var = mean.squeeze(tuple(axes)), var.squeeze(tuple(axes))
        return [mean.astype(x.dtype), var.astype(x.dtype)]
    return ref


def _l2n_ref(axis, eps=1e-12):
    def ref(x):
        x64 = x.astype(np.float64)
        sq = np.sum(x64 * x64, axis=axis, keepdims=True)
        return (x64 / np.sqrt(np.maximum(sq, eps))).astype(x.dtype)
    return ref


def _bn_ref(x, mean, var, offset, scale):
    return ((x - mean) / np.sqrt(var + 1e-3) * scale + offset).astype(x.dtype)


def _positive(*shape):
    return lambda rng, dt: rng.uniform(0.5, 2.0, shape).astype(dt)


CASES += [
    OpCase("moments", lambda x: list(tf.nn.moments(x, [0])), _moments_ref([0]),
           [_randn(5, 3)], dtypes=FLOATS, rtol=2e-3, atol=2e-3),
    OpCase("moments_keep_dims", lambda x: list(tf.nn.moments(x, [0, 2], keep_dims=True)),
           _moments_ref([0, 2], keep=True), [_randn(4, 3, 2)], dtypes=F32_64),
    OpCase("moments_negative_axis", lambda x: list(tf.nn.moments(x, [-1], keepdims=False)),
           _moments_ref([-1]), [_randn(3, 4)]),
    OpCase("l2_normalize", lambda x: tf.nn.l2_normalize(x, 1), _l2n_ref(1), [_randn(3, 4)],
           dtypes=F32_64),
    OpCase("l2_normalize_all_axes", tf.nn.l2_normalize, _l2n_ref(None), [_randn(2, 3)]),
    OpCase("l2_normalize_zero_row", lambda x: tf.nn.l2_normalize(x, axis=[1]), _l2n_ref(1),
           [lambda rng, dt: np.array([[0.0, 0.0], [3.0, 4.0]], dt)], grad=False),
    OpCase("batch_normalization",
           lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3), _bn_ref,
           [_randn(4, 3), _randn(3), _positive(3), _randn(3), _randn(3)], dtypes=F32_64),
    OpCase("batch_normalization_no_scale_offset",
           lambda x, m, v: tf.nn.batch_normalization(x, m, v, None, None, 1e-3),
           lambda x, m, v: _bn_ref(x, m, v, 0.0, 1.0),
           [_randn(2, 2, 3), _randn(3), _positive(3)]),
]




def _weighted_moments_ref(axes, keep=False):
    def ref(x, w):
        w = np.broadcast_to(w, x.shape).astype(np.float64)
        total = w.sum(axis=tuple(axes), keepdims=True)
        mean = (w * x).sum(axis=tuple(axes), keepdims=True) / total
        var = (w * (x - mean) ** 2).sum(axis=tuple(axes), keepdims=True) / total
        if not keep:
            mean, var = mean.squeeze(tuple(axes)), var.squeeze(tuple(axes))
        return [mean.astype(x.dtype), var.astype(x.dtype)]
    return ref


def _stats_ref(shifted):
    def ref(x, *shift):
        c = x - shift[0] if shifted else x
        return [np.array(x.shape[0], x.dtype), c.sum(0).astype(x.dtype),
                (c * c).sum(0).astype(x.dtype)]
    return ref


CASES += [
    OpCase("silu", tf.nn.silu, _f64(lambda x: x * _sigmoid(x)), [_randn(3, 4, scale=3)],
           dtypes=F32_64),
    OpCase("swish_beta", lambda x: tf.nn.swish(x, beta=2.0),
           _f64(lambda x: x * _sigmoid(2 * x)), [_randn(3, 4)]),
    OpCase("relu_layer", tf.nn.relu_layer,
           _f64(lambda x, w, b: np.maximum(x @ w + b, 0)),
           [_randn(4, 3), _randn(3, 5), _randn(5)], dtypes=F32_64),
    OpCase("sufficient_statistics",
           lambda x: list(tf.nn.sufficient_statistics(x, [0])[:3]), _stats_ref(False),
           [_randn(4, 3)], dtypes=F32_64),
    OpCase("sufficient_statistics_shift",
           lambda x, s: list(tf.nn.sufficient_statistics(x, [0], shift=s)[:3]),
           _stats_ref(True), [_randn(4, 3), lambda rng, dt: np.array(0.5, dt)]),
    OpCase("normalize_moments",
           lambda c, m, v, s: list(tf.nn.normalize_moments(c, m, v, s)),
           lambda c, m, v, s: [(m / c + s).astype(c.dtype), (v / c - (m / c) ** 2).astype(
               c.dtype)],
           [lambda rng, dt: np.array(4.0, dt), _randn(3), _positive(3),
            lambda rng, dt: np.array(0.3, dt)],
           dtypes=F32_64),
    OpCase("weighted_moments", lambda x, w: list(tf.nn.weighted_moments(x, [0], w)),
           _weighted_moments_ref([0]), [_randn(4, 3), _positive(4, 1)], dtypes=F32_64),
    OpCase("weighted_moments_keep_dims",
           lambda x, w: list(tf.nn.weighted_moments(x, [1], w, keep_dims=True)),
           _weighted_moments_ref([1], keep=True), [_randn(2, 3), _positive(1, 3)]),
    OpCase("zero_fraction", tf.nn.zero_fraction,
           lambda x: np.float32((x == 0).mean()), [_ints(-1, 2, 3, 4)],
           dtypes=(tf.float32, tf.int32), grad=False),
]


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# --- names and graph structure ------------------------------------------------------------------
def test_default_names_match_tensorflow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        b = tf.placeholder(tf.float32, [3])
        assert tf.nn.relu(x).name == "Relu:0"
        assert tf.nn.relu6(x).name == "Relu6:0"
        assert tf.nn.elu(x).name == "Elu:0"
        assert tf.nn.selu(x).name == "Selu:0"
        assert tf.nn.leaky_relu(x).name == "LeakyRelu:0"
        assert tf.nn.softplus(x).name == "Softplus:0"
        assert tf.nn.softsign(x).name == "Softsign:0"
        assert tf.nn.sigmoid(x).name == "Sigmoid:0"
        assert tf.nn.tanh(x).name == "Tanh:0"
        assert tf.nn.crelu(x).name == "CRelu/Relu:0"
        assert tf.nn.bias_add(x, b).name == "BiasAdd:0"
        xwb = tf.nn.xw_plus_b(x, tf.zeros([3, 4]), tf.zeros([4]))
        assert xwb.name == "xw_plus_b:0" and xwb.op.inputs[0].op.name == "xw_plus_b/MatMul"
        top = tf.nn.in_top_k(x, tf.constant([0, 1]), 1)
        assert top.name == "in_top_k/InTopKV2:0" and top.dtype == tf.bool
        mean, var = tf.nn.moments(x, [0])
        assert (mean.op.name, var.op.name) == ("moments/Squeeze", "moments/Squeeze_1")
        assert tf.nn.l2_normalize(x, 1).name == "l2_normalize:0"
        assert tf.nn.batch_normalization(x, b, b, b, b, 1e-3).name == "batchnorm/add_1:0"
        assert tf.nn.relu(x, name="act").name == "act:0"


def test_gradients_use_the_helper_ops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        for fn, helper, feeds_output in (
                (tf.nn.relu, "ReluGrad", True), (tf.nn.relu6, "Relu6Grad", True),
                (tf.nn.elu, "EluGrad", True), (tf.nn.selu, "SeluGrad", True),
                (tf.nn.leaky_relu, "LeakyReluGrad", False),
                (tf.nn.softplus, "SoftplusGrad", False), (tf.nn.softsign, "SoftsignGrad", False)):
            y = fn(x)
            (g,) = tf.gradients(y, x)
            assert g.op.type == helper
            assert g.op.inputs[1] is (y if feeds_output else x)
        b = tf.ones([3])
        (gb,) = tf.gradients(tf.nn.bias_add(x, b), b)
        assert gb.op.type == "BiasAddGrad"


def test_leaky_relu_gradient_keeps_alpha():
    with tf.Graph().as_default():
        x = tf.constant([-2.0, 3.0])
        (g,) = tf.gradients(tf.nn.leaky_relu(x, alpha=0.3), x)
        assert g.op.get_attr("alpha") == pytest.approx(0.3)
        np.testing.assert_allclose(_run(g), [0.3, 1.0])


# TF 2.21's leaky_relu(x, alpha=0.3) and its gradient for x = [-1, -3, 2, -0.5]: the alpha attr
# is a float32 and the kernels multiply by static_cast<T>(alpha), so float64 sees float32(0.3).
_LEAKY_TF = {
    tf.float16: ([-0.300048828125, -0.900390625, 2.0, -0.1500244140625],
                 [0.300048828125, 0.300048828125, 1.0, 0.300048828125]),
    tf.float32: ([-0.30000001192092896, -0.9000000357627869, 2.0, -0.15000000596046448],
                 [0.30000001192092896, 0.30000001192092896, 1.0, 0.30000001192092896]),
    tf.float64: ([-0.30000001192092896, -0.9000000357627869, 2.0, -0.15000000596046448],
                 [0.30000001192092896, 0.30000001192092896, 1.0, 0.30000001192092896]),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_leaky_relu_uses_alpha_rounded_to_float32(dtype):
    with tf.Graph().as_default():
        x = tf.placeholder(dtype, [4])
        y = tf.nn.leaky_relu(x, alpha=0.3)
        (g,) = tf.gradients(y, x)
        got_y, got_g = _run([y, g], {x: [-1.0, -3.0, 2.0, -0.5]})
    want_y, want_g = _LEAKY_TF[dtype]
    assert got_y.dtype == got_g.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(got_y, np.array(want_y, dtype.as_numpy_dtype))
    np.testing.assert_array_equal(got_g, np.array(want_g, dtype.as_numpy_dtype))


def test_leaky_relu_grad_passes_g_through_exactly_in_float16():
    """TF selects g where x > 0; alpha + (1 - alpha) would round to 0.99951171875 here."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float16, [3])
        y = tf.nn.leaky_relu(x, alpha=1.273923397064209)
        (g,) = tf.gradients(y, x)
        got_y, got_g = _run([y, g], {x: [-2.0, 3.0, 0.0]})
    np.testing.assert_array_equal(got_y, np.array([-2.546875, 3.0, 0.0], np.float16))
    np.testing.assert_array_equal(got_g, np.array([1.2734375, 1.0, 1.2734375], np.float16))


# --- semantics -----------------------------------------------------------------------------------
def test_nan_propagates_through_relu_family():
    with tf.Graph().as_default():
        x = tf.constant([np.nan, -1.0, 7.0])
        relu, relu6, leaky = _run([tf.nn.relu(x), tf.nn.relu6(x), tf.nn.leaky_relu(x)])
    np.testing.assert_array_equal(relu, [np.nan, 0.0, 7.0])
    np.testing.assert_array_equal(relu6, [np.nan, 0.0, 6.0])
    np.testing.assert_allclose(leaky, [np.nan, -0.2, 7.0])


def test_leaky_relu_casts_integers_and_rejects_tensor_alpha():
    with tf.Graph().as_default():
        y = tf.nn.leaky_relu(tf.constant([-2, 3]))
        assert y.dtype == tf.float32
        np.testing.assert_allclose(_run(y), [-0.4, 3.0])
        with pytest.raises(TypeError, match="Expected float for argument 'alpha'"):
            tf.nn.leaky_relu(tf.constant([1.0]), alpha=tf.constant(0.3))


@pytest.mark.parametrize("fn", [tf.nn.elu, tf.nn.selu, tf.nn.softplus, tf.nn.softsign])
def test_float_only_activations_reject_integers(fn):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="not in list of allowed values"):
            fn(tf.constant([1, 2]))


def test_softplus_is_stable_at_extremes():
    with tf.Graph().as_default():
        y = tf.nn.softplus(tf.constant([-1000.0, 1000.0, 20.0]))
        (g,) = tf.gradients(y, y.op.inputs[0])
        value, grad = _run([y, g])
    np.testing.assert_allclose(value, [0.0, 1000.0, 20.0], atol=1e-30)
    np.testing.assert_allclose(grad, [0.0, 1.0, 1.0])


def test_bias_add_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.nn.bias_add(x, tf.zeros([4]))
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.nn.bias_add(x, tf.zeros([3, 1]))
        with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
            tf.nn.bias_add(tf.zeros([3]), tf.zeros([3]))
        with pytest.raises(ValueError, match="Shape must be at least rank 3 but is rank 2"):
            tf.nn.bias_add(x, tf.zeros([3]), data_format="NCHW")
        with pytest.raises(ValueError, match="`data_format` must be of the form"):
            tf.nn.bias_add(x, tf.zeros([3]), data_format="NHCW")
        with pytest.raises(ValueError, match="^bias: Tensor conversion requested dtype float32"):
            tf.nn.bias_add(x, tf.zeros([3], tf.float64))
        # Unknown channel count: the kernel checks the bias length when it runs.
        v = tf.placeholder(tf.float32, [2, None])
        out = tf.nn.bias_add(v, tf.zeros([3]))
        assert out.shape.as_list() == [2, 3]
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="as many biases"):
                sess.run(out, {v: np.zeros((2, 4), np.float32)})


def test_bias_add_grad_of_grad_broadcasts():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6.0).reshape(2, 3))
        b = tf.constant([1.0, 2.0, 3.0], tf.float64)
        y = tf.nn.bias_add(x, b)
        (gb,) = tf.gradients(y * y, b)
        (gx,) = tf.gradients(gb, x)   # d/dx sum_rows 2 (x + b) = 2
        np.testing.assert_allclose(_run(gx), np.full((2, 3), 2.0))


def test_in_top_k_semantics():
    with tf.Graph().as_default():
        p = tf.constant([[1.0, 2.0, 3.0], [1.0, np.nan, 3.0], [1.0, np.inf, 3.0],
                         [5.0, 5.0, 5.0]])
        t = tf.constant([2, 2, 1, 0])
        checks = _run([tf.nn.in_top_k(p, t, 1), tf.nn.in_top_k(p, t, 5),
                       tf.nn.in_top_k(p, t, 0), tf.nn.in_top_k(p, tf.constant([3, -1, 0, 2]), 3)])
    assert checks[0].tolist() == [True, False, False, True]   # non-finite rows never count
    assert checks[1].tolist() == [True, False, False, True]   # k beyond the class count
    assert checks[2].tolist() == [False] * 4
    assert checks[3].tolist() == [False, False, False, True]  # out-of-range targets


def test_in_top_k_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.nn.in_top_k(x, tf.zeros([2, 1], tf.int32), 1)
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.nn.in_top_k(x, tf.zeros([3], tf.int32), 1)
        with pytest.raises(TypeError, match="expected type of float32"):
            tf.nn.in_top_k(tf.zeros([2, 3], tf.float64), tf.zeros([2], tf.int32), 1)
        assert tf.nn.in_top_k(x, tf.zeros([2], tf.int64), 1).op.get_attr("T") == tf.int64


def test_top_k_gradient_scatters_to_the_chosen_positions():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        values, _ = tf.nn.top_k(x, 2)
        (g,) = tf.gradients(values * tf.constant([[10.0, 1.0]]), x)
        got = _run(g, {x: [[0.5, 3.0, 1.0, 2.0], [4.0, 3.0, 2.0, 1.0]]})
    np.testing.assert_array_equal(got, [[0, 10, 0, 1], [10, 1, 0, 0]])


def test_crelu_and_moments_float16():
    with tf.Graph().as_default():
        mean, var = tf.nn.moments(tf.constant([[1, 2], [4, 7]], tf.float16), [0])
        assert mean.dtype == tf.float16 and mean.op.type == "Cast"
        m, v = _run([mean, var])
        imean, ivar = _run(list(tf.nn.moments(tf.constant([[1, 2], [4, 7]]), [0])))
    np.testing.assert_array_equal(m, [2.5, 4.5])
    np.testing.assert_array_equal(v, [2.25, 6.25])
    np.testing.assert_array_equal(imean, [2, 4])   # integer means truncate, like TF
    np.testing.assert_array_equal(ivar, [2, 6])


def test_moments_gradient_of_variance():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0], [3.0, 7.0], [5.0, 0.0]], tf.float64)
        _, var = tf.nn.moments(x, [0])
        (g,) = tf.gradients(var, x)
        xv, gv = _run([x, g])
    np.testing.assert_allclose(gv, 2 * (xv - xv.mean(0)) / 3)


# --- dropout ------------------------------------------------------------------------------------
def test_dropout_keeps_scales_and_drops():
    with tf.Graph().as_default():
        x = tf.ones([200, 50])
        y = tf.nn.dropout(x, keep_prob=0.75, seed=1)
        z = tf.nn.dropout(x, rate=0.25, seed=1)
        assert y.shape.as_list() == [200, 50] and y.op.name.startswith("dropout/")
        a, b = _run([y, z])
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((a == 0).mean() - 0.25) < 0.02
    np.testing.assert_array_equal(a, b)  # rate = 1 - keep_prob, same seed: same mask


def test_dropout_is_reproducible_with_seeds_and_changes_per_run():
    def masks(runs):
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            y = tf.nn.dropout(tf.ones([64]), rate=0.5, seed=3)
            with tf.Session() as sess:
                return [sess.run(y) for _ in range(runs)]
    first, second = masks(2), masks(2)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])


def test_dropout_noise_shape_broadcasts():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 30])
        rows = tf.nn.dropout(x, rate=0.5, noise_shape=[None, 1], seed=2)
        cols = tf.nn.dropout(x, rate=0.5, noise_shape=tf.constant([1, 30]), seed=2)
        feed = {x: np.ones((40, 30), np.float32)}
        r, c = _run([rows, cols], feed)
    assert all(len(set(row)) == 1 for row in r)         # whole rows kept or dropped
    assert all(len(set(col)) == 1 for col in c.T)       # whole columns
    assert 0 < (r[:, 0] == 0).sum() < 40
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.nn.dropout(tf.ones([4, 3]), rate=0.5, noise_shape=[4, 2])


def test_dropout_tensor_keep_prob():
    with tf.Graph().as_default():
        kp = tf.placeholder(tf.float32, [])
        x = tf.constant(np.arange(1.0, 7.0, dtype=np.float32))
        y = tf.nn.dropout(x, keep_prob=kp)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {kp: 1.0}), np.arange(1.0, 7.0))
            half = sess.run(y, {kp: 0.5})
        kept = half != 0
        np.testing.assert_allclose(half[kept], 2 * np.arange(1.0, 7.0)[kept])
        rate = tf.placeholder(tf.float32)
        assert tf.nn.dropout(x, rate=rate).shape.as_list() == [6]


def test_dropout_identity_cases_and_gradient():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        assert tf.nn.dropout(x, rate=0.0) is x
        assert tf.nn.dropout(x, keep_prob=1.0) is x
        # A keep_prob tensor builds the graph even when constant 1 (TF 2.21: a SelectV2).
        assert tf.nn.dropout(x, keep_prob=tf.constant(1.0)).op.type == "SelectV2"
        y = tf.nn.dropout(tf.ones([1000]) * x[0], rate=0.5, seed=5)
        (g,) = tf.gradients(tf.reduce_sum(y), x)
        yv, gv = _run([y, g])
    np.testing.assert_allclose(gv, [yv.sum(), 0.0], rtol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    (dict(keep_prob=1.5), r"range \[0, 1\). Received: rate=-0.5"),
    (dict(keep_prob=0.0), r"Received: rate=1.0"),
    (dict(rate=1.0), r"Received: rate=1.0"),
    (dict(rate=-0.1), r"Received: rate=-0.1"),
    (dict(), r"`rate` must be provided"),
    (dict(keep_prob=0.5, rate=0.5), "Cannot specify both 'keep_prob' and 'rate'"),
    (dict(keep_prob="a"), "`keep_prob` must be a floating point number or Tensor"),
    (dict(rate=[0.5, 0.5]), "must have rank 0"),
])
def test_dropout_argument_errors(kwargs, message):
    with tf.Graph().as_default():
        kwargs = {k: tf.constant(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        with pytest.raises(ValueError, match=message):
            tf.nn.dropout(tf.ones([4, 3]), **kwargs)


def test_dropout_rejects_integers():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="`x.dtype` must be a floating point tensor"):
            tf.nn.dropout(tf.constant([1, 2]), rate=0.5)


# --- second derivatives ---------------------------------------------------------------------------
def test_second_derivatives_of_activations():
    xs = np.array([-1.5, -0.3, 0.4, 2.0])
    cases = [
        (tf.nn.elu, lambda x: np.where(x < 0, np.exp(x), 0.0)),
        (tf.nn.selu, lambda x: np.where(x < 0, SCALE * ALPHA * np.exp(x), 0.0)),
        (tf.nn.softplus, lambda x: _sigmoid(x) * (1 - _sigmoid(x))),
        (tf.nn.softsign, lambda x: -2 * np.sign(x) / (1 + np.abs(x)) ** 3),
        (tf.nn.relu, lambda x: np.zeros_like(x)),
        (tf.nn.leaky_relu, lambda x: np.zeros_like(x)),
    ]
    with tf.Graph().as_default():
        x = tf.constant(xs)
        grads = []
        for fn, _ in cases:
            (g,) = tf.gradients(fn(x), x)
            (gg,) = tf.gradients(g, x)
            grads.append(gg)
        got = _run(grads)
    for (fn, expected), value in zip(cases, got):
        np.testing.assert_allclose(value, expected(xs), rtol=1e-10, atol=1e-12,
                                   err_msg=fn.__name__)


def test_hessian_of_bias_add_relu():
    with tf.Graph().as_default():
        b = tf.constant([0.5, -1.0], tf.float64)
        x = tf.constant([[1.0, 2.0], [-3.0, 0.25]], tf.float64)
        y = tf.reduce_sum(tf.nn.softplus(tf.nn.bias_add(x, b)))
        (h,) = tf.hessians(y, b)
        got = _run(h)
    z = np.array([[1.0, 2.0], [-3.0, 0.25]]) + [0.5, -1.0]
    s = _sigmoid(z)
    np.testing.assert_allclose(got, np.diag((s * (1 - s)).sum(0)), rtol=1e-10)


def test_statistics_helpers_match_tensorflow():
    """Values and names computed with TensorFlow 2.21 (compat.v1)."""
    with tf.Graph().as_default():
        x = tf.constant([[1.0, -2, 3], [0.5, 0, -1]])
        w = tf.constant([[1.0, 0.5], [2, -1], [0, 1]])
        count, mean_ss, var_ss, shift = tf.nn.sufficient_statistics(x, [0])
        assert shift is None and count.op.type == "Const"
        assert (mean_ss.op.name, var_ss.op.name) == ("sufficient_statistics/mean_ss",
                                                     "sufficient_statistics/var_ss")
        mean, var = tf.nn.normalize_moments(tf.constant(2.0), tf.constant([1.0, 2]),
                                            tf.constant([3.0, 5]), tf.constant(0.5))
        assert (mean.op.name, var.op.name) == ("normalize/mean", "normalize/variance")
        wm = tf.nn.weighted_moments(x, [1], tf.constant([[1.0, 2.0, 0.0]]), keep_dims=True)
        zf = tf.nn.zero_fraction(x)
        assert zf.name == "zero_fraction/fraction:0" and zf.dtype == tf.float32
        got = _run([tf.nn.relu_layer(x, w, [0.1, -0.2]), tf.nn.silu(x, beta=2.0),
                    [count, mean_ss, var_ss], [mean, var], list(wm), zf])
    np.testing.assert_allclose(got[0], [[0, 5.3], [0.6, 0]], rtol=1e-6)
    np.testing.assert_allclose(got[1], [[0.8807971, -0.03597242, 2.992582],
                                        [0.3655293, 0, -0.11920292]], rtol=1e-6)
    np.testing.assert_allclose(got[2][0], 2.0)
    np.testing.assert_allclose(got[2][1:], [[1.5, -2, 2], [1.25, 4, 10]])
    np.testing.assert_allclose(got[3], [[1.0, 1.5], [1.25, 1.5]])
    np.testing.assert_allclose(got[4], [[[-1.0], [0.16666667]], [[2.0], [0.05555555]]],
                               rtol=1e-6)
    assert got[5] == pytest.approx(1 / 6)


def test_sufficient_statistics_with_unknown_dims_counts_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        count, _, _, _ = tf.nn.sufficient_statistics(x, [0])
        assert count.op.type != "Const"
        assert _run(count, {x: np.zeros((5, 3))}) == 5.0
