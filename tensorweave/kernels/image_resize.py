"""Kernels of the resize ops (ops/image_resize_ops.py) and of their gradients.

TensorFlow computes every coordinate and weight in float32: the scale is `in / out` (or
`(in - 1) / (out - 1)` with `align_corners`), an output index maps to `x * scale` (legacy) or
`(x + 0.5) * scale - 0.5` (half-pixel centres), and the bicubic weights come from a 1025-entry
table. These kernels evaluate the same float32 expressions in the same order, so results equal
TensorFlow's bit for bit. The gradients scatter with `np.add.at`, whose unbuffered in-order
accumulation reproduces TensorFlow's loop order (output row, output column, tap) per cell.
Validation and messages follow TensorFlow's ImageResizerState.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_F32 = np.float32
_HALF = _F32(0.5)


def resize_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """TensorFlow's CalculateResizeScale: the float32 input step per output step. A side of
    one pixel keeps `in / out` even with align_corners (TF 2.21's results show it)."""
    if align_corners and out_size > 1 and in_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def source_coords(out_size: int, scale, half_pixel: bool, nearest: bool = False) -> np.ndarray:
    """Float32 input coordinates of each output index. Nearest neighbour's half-pixel rule
    keeps the +0.5 (it floors right after, TF's HalfPixelScalerForNN)."""
    x = np.arange(out_size, dtype=_F32)
    if not half_pixel:
        return x * scale
    return (x + _HALF) * scale if nearest else (x + _HALF) * scale - _HALF


def _check_attrs(align_corners: bool, half_pixel: bool) -> None:
    if half_pixel and align_corners:
        raise invalid_argument("If half_pixel_centers is True, align_corners must be False.")


def _check_size(size) -> tuple[int, int]:
    if size.ndim != 1:
        raise invalid_argument(f"shape_t must be 1-dimensional{dims_text(size.shape)}")
    if size.size != 2:
        raise invalid_argument(f"shape_t must have two elements{dims_text(size.shape)}")
    return int(size[0]), int(size[1])


class _ResizeKernel:
    """Shared by the forward resizes: attrs parsed once, TF's ImageResizerState checks."""

    def __init__(self, ctx):
        self.align = bool(ctx.attrs["align_corners"])
        self.half = bool(ctx.attrs.get("half_pixel_centers", False))

    def compute(self, ctx, images, size):
        _check_attrs(self.align, self.half)
        if images.ndim != 4:
            raise invalid_argument(f"input must be 4-dimensional{dims_text(images.shape)}")
        _, in_h, in_w, channels = images.shape
        if channels <= 0:
            raise invalid_argument("image must have at least one channel")
        if in_h <= 0 or in_w <= 0:
            raise invalid_argument("input image must be of non-zero size")
        out_h, out_w = _check_size(size)
        if out_h <= 0 or out_w <= 0:
            raise invalid_argument("output dimensions must be positive")
        scales = (resize_scale(in_h, out_h, self.align), resize_scale(in_w, out_w, self.align))
        return self.resize(images, out_h, out_w, scales)


# --- bilinear ------------------------------------------------------------------------------
def linear_taps(out_size: int, in_size: int, scale, half_pixel: bool):
    """Per output index: the lower and upper input index and the float32 weight of the upper
    one (TF's CachedInterpolation)."""
    coords = source_coords(out_size, scale, half_pixel)
    floor = np.floor(coords)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(coords).astype(np.int64), in_size - 1)
    return lower, upper, coords - floor


@kernel("ResizeBilinear")
class ResizeBilinearKernel(_ResizeKernel):
    """top + (bottom - top) * dy with top/bottom interpolated along x first, in float32."""

    def resize(self, images, out_h, out_w, scales):
        images = images.astype(_F32, copy=False)
        if (out_h, out_w) == images.shape[1:3]:
            return images.copy()
        y_lo, y_hi, y_lerp = linear_taps(out_h, images.shape[1], scales[0], self.half)
        x_lo, x_hi, x_lerp = linear_taps(out_w, images.shape[2], scales[1], self.half)
        x_lerp = x_lerp[:, None]
        rows = images[:, y_lo], images[:, y_hi]
        top, bottom = (r[:, :, x_lo] + (r[:, :, x_hi] - r[:, :, x_lo]) * x_lerp for r in rows)
        return top + (bottom - top) * y_lerp[:, None, None]


