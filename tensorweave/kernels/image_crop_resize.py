"""Kernels of CropAndResize and its gradients (ops/image_resize_ops.py).

All boxes are sampled at once: the float32 source coordinate of every crop row and column is
computed as TensorFlow's CPU kernel computes it (including its double-precision midpoint for a
one-pixel crop side), samples outside the image get `extrapolation_value`, and the bilinear
lerps run in float32 in TF's order. The gradients scatter with `np.add.at` in TF's loop order
(box, row, column, tap). Checks and messages are TF's.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_F32 = np.float32


def _check_boxes(boxes, box_ind) -> int:
    """TF's ParseAndCheckBoxSizes: the number of boxes."""
    if not boxes.size and not box_ind.size:
        return 0
    if boxes.ndim != 2:
        raise invalid_argument(f"boxes must be 2-D{dims_text(boxes.shape)}")
    if boxes.shape[1] != 4:
        raise invalid_argument("boxes must have 4 columns")
    if box_ind.ndim != 1:
        raise invalid_argument(f"box_index must be 1-D{dims_text(box_ind.shape)}")
    if box_ind.shape[0] != boxes.shape[0]:
        raise invalid_argument("box_index has incompatible shape")
    return boxes.shape[0]


def _check_indices(box_ind, batch: int) -> None:
    if ((box_ind < 0) | (box_ind >= batch)).any():
        raise errors.OutOfRangeError(None, None, "box_index has values outside [0, batch_size)")


def _check_image(height: int, width: int) -> None:
    if height <= 0 or width <= 0:
        raise invalid_argument("image dimensions must be positive")


def _coords(lo, hi, crop: int, size: int, ratio_first: bool = False):
    """Per box and crop index: the float32 source coordinate and whether it is inside.
    CropAndResizeGradBoxes scales by (size - 1) / (crop - 1) first (`ratio_first`)."""
    last = _F32(size - 1)
    if crop > 1:
        step = (hi - lo) * (last / _F32(crop - 1)) if ratio_first else \
            (hi - lo) * last / _F32(crop - 1)
        coords = lo[:, None] * last + np.arange(crop, dtype=_F32)[None] * step[:, None]
    else:   # 0.5 is a double in TF's expression: the midpoint is computed in float64
        coords = (0.5 * (lo + hi).astype(np.float64) * (size - 1)).astype(_F32)[:, None]
    return coords, (coords >= 0) & (coords <= last)


def _taps(coords, inside, size: int):
    """Lower and upper source index (clamped where outside) and the float32 lerp weight."""
    safe = np.where(inside, coords, _F32(0))
    lower = np.floor(safe).astype(np.int64)
    upper = np.minimum(np.ceil(safe).astype(np.int64), size - 1)
    return lower, upper, safe - lower.astype(_F32)


def _nearest(coords, inside):
    """roundf of the coordinate (half away from zero; coordinates here are >= 0)."""
    return np.floor(np.where(inside, coords, 0).astype(np.float64) + 0.5).astype(np.int64)


