"""Softmax, log_softmax, the cross-entropies and l2_loss: OpCase rows against NumPy, then
numerical stability, names, errors, runtime label checks and gradient semantics."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import nn_loss_ops
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

FLOATS = (tf.float16, tf.float32, tf.float64)
F32_64 = (tf.float32, tf.float64)


def _randn(*shape, scale=1.0):
    return lambda rng, dt: (rng.randn(*shape) * scale).astype(dt)


def _ints(low, high, *shape):
    return lambda rng, dt: rng.randint(low, high, shape).astype(dt)


def _probs(*shape):
    """Rows that sum to 1 along the last axis."""
    def gen(rng, dt):
        p = rng.uniform(0.1, 1.0, shape)
        return (p / p.sum(-1, keepdims=True)).astype(dt)
    return gen


def _log_softmax(x, axis=-1):
    x = x.astype(np.float64)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _softmax_ref(axis=-1):
    return lambda x: np.exp(_log_softmax(x, axis)).astype(x.dtype)


def _log_softmax_ref(axis=-1):
    return lambda x: _log_softmax(x, axis).astype(x.dtype)


def _xent_ref(axis=-1):
    return lambda labels, logits: (-(labels * _log_softmax(logits, axis)).sum(axis)).astype(
        logits.dtype)


def _sparse_ref(labels, logits):
    lp = _log_softmax(logits).reshape(-1, logits.shape[-1])
    return (-lp[np.arange(lp.shape[0]), labels.reshape(-1)]).reshape(labels.shape).astype(
        logits.dtype)


def _sigmoid_xent(labels, logits):
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    return (np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))).astype(logits.dtype)


def _weighted_xent(q):
    def ref(labels, logits):
        x, z = logits.astype(np.float64), labels.astype(np.float64)
        sp = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)  # log(1 + e^-x)
        return (z * q * sp + (1 - z) * (x + sp)).astype(logits.dtype)
    return ref


def _log_poisson_full(t, x):
    t64, x64 = t.astype(np.float64), x.astype(np.float64)
    stirling = t64 * np.log(t64) - t64 + 0.5 * np.log(2 * np.pi * t64)
    return (np.exp(x64) - x64 * t64 + np.where(t64 <= 1, 0, stirling)).astype(x.dtype)


def _raw_xent(labels, logits):
    return [(-(labels * _log_softmax(logits)).sum(-1)).astype(logits.dtype),
            (np.exp(_log_softmax(logits)) - labels).astype(logits.dtype)]


def _raw_sparse(logits, labels):
    return [_sparse_ref(labels, logits),
            (np.exp(_log_softmax(logits)) - np.eye(logits.shape[1])[labels]).astype(
                logits.dtype)]


_V1_LABELS = np.array([[0.25, 0.25, 0.5, 0.0], [0.0, 1.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4]])
CASES = [
    OpCase("softmax", tf.nn.softmax, _softmax_ref(), [_randn(3, 5, scale=3)], dtypes=FLOATS),
    OpCase("softmax_axis0", lambda x: tf.nn.softmax(x, axis=0), _softmax_ref(0),
           [_randn(3, 4)], dtypes=F32_64),
    OpCase("softmax_axis1_of_3d", lambda x: tf.nn.softmax(x, axis=1), _softmax_ref(1),
           [_randn(2, 3, 4)]),
    OpCase("softmax_dim_alias", lambda x: tf.nn.softmax(x, dim=-2), _softmax_ref(-2),
           [_randn(2, 3, 4)]),
    OpCase("softmax_1d", tf.nn.softmax, _softmax_ref(), [_randn(6)], dtypes=F32_64),
    OpCase("softmax_empty_batch", tf.nn.softmax, _softmax_ref(), [_randn(0, 3)]),
    OpCase("log_softmax", tf.nn.log_softmax, _log_softmax_ref(), [_randn(4, 5, scale=3)],
           dtypes=FLOATS),
    OpCase("log_softmax_axis0", lambda x: tf.nn.log_softmax(x, axis=0), _log_softmax_ref(0),
           [_randn(3, 4)], dtypes=F32_64),
    OpCase("xent_op", lambda labels, logits: apply_op(
        nn_loss_ops.SoftmaxCrossEntropyWithLogits, [logits, labels]), _raw_xent,
           [_probs(4, 5), _randn(4, 5, scale=2)], dtypes=F32_64),
    OpCase("xent_op_broadcast_labels", lambda labels, logits: apply_op(
        nn_loss_ops.SoftmaxCrossEntropyWithLogits, [logits, labels]), _raw_xent,
           [_probs(1, 5), _randn(3, 5)]),
    OpCase("sparse_xent_op", lambda logits, labels: apply_op(
        nn_loss_ops.SparseSoftmaxCrossEntropyWithLogits, [logits, labels]), _raw_sparse,
           [_randn(5, 4, scale=2), _ints(0, 4, 5)], dtypes=F32_64,
           fixed_dtypes=(None, tf.int64)),
    OpCase("sparse_xent_op_int32", lambda logits, labels: apply_op(
        nn_loss_ops.SparseSoftmaxCrossEntropyWithLogits, [logits, labels]), _raw_sparse,
           [_randn(3, 6), _ints(0, 6, 3)], fixed_dtypes=(None, tf.int32)),
    OpCase("xent_v2", lambda labels, logits: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits), _xent_ref(), [_probs(4, 5), _randn(4, 5, scale=3)],
           dtypes=FLOATS, rtol=2e-3, atol=2e-3),
    OpCase("xent_v2_1d", lambda labels, logits: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits), _xent_ref(), [_probs(5), _randn(5)]),
    OpCase("xent_v2_3d", lambda labels, logits: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits), _xent_ref(), [_probs(2, 3, 4), _randn(2, 3, 4)],
           dtypes=F32_64),
    OpCase("xent_v2_axis0", lambda labels, logits: tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits, axis=0), _xent_ref(0),
           [lambda rng, dt: _probs(4, 3)(rng, dt).T.copy(), _randn(3, 4)], dtypes=F32_64),
    OpCase("xent_v2_axis1_of_3d", lambda labels, logits:
           tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=1),
           _xent_ref(1), [lambda rng, dt: np.moveaxis(_probs(2, 4, 3)(rng, dt), -1, 1).copy(),
                          _randn(2, 3, 4)]),
    # v1 stops the gradient into the labels, so they are a constant here
    OpCase("xent_v1", lambda logits: tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.constant(_V1_LABELS, logits.dtype), logits=logits),
           lambda logits: _xent_ref()(_V1_LABELS, logits), [_randn(3, 4)], dtypes=F32_64),
    OpCase("sparse_xent", lambda labels, logits: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits), _sparse_ref, [_ints(0, 5, 4), _randn(4, 5, scale=3)],
           dtypes=FLOATS, fixed_dtypes=(tf.int64,), rtol=2e-3, atol=2e-3),
    OpCase("sparse_xent_3d", lambda labels, logits:
           tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
           _sparse_ref, [_ints(0, 3, 2, 4), _randn(2, 4, 3)], dtypes=F32_64,
           fixed_dtypes=(tf.int32,)),
    OpCase("sparse_xent_empty", lambda labels, logits:
           tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
           _sparse_ref, [_ints(0, 3, 0), _randn(0, 3)], fixed_dtypes=(tf.int32,), grad=False),
    OpCase("sigmoid_xent", lambda labels, logits: tf.nn.sigmoid_cross_entropy_with_logits(
        labels=labels, logits=logits), _sigmoid_xent,
           [lambda rng, dt: rng.uniform(0, 1, (3, 4)).astype(dt), _randn(3, 4, scale=4)],
           dtypes=FLOATS, rtol=2e-3, atol=2e-3),
    OpCase("weighted_xent", lambda labels, logits: tf.nn.weighted_cross_entropy_with_logits(
        labels=labels, logits=logits, pos_weight=2.5), _weighted_xent(2.5),
           [lambda rng, dt: rng.uniform(0, 1, (3, 4)).astype(dt), _randn(3, 4, scale=4)],
           dtypes=F32_64),
    OpCase("weighted_xent_targets", lambda labels, logits:
           tf.nn.weighted_cross_entropy_with_logits(targets=labels, logits=logits,
                                                    pos_weight=0.5), _weighted_xent(0.5),
           [lambda rng, dt: (rng.uniform(0, 1, (5,)) > 0.5).astype(dt), _randn(5, scale=3)]),
    OpCase("log_poisson_loss", tf.nn.log_poisson_loss,
           lambda t, x: (np.exp(x) - x * t).astype(x.dtype),
           [lambda rng, dt: rng.uniform(0, 4, (3, 4)).astype(dt), _randn(3, 4)], dtypes=F32_64),
    OpCase("log_poisson_loss_full", lambda t, x: tf.nn.log_poisson_loss(
        t, x, compute_full_loss=True), _log_poisson_full,
           [lambda rng, dt: rng.uniform(0.2, 4, (3, 4)).astype(dt), _randn(3, 4)],
           dtypes=F32_64),
    OpCase("l2_loss", tf.nn.l2_loss, lambda t: (np.sum(t.astype(np.float64) ** 2) / 2).astype(
        t.dtype), [_randn(3, 4)], dtypes=FLOATS, rtol=2e-3),
    OpCase("l2_loss_scalar", tf.nn.l2_loss, lambda t: (t * t / 2).astype(t.dtype),
           [lambda rng, dt: np.array(3.0, dt)]),
    OpCase("l2_loss_empty", tf.nn.l2_loss, lambda t: np.array(0, t.dtype), [_randn(0, 2)]),
]
for _case in CASES:
    if tf.float16 in _case.dtypes:
        _case.rtol, _case.atol = 3e-3, 3e-3


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# --- numerical stability --------------------------------------------------------------------------
def test_huge_logits_stay_finite():
    with tf.Graph().as_default():
        logits = tf.constant([[1000.0, 0.0, -1000.0], [-1000.0, 1000.0, 0.0]])
        sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1, 1], logits=logits)
        dense = tf.nn.softmax_cross_entropy_with_logits_v2(
            labels=[[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]], logits=logits)
        sig = tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0, 0.5],
                                                      logits=[-1000.0, 1000.0, 0.0])
        wce = tf.nn.weighted_cross_entropy_with_logits(labels=[1.0, 0.0, 0.5],
                                                       logits=[-1000.0, 1000.0, 0.0],
                                                       pos_weight=3.0)
        sm, lsm = tf.nn.softmax(logits), tf.nn.log_softmax(logits)
        (g,) = tf.gradients(sparse, logits)
        got = _run([sparse, dense, sig, wce, sm, lsm, g])
    np.testing.assert_allclose(got[0], [1000.0, 0.0])
    np.testing.assert_allclose(got[1], [1000.0, 1500.0])
    np.testing.assert_allclose(got[2], [1000.0, 1000.0, np.log(2)], rtol=1e-6)
    np.testing.assert_allclose(got[3], [3000.0, 1000.0, 2 * np.log(2)], rtol=1e-6)
    np.testing.assert_allclose(got[4], [[1, 0, 0], [0, 1, 0]], atol=1e-30)
    np.testing.assert_allclose(got[5], [[0, -1000, -2000], [-2000, 0, -1000]])
    np.testing.assert_allclose(got[6], [[1, -1, 0], [0, 0, 0]], atol=1e-30)
    assert all(np.isfinite(v).all() for v in got)


def test_infinite_logits_give_nan_like_tensorflow():
    with tf.Graph().as_default():
        got = _run([tf.nn.softmax([[-np.inf, -np.inf]]),
                    tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 1.0]],
                                                               logits=[[-np.inf, 0.0]])])
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all()


@pytest.mark.parametrize("classes", [1, 10, 32, 33, 100])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_cross_entropy_both_kernel_paths_match_numpy(classes, dtype):
    """Up to 32 classes the kernel is a compiled row loop, above it NumPy: both give the
    reference loss and gradient, and a NaN logit makes its row NaN in both."""
    rng = np.random.RandomState(classes)
    logits = (rng.randn(6, classes) * 4).astype(dtype)
    labels = _probs(6, classes)(rng, dtype)
    logits[5, 0] = np.nan
    with tf.Graph().as_default():
        x = tf.placeholder(dtype, [None, classes])
        loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x)
        (grad,) = tf.gradients(loss, x)
        with tf.Session() as sess:
            got_loss, got_grad = sess.run([loss, grad], {x: logits})
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got_loss[:5], _xent_ref()(labels, logits)[:5], rtol=tol)
    softmax = np.exp(_log_softmax(logits[:5]))
    np.testing.assert_allclose(got_grad[:5], softmax - labels[:5], rtol=tol, atol=tol)
    assert np.isnan(got_loss[5]) and np.isnan(got_grad[5]).all()


# --- names ----------------------------------------------------------------------------------------
def test_default_names_match_tensorflow():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        labels = tf.placeholder(tf.int64, [2])
        assert tf.nn.softmax(x).name == "Softmax:0"
        assert tf.nn.log_softmax(x).name == "LogSoftmax:0"
        assert tf.nn.softmax(x, axis=0).name == "transpose_1:0"
        assert tf.nn.l2_loss(x).name == "L2Loss:0"
        sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
        assert sparse.name == ("SparseSoftmaxCrossEntropyWithLogits/"
                               "SparseSoftmaxCrossEntropyWithLogits:0")
        # As TF: the fused op is named after the scope; its losses are reshaped back to the
        # logits' outer shape (the third Reshape, after flattening logits and labels).
        dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=x, logits=x)
        assert dense.name == "softmax_cross_entropy_with_logits/Reshape_2:0"
        xent = dense.op.inputs[0].op
        assert xent.name == "softmax_cross_entropy_with_logits"
        assert xent.type == "SoftmaxCrossEntropyWithLogits"
        v1 = tf.nn.softmax_cross_entropy_with_logits(labels=x, logits=x)
        assert v1.name == "softmax_cross_entropy_with_logits_sg/Reshape_2:0"
        xent = v1.op.inputs[0].op
        assert xent.name == "softmax_cross_entropy_with_logits_sg"
        assert xent.inputs[1].op.inputs[0].op.name == "softmax_cross_entropy_with_logits_sg/" \
                                                      "labels_stop_gradient"
        assert tf.nn.softmax_cross_entropy_with_logits_v2(labels=x, logits=x,
                                                          name="xx").name == "xx/Reshape_2:0"
        assert tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=x).name == \
            "logistic_loss:0"
        assert tf.nn.weighted_cross_entropy_with_logits(labels=x, logits=x,
                                                        pos_weight=2.0).name == \
            "logistic_loss_1:0"
        named = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x,
                                                               name="xent")
        assert named.name == "xent/xent:0"


# --- errors ---------------------------------------------------------------------------------------
def test_sparse_argument_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        fn = tf.nn.sparse_softmax_cross_entropy_with_logits
        with pytest.raises(ValueError, match=r"`labels.shape.rank` must equal `logits.shape.rank"
                                             r" - 1`. Received: labels.shape=\(2, 1\) of rank 2"):
            fn(labels=tf.zeros([2, 1], tf.int64), logits=x)
        with pytest.raises(ValueError, match="must equal `logits.shape` except for the last"):
            fn(labels=tf.zeros([3], tf.int64), logits=x)
        with pytest.raises(ValueError, match="`logits` cannot be a scalar"):
            fn(labels=tf.zeros([], tf.int64), logits=tf.zeros([]))
        with pytest.raises(TypeError, match="not in list of allowed values: int32, int64"):
            fn(labels=tf.zeros([2]), logits=x)
        with pytest.raises(TypeError, match="not in list of allowed values"):
            fn(labels=tf.zeros([2], tf.int32), logits=tf.zeros([2, 3], tf.int32))
        with pytest.raises(ValueError, match="Both `labels` and `logits` must be provided"):
            fn(logits=x)
        with pytest.raises(TypeError, match="multiple values for argument 'labels'"):
            fn(x, labels=tf.zeros([2], tf.int64), logits=x)


def test_dense_and_sigmoid_argument_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.zeros([2, 4]), logits=x)
        with pytest.raises(ValueError, match="Both `labels` and `logits` must be provided"):
            tf.nn.softmax_cross_entropy_with_logits(logits=x)
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.zeros([4], tf.int32),
                                                       logits=tf.zeros([4], tf.int32))
        with pytest.raises(ValueError, match=r"must have the same shape, received \(\(2, 3\) "
                                             r"vs \(2, 4\)\)"):
            tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([2, 4]), logits=x)
        with pytest.raises(TypeError, match="does not match"):
            tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([2, 3], tf.float64),
                                                    logits=x)
        # float64 labels are cast to the logits' type by the v2 cross-entropy
        assert tf.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.zeros([4], tf.float64), logits=tf.zeros([4])).dtype == tf.float32


def test_v1_cross_entropies_take_positional_arguments():
    """TF 2.21's v1 signatures have no `_sentinel`: (labels, logits, dim=-1, name, axis),
    (labels, logits, name) for the sparse and sigmoid ones."""
    lab = np.array([[0.0, 1.0, 0.0], [0.3, 0.3, 0.4]], np.float32)
    lg = np.array([[0.2, 1.5, -0.3], [2.0, 0.1, 0.4]], np.float32)
    log_p = lg - np.log(np.exp(lg).sum(1, keepdims=True))
    with tf.Graph().as_default():
        labels, logits = tf.constant(lab), tf.constant(lg)
        dense = tf.nn.softmax_cross_entropy_with_logits(labels, logits, -1, "v1")
        sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant([1, 2]), logits,
                                                                "sp")
        sigmoid = tf.nn.sigmoid_cross_entropy_with_logits(labels, logits, "sig")
        assert (dense.name, sparse.name, sigmoid.name) == ("v1/Reshape_2:0", "sp/sp:0", "sig:0")
        with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
            tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, axis=0)
        with tf.Session() as sess:
            got_dense, got_sparse = sess.run([dense, sparse])
        np.testing.assert_allclose(got_dense, -(lab * log_p).sum(1), rtol=1e-6)
        np.testing.assert_allclose(got_sparse, [-log_p[0, 1], -log_p[1, 2]], rtol=1e-6)


@pytest.mark.parametrize("v1", [False, True])
def test_softmax_cross_entropy_broadcasts_labels_rows_as_tensorflow(v1):
    """Rank-1 labels serve every row of [2, 3] logits; labels with more rows than the logits
    fail to build (the losses cannot be reshaped to the logits' outer shape)."""
    fn = tf.nn.softmax_cross_entropy_with_logits if v1 else \
        tf.nn.softmax_cross_entropy_with_logits_v2
    lg = np.array([[0.2, 1.5, -0.3], [2.0, 0.1, 0.4]], np.float32)
    lab = np.array([0.3, 0.3, 0.4], np.float32)
    with tf.Graph().as_default():
        loss = fn(labels=tf.constant(lab), logits=tf.constant(lg))
        assert loss.shape.as_list() == [2]
        with pytest.raises(ValueError, match="Cannot reshape a tensor with 2 elements"):
            fn(labels=tf.constant(np.stack([lab, lab])), logits=tf.constant(lg[:1]))
        with tf.Session() as sess:
            log_p = lg - np.log(np.exp(lg).sum(1, keepdims=True))
            np.testing.assert_allclose(sess.run(loss), -(lab * log_p).sum(1), rtol=1e-6)


def test_softmax_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
            tf.nn.softmax(tf.zeros([]))
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.softmax(tf.zeros([3], tf.int32))
        for axis in (5, -3):
            with pytest.raises(errors.InvalidArgumentError,
                               match=rf"range \[-2, 2\).*Received: dim={axis}"):
                tf.nn.softmax(x, axis=axis)
        with pytest.raises(ValueError, match="Cannot specify both 'dim' and 'axis'"):
            tf.nn.softmax(x, axis=0, dim=0)
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.l2_loss(tf.zeros([3], tf.int32))


def test_unknown_rank_softmax_on_other_axis():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        ys = [tf.nn.softmax(x, axis=0), tf.nn.log_softmax(x, axis=-2), tf.nn.softmax(x, axis=1)]
        value = np.random.RandomState(0).randn(3, 2).astype(np.float32)
        got = _run(ys, {x: value})
    np.testing.assert_allclose(got[0], np.exp(_log_softmax(value, 0)), rtol=1e-5)
    np.testing.assert_allclose(got[1], _log_softmax(value, 0), rtol=1e-5)
    np.testing.assert_allclose(got[2], np.exp(_log_softmax(value, 1)), rtol=1e-5)


@pytest.mark.parametrize("labels, message", [
    ([4], r"Received a label value of 4 which is outside the valid range of \[0, 4\)"),
    ([-1], r"Received a label value of -1 which is outside"),
])
def test_sparse_label_out_of_range_fails_at_run_time(labels, message):
    with tf.Graph().as_default():
        bad = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant(labels, tf.int64), logits=tf.constant([[0.0, 1.0, 2.0, 3.0]]))
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=message):
                sess.run(bad)