# --- nearest neighbour -----------------------------------------------------------------------
def nearest_indices(out_size: int, in_size: int, scale, align_corners: bool,
                    half_pixel: bool) -> np.ndarray:
    """The input index each output index copies: floor of its coordinate, or roundf (half
    away from zero, evaluated in float64 so x.5 - ulp does not round up) with align_corners."""
    coords = source_coords(out_size, scale, half_pixel, nearest=True)
    index = np.floor(coords.astype(np.float64) + 0.5) if align_corners else np.floor(coords)
    index = np.minimum(index.astype(np.int64), in_size - 1)
    return np.maximum(index, 0) if half_pixel else index


@kernel("ResizeNearestNeighbor")
class ResizeNearestNeighborKernel(_ResizeKernel):
    """A gather along height and width; the output keeps the input's dtype."""

    def resize(self, images, out_h, out_w, scales):
        ys = nearest_indices(out_h, images.shape[1], scales[0], self.align, self.half)
        xs = nearest_indices(out_w, images.shape[2], scales[1], self.align, self.half)
        return images[:, ys][:, :, xs]


# --- bicubic ---------------------------------------------------------------------------------
_TABLE_SIZE = 1024


def _coefficients(a: float) -> np.ndarray:
    """TF's table of cubic-convolution weights: row i holds the weights of the near and far
    taps at fractional offset i / 1024, computed in double and stored as float32."""
    x = (np.arange(_TABLE_SIZE + 1) * 1.0 / _TABLE_SIZE).astype(_F32).astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = (x + 1.0).astype(_F32).astype(np.float64)
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([near, far], axis=1).astype(_F32)


_KEYS_TABLE = _coefficients(-0.5)      # half-pixel centres use Keys' a = -0.5
_LEGACY_TABLE = _coefficients(-0.75)


def cubic_taps(out_size: int, in_size: int, scale, half_pixel: bool):
    """Per output index: 4 input indices (clamped to the image) and their float32 weights
    (TF's GetWeightsAndIndices). With half-pixel centres taps outside the image get weight 0
    and the rest are renormalized."""
    coords = source_coords(out_size, scale, half_pixel)
    base = np.floor(coords).astype(np.int64)
    delta = coords - base.astype(_F32)
    offset = np.rint(delta * _F32(_TABLE_SIZE)).astype(np.int64)
    table = _KEYS_TABLE if half_pixel else _LEGACY_TABLE
    weights = np.stack([table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
                        table[_TABLE_SIZE - offset, 1]], axis=1)
    wanted = base[:, None] + np.arange(-1, 3)
    index = np.clip(wanted, 0, in_size - 1)
    if half_pixel:
        weights = np.where(index == wanted, weights, _F32(0))
        total = ((weights[:, 0] + weights[:, 1]) + weights[:, 2]) + weights[:, 3]
        usable = np.abs(total) >= _F32(1000) * np.finfo(_F32).tiny
        scale_by = np.where(usable, _F32(1) / np.where(usable, total, _F32(1)), _F32(1))
        weights = np.where(usable[:, None], weights * scale_by[:, None], weights)
    return index, weights


def _weighted_taps(values, index, weights, axis: int):
    """sum_k values[index[:, k]] * weights[:, k] along `axis`, added left to right in
    float32 as TF's Interpolate1D does."""
    shape = [1] * values.ndim
    shape[axis] = -1
    total = None
    for k in range(4):
        term = np.take(values, index[:, k], axis=axis) * weights[:, k].reshape(shape)
        total = term if total is None else total + term
    return total


@kernel("ResizeBicubic")
class ResizeBicubicKernel(_ResizeKernel):
    """Interpolates the 4 rows first, then the 4 columns of those results, in float32."""

    def resize(self, images, out_h, out_w, scales):
        images = images.astype(_F32, copy=False)
        y_index, y_weights = cubic_taps(out_h, images.shape[1], scales[0], self.half)
        x_index, x_weights = cubic_taps(out_w, images.shape[2], scales[1], self.half)
        columns = _weighted_taps(images, y_index, y_weights, axis=1)
        return _weighted_taps(columns, x_index, x_weights, axis=2)


