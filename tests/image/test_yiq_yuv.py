"""rgb_to_yiq, yiq_to_rgb, rgb_to_yuv, yuv_to_rgb against NumPy matrix products (TF's
matrices) and their round trips, with gradients."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.image import yiq_yuv
from tensorweave.testing.op_case import OpCase, case_tests

FLOATS = (tf.float32, tf.float64)


def _rgb(shape):
    return lambda rng, dt: rng.rand(*shape, 3).astype(dt)


def _row(name, fn, matrix, shape=(2, 4)):
    return OpCase(name, fn, lambda x: x @ np.asarray(matrix, x.dtype), [_rgb(shape)],
                  dtypes=FLOATS, rtol=1e-5, atol=1e-6)


CASES = [
    _row("rgb_to_yiq", tf.image.rgb_to_yiq, yiq_yuv._RGB_TO_YIQ),
    _row("yiq_to_rgb", tf.image.yiq_to_rgb, yiq_yuv._YIQ_TO_RGB, (3,)),
    _row("rgb_to_yuv", tf.image.rgb_to_yuv, yiq_yuv._RGB_TO_YUV, (2, 2, 2)),
    _row("yuv_to_rgb", tf.image.yuv_to_rgb, yiq_yuv._YUV_TO_RGB, (0, 5)),
]

# Built with a statically known rank only: TF's tensordot axes need it (see the last test).
test_forward, _, test_gradient = case_tests(CASES, gradients=True)


def test_unknown_dims_keep_the_rank():
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.float32, [None, None, 3])
        out = tf.image.rgb_to_yuv(holder)
        assert out.shape.as_list() == [None, None, 3]
        with tf.Session() as sess:
            assert sess.run(out, {holder: np.ones((2, 5, 3))}).shape == (2, 5, 3)


@pytest.mark.parametrize("there,back", [(tf.image.rgb_to_yiq, tf.image.yiq_to_rgb),
                                        (tf.image.rgb_to_yuv, tf.image.yuv_to_rgb)])
def test_round_trip_and_values(there, back):
    rgb = np.random.RandomState(2).rand(4, 5, 3)
    with tf.Graph().as_default():
        converted = there(rgb)
        with tf.Session() as sess:
            out, again = sess.run([converted, back(converted)])
    np.testing.assert_allclose(again, rgb, atol=1e-4)   # TF's matrices carry 8 digits
    # Luma is the Rec. 601 weighting in both spaces.
    np.testing.assert_allclose(out[..., 0], rgb @ [0.299, 0.587, 0.114], atol=1e-12)


def test_values_recorded_from_tensorflow():
    x = np.random.RandomState(0).rand(2, 3, 3).astype(np.float32)
    with tf.Graph().as_default():
        with tf.Session() as sess:
            got = sess.run([tf.image.rgb_to_yiq(x), tf.image.yuv_to_rgb(x)])
    np.testing.assert_allclose(got[0].ravel()[:3], [0.6526264, -0.06301603, -0.07020161],
                               rtol=1e-6)
    np.testing.assert_allclose(got[1].ravel()[:3], [1.2358932, -0.08340801, 2.0021224],
                               rtol=1e-6)


def test_unknown_rank_is_an_error():
    with tf.Graph().as_default():
        with pytest.raises((ValueError, TypeError)):
            tf.image.rgb_to_yiq(tf.placeholder(tf.float32))