def test_runtime_batch_mismatch_and_zero_classes():
    with tf.Graph().as_default():
        logits = tf.placeholder(tf.float32, [None, None])
        labels = tf.placeholder(tf.int32, [None])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="same first dimension"):
                sess.run(loss, {logits: np.zeros((2, 3)), labels: [0, 1, 2]})
            with pytest.raises(errors.InvalidArgumentError, match="at least one class"):
                sess.run(loss, {logits: np.zeros((2, 0)), labels: [0, 0]})


# --- gradient semantics ---------------------------------------------------------------------------
def test_v1_stops_the_label_gradient_and_v2_does_not():
    with tf.Graph().as_default():
        labels = tf.constant([[0.2, 0.8], [0.5, 0.5]])
        logits = tf.constant([[1.0, 0.0], [0.0, 3.0]])
        v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
        assert tf.gradients(v1, labels) == [None]
        (g2,) = tf.gradients(v2, labels)
        (gl1,) = tf.gradients(v1, logits)
        got_labels, got_logits = _run([g2, gl1])
    lp = _log_softmax(np.array([[1.0, 0.0], [0.0, 3.0]]))
    np.testing.assert_allclose(got_labels, -lp, rtol=1e-6)
    np.testing.assert_allclose(got_logits, np.exp(lp) - [[0.2, 0.8], [0.5, 0.5]], rtol=1e-6)


