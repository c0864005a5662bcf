"""Fused batch norm (FusedBatchNorm, V2, V3 and their gradient ops) and LRN / LRNGrad against
NumPy references; gradients numerically, second derivatives of batch norm through its gradient
op; TensorFlow's statistics outputs, names, static shapes and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import nn_norm_ops
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

F32_64 = (tf.float32, tf.float64)


def _randn(*shape, scale=1.0, shift=0.0):
    return lambda rng, dt: (rng.randn(*shape) * scale + shift).astype(dt)


def _positive(*shape):
    return lambda rng, dt: rng.uniform(0.5, 2.0, shape).astype(dt)


# --- references ---------------------------------------------------------------------------------
def _axes(x, fmt):
    channel = 1 if fmt.startswith("NC") else x.ndim - 1
    return tuple(a for a in range(x.ndim) if a != channel), channel


def _bcast(v, x, channel):
    shape = [1] * x.ndim
    shape[channel] = -1
    return np.reshape(v, shape)


def ref_fused_bn(x, scale, offset, mean=None, variance=None, epsilon=0.001, fmt="NHWC",
                 training=True, factor=1.0):
    """(y, batch_mean, batch_variance, reserve_1, reserve_2) in float64, cast to the inputs'."""
    x64 = x.astype(np.float64)
    axes, channel = _axes(x, fmt)
    if training:
        m, v = x64.mean(axes), x64.var(axes)
        n = x64.size // x.shape[channel]
        unbiased = v * n / max(n - 1, 1)
        out_m, out_v = m, unbiased
        if factor != 1.0:
            out_m = (1 - factor) * mean + factor * m
            out_v = (1 - factor) * variance + factor * unbiased
    else:
        m, v = mean.astype(np.float64), variance.astype(np.float64)
        out_m, out_v = m, v
    y = (x64 - _bcast(m, x, channel)) / np.sqrt(_bcast(v, x, channel) + epsilon) * \
        _bcast(scale, x, channel) + _bcast(offset, x, channel)
    u = scale.dtype
    return [y.astype(x.dtype), out_m.astype(u), out_v.astype(u), m.astype(u), v.astype(u)]


def ref_fused_bn_grad(dy, x, scale, mean, variance, epsilon=0.001, fmt="NHWC", training=True):
    dy64, x64 = dy.astype(np.float64), x.astype(np.float64)
    axes, channel = _axes(x, fmt)
    inv = 1 / np.sqrt(variance.astype(np.float64) + epsilon)
    xhat = (x64 - _bcast(mean, x, channel)) * _bcast(inv, x, channel)
    d_offset = dy64.sum(axes)
    d_scale = (dy64 * xhat).sum(axes)
    if training:
        n = x.size // x.shape[channel]
        dx = _bcast(scale * inv, x, channel) * (
            dy64 - _bcast(d_offset / n, x, channel) - xhat * _bcast(d_scale / n, x, channel))
    else:
        dx = dy64 * _bcast(scale * inv, x, channel)
    u = scale.dtype
    return [dx.astype(x.dtype), d_scale.astype(u), d_offset.astype(u), np.zeros(0, u),
            np.zeros(0, u)]


def ref_lrn(x, radius=5, bias=1.0, alpha=1.0, beta=0.5):
    x64 = x.astype(np.float64)
    c = x.shape[-1]
    out = np.empty_like(x64)
    for d in range(c):
        lo, hi = max(0, d - radius), min(c, d + radius + 1)
        sq = (x64[..., lo:hi] ** 2).sum(-1)
        out[..., d] = x64[..., d] / (bias + alpha * sq) ** beta
    return out.astype(x.dtype)


def ref_lrn_grad(dy, x, radius=5, bias=1.0, alpha=1.0, beta=0.5):
    """Per pixel, the transposed Jacobian of the channel map applied to dy."""
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    c = x.shape[-1]
    norm = np.empty_like(x64)
    for d in range(c):
        lo, hi = max(0, d - radius), min(c, d + radius + 1)
        norm[..., d] = bias + alpha * (x64[..., lo:hi] ** 2).sum(-1)
    dx = np.zeros_like(x64)
    for j in range(c):          # output channel j
        for d in range(max(0, j - radius), min(c, j + radius + 1)):   # input channel d
            term = -2 * alpha * beta * x64[..., j] * norm[..., j] ** (-beta - 1) * x64[..., d]
            if d == j:
                term = term + norm[..., j] ** -beta
            dx[..., d] += dy64[..., j] * term
    return dx.astype(dy.dtype)


