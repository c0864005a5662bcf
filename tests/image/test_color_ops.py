"""Colour ops (RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustSaturation, AdjustHue) against
per-pixel transcriptions of TF's CPU kernels (exact) and against `colorsys` (an independent
oracle, to float32 precision); RGBToHSV's gradient; TF's build and run errors."""
import colorsys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import image_ops as C
from tensorweave.testing.op_case import OpCase, case_tests

F32 = np.float32
COLOR = (tf.float32, tf.float64, tf.float16)


def _pixels(rng, dt, shape=(3, 4, 5)):
    """Random RGB values plus grays, primaries and ties (every branch of the hue formula)."""
    x = rng.rand(*shape, 3)
    specials = np.array([[0.5, 0.5, 0.5], [0, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 1],
                         [0.2, 0.7, 0.7], [0.7, 0.2, 0.7], [0.7, 0.7, 0.2], [1, 0, 0],
                         [0, 1, 0], [0, 0, 1], [0.3, 0.9, 0.3]])
    n = min(len(specials), x.size // 3)
    x.reshape(-1, 3)[:n] = specials[:n]
    return x.astype(dt)


# --- references: TF's kernels one pixel at a time -----------------------------------------------
def rgb_to_hsv_ref(images):
    t = images.dtype.type
    out = np.zeros_like(images)
    for idx in np.ndindex(images.shape[:-1]):
        r, g, b = images[idx]
        v = max(r, g, b)
        chroma = t(v - min(r, g, b))
        s = t(chroma / v) if v > 0 else t(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            norm = t(t(1) / chroma) * t(t(1) / t(6))
            if r == v:
                h = norm * t(g - b)
            elif g == v:
                h = norm * t(b - r) + t(t(2) / t(6))
            else:
                h = norm * t(r - g) + t(t(4) / t(6))
        h = h if chroma > 0 else t(0)
        out[idx] = (h + t(1) if h < 0 else h, s, v)
    return out


def hsv_to_rgb_ref(images):
    t = images.dtype.type
    out = np.zeros_like(images)
    for idx in np.ndindex(images.shape[:-1]):
        h, s, v = images[idx]
        dh = h * t(6)
        ramps = (abs(dh - t(3)) - t(1), -abs(dh - t(2)) + t(2), -abs(dh - t(4)) + t(2))
        out[idx] = [(t(-s + t(1)) + s * min(max(d, t(0)), t(1))) * v for d in ramps]
    return out


def contrast_ref(images, factor):
    """mean + factor * (x - mean) with TF's mean: the image plane summed by halving folds."""
    h, w, c = images.shape[-3:]
    planes = images.reshape(-1, h * w, c)
    out = np.empty_like(planes)
    for k, plane in enumerate(planes):
        acc, n = plane.copy(), h * w
        while True:
            right = n // 2
            acc[:right] = acc[n - right:n] + acc[:right]
            n -= right
            if n <= 1:
                break
        mean = acc[0] * (F32(1) / F32(h * w))
        out[k] = mean + factor * (plane - mean)
    return out.reshape(images.shape)


def _hsv_float(r, g, b):
    """adjust_saturation_op.cc's rgb_to_hsv (2/6 and 4/6 are doubles there)."""
    v = max(r, g, b)
    chroma = F32(v - min(r, g, b))
    s = F32(chroma / v) if v > 0 else F32(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = F32(1) / (F32(6) * chroma)
        if r == v:
            h = norm * (g - b)
        elif g == v:
            h = F32(float(norm * (b - r)) + 2.0 / 6.0)
        else:
            h = F32(float(norm * (r - g)) + 4.0 / 6.0)
    h = F32(0) if chroma <= 0 else h
    return (h + F32(1) if h < 0 else h), s, v


def _rgb_float(h, s, v):
    c = s * v
    m = v - c
    dh = h * F32(6)
    x = dh
    while x <= 0:
        x += F32(2)
    while x >= 2:
        x -= F32(2)
    x = c * (F32(1) - abs(x - F32(1)))
    sextant = int(dh)
    rgb = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][sextant] \
        if sextant < 6 else (0, 0, 0)
    return [F32(ch) + m for ch in rgb]


def saturation_ref(images, scale):
    out = np.zeros_like(images)
    for idx in np.ndindex(images.shape[:-1]):
        h, s, v = _hsv_float(*images[idx])
        out[idx] = _rgb_float(h, min(F32(1), max(F32(0), s * scale)), v)
    return out


def hue_ref(images, delta):
    out = np.zeros_like(images)
    for idx in np.ndindex(images.shape[:-1]):
        r, g, b = images[idx]
        if r < g:
            order = (1, 0, 2, 1) if b < r else (2, 1, 0, 3) if b > g else (1, 2, 0, 2)
        else:
            order = (0, 1, 2, 0) if b < g else (2, 0, 1, 4) if b > r else (0, 2, 1, 5)
        hi, mid, lo = (images[idx][k] for k in order[:3])
        sextant = order[3]
        if hi == lo:
            h = F32(0)
        else:
            ratio = (mid - lo) / (hi - lo)
            h = F32(sextant) + (ratio if sextant % 2 == 0 else F32(1) - ratio)
        h = h + delta * F32(6)
        while h < 0:
            h += F32(6)
        while h >= 6:
            h -= F32(6)
        sextant = int(h)
        ratio = h - F32(sextant)
        ratio = ratio if sextant % 2 == 0 else F32(1) - ratio
        mid = lo + ratio * (hi - lo)
        out[idx] = [(hi, mid, lo), (mid, hi, lo), (lo, hi, mid), (lo, mid, hi), (mid, lo, hi),
                    (hi, lo, mid)][min(sextant, 5)]
    return out


def _adjust(op, factor):
    return lambda x: apply_op(op, [x, factor])


CASES = [
    OpCase("rgb_to_hsv", C.rgb_to_hsv, rgb_to_hsv_ref, [_pixels], dtypes=COLOR, rtol=0, atol=0,
           grad=False),
    # Away from ties and grays, where hue, saturation and value are differentiable.
    OpCase("rgb_to_hsv_smooth", C.rgb_to_hsv, rgb_to_hsv_ref,
           [lambda rng, dt: (rng.rand(2, 3, 3) * 0.9 + 0.05).astype(dt)], rtol=0, atol=0),
    OpCase("rgb_to_hsv_1d", C.rgb_to_hsv, rgb_to_hsv_ref, [lambda rng, dt: _pixels(rng, dt, ())],
           grad=False, rtol=0, atol=0),
    OpCase("hsv_to_rgb", C.hsv_to_rgb, hsv_to_rgb_ref, [_pixels], dtypes=COLOR, rtol=0, atol=0,
           grad=False),
    OpCase("hsv_to_rgb_empty", C.hsv_to_rgb, hsv_to_rgb_ref,
           [lambda rng, dt: np.zeros((0, 2, 3), dt)], grad=False),
    *[OpCase(f"contrast_{f}", _adjust(C.AdjustContrastv2, f),
             lambda x, f=f: contrast_ref(x, F32(f)),
             [lambda rng, dt, s=s: _pixels(rng, dt, s)], rtol=0, atol=0, grad=False)
      for f, s in [(0.5, (3, 4, 5)), (1.7, (2, 9, 7, 4)), (-2.0, (1, 1))]],
    *[OpCase(f"saturation_{f}", _adjust(C.AdjustSaturation, f),
             lambda x, f=f: saturation_ref(x, F32(f)), [_pixels], rtol=0, atol=0, grad=False)
      for f in (0.0, 0.4, 1.0, 2.5)],
    *[OpCase(f"hue_{d}", _adjust(C.AdjustHue, d), lambda x, d=d: hue_ref(x, F32(d)),
             [_pixels], rtol=0, atol=0, grad=False) for d in (0.0, 0.2, -0.45, 0.95, -1.6, 2.3)],
    OpCase("adjust_empty", _adjust(C.AdjustHue, 0.1), lambda x: x,
           [lambda rng, dt: np.zeros((2, 0, 3), dt)], grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- colorsys, an independent oracle ------------------------------------------------------------
def _run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


def test_agrees_with_colorsys():
    rgb = _pixels(np.random.RandomState(4), np.float64).reshape(-1, 3)
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in rgb])
    with tf.Graph().as_default():
        got = _run([C.rgb_to_hsv(rgb), C.hsv_to_rgb(hsv)])
    np.testing.assert_allclose(got[0], hsv, atol=1e-12)
    np.testing.assert_allclose(got[1], rgb, atol=1e-12)
    rgb32 = rgb.astype(F32)[None]
    hues = np.array([colorsys.hsv_to_rgb((h + 0.3) % 1, s, v) for h, s, v in hsv])
    sats = np.array([colorsys.hsv_to_rgb(h, min(1, s * 0.6), v) for h, s, v in hsv])
    with tf.Graph().as_default():
        got = _run([apply_op(C.AdjustHue, [rgb32, 0.3]),
                    apply_op(C.AdjustSaturation, [rgb32, 0.6])])
    np.testing.assert_allclose(got[0][0], hues, atol=2e-6)
    np.testing.assert_allclose(got[1][0], sats, atol=2e-6)


def test_rgb_to_hsv_gradient_has_tf_tie_rules():
    """At ties TF's masks pick r over g over b for the maximum; HSVToRGB has no gradient."""
    with tf.Graph().as_default():
        x = tf.constant([[0.6, 0.6, 0.2], [0.3, 0.3, 0.3]], tf.float64)
        (g,) = tf.gradients(C.rgb_to_hsv(x)[..., 2], x)
        assert tf.gradients(C.hsv_to_rgb(x), x) == [None]
        with pytest.raises(LookupError, match="AdjustHue"):
            tf.gradients(apply_op(C.AdjustHue, [tf.cast(x, tf.float32)[None], 0.1]), x)
        np.testing.assert_array_equal(_run(g), [[1, 0, 0], [1, 0, 0]])


# --- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize("build,exc,match", [
    (lambda: C.rgb_to_hsv(np.ones((2, 4), np.float32)), ValueError,
     "Dimension must be 3 but is 4"),
    (lambda: C.hsv_to_rgb(np.float32(1)), ValueError, "Shape must be at least rank 1"),
    (lambda: C.rgb_to_hsv(np.ones((2, 3), np.int32)), TypeError, "DataType int32 not in list"),
    (lambda: apply_op(C.AdjustHue, [np.ones((2, 3), np.float32), 0.1]), ValueError,
     "Shape must be at least rank 3 but is rank 2"),
    (lambda: apply_op(C.AdjustContrastv2, [np.ones((1, 2, 3), np.float32), [1.0, 2.0]]),
     ValueError, "Shape must be rank 0 but is rank 1"),
    (lambda: apply_op(C.AdjustSaturation, [np.ones((1, 2, 3)), 0.1]), TypeError,
     "DataType float64 not in list"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


@pytest.mark.parametrize("build,value,exc,match", [
    (C.rgb_to_hsv, np.ones((2, 4), np.float32), tf.errors.FailedPreconditionError,
     "input must have 3 channels but input only has 4 channels."),
    (lambda x: apply_op(C.AdjustHue, [x, 0.1]), np.ones((2, 2, 4), np.float32),
     tf.errors.InvalidArgumentError, "input must have 3 channels but instead has 4 channels."),
    (lambda x: apply_op(C.AdjustSaturation, [x, 0.1]), np.ones((2, 3), np.float32),
     tf.errors.InvalidArgumentError, r"input must be at least 3-D, got shape\[2,3\]"),
    (lambda x: apply_op(C.AdjustHue, [np.ones((1, 1, 3), np.float32), x]),
     np.ones(2, np.float32), tf.errors.InvalidArgumentError, r"delta must be scalar: \[2\]"),
    (lambda x: apply_op(C.AdjustSaturation, [np.ones((1, 1, 3), np.float32), x]),
     np.ones(2, np.float32), tf.errors.InvalidArgumentError, r"scale must be scalar: \[2\]"),
    (lambda x: apply_op(C.AdjustContrastv2, [np.ones((1, 1, 3), np.float32), x]),
     np.ones(2, np.float32), tf.errors.InvalidArgumentError,
     r"contrast_factor must be scalar: \[2\]"),
])
def test_runtime_errors(build, value, exc, match):
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.as_dtype(value.dtype))
        out = build(holder)
        with tf.Session() as sess:
            with pytest.raises(exc, match=match):
                sess.run(out, {holder: value})
