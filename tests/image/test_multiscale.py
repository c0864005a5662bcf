"""tf.image.ssim_multiscale against values recorded from TensorFlow 2.21 (float32 images with
noise, odd sizes that need symmetric padding, uint8 images, custom scales and filters), its
gradient against central differences and against TF's, and its shape errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.checker import compute_gradient


def _images():
    rng = np.random.RandomState(0)
    a = rng.uniform(size=(2, 181, 170, 3)).astype(np.float32)
    b = np.clip(a + rng.normal(scale=0.1, size=a.shape), 0, 1).astype(np.float32)
    c = rng.randint(0, 256, size=(1, 64, 64, 1)).astype(np.uint8)
    d = np.clip(c.astype(int) + rng.randint(-20, 20, size=c.shape), 0, 255).astype(np.uint8)
    return a, b, c, d


def test_ssim_multiscale_matches_tensorflow():
    a, b, c, d = _images()
    with tf.Graph().as_default():
        outs = [tf.image.ssim_multiscale(a, b, 1.0),
                tf.image.ssim_multiscale(a[0], b[0], 1.0, power_factors=(0.5, 0.3, 0.2),
                                         filter_size=7, filter_sigma=1.0),
                tf.image.ssim_multiscale(c, d, 255, power_factors=[0.2, 0.3, 0.5],
                                         filter_size=5, k1=0.02, k2=0.05),
                tf.image.ssim_multiscale(a, a, 1.0)]
        assert outs[0].name == "MS-SSIM/Mean:0" and outs[0].shape == (2,)
        assert outs[1].shape == ()
        held = tf.placeholder(tf.float32, [None, None, None, 3])
        fed = tf.image.ssim_multiscale(held, held * 0.9, 1.0)
        with tf.Session() as sess:
            got = sess.run(outs)
            got_fed = sess.run(fed, {held: np.pad(a, [[0, 0], [0, 0], [0, 7], [0, 0]])[
                :, :177, :177]})
    tf_values = [[0.9526277, 0.9570322], 0.9436199, [0.9903573], [0.99999857, 0.9999988]]
    for g, expected in zip(got, tf_values):
        np.testing.assert_allclose(g, expected, rtol=2e-5)
    np.testing.assert_allclose(got_fed, [0.99470633, 0.9945917], rtol=2e-5)


def test_ssim_multiscale_gradient():
    """Against TF's gradient on one image pair, and against central differences on a small
    one (two scales, a 3x3 window)."""
    a, b, _, _ = _images()
    with tf.Graph().as_default():
        held = tf.placeholder(tf.float32, [None, None, None, 3])
        value = tf.image.ssim_multiscale(held, tf.constant(b[:, :100, :100]), 1.0,
                                         power_factors=(0.6, 0.4), filter_size=5)
        grad = tf.gradients(tf.reduce_sum(value), held)[0]
        with tf.Session() as sess:
            got = sess.run(grad, {held: a[:, :100, :100]})
    np.testing.assert_allclose(got.ravel()[:5], [-7.250050657603424e-07, -7.269877642102074e-07,
                                                7.336036560445791e-07, -7.629992069269065e-07,
                                                -8.193283065338619e-07], rtol=1e-4)
    np.testing.assert_allclose(np.abs(got).sum(), 2.25772762298584, rtol=1e-4)

    rng = np.random.RandomState(3)
    x = rng.uniform(0.2, 0.8, size=(1, 7, 9, 1))
    y = np.clip(x + rng.normal(scale=0.1, size=x.shape), 0, 1)
    with tf.Graph().as_default():
        held = tf.placeholder(tf.float64, x.shape)
        value = tf.image.ssim_multiscale(tf.cast(held, tf.float32) * 1.0, y.astype(np.float32),
                                         1.0, power_factors=(0.7, 0.3), filter_size=3)
        with tf.Session():
            theoretical, numerical = compute_gradient(held, x.shape, tf.cast(value, tf.float64),
                                                      [1], x_init_value=x, delta=1e-3)
    np.testing.assert_allclose(theoretical, numerical, atol=2e-3)


def test_ssim_multiscale_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.image.ssim_multiscale(tf.zeros([1, 200, 200, 3]), tf.zeros([1, 200, 201, 3]),
                                     1.0)
        with pytest.raises(ValueError, match="not compatible"):
            tf.image.ssim_multiscale(tf.zeros([2, 200, 200, 3]), tf.zeros([3, 200, 200, 3]),
                                     1.0)
        # After four halvings 60x70 is 4x5: smaller than the 11x11 window.
        small = tf.image.ssim_multiscale(tf.zeros([1, 60, 70, 3]), tf.zeros([1, 60, 70, 3]),
                                         1.0)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="assertion failed"):
            sess.run(small)