def test_sparse_gradient_has_no_label_gradient_and_reuses_backprop():
    with tf.Graph().as_default():
        logits = tf.constant([[1.0, 2.0, 0.5]])
        labels = tf.constant([1])
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        (g,) = tf.gradients(loss, logits)
        assert tf.gradients(loss, labels) == [None]
        assert any(t is loss.op.outputs[1] for t in g.op.inputs)


def test_second_derivative_of_cross_entropies():
    """d2/dx2 of -log_softmax(x)[y] is the softmax Jacobian, diag(p) - p p^T."""
    xv = np.array([[0.3, -1.2, 2.0]])
    with tf.Graph().as_default():
        x = tf.constant(xv)
        sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[2], logits=x)
        dense = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 0.0, 1.0]], logits=x)
        hessians = [tf.hessians(tf.reduce_sum(loss), x)[0] for loss in (sparse, dense)]
        got = _run(hessians)
    p = np.exp(_log_softmax(xv))[0]
    expected = (np.diag(p) - np.outer(p, p)).reshape(1, 3, 1, 3)
    for h in got:
        np.testing.assert_allclose(h, expected, rtol=1e-8, atol=1e-12)


def test_sigmoid_cross_entropy_gradient_at_zero_is_sigmoid_minus_label():
    with tf.Graph().as_default():
        logits = tf.constant([0.0, 0.0, 2.0])
        labels = tf.constant([1.0, 0.25, 0.0])
        (g,) = tf.gradients(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                    logits=logits), logits)
        got = _run(g)
    np.testing.assert_allclose(got, [-0.5, 0.25, 1 / (1 + np.exp(-2.0))], rtol=1e-6)


def test_log_poisson_loss_matches_tensorflow():
    """Values computed with TensorFlow 2.21 (compat.v1)."""
    with tf.Graph().as_default():
        x = tf.constant([[1.0, -2, 3], [0.5, 0, -1]])
        plain = tf.nn.log_poisson_loss(tf.abs(x), x)
        full = tf.nn.log_poisson_loss(tf.abs(x), x, compute_full_loss=True)
        assert plain.op.name.startswith("log_poisson_loss/")
        with pytest.raises(ValueError, match="log_input and targets must have the same shape"):
            tf.nn.log_poisson_loss(tf.zeros([2]), tf.zeros([3]))
        got = _run([plain, full])
    np.testing.assert_allclose(got[0], [[1.7182817, 4.1353354, 11.085537],
                                        [1.3987212, 1.0, 1.3678794]], rtol=1e-6)
    np.testing.assert_allclose(got[1], [[1.7182817, 4.787142, 12.849619],
                                        [1.3987212, 1.0, 1.3678794]], rtol=1e-6)
