"""tf.layers.batch_normalization as TensorFlow 2.21's legacy layer (tf.compat.v1 + tf_keras):
a non-trainable layer publishes no update ops, and the fused path is taken for 4-D and 5-D
16/32-bit inputs with channels on a supported axis. Expected values are TF 2.21's, printed
as float32 bit patterns."""
import numpy as np
import pytest

import tensorweave as tf


def _bits(a):
    return [format(v, "08x") for v in np.asarray(a, np.float32).ravel().view(np.uint32)]


def _sine(shape, dtype=np.float32):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n)) * 2 + 0.5).astype(dtype).reshape(shape)


def _train_once(layer, x):
    """Runs the layer in training mode with its UPDATE_OPS; returns (y, moving stats)."""
    y = layer(x, training=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run([y] + tf.get_collection(tf.GraphKeys.UPDATE_OPS))[0]
        return y, out, sess.run([layer.moving_mean, layer.moving_variance])


@pytest.mark.parametrize("shape, kwargs, first_bits", [
    ((2, 2, 2, 3), {}, ["bde63295", "3fbc529d", "3f747d90"]),
    ((4, 3), {}, ["be8c545c", "3f8f6940", "3f7539ce"]),
    ((2, 2, 2, 3), {"fused": False}, ["bde63298", "3fbc529d", "3f747d8f"]),
])
def test_non_trainable_layer_publishes_no_updates_but_normalizes_with_batch_stats(
        shape, kwargs, first_bits):
    with tf.Graph().as_default():
        x = tf.constant((np.sin(np.arange(np.prod(shape), dtype=np.float32)) * 3 + 1)
                        .reshape(shape))
        layer = tf.layers.BatchNormalization(momentum=0.5, trainable=False, **kwargs)
        y, out, (mean, var) = _train_once(layer, x)
        # TF builds the AssignMovingAvg ops but neither `updates` nor UPDATE_OPS has them.
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
        assert layer.updates == [] and len(layer._updates) == 2
        assert tf.trainable_variables() == []
        np.testing.assert_array_equal(mean, [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(var, [1.0, 1.0, 1.0])
        # Training mode still normalizes with the batch statistics.
        assert _bits(out)[:3] == first_bits


def test_functional_non_trainable_batch_norm_keeps_moving_stats():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3))
        y = tf.layers.batch_normalization(x, training=True, trainable=False, momentum=0.5)
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(y)
            np.testing.assert_array_equal(sess.run(tf.global_variables()[2]), [0.0, 0.0, 0.0])


def test_trainable_layer_still_publishes_its_updates():
    with tf.Graph().as_default():
        tf.layers.batch_normalization(tf.ones([2, 2, 2, 3]), training=True)
        assert [u.name for u in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == [
            "batch_normalization/AssignMovingAvg", "batch_normalization/AssignMovingAvg_1"]


# (shape, kwargs, dtype, fused, TF's moving variance bits) with momentum 0: moving = batch.
FUSED_CASES = [
    ((2, 2, 2, 2, 3), {}, np.float32, True, ["4020ba8b", "3fb31ddb", "401630a7"]),
    ((2, 3, 2, 2, 2), {"axis": 1}, np.float32, True, ["40006cb8", "40097019", "4000169f"]),
    ((2, 2, 2, 3, 2), {"axis": 3}, np.float32, False, None),
    ((2, 2, 3, 2), {"axis": 2}, np.float32, False, None),
    ((2, 2, 2, 3), {}, np.float64, False, None),
    ((2, 2, 2, 2, 3), {}, np.float64, False, None),
    ((2, 2, 2, 3), {}, np.float16, True, ["3fa205dc", "3fa59126", "408347d2"]),
    ((2, 2, 2, 2, 3), {"fused": False}, np.float32, False, ["4016aee2", "3fa7ebfd", "400ccd9c"]),
    ((2, 3), {"fused": True}, np.float32, False, None),
]


@pytest.mark.parametrize("shape, kwargs, dtype, fused, variance_bits", FUSED_CASES)
def test_fused_path_as_tensorflow(shape, kwargs, dtype, fused, variance_bits):
    with tf.Graph().as_default():
        layer = tf.layers.BatchNormalization(momentum=0.0, **kwargs)
        y, _, (_, var) = _train_once(layer, tf.constant(_sine(shape, dtype)))
        assert layer.fused is fused
        assert y.op.type == ("FusedBatchNormV3" if fused else "AddV2" if dtype != np.float16
                             else "Cast")
        assert y.dtype == tf.as_dtype(dtype)
        # 16-bit layers keep float32 parameters and statistics, as TF.
        expected = tf.float64 if dtype == np.float64 else tf.float32
        assert all(v.dtype.base_dtype == expected for v in layer.variables)
        if variance_bits is not None:
            assert _bits(var) == variance_bits


def test_five_d_fused_moving_variance_is_unbiased():
    """The fused path's moving variance has Bessel's correction, n / (n - 1) (16 / 15)."""
    with tf.Graph().as_default():
        x = tf.constant((np.sin(np.arange(48, dtype=np.float32)) * 2).reshape(2, 2, 2, 2, 3))
        y = tf.layers.batch_normalization(x, training=True, momentum=0.0)
        assert y.op.type == "FusedBatchNormV3"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([y] + tf.get_collection(tf.GraphKeys.UPDATE_OPS))
            var = sess.run([v for v in tf.global_variables() if "moving_variance" in v.name][0])
    np.testing.assert_allclose(var, [2.5113854, 1.3993486, 2.346719], rtol=1e-6)


def test_channels_first_five_d_output_bits():
    """NCDHW is normalized as TF's CPU kernel does it, transposed to channels last."""
    with tf.Graph().as_default():
        layer = tf.layers.BatchNormalization(axis=1, momentum=0.0)
        _, out, (mean, _) = _train_once(layer, tf.constant(_sine((2, 3, 2, 2, 2))))
    assert _bits(out)[:6] == ["3d4d477a", "3fa36e52", "3fb01651", "3e82fd7e", "bf86cd57",
                              "bfac8477"]
    assert _bits(mean) == ["3edccbd0", "3f5516dc", "3ef1ae8f"]
