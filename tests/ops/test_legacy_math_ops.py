"""TF 1.x's replaced math, nn and image ops (ops/legacy_math_ops.py) against NumPy, with shapes
and gradients. The NMS and Bincount cases are the ones whose values were checked against TF
2.21 running a version-1 GraphDef of these ops; so were the TopK, BiasAddV1, Inv, InvGrad and
SelfAdjointEig values and gradients, and MaxPoolV2's, MaxPoolGradV2's and MaxPoolGradGradV2's
values and static shapes. Conv3DBackpropInput / Filter, RandomPoisson and AdjustContrast are
checked against NumPy references of TF's kernels (the V2 convolutions' sums, zero-rate Poisson
draws, and the v1 contrast functor's mean, scale and min-then-max clip)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import legacy_math_ops as ops
from tensorweave.ops.random_gamma_ops import RandomPoissonV2
from tensorweave.testing.op_case import OpCase, case_tests


def _randn(*shape):
    return lambda rng, dt: rng.standard_normal(shape).astype(dt)


def _away_from_zero(*shape):
    return lambda rng, dt: (rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)).astype(dt)


def _symmetric(n):
    def make(rng, dt):
        a = rng.standard_normal((2, n, n))
        return (a + np.swapaxes(a, -1, -2)).astype(dt)
    return make


def _top_k_ref(x, k=2):
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return [np.take_along_axis(x, order, -1), order.astype(np.int32)]


def _in_top_k_ref(predictions, targets, k=2):
    target = predictions[np.arange(len(targets)), targets]
    return (predictions > target[:, None]).sum(axis=1) < k


def _eig_ref(x):
    e, v = np.linalg.eigh(x)
    return np.concatenate([e[..., None, :], v], axis=-2)


# Two clusters of overlapping boxes and a lone one: greedy NMS keeps the best of each cluster.
BOXES = np.float32([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                    [0, 10.1, 1, 11.1], [0, 100, 1, 101]])
SCORES = np.float32([0.9, 0.75, 0.6, 0.95, 0.5, 0.3])


def _iou(a, b):
    inter = np.prod(np.clip(np.minimum(a[2:], b[2:]) - np.maximum(a[:2], b[:2]), 0, None))
    return inter / (np.prod(a[2:] - a[:2]) + np.prod(b[2:] - b[:2]) - inter)


def _nms_ref(boxes, scores, max_out, iou_threshold):
    kept = []
    for i in np.argsort(-scores, kind="stable"):
        if len(kept) < max_out and all(_iou(boxes[i], boxes[j]) <= iou_threshold for j in kept):
            kept.append(i)
    return np.int32(kept)


def _bincount_ref(arr, weights, size=5):
    return np.bincount(arr.ravel(), weights.ravel(), minlength=size)[:size].astype(weights.dtype)


ARR = np.int32([[1, 1, 4], [3, 0, 7]])

# 2x2 windows, stride 2, VALID, NHWC on [1, 4, 6, 2]: windows split H and W into (3 and 2) x 2.
_WINDOW = [np.int32([1, 2, 2, 1]), np.int32([1, 2, 2, 1])]
_POOL = {"padding": "VALID"}


def _windows(x):
    """[1, 4, 6, 2] -> [1, 2, 2, 3, 2, 2]: window row, row in window, window col, col, channel."""
    return x.reshape(1, 2, 2, 3, 2, 2)


def _pool_ref(x):
    return _windows(x).max(axis=(2, 4))


def _at_max(x):
    """1 at each window's maximum (random inputs have no ties)."""
    w = _windows(x)
    return (w == w.max(axis=(2, 4), keepdims=True)).astype(x.dtype)


def _pool_grad_ref(x, dy):
    return (_at_max(x) * dy[:, :, None, :, None, :]).reshape(x.shape)


def _pool_grad_grad_ref(x, g):
    return (_at_max(x) * _windows(g)).sum(axis=(2, 4))


def _max_pool_v2(x):
    return apply_op(ops.MaxPoolV2, [x, *_WINDOW], _POOL)


def _max_pool_grad_v2(op_def):
    """MaxPool(Grad)GradV2 at x (pooled by MaxPoolV2) for the incoming gradient g."""
    def build(x, g):
        return apply_op(op_def, [x, _max_pool_v2(x), g, *_WINDOW], _POOL)
    return build