# --- the table ----------------------------------------------------------------------------------
def _stats(c):
    return [_randn(c), _positive(c)]


def _bn(fmt, training, factor=1.0, with_stats=True, epsilon=0.001):
    def build(x, s, o, m=None, v=None):
        return tf.nn.fused_batch_norm(x, s, o, m, v, epsilon=epsilon, data_format=fmt,
                                      is_training=training, exponential_avg_factor=factor)
    return build


def _bn_ref(fmt, training, factor=1.0, epsilon=0.001):
    def ref(x, s, o, m=None, v=None):
        return ref_fused_bn(x, s, o, m, v, epsilon, fmt, training, factor)[:3]
    return ref


def _grads(fmt, training):
    """dx, dscale, doffset of fused_batch_norm's y weighted by dy (FusedBatchNormGradV3)."""
    def build(x, s, o, dy, m=None, v=None):
        y = tf.nn.fused_batch_norm(x, s, o, m, v, data_format=fmt, is_training=training)[0]
        return tf.gradients(y, [x, s, o], dy)
    return build


def _grads_ref(fmt, training):
    def ref(x, s, o, dy, m=None, v=None):
        if training:
            axes, _ = _axes(x, fmt)
            m, v = x.astype(np.float64).mean(axes), x.astype(np.float64).var(axes)
        return ref_fused_bn_grad(dy, x, s, m, v, 0.001, fmt, training)[:3]
    return ref


_X = {"NHWC": (2, 3, 4, 3), "NCHW": (2, 3, 3, 4), "NDHWC": (2, 2, 3, 2, 3),
      "NCDHW": (2, 3, 2, 2, 3)}

CASES = []
for _fmt, _shape in _X.items():
    _c = 3
    CASES += [
        OpCase(f"fused_bn_training_{_fmt}", _bn(_fmt, True), _bn_ref(_fmt, True),
               [_randn(*_shape, scale=2, shift=1), _randn(_c), _randn(_c)], F32_64,
               rtol=1e-4, atol=1e-5, grad=False),
        OpCase(f"fused_bn_training_y_{_fmt}", lambda x, s, o, f=_fmt: _bn(f, True)(x, s, o)[0],
               lambda x, s, o, f=_fmt: _bn_ref(f, True)(x, s, o)[0],
               [_randn(*_shape, scale=2, shift=1), _randn(_c), _randn(_c)], F32_64,
               rtol=1e-4, atol=1e-5),
        OpCase(f"fused_bn_inference_{_fmt}", _bn(_fmt, False), _bn_ref(_fmt, False),
               [_randn(*_shape), _randn(_c), _randn(_c), *_stats(_c)], F32_64, grad=False),
        OpCase(f"fused_bn_grad_training_{_fmt}", _grads(_fmt, True), _grads_ref(_fmt, True),
               [_randn(*_shape, scale=2, shift=1), _randn(_c), _randn(_c),
                _randn(*_shape)], F32_64, rtol=1e-4, atol=1e-4),
    ]
