"""Kernels of the colour ops (ops/image_ops.py): RGBToHSV, HSVToRGB, AdjustContrastv2,
AdjustSaturation, AdjustHue.

Each evaluates TensorFlow's CPU kernel expression by expression in the same precision
(float32 for the adjust ops, which TF registers for float only on CPU; the colour-space ops
in their own dtype), with NumPy selects where TF branches per pixel, so results match TF's.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_F32 = np.float32




def _check_rgb(images) -> None:
    if not images.ndim or images.shape[-1] != 3:
        got = images.shape[-1] if images.ndim else 0
        raise errors.FailedPreconditionError(
            None, None, f"input must have 3 channels but input only has {got} channels.")


# --- RGBToHSV / HSVToRGB ---------------------------------------------------------------------
@kernel("RGBToHSV")
def _rgb_to_hsv(ctx, images):
    """v = max, s = (max - min) / max, h = the sextant's ratio / 6 (TF's Eigen expression)."""
    _check_rgb(images)
    t = images.dtype.type
    one = t(1)
    r, g, b = images[..., 0], images[..., 1], images[..., 2]
    value = images.max(axis=-1)
    chroma = value - images.min(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        saturation = np.where(value > 0, chroma / value, 0).astype(images.dtype)
        norm = (one / chroma) * (one / t(6))
        hue = np.where(r == value, norm * (g - b),
                       np.where(g == value, norm * (b - r) + t(2) / t(6),
                                norm * (r - g) + t(4) / t(6)))
    hue = np.where(chroma > 0, hue, 0).astype(images.dtype)
    hue = np.where(hue < 0, hue + one, hue)
    return np.stack([hue, saturation, value], axis=-1)


@kernel("HSVToRGB")
def _hsv_to_rgb(ctx, images):
    """Each channel is (1 - s + s * ramp(6h)) * v, with the ramps of TF's Eigen expression."""
    _check_rgb(images)
    t = images.dtype.type
    h, s, v = images[..., 0], images[..., 1], images[..., 2]
    dh = h * t(6)
    ramps = (np.abs(dh - t(3)) - t(1), -np.abs(dh - t(2)) + t(2), -np.abs(dh - t(4)) + t(2))
    one_s = -s + t(1)
    return np.stack([(one_s + s * np.minimum(np.maximum(d, t(0)), t(1))) * v for d in ramps],
                    axis=-1)


# --- the adjust ops --------------------------------------------------------------------------
def _check_adjusted(images, factor, factor_name: str, rgb: bool) -> None:
    if images.ndim < 3:
        raise invalid_argument(f"input must be at least 3-D, got shape{dims_text(images.shape)}")
    if factor.ndim:
        raise invalid_argument(f"{factor_name} must be scalar: {dims_text(factor.shape)}")
    if rgb and images.shape[-1] != 3:
        raise invalid_argument(f"input must have 3 channels but instead has {images.shape[-1]} "
                       "channels.")


def _folded_sum(planes):
    """Sums axis 1 of [batch, n, channels] by folding it in halves (TF's ReduceMeanAcrossImage:
    the upper half is added onto the lower one until one row is left)."""
    buf = planes.copy()
    remaining = buf.shape[1]
    while True:
        right = remaining // 2
        left = remaining - right
        buf[:, :right] = buf[:, left:left + right] + buf[:, :right]
        remaining = left
        if remaining <= 1:
            return buf[:, 0]


@kernel("AdjustContrastv2", dtypes=(np.float32,))
def adjust_contrast(ctx, images, factor):
    """mean + factor * (x - mean) per image and channel, the mean as TF folds it."""
    _check_adjusted(images, factor, "contrast_factor", rgb=False)
    if not images.size:
        return images.copy()
    height, width, channels = images.shape[-3:]
    planes = images.reshape(-1, height * width, channels)
    mean = _folded_sum(planes) * (_F32(1) / _F32(height * width))
    out = mean[:, None, :] + factor * (planes - mean[:, None, :])
    return out.reshape(images.shape)