_STRIDES = (1, 2, 1)


def _conv3d_v1(op_def):
    return lambda x, w, dy: apply_op(op_def, [x, w, dy], {"strides": [1, *_STRIDES, 1],
                                                         "padding": "VALID"})


def _taps(x, w, dy):
    """For each filter tap, the input window it reads (VALID, NDHWC) and the tap's index."""
    out = dy.shape[1:4]
    for tap in np.ndindex(*w.shape[:3]):
        yield tap, tuple(slice(t, t + s * o, s) for t, s, o in zip(tap, _STRIDES, out))


def _conv3d_input_ref(x, w, dy):
    dx = np.zeros_like(x)
    for tap, window in _taps(x, w, dy):
        dx[(slice(None), *window)] += np.einsum("ndhwo,io->ndhwi", dy, w[tap])
    return dx


def _conv3d_filter_ref(x, w, dy):
    dw = np.zeros_like(w)
    for tap, window in _taps(x, w, dy):
        dw[tap] = np.einsum("ndhwi,ndhwo->io", x[(slice(None), *window)], dy)
    return dw


_CONV3D_V1_INPUTS = [_randn(2, 4, 5, 3, 2), _randn(2, 2, 2, 2, 3), _randn(2, 3, 2, 2, 3)]


def _adjust_contrast_ref(images):
    x = images.astype(np.float32)
    mean = x.mean(axis=(-3, -2), keepdims=True, dtype=np.float32)
    return np.maximum(np.minimum((x - mean) * np.float32(1.5) + mean, 60), 5)