CASES += [
    OpCase("fused_bn_inference_y", lambda x, s, o: tf.nn.fused_batch_norm(
        x, s, o, [0.5, -1.0, 0.0], [1.0, 2.0, 0.5], is_training=False)[0],
           lambda x, s, o: ref_fused_bn(x, s, o, np.array([0.5, -1.0, 0.0]),
                                        np.array([1.0, 2.0, 0.5]), training=False)[0],
           [_randn(2, 3, 3, 3), _randn(3), _randn(3)], F32_64),
    OpCase("fused_bn_grad_inference_NCHW", lambda x, s, o, dy: _grads("NCHW", False)(
        x, s, o, dy, tf.constant([0.5, -1.0, 0.0], x.dtype), tf.constant([1.0, 2.0, 0.5],
                                                                          x.dtype)),
           lambda x, s, o, dy: _grads_ref("NCHW", False)(
               x, s, o, dy, np.array([0.5, -1.0, 0.0]), np.array([1.0, 2.0, 0.5])),
           [_randn(2, 3, 2, 4), _randn(3), _randn(3), _randn(2, 3, 2, 4)], F32_64),
    OpCase("fused_bn_exponential_avg_factor", _bn("NHWC", True, 0.3),
           _bn_ref("NHWC", True, 0.3), [_randn(2, 3, 4, 2), _randn(2), _randn(2), *_stats(2)],
           F32_64, grad=False),
    # TF 2.21 keeps a small epsilon (older wrappers raised it to 1.001e-5).
    OpCase("fused_bn_small_epsilon_is_kept", _bn("NHWC", True, epsilon=1e-7),
           _bn_ref("NHWC", True, epsilon=1e-7),
           [_randn(2, 2, 2, 2, scale=1e-3), _randn(2), _randn(2)], rtol=1e-3, atol=1e-4,
           grad=False),
    OpCase("fused_bn_zero_epsilon_inference", _bn("NHWC", False, epsilon=0.0),
           _bn_ref("NHWC", False, epsilon=0.0),
           [_randn(2, 2, 2, 2), _randn(2), _randn(2), *_stats(2)], F32_64, grad=False),
    OpCase("fused_bn_float16", _bn("NHWC", True), _bn_ref("NHWC", True),
           [_randn(2, 3, 3, 2), _randn(2), _randn(2)], (tf.float16,),
           fixed_dtypes=(None, tf.float32, tf.float32), rtol=1e-2, atol=1e-2, grad=False),
    OpCase("fused_bn_grad_op_float16", lambda dy, x, s, m, v: apply_op(
        nn_norm_ops.FusedBatchNormGradV3, [dy, x, s, m, v, tf.zeros([0])],
        {"epsilon": 0.001, "is_training": True}),
           lambda dy, x, s, m, v: ref_fused_bn_grad(dy, x, s, m, v),
           [_randn(2, 2, 3, 2), _randn(2, 2, 3, 2), _randn(2), _randn(2), _positive(2)],
           (tf.float16,), fixed_dtypes=(None, None, tf.float32, tf.float32, tf.float32),
           rtol=1e-2, atol=1e-2, grad=False),
    OpCase("fused_bn_v1", lambda x, s, o: apply_op(
        nn_norm_ops.FusedBatchNorm, [x, s, o, tf.zeros([0]), tf.zeros([0])],
        {"epsilon": 0.001}),
           lambda x, s, o: ref_fused_bn(x, s, o),
           [_randn(2, 2, 3, 2), _randn(2), _randn(2)], grad=False),
    OpCase("fused_bn_v2_inference", lambda x, s, o, m, v: apply_op(
        nn_norm_ops.FusedBatchNormV2, [x, s, o, m, v],
        {"epsilon": 0.01, "is_training": False, "data_format": "NCHW"}),
           lambda x, s, o, m, v: ref_fused_bn(x, s, o, m, v, 0.01, "NCHW", False),
           [_randn(2, 2, 3, 2), _randn(2), _randn(2), *_stats(2)], F32_64, grad=False),
    OpCase("fused_bn_grad_v1_v2", lambda dy, x, s, m, v: [
        *apply_op(nn_norm_ops.FusedBatchNormGrad, [dy, x, s, m, v], {"epsilon": 0.01})[:3],
        *apply_op(nn_norm_ops.FusedBatchNormGradV2, [dy, x, s, m, v],
                  {"epsilon": 0.01, "is_training": False})[:3]],
           lambda dy, x, s, m, v: ref_fused_bn_grad(dy, x, s, m, v, 0.01)[:3] +
           ref_fused_bn_grad(dy, x, s, m, v, 0.01, training=False)[:3],
           [_randn(2, 2, 3, 2), _randn(2, 2, 3, 2), _randn(2), _randn(2), _positive(2)],
           grad=False),
    OpCase("fused_bn_v1_v2_gradients", lambda x, s, o, dy: tf.gradients(
        [apply_op(nn_norm_ops.FusedBatchNorm, [x, s, o, tf.zeros([0], x.dtype),
                                               tf.zeros([0], x.dtype)], {"epsilon": 1e-3})[0],
         apply_op(nn_norm_ops.FusedBatchNormV2, [x, s, o, tf.zeros([0], x.dtype),
                                                 tf.zeros([0], x.dtype)],
                  {"epsilon": 1e-3})[0]],
        [x, s, o], [dy, dy]),
           lambda x, s, o, dy: [2 * g for g in _grads_ref("NHWC", True)(x, s, o, dy)],
           [_randn(2, 2, 3, 2), _randn(2), _randn(2), _randn(2, 2, 3, 2)], F32_64,
           rtol=1e-4, atol=1e-4, grad=False),
    OpCase("lrn_defaults", lambda x: tf.nn.lrn(x), ref_lrn, [_randn(2, 3, 2, 7)], F32_64),
    OpCase("lrn_params", lambda x: tf.nn.local_response_normalization(x, 2, 0.5, 0.3, 0.75),
           lambda x: ref_lrn(x, 2, 0.5, 0.3, 0.75), [_randn(2, 2, 3, 6)], F32_64),
    OpCase("lrn_radius_0", lambda x: tf.nn.lrn(x, 0, 2.0, 1.0, 1.0),
           lambda x: ref_lrn(x, 0, 2.0, 1.0, 1.0), [_randn(1, 2, 2, 3)], F32_64),
    OpCase("lrn_float16", lambda x: tf.nn.lrn(x, 2), lambda x: ref_lrn(x, 2),
           [_randn(1, 2, 2, 5)], (tf.float16,), rtol=1e-2, atol=1e-2),
    # TensorFlow defines no gradient for LRNGrad: the row checks its values only.
    OpCase("lrn_grad_op", lambda dy, x: apply_op(
        nn_norm_ops.LRNGrad, [dy, x, tf.nn.lrn(x, 2, 0.5, 0.3, 0.75)],
        {"depth_radius": 2, "bias": 0.5, "alpha": 0.3, "beta": 0.75}),
           lambda dy, x: ref_lrn_grad(dy, x, 2, 0.5, 0.3, 0.75),
           [_randn(2, 2, 2, 6), _randn(2, 2, 2, 6)], F32_64, rtol=1e-4, atol=1e-5, grad=False),
]


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- TensorFlow's behaviour beyond the references ------------------------------------------------
def test_fused_batch_norm_graph_like_tensorflow():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 4, 4, 3])
        s = tf.placeholder(tf.float32, [3])
        y, mean, var = tf.nn.fused_batch_norm(x, s, s, epsilon=1e-7)
        assert (y.name, mean.name, var.name) == ("FusedBatchNormV3:0", "FusedBatchNormV3:1",
                                                 "FusedBatchNormV3:2")
        op = y.op
        assert [t.name for t in op.inputs[3:]] == ["Const:0", "Const_1:0"]
        assert op.get_attr("epsilon") == pytest.approx(1e-7)
        assert op.get_attr("is_training") is True and op.get_attr("data_format") == b"NHWC"
        assert [o.shape.as_list() for o in op.outputs[1:5]] == [[3]] * 4
        assert op.outputs[5].shape.ndims is None
        (dx,) = tf.gradients(y, [x])
        assert dx.op.type == "FusedBatchNormGradV3"
        assert dx.op.name == "gradients/FusedBatchNormV3_grad/FusedBatchNormGradV3"
        assert [i.name for i in dx.op.inputs[3:]] == ["FusedBatchNormV3:3", "FusedBatchNormV3:4",
                                                       "FusedBatchNormV3:5"]
        assert [o.shape.as_list() for o in dx.op.outputs[3:]] == [[0], [0]]
        assert g.get_operation_by_name("FusedBatchNormV3").type == "FusedBatchNormV3"