def _rgb_to_hsv_float(r, g, b):
    """TF's scalar rgb_to_hsv of adjust_saturation_op.cc (its 2/6 and 4/6 are doubles)."""
    value = np.maximum(r, np.maximum(g, b))
    chroma = value - np.minimum(r, np.minimum(g, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        saturation = np.where(value > 0, chroma / value, _F32(0))
        norm = _F32(1) / (_F32(6) * chroma)
        hue = np.where(r == value, norm * (g - b), np.where(
            g == value, ((norm * (b - r)).astype(np.float64) + 2.0 / 6.0).astype(_F32),
            ((norm * (r - g)).astype(np.float64) + 4.0 / 6.0).astype(_F32)))
    hue = np.where(chroma <= 0, _F32(0), hue)
    return np.where(hue < 0, hue + _F32(1), hue), saturation, value


def _hsv_to_rgb_float(hue, saturation, value):
    """TF's scalar hsv_to_rgb of adjust_saturation_op.cc: chroma, the sextant's ramp x, then
    (c, x, 0) permuted by sextant, plus v - c. The wrap loops of x's `fmod(6h, 2)` run at most
    once upwards and three times downwards for hue in [0, 1]."""
    c = saturation * value
    m = value - c
    dh = hue * _F32(6)
    category = np.trunc(dh)
    wrapped = np.where(dh <= 0, dh + _F32(2), dh)
    for _ in range(3):
        wrapped = np.where(wrapped >= _F32(2), wrapped - _F32(2), wrapped)
    x = c * (_F32(1) - np.abs(wrapped - _F32(1)))
    zero = np.zeros_like(c)
    picks = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c), (c, zero, x)]
    channels = [np.select([category == k for k in range(6)], [p[i] for p in picks], zero)
                for i in range(3)]
    return np.stack([ch + m for ch in channels], axis=-1)


@kernel("AdjustSaturation", dtypes=(np.float32,))
def _adjust_saturation(ctx, images, scale):
    """RGB -> HSV, saturation * scale clipped to [0, 1], HSV -> RGB, per pixel."""
    _check_adjusted(images, scale, "scale", rgb=True)
    hue, saturation, value = _rgb_to_hsv_float(images[..., 0], images[..., 1], images[..., 2])
    saturation = np.minimum(_F32(1), np.maximum(_F32(0), saturation * scale))
    return _hsv_to_rgb_float(hue, saturation, value).astype(_F32, copy=False)


# Sextants of the hue circle: which of (max, mid, min) is r, g and b (TF's rgb_to_hv_range).
_SEXTANT_ORDER = np.array([(0, 1, 2), (1, 0, 2), (1, 2, 0), (2, 1, 0), (2, 0, 1), (0, 2, 1)])


def _hue_sextant(r, g, b):
    """TF's comparison tree: the sextant (0..5) each pixel's r, g, b order falls in (ties
    counted on either side as TF's branches do)."""
    return np.where(r < g, np.where(b < r, 1, np.where(b > g, 3, 2)),
                    np.where(b < g, 0, np.where(b > r, 4, 5)))


@kernel("AdjustHue", dtypes=(np.float32,))
def _adjust_hue(ctx, images, delta):
    """RGB -> (hue in [0, 6), min, max), hue + 6 * delta wrapped into [0, 6), -> RGB."""
    _check_adjusted(images, delta, "delta", rgb=True)
    rgb = np.moveaxis(images, -1, 0)
    category = _hue_sextant(*rgb)
    order = _SEXTANT_ORDER[category]                     # [..., 3]: (max, mid, min) indices
    v_max, v_mid, v_min = (np.take_along_axis(images, order[..., k:k + 1], -1)[..., 0]
                           for k in range(3))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (v_mid - v_min) / (v_max - v_min)
    hue = category.astype(_F32) + np.where(category % 2 == 0, ratio, _F32(1) - ratio)
    hue = np.where(v_max == v_min, _F32(0), hue) + delta * _F32(6)
    hue = _wrap_hue(hue)
    category = np.trunc(hue)
    ratio = hue - category
    ratio = np.where(category % 2 == 0, ratio, _F32(1) - ratio)
    v_mid = v_min + ratio * (v_max - v_min)
    category = np.minimum(category.astype(np.int64), 5)
    values = np.stack([v_max, v_mid, v_min], axis=-1)
    # Inverse permutation: for each output channel, which of (max, mid, min) it takes.
    take = np.argsort(_SEXTANT_ORDER, axis=1)[category]
    return np.take_along_axis(values, take, -1)


def _wrap_hue(hue):
    """TF adds or subtracts 6 until the hue is in [0, 6): the same repeated float32 steps
    (a step count past 64 means a huge delta, where np.mod finishes what TF would loop on)."""
    six = _F32(6)
    for _ in range(64):
        low, high = hue < 0, hue >= six
        if not (low.any() or high.any()):
            return hue
        hue = np.where(low, hue + six, np.where(high, hue - six, hue))
    return np.mod(hue, six)