# --- area ------------------------------------------------------------------------------------
def area_spans(out_size: int, in_size: int, scale):
    """Per output index: the input indices its box [x * scale, (x + 1) * scale) covers
    (clamped to the image), their float32 coverage weights, and which of the K columns are
    real (TF's CachedInterpolation of resize_area)."""
    o = np.arange(out_size)
    start_f = o.astype(_F32) * scale
    end_f = (o + 1).astype(_F32) * scale
    start = np.floor(start_f).astype(np.int64)
    end = np.ceil(end_f).astype(np.int64)
    width = int(np.max(end - start)) if out_size else 0
    cells = start[:, None] + np.arange(width)
    valid = cells < end[:, None]
    lo = cells.astype(_F32)
    s, e = start_f[:, None], end_f[:, None]
    inside = np.where(lo + 1 > e, e - lo, _F32(1))
    weights = np.where(lo < s, np.where(lo + 1 > e, scale, lo + 1 - s), inside)
    return np.clip(cells, 0, in_size - 1), weights.astype(_F32), valid


def _area_sum(values, index, weights, valid, axis: int):
    """Each output's weighted sum of its covered cells along `axis`, accumulated cell by cell
    in float32 from `start` (TF's order). The first tap starts the sum; padding taps add
    nothing."""
    shape = [1] * values.ndim
    shape[axis] = -1
    total = np.take(values, index[:, 0], axis=axis) * weights[:, 0].reshape(shape)
    for k in range(1, index.shape[1]):
        term = np.take(values, index[:, k], axis=axis) * weights[:, k].reshape(shape)
        total = np.where(valid[:, k].reshape(shape), total + term, total)
    return total


@kernel("ResizeArea")
class ResizeAreaKernel(_ResizeKernel):
    """Box filter: each row's covered columns are summed first, then the covered rows, and
    the sum is divided by the box area (multiplied by 1 / (scale_y * scale_x))."""

    def resize(self, images, out_h, out_w, scales):
        images = images.astype(_F32, copy=False)
        y_index, y_weights, y_valid = area_spans(out_h, images.shape[1], scales[0])
        x_index, x_weights, x_valid = area_spans(out_w, images.shape[2], scales[1])
        rows = _area_sum(images, x_index, x_weights, x_valid, axis=2)
        # TF starts the row sum at 0: 0 + first term (so a -0 term gives +0).
        total = _F32(0) + _area_sum(rows, y_index, y_weights, y_valid, axis=1)
        return total * _F32(1.0 / np.float64(scales[0] * scales[1]))


# --- gradients -------------------------------------------------------------------------------
def _scatter(grad_shape, out_hw, dtype, targets, contributions):
    """Adds contribution j of every (row, column) of the incoming gradient into flat cell
    `targets[..., j]` of the [batch, out_h * out_w, channels] result, in TF's loop order.

    `contributions` is [batch, h, w, taps, channels]; `targets` is [h, w, taps]."""
    batch, _, _, channels = grad_shape
    out = np.zeros((out_hw[0] * out_hw[1], batch, channels), dtype)
    values = np.moveaxis(contributions, 0, -2).reshape(-1, batch, channels)
    np.add.at(out, targets.reshape(-1), values)
    return np.moveaxis(out, 1, 0).reshape(batch, out_hw[0], out_hw[1], channels)


class _ResizeGradKernel:
    """ResizeBilinearGrad / ResizeBicubicGrad: TF's ImageResizerGradientState checks."""

    def __init__(self, ctx):
        self.align = bool(ctx.attrs["align_corners"])
        self.half = bool(ctx.attrs["half_pixel_centers"])
        self.dtype = ctx.attrs["T"].as_numpy_dtype

    def compute(self, ctx, grads, original):
        _check_attrs(self.align, self.half)
        if grads.ndim != 4:
            raise invalid_argument(f"input_grad must be 4-dimensional{dims_text(grads.shape)}")
        if grads.shape[1] <= 0 or grads.shape[2] <= 0:
            raise invalid_argument("resized dimensions must be positive")
        if original.ndim != 4:
            raise invalid_argument("original_image must be "
                                   f"4-dimensional{dims_text(original.shape)}")
        if original.shape[1] <= 0 or original.shape[2] <= 0:
            raise invalid_argument("original dimensions must be positive")
        out_hw = original.shape[1:3]
        scales = [resize_scale(o, r, self.align) for o, r in zip(out_hw, grads.shape[1:3])]
        return self.backprop(grads.astype(_F32, copy=False), out_hw, scales)