def test_inference_gradient_reads_the_population_statistics():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 4, 4, 3])
        s, m, v = (tf.placeholder(tf.float32, [3]) for _ in range(3))
        y = tf.nn.fused_batch_norm(x, s, s, m, v, is_training=False)[0]
        (dx,) = tf.gradients(y, [x])
        assert dx.op.get_attr("is_training") is False
        assert dx.op.inputs[3] is m and dx.op.inputs[4] is v


def test_statistics_outputs_match_tensorflow():
    """Values TensorFlow 2.21 gives: unbiased variance out, biased in the reserve space,
    running averages with exponential_avg_factor, pass-through in inference."""
    x0 = np.random.RandomState(0).randn(2, 3, 3, 2).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 3, 2])
        outs = {}
        for training, f in ((False, 1.0), (True, 0.3), (True, 1.0)):
            op = tf.nn.fused_batch_norm(x, [1., 2.], [0., 1.], [0.5, 0.1], [2., 3.],
                                        is_training=training, exponential_avg_factor=f)[0].op
            outs[training, f] = op.outputs[1:]
        with tf.Session() as sess:
            got = sess.run(outs, {x: x0})
    mean, var = x0.mean((0, 1, 2)), x0.var((0, 1, 2))
    unbiased = x0.var((0, 1, 2), ddof=1)
    np.testing.assert_allclose(got[False, 1.0][:4], [[0.5, 0.1], [2, 3], [0.5, 0.1], [2, 3]])
    np.testing.assert_allclose(got[True, 1.0][:4], [mean, unbiased, mean, var], rtol=1e-5)
    np.testing.assert_allclose(got[True, 0.3][:2], [0.7 * np.array([0.5, 0.1]) + 0.3 * mean,
                                                    0.7 * np.array([2., 3.]) + 0.3 * unbiased],
                               rtol=1e-5)
    assert got[True, 1.0][4].shape == (0,)