CASES = [
    OpCase("top_k_v1", lambda x: list(apply_op(ops.TopK, [x], {"k": 2})), _top_k_ref,
           [_randn(3, 5)], dtypes=(tf.float32, tf.float64)),
    OpCase("in_top_k_v1", lambda p, t: apply_op(ops.InTopK, [p, t], {"k": 2}), _in_top_k_ref,
           [_randn(4, 5), np.int32([0, 4, 2, 1])], fixed_dtypes=(None, tf.int32), grad=False),
    OpCase("bias_add_v1", lambda v, b: apply_op(ops.BiasAddV1, [v, b]), lambda v, b: v + b,
           [_randn(2, 3, 4), _randn(4)], dtypes=(tf.float32, tf.float64, tf.int32)),
    OpCase("inv", lambda x: apply_op(ops.Inv, [x]), np.reciprocal, [_away_from_zero(2, 3)],
           dtypes=(tf.float32, tf.float64, tf.complex64)),
    OpCase("inv_grad", lambda y, dy: apply_op(ops.InvGrad, [y, dy]), lambda y, dy: -dy * y * y,
           [_randn(2, 3), _randn(2, 3)]),
    OpCase("approximate_equal",
           lambda x, y: apply_op(ops.ApproximateEqual, [x, y], {"tolerance": 0.5}),
           lambda x, y: np.abs(x - y) < 0.5, [_randn(3, 4), _randn(3, 4)],
           dtypes=(tf.float32, tf.int32), grad=False),
    OpCase("self_adjoint_eig_v1", lambda x: apply_op(ops.SelfAdjointEig, [x]), _eig_ref,
           [_symmetric(3)], dtypes=(tf.float64,), grad=False),
    OpCase("non_max_suppression_v1",
           lambda b, s: apply_op(ops.NonMaxSuppression, [b, s, 2], {"iou_threshold": 0.5}),
           lambda b, s: _nms_ref(b, s, 2, 0.5), [BOXES, SCORES], grad=False),
    OpCase("non_max_suppression_v2",
           lambda b, s, iou: apply_op(ops.NonMaxSuppressionV2, [b, s, 5, iou]),
           lambda b, s, iou: _nms_ref(b, s, 5, iou), [BOXES, SCORES, np.float32(0.4)],
           grad=False),
    OpCase("bincount_weighted", lambda a, w: apply_op(ops.Bincount, [a, 5, w]), _bincount_ref,
           [ARR, _randn(2, 3)], dtypes=(tf.float32, tf.float64),
           fixed_dtypes=(tf.int32, None), grad=False),
    OpCase("bincount_counts",
           lambda a: apply_op(ops.Bincount, [a, 5, tf.constant([], tf.int64)]),
           lambda a: _bincount_ref(a, np.ones(a.shape, np.int64)), [ARR],
           fixed_dtypes=(tf.int32,), grad=False),
    OpCase("max_pool_v2", _max_pool_v2, _pool_ref, [_randn(1, 4, 6, 2)],
           dtypes=(tf.float32, tf.float64)),
    OpCase("max_pool_grad_v2", _max_pool_grad_v2(ops.MaxPoolGradV2), _pool_grad_ref,
           [_randn(1, 4, 6, 2), _randn(1, 2, 3, 2)], dtypes=(tf.float32, tf.float64)),
    OpCase("max_pool_grad_grad_v2", _max_pool_grad_v2(ops.MaxPoolGradGradV2),
           _pool_grad_grad_ref, [_randn(1, 4, 6, 2), _randn(1, 4, 6, 2)], grad=False),
    OpCase("conv3d_backprop_input_v1", _conv3d_v1(ops.Conv3DBackpropInput), _conv3d_input_ref,
           _CONV3D_V1_INPUTS, dtypes=(tf.float32, tf.float64), rtol=1e-4, atol=1e-5,
           grad=False),
    OpCase("conv3d_backprop_filter_v1", _conv3d_v1(ops.Conv3DBackpropFilter),
           _conv3d_filter_ref, _CONV3D_V1_INPUTS, dtypes=(tf.float32, tf.float64), rtol=1e-4,
           atol=1e-5, grad=False),
    OpCase("random_poisson_v1_zero_rate",
           lambda rate: apply_op(ops.RandomPoisson, [np.int64([3]), rate], {"seed": 4}),
           lambda rate: np.zeros((3, 2), rate.dtype), [np.float32([0.0, -2.0])],
           dtypes=(tf.float32, tf.float64), grad=False),
    OpCase("adjust_contrast_v1",
           lambda x: apply_op(ops.AdjustContrast, [x, 1.5, 5.0, 60.0]), _adjust_contrast_ref,
           [lambda rng, dt: rng.randint(0, 80, (2, 3, 4, 2)).astype(dt)],
           dtypes=(tf.uint8, tf.int32, tf.float32, tf.float64), rtol=1e-6, grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_nms_values_are_tensorflows():
    """TF 2.21 ran these nodes (a version-1 GraphDef) and selected [3, 0, 5] for both."""
    with tf.Graph().as_default():
        v1 = apply_op(ops.NonMaxSuppression, [BOXES, SCORES, 3], {"iou_threshold": 0.5})
        v2 = apply_op(ops.NonMaxSuppressionV2, [BOXES, SCORES, 4, np.float32(0.4)])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run([v1, v2]), [[3, 0, 5], [3, 0, 5]])
            with pytest.raises(tf.errors.InvalidArgumentError, match="iou_threshold must be"):
                sess.run(apply_op(ops.NonMaxSuppression, [BOXES, SCORES, 3],
                                  {"iou_threshold": 1.5}))


def test_ops_tensorflow_leaves_without_a_gradient():
    """SelfAdjointEig has no registered gradient (an error, as in TF); ApproximateEqual and NMS
    are not differentiable (None)."""
    with tf.Graph().as_default():
        x = tf.constant([[2.0, 1.0], [1.0, 3.0]], tf.float64)
        with pytest.raises(LookupError, match="SelfAdjointEig"):
            tf.gradients(apply_op(ops.SelfAdjointEig, [x]), x)
        equal = tf.cast(apply_op(ops.ApproximateEqual, [x, x * 2.0]), tf.float64)
        assert tf.gradients(equal, x) == [None]


def test_shape_functions_reject_what_tensorflow_rejects():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="last dimension >= k"):
            apply_op(ops.TopK, [tf.zeros([2, 3])], {"k": 4})
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            apply_op(ops.BiasAddV1, [tf.zeros([2, 3]), tf.zeros([4])])
        with pytest.raises(ValueError, match="Shapes must be equal rank, and compatible"):
            apply_op(ops.ApproximateEqual, [tf.zeros([2, 3]), tf.zeros([3, 2])])
        assert apply_op(ops.SelfAdjointEig, [tf.placeholder(tf.float32, [None, 3, None])]) \
            .shape.as_list() == [None, 4, 3]


