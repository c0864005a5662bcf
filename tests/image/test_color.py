"""tf.image colour functions: convert_image_dtype's scaling rules, brightness, contrast,
gamma, saturation and hue around their ops, grayscale conversions, per-image
standardization and the random variants, against NumPy (TF 2.21 gives the same values and
op names; float32 reductions may differ in the last bit)."""
import colorsys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

F32 = np.float32
_RNG = np.random.RandomState(0)
U8 = (_RNG.rand(4, 5, 3) * 255).astype(np.uint8)
F = _RNG.rand(2, 4, 5, 3).astype(F32)


def _const(value):
    return lambda rng, dt: value


def _convert_ref(x, dtype, saturate=False):
    """TF's rules: int->int by the range ratio, int->float * 1/MAX, float->int * (MAX + 0.5)."""
    src, dst = tf.as_dtype(x.dtype), tf.as_dtype(dtype)
    if src.is_integer and dst.is_integer:
        if src.max > dst.max:
            out = x // ((src.max + 1) // (dst.max + 1))
            return np.clip(out, dst.min, dst.max).astype(dtype) if saturate else out.astype(dtype)
        out = np.clip(x, dst.min, dst.max) if saturate else x
        return out.astype(dtype) * ((dst.max + 1) // (src.max + 1))
    if src.is_floating and dst.is_floating:
        return x.astype(dtype)
    if src.is_integer:
        return x.astype(dtype) * dtype(1.0 / src.max)
    scaled = x * x.dtype.type(dst.max + 0.5)
    return (np.clip(scaled, dst.min, dst.max) if saturate else scaled).astype(dtype)


_CONVERSIONS = [(np.uint8, np.float32), (np.uint8, np.uint16), (np.uint8, np.int32),
                (np.uint16, np.uint8), (np.int32, np.int8), (np.float32, np.uint8),
                (np.float32, np.int16), (np.float64, np.float16), (np.uint8, np.uint8)]


def _source(src):
    values = {np.uint8: U8, np.uint16: U8.astype(np.uint16) * 250,
              np.int32: U8.astype(np.int32) << 20, np.float32: F[0], np.float64: F[0]}
    return values[src].astype(src)


def _gray_ref(x):
    return np.tensordot(_convert_ref(x, F32), F32([0.2989, 0.5870, 0.1140]), [-1, -1])[..., None]


def _standardized(x):
    x = x.astype(F32)
    mean = x.mean(axis=(-1, -2, -3), keepdims=True)
    std = x.std(axis=(-1, -2, -3), keepdims=True)
    return (x - mean) / np.maximum(std, 1 / np.sqrt(np.prod(x.shape[-3:])))


def _hsv_adjusted(x, hue=0.0, saturation=1.0):
    flat = [colorsys.rgb_to_hsv(*p) for p in x.reshape(-1, 3).astype(np.float64)]
    rgb = [colorsys.hsv_to_rgb((h + hue) % 1, min(1, s * saturation), v) for h, s, v in flat]
    return np.array(rgb, F32).reshape(x.shape)


def _contrast_ref(x, factor):
    mean = x.mean(axis=(-3, -2), keepdims=True)
    return (x - mean) * factor + mean


_TOL = {"rtol": 2e-6, "atol": 2e-6}
CASES = [
    *[OpCase(f"convert_{s.__name__}_{d.__name__}_{sat}",
             lambda x, d=d, sat=sat: tf.image.convert_image_dtype(x, d, saturate=sat),
             lambda x, d=d, sat=sat: _convert_ref(x, d, sat), [_const(_source(s))],
             dtypes=(tf.as_dtype(s),), grad=False)
      for s, d in _CONVERSIONS for sat in (False, True)],
    OpCase("adjust_brightness_uint8", lambda x: tf.image.adjust_brightness(x, 0.2),
           lambda x: _convert_ref(_convert_ref(x, F32) + F32(0.2), np.uint8, True),
           [_const(U8)], dtypes=(tf.uint8,), grad=False),
    OpCase("adjust_brightness_float", lambda x: tf.image.adjust_brightness(x, -0.3),
           lambda x: x - F32(0.3), [_const(F)], grad=False),
    OpCase("adjust_contrast", lambda x: tf.image.adjust_contrast(x, 1.7),
           lambda x: _contrast_ref(x, F32(1.7)), [_const(F)], grad=False, **_TOL),
    OpCase("adjust_contrast_uint8", lambda x: tf.image.adjust_contrast(x, 0.5),
           lambda x: _convert_ref(_contrast_ref(_convert_ref(x, F32), F32(0.5)), np.uint8, True),
           [_const(U8)], dtypes=(tf.uint8,), grad=False),
    OpCase("adjust_gamma", lambda x: tf.image.adjust_gamma(x, 0.5, 1.2),
           lambda x: F32(1.2) * x ** F32(0.5), [_const(F)], grad=False, **_TOL),
    OpCase("adjust_saturation", lambda x: tf.image.adjust_saturation(x, 0.4),
           lambda x: _hsv_adjusted(x, saturation=0.4), [_const(F)], grad=False, **_TOL),
    OpCase("adjust_hue", lambda x: tf.image.adjust_hue(x, -0.3),
           lambda x: _hsv_adjusted(x, hue=-0.3), [_const(F)], grad=False, **_TOL),
    OpCase("rgb_to_grayscale", tf.image.rgb_to_grayscale, _gray_ref, [_const(F)], grad=False,
           **_TOL),
    OpCase("rgb_to_grayscale_uint8", tf.image.rgb_to_grayscale,
           lambda x: _convert_ref(_gray_ref(x), np.uint8), [_const(U8)], dtypes=(tf.uint8,),
           grad=False),
    OpCase("grayscale_to_rgb", tf.image.grayscale_to_rgb, lambda x: np.repeat(x, 3, -1),
           [_const(F[..., :1])]),
    OpCase("per_image_standardization", tf.image.per_image_standardization, _standardized,
           [_const(F)], grad=False, rtol=1e-5, atol=1e-5),
    OpCase("per_image_standardization_uint8", tf.image.per_image_standardization,
           _standardized, [_const(U8)], dtypes=(tf.uint8,), rtol=1e-5, atol=1e-5, grad=False),
    OpCase("per_image_standardization_flat", tf.image.per_image_standardization,
           lambda x: np.zeros(x.shape, F32), [_const(np.ones((3, 3, 2), F32))], grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_random_adjustments_draw_one_factor_in_range():
    image = np.full((3, 4, 3), 0.5, F32)
    image[0, 0] = [0.9, 0.2, 0.1]
    with tf.Graph().as_default():
        outs = [tf.image.random_brightness(image, 0.2, seed=1),
                tf.image.random_contrast(image, 0.5, 1.5, seed=2),
                tf.image.random_saturation(image, 0.2, 0.8, seed=3),
                tf.image.random_hue(image, 0.1, seed=4)]
        assert [o.name for o in outs] == ["adjust_brightness/Identity:0",
                                          "adjust_contrast/Identity:0",
                                          "adjust_saturation/Identity:0",
                                          "adjust_hue/Identity:0"]
        with tf.Session() as sess:
            draws = [sess.run(outs) for _ in range(10)]
    deltas = [d[0] - image for d in draws]
    assert all(np.allclose(dl, dl.flat[0], atol=1e-6) and abs(dl.flat[0]) <= 0.2
               for dl in deltas)
    assert len({round(float(dl.flat[0]), 6) for dl in deltas}) > 1
    mean = image.mean(axis=(0, 1))
    factors = [(d[1][0, 0] - mean) / (image[0, 0] - mean) for d in draws]
    assert all(np.allclose(f, f[0], atol=1e-4) and 0.5 <= f[0] < 1.5 for f in factors)
    hsv = [colorsys.rgb_to_hsv(*d[2][0, 0]) for d in draws]
    assert all(0.2 * 0.888 - 1e-5 <= s <= 0.8 * 0.888 + 1e-5 for _, s, _ in hsv)
    hues = [colorsys.rgb_to_hsv(*d[3][0, 0])[0] for d in draws]
    base = colorsys.rgb_to_hsv(0.9, 0.2, 0.1)[0]
    assert all(min(abs(h - base), 1 - abs(h - base)) <= 0.1 + 1e-5 for h in hues)


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.image.random_brightness(U8, -1), ValueError, "max_delta must be non-negative."),
    (lambda: tf.image.random_contrast(U8, 2, 1), ValueError, "upper must be > lower."),
    (lambda: tf.image.random_saturation(U8, -1, 1), ValueError, "lower must be non-negative."),
    (lambda: tf.image.random_hue(U8, 0.6), ValueError, "max_delta must be <= 0.5."),
    (lambda: tf.image.adjust_gamma(F, -1.0), ValueError,
     "Gamma should be a non-negative real number."),
    (lambda: tf.image.grayscale_to_rgb(U8), ValueError,
     "Last dimension of a grayscale image should be size 1."),
    (lambda: tf.image.grayscale_to_rgb(np.zeros(3, F32)), ValueError,
     "must be at least two-dimensional"),
    (lambda: tf.image.convert_image_dtype(U8, tf.string), AttributeError,
     "dtype must be either floating point or integer"),
    (lambda: tf.image.convert_image_dtype(U8 > 3, tf.float32), AttributeError,
     "image dtype must be either floating point or integer"),
    (lambda: tf.image.per_image_standardization(F[0, 0]), ValueError,
     "must be at least three-dimensional"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


def test_runtime_checks():
    with tf.Graph().as_default():
        gamma = tf.placeholder(tf.float32, [])
        gray = tf.placeholder(tf.float32, [None, None, None])
        corrected = tf.image.adjust_gamma(F, gamma)
        rgb = tf.image.grayscale_to_rgb(gray)
        np.testing.assert_allclose(_run(corrected, {gamma: 2.0}), F ** 2, rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Gamma should be"):
            _run(corrected, {gamma: -1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="grayscale image should be"):
            _run(rgb, {gray: F[0]})


def test_names_follow_tensorflow():
    with tf.Graph().as_default():
        assert tf.image.convert_image_dtype(U8, tf.float32).name == "convert_image:0"
        assert tf.image.convert_image_dtype(F, tf.float32).name == "Identity:0"
        assert tf.image.rgb_to_grayscale(U8).name == "rgb_to_grayscale:0"
        assert tf.image.grayscale_to_rgb(U8[..., :1]).name == "grayscale_to_rgb:0"
        assert tf.image.adjust_contrast(F, 2.0).op.inputs[0].op.type == "AdjustContrastv2"
        assert tf.image.per_image_standardization(F).name == "per_image_standardization:0"