@kernel("ResizeBilinearGrad")
class ResizeBilinearGradKernel(_ResizeGradKernel):
    """Each incoming gradient goes to its 4 source pixels with the bilinear weights (products
    in float32, accumulated in T; half precision accumulates in float32 like TF)."""

    def backprop(self, grads, out_hw, scales):
        (y_lo, y_hi, dy), (x_lo, x_hi, dx) = (
            linear_taps(n, o, s, self.half) for n, o, s in zip(grads.shape[1:3], out_hw, scales))
        wy = np.stack([_F32(1) - dy, _F32(1) - dy, dy, dy], axis=1)       # [h, 4]
        wx = np.stack([_F32(1) - dx, dx, _F32(1) - dx, dx], axis=1)       # [w, 4]
        rows = np.stack([y_lo, y_lo, y_hi, y_hi], axis=1)[:, None, :]
        cols = np.stack([x_lo, x_hi, x_lo, x_hi], axis=1)[None, :, :]
        contributions = grads[:, :, :, None, :] * wy[None, :, None, :, None] \
            * wx[None, None, :, :, None]
        accumulate = np.float64 if self.dtype == np.float64 else _F32
        out = _scatter(grads.shape, out_hw, accumulate, rows * out_hw[1] + cols,
                       contributions.astype(accumulate))
        return out.astype(self.dtype, copy=False)


@kernel("ResizeBicubicGrad")
class ResizeBicubicGradKernel(_ResizeGradKernel):
    """Each incoming gradient goes to its 4x4 source pixels, weight_y * weight_x, in T."""

    def backprop(self, grads, out_hw, scales):
        (y_index, wy), (x_index, wx) = (
            cubic_taps(n, o, s, self.half) for n, o, s in zip(grads.shape[1:3], out_hw, scales))
        g = grads.astype(self.dtype, copy=False)
        wy, wx = wy.astype(self.dtype), wx.astype(self.dtype)
        h, w = grads.shape[1:3]
        contributions = (g[:, :, :, None, None, :] * wy[None, :, None, :, None, None]
                         * wx[None, None, :, None, :, None]).reshape(*grads.shape[:3], 16, -1)
        targets = y_index[:, None, :, None] * out_hw[1] + x_index[None, :, None, :]
        return _scatter(grads.shape, out_hw, self.dtype, targets.reshape(h, w, 16),
                        contributions)


@kernel("ResizeNearestNeighborGrad")
class ResizeNearestNeighborGradKernel:
    """Sums the incoming gradient of every output pixel into the pixel it copied."""

    def __init__(self, ctx):
        self.align = bool(ctx.attrs["align_corners"])
        self.half = bool(ctx.attrs["half_pixel_centers"])

    def compute(self, ctx, grads, size):
        if grads.ndim != 4:
            raise invalid_argument(f"input must be 4-dimensional{dims_text(grads.shape)}")
        out_h, out_w = _check_size(size)
        if out_h <= 0 or out_w <= 0:
            raise invalid_argument("shape_t's elements must be positive")
        batch, in_h, in_w, channels = grads.shape
        if not grads.size:
            return np.zeros((batch, out_h, out_w, channels), grads.dtype)
        ys = nearest_indices(in_h, out_h, resize_scale(out_h, in_h, self.align), self.align,
                             self.half)
        xs = nearest_indices(in_w, out_w, resize_scale(out_w, in_w, self.align), self.align,
                             self.half)
        targets = (ys[:, None] * out_w + xs[None, :])[:, :, None]
        return _scatter(grads.shape, (out_h, out_w), grads.dtype, targets,
                        grads[:, :, :, None, :])