def test_empty_batch_gives_nan_statistics():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2, 2, 2])
        op = tf.nn.fused_batch_norm(x, [1., 1.], [0., 0.])[0].op
        with tf.Session() as sess:
            y, mean, var, r1, r2, _ = sess.run(op.outputs, {x: np.zeros((0, 2, 2, 2))})
    assert y.shape == (0, 2, 2, 2) and np.isnan(mean).all() and np.isnan(var).all()
    np.testing.assert_array_equal(r1, [0, 0])


@pytest.mark.parametrize("build,match", [
    (lambda x, s: tf.nn.fused_batch_norm(x, s, s, is_training=False),
     "Both `mean` and `variance` must be a 1D tensor when `is_training` is False"),
    (lambda x, s: tf.nn.fused_batch_norm(x, s, s, s, exponential_avg_factor=0.5),
     "Both `mean` and `variance` must be a 1D tensor"),
    (lambda x, s: tf.nn.fused_batch_norm(x[0], s, s), "Shape must be rank 4 but is rank 3"),
    (lambda x, s: tf.nn.fused_batch_norm(x, tf.zeros([4]), s),
     "Dimensions must be equal, but are 3 and 4"),
    (lambda x, s: tf.nn.fused_batch_norm(x, s, s, data_format="HWCN"),
     "Attr 'data_format' of 'FusedBatchNormV3' Op passed string 'HWCN'"),
    (lambda x, s: tf.nn.fused_batch_norm(x, s, s, tf.zeros([2]), s, is_training=False),
     "Dimensions must be equal, but are 3 and 2"),
    (lambda x, s: tf.nn.lrn(x[0]), "Shape must be rank 4 but is rank 3"),
])
def test_value_errors_at_graph_construction(build, match):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=match):
            build(tf.placeholder(tf.float32, [2, 4, 4, 3]), tf.placeholder(tf.float32, [3]))


def test_type_errors_at_graph_construction():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
            tf.nn.fused_batch_norm(tf.zeros([1, 2, 2, 1], tf.int32), [1], [0])
        with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
            tf.nn.lrn(tf.zeros([1, 2, 2, 1], tf.int32))


def test_run_time_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        s = tf.placeholder(tf.float32)
        y = tf.nn.fused_batch_norm(x, s, s)[0]
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="scale must have the same "
                               "number of elements as the channels of x"):
                sess.run(y, {x: np.ones((1, 2, 2, 3)), s: np.ones(2)})
            with pytest.raises(errors.InvalidArgumentError, match="input must be 4-dimensional"):
                sess.run(y, {x: np.ones((2, 3)), s: np.ones(3)})


def test_lrn_name_gradient_op_and_no_gradient_of_lrn_grad():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1, 2, 2, 4])
        y = tf.nn.lrn(x, depth_radius=2)
        assert y.name == "LRN:0" and y.op.get_attr("depth_radius") == 2
        assert tf.nn.local_response_normalization(x).name == "LRN_1:0"
        (dx,) = tf.gradients(y, x)
        assert dx.op.type == "LRNGrad" and dx.shape.as_list() == [1, 2, 2, 4]
        with pytest.raises(LookupError, match="LRNGrad"):
            tf.gradients(dx, x)


def test_batch_normalization_layer_uses_the_fused_op():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 3, 3, 2])
        y = tf.layers.batch_normalization(x, training=True, fused=True)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert any(op.type == "FusedBatchNormV3" for op in tf.get_default_graph().get_operations())
        x0 = np.random.RandomState(0).randn(4, 3, 3, 2).astype(np.float32) * 3 + 1
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run([y] + updates, {x: x0})[0]
        np.testing.assert_allclose(out.mean((0, 1, 2)), 0, atol=1e-5)
        np.testing.assert_allclose(out.std((0, 1, 2)), 1, atol=1e-3)


@pytest.mark.parametrize("epsilon", [0.0, -1.0])
def test_fused_batch_norm_keeps_zero_and_negative_epsilon(epsilon):
    # TF 2.21 stores the epsilon as given and computes with it: -1 makes var + eps < 0 -> NaN.
    x = np.linspace(0, 1e-3, 12, dtype=np.float32).reshape(1, 2, 2, 3)
    with tf.Graph().as_default():
        y = tf.nn.fused_batch_norm(x, tf.ones([3]), tf.zeros([3]), epsilon=epsilon)[0]
        assert y.op.get_attr("epsilon") == epsilon
        with tf.Session() as sess:
            out = sess.run(y)
    if epsilon < 0:
        assert np.isnan(out).all()
    else:
        ref = ref_fused_bn(x, np.ones(3, np.float32), np.zeros(3, np.float32), epsilon=0.0)[0]
        np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)