def test_max_pool_v2_shapes_read_the_window_inputs():
    """TF 2.21's static shapes: known from constant windows, unknown while one is fed."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 5, 6, 3])
        ksize = tf.placeholder(tf.int32, [4])
        same = {"padding": "SAME"}
        assert apply_op(ops.MaxPoolV2, [x, [1, 2, 2, 1], [1, 2, 2, 1]], same).shape \
            .as_list() == [2, 3, 3, 3]
        assert apply_op(ops.MaxPoolV2, [x, [1, 1, 2, 2], [1, 1, 2, 2]],
                        {"padding": "VALID", "data_format": "NCHW"}).shape.as_list() == \
            [2, 5, 3, 1]
        fed = apply_op(ops.MaxPoolV2, [x, ksize, [1, 2, 2, 1]], same)
        assert fed.shape.ndims is None
        y = apply_op(ops.MaxPoolV2, [x, [1, 3, 3, 1], [1, 2, 2, 1]], {"padding": "VALID"})
        grad = apply_op(ops.MaxPoolGradV2, [x, y, y, ksize, ksize], {"padding": "VALID"})
        assert y.shape.as_list() == [2, 2, 2, 3] and grad.shape.as_list() == [2, 5, 6, 3]
        with pytest.raises(ValueError, match="rank 4"):
            apply_op(ops.MaxPoolV2, [tf.placeholder(tf.float32, [2, 3]), ksize, ksize], same)
        with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(4,\) are not compatible"):
            apply_op(ops.MaxPoolV2, [x, [1, 2, 2], [1, 2, 2, 1]], same)
        with tf.Session() as sess:
            np.testing.assert_array_equal(
                sess.run(fed, {x: np.ones((2, 5, 6, 3)), ksize: [1, 3, 3, 1]}).shape,
                [2, 3, 3, 3])
            with pytest.raises(tf.errors.UnimplementedError, match="batch dimension"):
                sess.run(fed, {x: np.ones((2, 5, 6, 3)), ksize: [2, 2, 2, 1]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="ksize"):
                sess.run(fed, {x: np.ones((2, 5, 6, 3)), ksize: [1, 0, 2, 1]})


def test_max_pool_v2_gradients_are_tfs_ops():
    """TF's graph: MaxPoolV2's gradient is MaxPoolGradV2 on the same window inputs, and
    MaxPoolGradV2's a MaxPoolGradGradV2 for grad; MaxPoolGradGradV2 has none (as in TF)."""
    with tf.Graph().as_default():
        x = tf.constant(np.random.RandomState(0).randn(1, 4, 6, 2).astype(np.float32))
        y = _max_pool_v2(x)
        dx = tf.gradients(y, x)[0]
        assert dx.op.type == "MaxPoolGradV2" and dx.op.inputs[3] is y.op.inputs[1]
        g = tf.gradients(dx, [x, y], grad_ys=tf.ones_like(x))
        second = _max_pool_grad_v2(ops.MaxPoolGradGradV2)(x, x)
        with pytest.raises(LookupError, match="MaxPoolGradGradV2"):
            tf.gradients(second, x)
        with tf.Session() as sess:
            got_dx, got_dy, x_value = sess.run([dx, g[1], x])
    np.testing.assert_array_equal(got_dx, _at_max(x_value).reshape(x_value.shape))
    np.testing.assert_array_equal(got_dy, np.zeros((1, 2, 3, 2)))


def test_newer_versions_ops_without_a_tensorflow_gradient():
    """TF 2.21 registers gradients for the V2 convolutions only, and none for RandomPoisson or
    AdjustContrast: tf.gradients fails on each, as there."""
    with tf.Graph().as_default():
        x, w = tf.ones([1, 2, 2, 2, 1]), tf.ones([1, 1, 1, 1, 1])
        attrs = {"strides": [1] * 5, "padding": "VALID"}
        for op_def in (ops.Conv3DBackpropInput, ops.Conv3DBackpropFilter):
            with pytest.raises(LookupError, match=op_def.name):
                tf.gradients(apply_op(op_def, [x, w, x], attrs), x)
        rate = tf.constant([2.0])
        with pytest.raises(LookupError, match="RandomPoisson"):
            tf.gradients(apply_op(ops.RandomPoisson, [[2], rate]), rate)
        images = tf.ones([2, 2, 1])
        with pytest.raises(LookupError, match="AdjustContrast"):
            tf.gradients(apply_op(ops.AdjustContrast, [images, 2.0, 0.0, 1.0]), images)


