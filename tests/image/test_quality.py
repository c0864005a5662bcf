"""total_variation, image_gradients, sobel_edges, psnr and ssim against NumPy/SciPy
references, with gradients where the computation stays in the input's precision (TF 2.21
gives the same values to float32 rounding, and the same op names)."""
import numpy as np
import pytest
from scipy.signal import correlate2d

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

F32 = np.float32


def _img(*shape):
    return lambda rng, dt: rng.rand(*shape).astype(dt)


def _tv_ref(x):
    axes = None if x.ndim == 3 else (1, 2, 3)
    h, w = x.ndim - 3, x.ndim - 2
    return np.abs(np.diff(x, axis=h)).sum(axis=axes) + np.abs(np.diff(x, axis=w)).sum(axis=axes)


def _gradients_ref(x):
    dy, dx = np.zeros_like(x), np.zeros_like(x)
    dy[:, :-1] = x[:, 1:] - x[:, :-1]
    dx[:, :, :-1] = x[:, :, 1:] - x[:, :, :-1]
    return [dy, dx]


def _sobel_ref(x):
    kernels = [np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]]), np.array([[-1, 0, 1], [-2, 0, 2],
                                                                        [-1, 0, 1]])]
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)], mode="reflect")
    out = np.zeros(x.shape + (2,), x.dtype)
    for b in range(x.shape[0]):
        for c in range(x.shape[3]):
            for k, kernel in enumerate(kernels):
                out[b, :, :, c, k] = correlate2d(padded[b, :, :, c], kernel, mode="valid")
    return out


def _psnr_ref(a, b, max_val):
    mse = ((a.astype(np.float64) - b) ** 2).mean(axis=(-3, -2, -1))
    return (20 * np.log10(max_val) - 10 * np.log10(mse)).astype(F32)


def _ssim_ref(x, y, max_val, size=11, sigma=1.5, k1=0.01, k2=0.03, index_map=False):
    """The Gaussian-weighted SSIM of Wang et al., per channel, in float64."""
    coords = np.arange(size) - (size - 1) / 2.0
    g = np.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2))
    g /= g.sum()

    def local(v):
        flat = v.reshape((-1,) + v.shape[-3:])
        out = np.stack([np.stack([correlate2d(img[..., c], g, mode="valid")
                                  for c in range(v.shape[-1])], -1) for img in flat])
        return out.reshape(v.shape[:-3] + out.shape[1:])
    x, y = x.astype(np.float64), y.astype(np.float64)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = local(x), local(y)
    luminance = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * (local(x * y) - mx * my) + c2) / (local(x * x + y * y) - mx ** 2 - my ** 2 + c2)
    ssim = luminance * cs
    return ssim.mean(-1) if index_map else ssim.mean(axis=(-3, -2, -1))


_BIG = np.random.RandomState(5).rand(2, 16, 18, 3).astype(F32)
CASES = [
    OpCase("total_variation", tf.image.total_variation, _tv_ref, [_img(5, 6, 3)],
           (tf.float32, tf.float64), unknown_shapes=False),
    OpCase("total_variation_batch", tf.image.total_variation, _tv_ref, [_img(2, 5, 6, 3)],
           unknown_shapes=False),
    OpCase("image_gradients", lambda x: list(tf.image.image_gradients(x)), _gradients_ref,
           [_img(2, 5, 6, 3)], (tf.float32, tf.float64), unknown_shapes=False),
    OpCase("sobel_edges", tf.image.sobel_edges, _sobel_ref, [_img(2, 5, 6, 2)],
           (tf.float32, tf.float64), rtol=1e-5, atol=1e-5),
    OpCase("psnr", lambda a, b: tf.image.psnr(a, b, 1.0), lambda a, b: _psnr_ref(a, b, 1.0),
           [_img(2, 4, 5, 3), _img(2, 4, 5, 3)], rtol=1e-5, grad=False),
    OpCase("psnr_uint8", lambda a, b: tf.image.psnr(a, b, 255), lambda a, b: _psnr_ref(a, b, 255),
           [lambda rng, dt: (rng.rand(4, 5, 3) * 255).astype(dt)] * 2, (tf.uint8,), rtol=1e-5,
           grad=False),
    OpCase("ssim", lambda a, b: tf.image.ssim(a, b, 1.0), lambda a, b: _ssim_ref(a, b, 1.0),
           [lambda rng, dt: _BIG.astype(dt), lambda rng, dt: (_BIG * 0.7 + 0.1).astype(dt)],
           rtol=1e-4, atol=1e-5, grad=False),
    OpCase("ssim_map", lambda a, b: tf.image.ssim(a, b, 2.0, filter_size=5,
                                                   return_index_map=True),
           lambda a, b: _ssim_ref(a, b, 2.0, size=5, index_map=True),
           [lambda rng, dt: _BIG[0].astype(dt), lambda rng, dt: (_BIG[0] ** 2).astype(dt)],
           rtol=1e-4, atol=1e-5, grad=False),
]

test_forward, _, test_gradient = case_tests(CASES, gradients=True)
_, test_shapes = case_tests([c for c in CASES if c.unknown_shapes])


def test_names_and_errors():
    with tf.Graph().as_default():
        a = tf.constant(_BIG)
        assert tf.image.psnr(a, a * 0.5, 1.0).name == "PSNR/Identity_3:0"  # after 3 converts
        assert tf.image.ssim(a, a * 0.5, 1.0).name == "SSIM/Mean_2:0"
        assert tf.image.total_variation(a).name == "total_variation/add:0"
        with pytest.raises(ValueError, match="'images' must be either 3 or 4-dimensional."):
            tf.image.total_variation(a[0, 0])
        with pytest.raises(ValueError, match="image_gradients expects a 4D tensor"):
            tf.image.image_gradients(a[0])
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 16 and 3"):
            tf.image.psnr(a, a[:, :3], 1.0)
        with pytest.raises(ValueError, match="Two images are not compatible"):
            tf.image.ssim(a, tf.concat([a, a[:1]], 0), 1.0)
        small = tf.placeholder(tf.float32, [1, None, None, 1])
        score = tf.image.ssim(small, small, 1.0)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="assertion failed"):
            sess.run(score, {small: np.zeros((1, 5, 5, 1), F32)})