@kernel("CropAndResize")
class CropAndResizeKernel:
    """Samples every box of its image on a crop_height x crop_width grid."""

    def __init__(self, ctx):
        self.method = ctx.attrs["method"]
        self.extrapolation = _F32(ctx.attrs["extrapolation_value"])

    def compute(self, ctx, image, boxes, box_ind, crop_size):
        if image.ndim != 4:
            raise invalid_argument(f"input image must be 4-D{dims_text(image.shape)}")
        batch, height, width, depth = image.shape
        _check_image(height, width)
        if boxes.ndim != 2:
            raise invalid_argument(f"boxes must be 2-D, got: {dims_text(boxes.shape)}")
        if box_ind.ndim != 1:
            raise invalid_argument("box_indices must be rank 1 but is shape "
                                   f"{dims_text(box_ind.shape)}")
        num_boxes = _check_boxes(boxes, box_ind)
        if crop_size.ndim != 1:
            raise invalid_argument(f"crop_size must be 1-D{dims_text(crop_size.shape)}")
        if crop_size.shape[0] != 2:
            raise invalid_argument(f"crop_size must have two elements{dims_text(crop_size.shape)}")
        crop_h, crop_w = (int(v) for v in crop_size)
        if crop_h <= 0 or crop_w <= 0:
            raise invalid_argument("crop dimensions must be positive")
        _check_indices(box_ind, batch)
        if not np.isfinite(boxes).all():
            raise invalid_argument("Boxes contains at least one element that is not finite")
        if not num_boxes:
            return np.zeros((0, crop_h, crop_w, depth), _F32)
        ys, y_in = _coords(boxes[:, 0], boxes[:, 2], crop_h, height)
        xs, x_in = _coords(boxes[:, 1], boxes[:, 3], crop_w, width)
        b = box_ind[:, None, None]
        if self.method == "bilinear":
            top, bottom, dy = _taps(ys, y_in, height)
            left, right, dx = _taps(xs, x_in, width)
            img = image.astype(_F32, copy=False)
            dx = dx[:, None, :, None]

            def row(r):
                low, high = img[b, r[:, :, None], left[:, None, :]], \
                    img[b, r[:, :, None], right[:, None, :]]
                return low + (high - low) * dx
            upper, lower = row(top), row(bottom)
            crops = upper + (lower - upper) * dy[:, :, None, None]
        else:
            crops = image[b, _nearest(ys, y_in)[:, :, None],
                          _nearest(xs, x_in)[:, None, :]].astype(_F32)
        inside = (y_in[:, :, None] & x_in[:, None, :])[..., None]
        return np.where(inside, crops, self.extrapolation)


@kernel("CropAndResizeGradImage")
class CropAndResizeGradImageKernel:
    """Scatters each crop sample's gradient onto the pixels it was interpolated from."""

    def __init__(self, ctx):
        self.method = ctx.attrs["method"]
        self.dtype = ctx.attrs["T"].as_numpy_dtype

    def compute(self, ctx, grads, boxes, box_ind, image_size):
        if grads.ndim != 4:
            raise invalid_argument(f"grads image must be 4-D{dims_text(grads.shape)}")
        num, crop_h, crop_w, depth = grads.shape
        if crop_h <= 0 or crop_w <= 0:
            raise invalid_argument("grads dimensions must be positive")
        if num != _check_boxes(boxes, box_ind):
            raise invalid_argument("boxes and grads have incompatible shape")
        if image_size.ndim != 1:
            raise invalid_argument(f"image_size must be 1-D{dims_text(image_size.shape)}")
        if image_size.shape[0] != 4:
            raise invalid_argument(f"image_size must have 4 elements{dims_text(image_size.shape)}")
        batch, height, width, image_depth = (int(v) for v in image_size)
        _check_image(height, width)
        if depth != image_depth:
            raise invalid_argument("image_size and grads are incompatible")
        _check_indices(box_ind, batch)
        ys, y_in = _coords(boxes[:, 0], boxes[:, 2], crop_h, height)
        xs, x_in = _coords(boxes[:, 1], boxes[:, 3], crop_w, width)
        inside = y_in[:, :, None] & x_in[:, None, :]                      # [n, h, w]
        base = box_ind[:, None, None].astype(np.int64) * (height * width)
        if self.method == "bilinear":
            top, bottom, dy = _taps(ys, y_in, height)
            left, right, dx = _taps(xs, x_in, width)
            one = _F32(1)
            g = grads.astype(_F32, copy=False)
            d_top = (one - dy)[:, :, None, None] * g
            d_bottom = dy[:, :, None, None] * g
            wx = [(one - dx)[:, None, :, None], dx[:, None, :, None]]
            values = np.stack([wx[0] * d_top, wx[1] * d_top, wx[0] * d_bottom,
                               wx[1] * d_bottom], axis=3)                # [n, h, w, 4, d]
            rows = [top, top, bottom, bottom]
            cols = [left, right, left, right]
            targets = np.stack([base + r[:, :, None] * width + c[:, None, :]
                                for r, c in zip(rows, cols)], axis=-1)    # [n, h, w, 4]
        else:
            values = grads[:, :, :, None, :]
            targets = (base + _nearest(ys, y_in)[:, :, None] * width
                       + _nearest(xs, x_in)[:, None, :])[..., None]
        keep = np.broadcast_to(inside[..., None], targets.shape)
        out = np.zeros((batch * height * width, depth), self.dtype)
        np.add.at(out, targets[keep], values[keep].astype(self.dtype))
        return out.reshape(batch, height, width, depth)