def test_conv3d_backprop_v1_matches_v2_and_checks_shapes():
    """The v1 ops are the V2 ops given the tensor's shape; their shapes are the tensor's,
    rank 5; a mismatched out_backprop fails with the V2 kernel's message."""
    rng = np.random.RandomState(1)
    x, w = rng.randn(1, 3, 4, 5, 2), rng.randn(2, 2, 2, 2, 3)
    attrs = {"strides": [1, 1, 1, 2, 1], "padding": "SAME"}
    with tf.Graph().as_default():
        y = tf.nn.conv3d(x, w, attrs["strides"], "SAME")
        dy = tf.constant(rng.randn(*y.shape.as_list()))
        v1 = [apply_op(ops.Conv3DBackpropInput, [x, w, dy], attrs),
              apply_op(ops.Conv3DBackpropFilter, [x, w, dy], attrs)]
        x_tensor, w_tensor = tf.constant(x), tf.constant(w)
        v2 = tf.gradients(tf.nn.conv3d(x_tensor, w_tensor, attrs["strides"], "SAME"),
                          [x_tensor, w_tensor], dy)
        assert [t.shape.as_list() for t in v1] == [list(x.shape), list(w.shape)]
        assert apply_op(ops.Conv3DBackpropFilter, [x, tf.placeholder(tf.float64), dy], attrs) \
            .shape.as_list() == [None] * 5
        with pytest.raises(ValueError, match="rank 5"):
            apply_op(ops.Conv3DBackpropInput, [tf.zeros([2, 3], tf.float64), w, dy], attrs)
        bad = apply_op(ops.Conv3DBackpropInput, [x, w, tf.zeros([1, 3, 4, 2, 3], tf.float64)],
                       attrs)
        with tf.Session() as sess:
            for got, want in zip(*sess.run([v1, v2])):
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Size of out_backprop"):
                sess.run(bad)


def test_random_poisson_v1_is_v2_typed_like_the_rate():
    """Same seeds, same draws as RandomPoissonV2 with dtype = R; sample mean near the rate."""
    rate = np.float64([3.0, 40.0])
    with tf.Graph().as_default():
        v1 = apply_op(ops.RandomPoisson, [[4000], rate], {"seed": 7, "seed2": 2})
        v2 = apply_op(RandomPoissonV2, [[4000], rate], {"seed": 7, "seed2": 2,
                                                          "dtype": tf.float64})
        assert v1.dtype == tf.float64 and v1.shape.as_list() == [4000, 2]
        with tf.Session() as sess:
            a, b = sess.run([v1, v2])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a.mean(axis=0), rate, rtol=0.05)


def test_adjust_contrast_v1_checks_scalars():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank 0"):
            apply_op(ops.AdjustContrast, [tf.zeros([2, 2, 1]), [2.0], 0.0, 1.0])
        with pytest.raises(ValueError, match="rank"):
            apply_op(ops.AdjustContrast, [tf.zeros([2, 1]), 2.0, 0.0, 1.0])
        images, low = tf.placeholder(tf.uint8), tf.placeholder(tf.float32)
        y = apply_op(ops.AdjustContrast, [images, 2.0, low, 255.0])
        assert y.dtype == tf.float32
        with tf.Session() as sess:
            np.testing.assert_array_equal(
                sess.run(y, {images: np.uint8([[[10], [30]]]), low: 0.0}), [[[0.0], [40.0]]])
            with pytest.raises(tf.errors.InvalidArgumentError, match="min_value must be scalar"):
                sess.run(y, {images: np.zeros((1, 1, 1)), low: [0.0]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="at least 3-D"):
                sess.run(y, {images: np.zeros((1, 1)), low: 0.0})