@kernel("CropAndResizeGradBoxes")
class CropAndResizeGradBoxesKernel:
    """d crops / d box coordinates: the bilinear image gradient at each sample times the
    derivative of its coordinate with respect to y1, x1, y2, x2."""

    def __init__(self, ctx):
        self.method = ctx.attrs["method"]

    def compute(self, ctx, grads, image, boxes, box_ind):
        if self.method != "bilinear":
            raise invalid_argument(f"method must be 'bilinear'{self.method}")
        if grads.ndim != 4:
            raise invalid_argument(f"grads image must be 4-D{dims_text(grads.shape)}")
        num, crop_h, crop_w, depth = grads.shape
        if crop_h <= 0 or crop_w <= 0:
            raise invalid_argument("grads dimensions must be positive")
        if image.ndim != 4:
            raise invalid_argument(f"input image must be 4-D{dims_text(image.shape)}")
        batch, height, width, image_depth = image.shape
        _check_image(height, width)
        if image_depth != depth:
            raise invalid_argument("image, grads depth differ")
        if num != _check_boxes(boxes, box_ind):
            raise invalid_argument("boxes and grads have incompatible shape")
        _check_indices(box_ind, batch)
        ys, y_in = _coords(boxes[:, 0], boxes[:, 2], crop_h, height, ratio_first=True)
        xs, x_in = _coords(boxes[:, 1], boxes[:, 3], crop_w, width, ratio_first=True)
        top, bottom, dy = _taps(ys, y_in, height)
        left, right, dx = _taps(xs, x_in, width)
        img = image.astype(_F32, copy=False)
        b = box_ind[:, None, None]
        tl, tr = img[b, top[:, :, None], left[:, None, :]], img[b, top[:, :, None],
                                                                 right[:, None, :]]
        bl, br = img[b, bottom[:, :, None], left[:, None, :]], img[b, bottom[:, :, None],
                                                                    right[:, None, :]]
        one = _F32(1)
        dx4, dy4 = dx[:, None, :, None], dy[:, :, None, None]
        grad_y = ((one - dx4) * (bl - tl) + dx4 * (br - tr)) * grads
        grad_x = ((one - dy4) * (tr - tl) + dy4 * (br - bl)) * grads
        parts = (_box_terms(grad_y, crop_h, height, axis=1)
                 + _box_terms(grad_x, crop_w, width, axis=2))
        inside = (y_in[:, :, None] & x_in[:, None, :])[..., None]
        out = np.zeros((num, 4), _F32)
        for column, part in zip((0, 2, 1, 3), parts):   # y1, y2, x1, x2
            terms = np.where(inside, part, 0).astype(_F32)
            np.add.at(out[:, column], np.repeat(np.arange(num), terms[0].size),
                      terms.reshape(-1))
        return out


def _box_terms(image_grad, crop: int, size: int, axis: int):
    """The contributions to (start, end) box coordinate gradients along `axis`: the image
    gradient times (size - 1 - i * ratio) and (i * ratio), or 0.5 * (size - 1) each for a
    one-pixel side. (That last product is a double in TF, added to the float sum before
    rounding; here it is rounded first, which can change the sum's last bit.)"""
    if crop > 1:
        ratio = _F32(size - 1) / _F32(crop - 1)
        shape = [1, 1, 1, 1]
        shape[axis] = crop
        scaled = (np.arange(crop, dtype=_F32) * ratio).reshape(shape)
        return [image_grad * (_F32(size - 1) - scaled), image_grad * scaled]
    half = (image_grad.astype(np.float64) * 0.5 * (size - 1)).astype(_F32)
    return [half, half]
