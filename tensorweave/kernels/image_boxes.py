"""Kernels of the box and window ops (ops/image_boxes_ops.py): SampleDistortedBoundingBoxV2,
DrawBoundingBoxes, DrawBoundingBoxesV2 and ExtractGlimpse.

SampleDistortedBoundingBoxV2 draws TensorFlow 2.21's windows bit for bit
(core/kernels/image/sample_distorted_bounding_box_op.cc): its GuardedPhiloxRandom
(kernels/random_philox.PhiloxStream) reserves 4 * max_attempts words a run, and a SimplePhilox
over a copy of it hands its words out in order: per attempt one RandFloat for the aspect ratio,
then (GenerateRandomCrop: float32 areas, lrintf rounding, the +-1 height corrections) an
ExactUniformInt for the height when it has a range and one each for y and x when there is
room; the first window that covers enough of a box wins, else the whole image. The draw
outlines every box's four edges as index segments and keeps, per pixel, the colour of the box
drawn last (TF draws boxes in order, later ones over earlier ones). ExtractGlimpse gathers
each glimpse with one index expression and fills what lies outside the image with noise, as
TF's Eigen GlimpseExtractionOp (version 1).
"""
from __future__ import annotations

import threading

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.philox import PhiloxWords
from tensorweave.kernels.random_philox import PhiloxStream
from tensorweave.kernels.registry import kernel

_F32 = np.float32
_INT32_MAX = 2**31 - 1


def _g(value) -> str:
    """A float as C++ streams print it (6 significant digits)."""
    return f"{float(value):g}"


def _check_range(values, what: str, upper_one: bool = False) -> None:
    if len(values) != 2:
        raise invalid_argument(f"{what} field must specify 2 dimensions")
    shown = f"[{_g(values[0])}, {_g(values[1])}]"
    if not (values[0] > 0 and values[1] > 0):
        raise invalid_argument(f"{what} must be non-negative: {shown}")
    if upper_one and not (values[0] <= 1 and values[1] <= 1):
        raise invalid_argument(f"{what} must be less then or equal to 1.0: {shown}")


def _lrint(x) -> int:
    """lrintf: a float32 rounded half to even, as x86's long (INT64_MIN when out of range)."""
    x = float(x)
    if not abs(x) < 2.0**63:
        return -2**63
    return int(np.rint(x))


def _int32(v: int) -> int:
    """A C++ static_cast<int> of an integer: its low 32 bits, signed."""
    return (v + 2**31) % 2**32 - 2**31


class _SimplePhilox:
    """TF's SimplePhilox on a local copy of the generator at (key, counter): its words in
    order (`philox.PhiloxWords`), as RandFloat and Uniform(n) take them (the op reserves
    `blocks`; a rare rejection in Uniform reads on past them, as TF's local copy does)."""

    def __init__(self, stream, blocks: int):
        self.source = PhiloxWords.at(*stream)
        self.words: list[int] = self.source.take(4 * max(blocks, 1)).tolist()
        self.used = 0

    def rand32(self) -> int:
        if self.used == len(self.words):
            self.words += self.source.take(16).tolist()
        self.used += 1
        return self.words[self.used - 1]

    def rand_float(self) -> np.float32:
        """Uint32ToFloat: the word's 23 low bits as the mantissa of [1, 2), minus 1; exactly
        mantissa * 2**-23."""
        return _F32((self.rand32() & 0x7FFFFF) * 2.0**-23)

    def uniform(self, n: int) -> int:
        """ExactUniformInt<uint32>: a word masked for a power of two, else the first word at or
        above (2**32 - 1) % n + 1, modulo n (n == 0 still takes a word and gives 0)."""
        n &= 0xFFFFFFFF
        word = self.rand32()
        if n & (n - 1) == 0:   # a power of two (or 0)
            return word & (n - 1) if n else 0
        floor = 0xFFFFFFFF % n + 1
        while word < floor:
            word = self.rand32()
        return word % n


def _random_crop(random: _SimplePhilox, width: int, height: int, area_range, aspect):
    """TF's GenerateRandomCrop for one aspect ratio: the window (min_x, min_y, max_x, max_y),
    or None when the constraints cannot be met; it draws the height (when it has a range),
    then y and x (when there is room), in float32 with lrintf rounding and TF's +-1 height
    corrections."""
    lo_area, hi_area = _F32(area_range[0]), _F32(area_range[1])
    if hi_area <= 0 or aspect <= 0 or width <= 0 or height <= 0 or lo_area > hi_area:
        return None
    min_area = lo_area * _F32(width) * _F32(height)
    max_area = hi_area * _F32(width) * _F32(height)
    with np.errstate(divide="ignore", over="ignore"):
        h = _int32(_lrint(np.sqrt(min_area / aspect)))
        max_h = _int32(_lrint(np.sqrt(max_area / aspect)))
    if _lrint(_F32(max_h) * aspect) > width:
        # The smallest max height with round(max_h * aspect) <= width (one less if float
        # rounding still overshoots).
        max_h = int((width + 0.5 - float(_F32(1e-7))) / float(aspect))
        if _lrint(_F32(max_h) * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h = _int32(h + random.uniform(max_h - h + 1))
    w = _int32(_lrint(_F32(h) * aspect))
    area = _F32(w * h)
    if area < min_area:
        h += 1
        w = _int32(_lrint(_F32(h) * aspect))
        area = _F32(w * h)
    if area > max_area:
        h -= 1
        w = _int32(_lrint(_F32(h) * aspect))
        area = _F32(w * h)
    if (area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0):
        return None
    y = random.uniform(height - h) if h < height else 0
    x = random.uniform(width - w) if w < width else 0
    return x, y, x + w, y + h


def _covers(crop, boxes, min_object_covered) -> bool:
    """TF's SatisfiesOverlapConstraints: the crop has an area of at least 1 and covers at least
    `min_object_covered` of some box of area at least 1 (an intersection with min > max is
    empty)."""
    crop = np.asarray(crop, np.int64)
    if _F32((crop[2] - crop[0]) * (crop[3] - crop[1])) < 1:
        return False
    lo = np.maximum(crop[:2], boxes[:, :2])
    hi = np.minimum(crop[2:], boxes[:, 2:])
    inter = np.where((lo <= hi).all(-1), (hi - lo).prod(-1), 0).astype(_F32)
    box_area = (boxes[:, 2:] - boxes[:, :2]).prod(-1).astype(_F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return bool(((inter / box_area >= min_object_covered) & (box_area >= 1)).any())


def sample_crop(stream, width: int, height: int, boxes, min_object_covered, aspect_range,
                area_range, max_attempts: int):
    """TF's attempt loop on the Philox generator at `stream` ((key, counter)): per attempt an
    aspect ratio RandFloat() * (max - min) + min, then GenerateRandomCrop; the first window
    covering enough of a box wins, else the whole image (min_x, min_y, max_x, max_y)."""
    random = _SimplePhilox(stream, max_attempts)
    lo_ar, hi_ar = _F32(aspect_range[0]), _F32(aspect_range[1])
    for _ in range(max_attempts):
        aspect = random.rand_float() * (hi_ar - lo_ar) + lo_ar
        crop = _random_crop(random, width, height, area_range, aspect)
        if crop is not None and _covers(crop, boxes, min_object_covered):
            return crop
    return 0, 0, width, height


@kernel("SampleDistortedBoundingBoxV2")
class SampleDistortedBoundingBoxKernel:
    """TF's StatefulSampleDistortedBoundingBoxOp: a GuardedPhiloxRandom from seed/seed2 (both
    0: random seeds), of which every run reserves 4 * max_attempts words (ReserveSamples32,
    before any input check) and runs the attempt loop on a copy from there."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.stream = PhiloxStream(attrs["seed"], attrs["seed2"])
        self.aspect_range = list(attrs["aspect_ratio_range"])
        self.area_range = list(attrs["area_range"])
        self.max_attempts = attrs["max_attempts"]
        self.use_image = attrs["use_image_if_no_bounding_boxes"]

    def _check_attrs(self) -> None:
        """TF checks these when it builds the kernel (the first run)."""
        _check_range(self.aspect_range, "Aspect ratio range")
        _check_range(self.area_range, "Area range", upper_one=True)
        if self.max_attempts <= 0:
            raise invalid_argument(f"Max attempts must be non-negative: {self.max_attempts}")

    def compute(self, ctx, image_size, bounding_boxes, min_object_covered):
        self._check_attrs()
        stream = self.stream.reserve_blocks(self.max_attempts)   # (4 * attempts + 3) // 4
        height, width = _image_size(image_size)
        boxes = _pixel_boxes(bounding_boxes, min_object_covered, height, width)
        if not len(boxes):
            if not self.use_image:
                raise invalid_argument("No bounding boxes provided as input. One must enable "
                                       "use_image_if_no_bounding_boxes if you wish to not provide "
                                       "any bounding boxes.")
            boxes = np.array([[0, 0, width, height]], np.int64)
        min_x, min_y, max_x, max_y = sample_crop(
            stream, width, height, boxes, _F32(min_object_covered), self.aspect_range,
            self.area_range, self.max_attempts)
        begin = np.array([min_y, min_x, 0]).astype(image_size.dtype)
        size = np.array([max_y - min_y, max_x - min_x, -1]).astype(image_size.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            bboxes = (np.array([min_y, min_x, max_y, max_x], _F32)
                      / np.array([height, width, height, width], _F32))
        return begin, size, bboxes.reshape(1, 1, 4)


def _image_size(image_size) -> tuple[int, int]:
    if image_size.ndim != 1:
        raise invalid_argument(f"image_size must be 1-dimensional{dims_text(image_size.shape)}")
    if image_size.shape[0] != 3:
        raise invalid_argument(f"image_size must contain 3 elements{dims_text(image_size.shape)}")
    height, width = int(image_size[0]), int(image_size[1])
    # TF reads them as uint64: a negative size is huge.
    if not 0 <= height < _INT32_MAX:
        raise invalid_argument("image height cannot be >= int32 max")
    if not 0 <= width < _INT32_MAX:
        raise invalid_argument("image width cannot be >= int32 max")
    return height, width


def _pixel_boxes(bounding_boxes, min_object_covered, height: int, width: int) -> np.ndarray:
    """The boxes as integer (min_x, min_y, max_x, max_y) rows, after TF's checks."""
    if bounding_boxes.ndim != 3:
        raise invalid_argument("input boxes must be 3-dimensional [batch, num_boxes, coords]: "
                               f"{dims_text(bounding_boxes.shape)}")
    if bounding_boxes.shape[-1] != 4:
        raise invalid_argument("bounding boxes must have shape [4] or [*, 4], got "
                               f"{dims_text(bounding_boxes.shape)}")
    if np.ndim(min_object_covered):
        raise invalid_argument("min_object_covered must be 0-D, got shape "
                               f"{dims_text(np.shape(min_object_covered))}")
    if not min_object_covered >= 0:
        raise invalid_argument(f"Min object covered must be non-negative: {_g(min_object_covered)}")
    boxes = bounding_boxes.reshape(-1, 4).astype(_F32)
    bad = ~((boxes >= 0) & (boxes <= 1))
    if bad.any():
        raise invalid_argument("All bounding box coordinates must be in [0.0, 1.0]: "
                               f"{_g(boxes.ravel()[np.argmax(bad.ravel())])}")
    scale = np.array([height, width, height, width], _F32)
    y0, x0, y1, x1 = (boxes * scale).astype(np.int64).T
    return np.stack([x0, y0, x1, y1], axis=1)


# --- DrawBoundingBoxes(V2) -------------------------------------------------------------------
_DEPTH_MESSAGE = "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)"
_DEFAULT_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                            [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1],
                            [0, 1, 1, 1], [1, 0, 1, 1]], _F32)


def _color_table(colors, depth: int) -> np.ndarray:
    """The colours given (when not empty), else TF's default table (all 1 for one channel)."""
    if colors is not None:
        if colors.ndim != 2:
            raise invalid_argument(f"colors must be a 2-D matrix{dims_text(colors.shape)}")
        if colors.shape[1] < depth:
            raise invalid_argument("colors must have equal or more channels than the image "
                                   f"provided: {dims_text(colors.shape)}")
        if colors.size:
            return colors.astype(_F32)
    table = _DEFAULT_COLORS.copy()
    if depth == 1:
        table[:, 0] = 1
    return table


def _segments(fixed, start, stop, horizontal):
    """The pixels (row, col) and segment index of segments along rows or columns."""
    lengths = np.maximum(stop - start + 1, 0)
    seg = np.repeat(np.arange(len(fixed)), lengths)
    offsets = np.arange(len(seg)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    moving = start[seg] + offsets
    rows = np.where(horizontal[seg], fixed[seg], moving)
    cols = np.where(horizontal[seg], moving, fixed[seg])
    return rows, cols, seg


def _draw(images, boxes, colors=None):
    if images.ndim != 4:
        raise invalid_argument("The rank of the images should be 4")
    batch, height, width, depth = images.shape
    if depth not in (1, 3, 4):
        raise invalid_argument(_DEPTH_MESSAGE)
    if boxes.shape[0] != batch:
        raise invalid_argument("The batch sizes should be the same")
    table = _color_table(colors, depth)
    out = images.copy()
    boxes = boxes.astype(_F32)
    num = boxes.shape[1]
    with np.errstate(invalid="ignore"):   # NaN: x86's int64 conversion gives INT64_MIN
        corners = (boxes * np.array([height - 1, width - 1] * 2, _F32)).astype(np.int64)
    r0, c0, r1, c1 = (corners[..., k].ravel() for k in range(4))
    b = np.repeat(np.arange(batch), num)
    drawn = (r0 <= r1) & (c0 <= c1) & (r0 < height) & (r1 >= 0) & (c0 < width) & (c1 >= 0)
    r0c, r1c = np.maximum(r0, 0), np.minimum(r1, height - 1)
    c0c, c1c = np.maximum(c0, 0), np.minimum(c1, width - 1)
    # Four edges per box: top, bottom (along rows), left, right (along columns); each drawn
    # only when its line lies inside the image.
    fixed = np.concatenate([r0, r1, c0, c1])
    start = np.concatenate([c0c, c0c, r0c, r0c])
    stop = np.concatenate([c1c, c1c, r1c, r1c])
    horizontal = np.repeat([True, True, False, False], len(b))
    keep = np.tile(drawn, 4) & np.concatenate([r0 >= 0, r1 < height, c0 >= 0, c1 < width])
    box_id = np.tile(np.arange(len(b)), 4)
    fixed, start, stop, horizontal, box_id = (a[keep] for a in (fixed, start, stop,
                                                                horizontal, box_id))
    rows, cols, seg = _segments(fixed, start, stop, horizontal)
    ids = box_id[seg]
    flat = (b[ids] * height + rows) * width + cols
    # The last box drawn over a pixel wins: order by box, keep each pixel's last write.
    order = np.argsort(ids, kind="stable")
    flat, ids = flat[order], ids[order]
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    last = len(flat) - 1 - first_from_end
    pixels = out.reshape(-1, depth)
    pixels[flat[last]] = table[(ids[last] % num) % len(table), :depth].astype(out.dtype)
    return out


@kernel("DrawBoundingBoxes", dtypes=(np.float32, np.float16))
def _draw_bounding_boxes(ctx, images, boxes):
    """Outlines in TF's default colour table."""
    return _draw(images, boxes)


@kernel("DrawBoundingBoxesV2", dtypes=(np.float32, np.float16))
def _draw_bounding_boxes_v2(ctx, images, boxes, colors):
    """Outlines in the given colours (the default table when `colors` is empty)."""
    return _draw(images, boxes, colors)


# --- ExtractGlimpse --------------------------------------------------------------------------
def _glimpse_corners(offsets, size, image_hw, normalized: bool, centered: bool):
    """TF's version-1 glimpse coordinates in float32: the truncated top-left corners [b, 2]."""
    y, x = offsets[:, 0].astype(_F32), offsets[:, 1].astype(_F32)
    in_h, in_w = _F32(image_hw[0]), _F32(image_hw[1])
    if normalized:
        y, x = y * in_h, x * in_w
    if centered:
        y = y / _F32(2) + in_h / _F32(2)
        x = x / _F32(2) + in_w / _F32(2)
    y = y - _F32(size[0]) / _F32(2)
    x = x - _F32(size[1]) / _F32(2)
    with np.errstate(invalid="ignore"):
        return np.trunc(y).astype(np.int64), np.trunc(x).astype(np.int64)


def _glimpse_noise(images, shape, mode: str, rng):
    """What fills the glimpse outside the image: per image uniform in [min, max], per image
    and channel Gaussian with the channel's mean and deviation, or zeros."""
    if mode == "zero" or not images[0].size:
        return np.zeros(shape, _F32)
    if mode == "uniform":
        low = images.min(axis=(1, 2, 3), keepdims=True)
        return low + rng.random(shape, dtype=_F32) * (images.max(axis=(1, 2, 3),
                                                               keepdims=True) - low)
    mean = images.mean(axis=(1, 2), keepdims=True, dtype=_F32)
    sigma = np.sqrt(np.square(images - mean).mean(axis=(1, 2), keepdims=True, dtype=_F32))
    return mean + rng.standard_normal(shape, dtype=_F32) * sigma


@kernel("ExtractGlimpse")
class ExtractGlimpseKernel:
    """The noise mode is chosen once from `noise` and `uniform_noise` (TF's constructor)."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.normalized, self.centered = attrs["normalized"], attrs["centered"]
        noise = attrs["noise"]
        self.error = None
        if attrs["uniform_noise"] and noise not in ("", "uniform"):
            self.error = "The uniform_noise and noise should not be specified at the same time"
        elif noise not in ("", "uniform", "gaussian", "zero"):
            self.error = ("Only 'uniform', 'gaussian' and 'zero' noise is supported, received "
                          f"{noise}")
        self.noise = noise or ("uniform" if attrs["uniform_noise"] else "gaussian")
        self.rng = np.random.default_rng()   # TF's glimpse noise is unseeded too
        self.lock = threading.Lock()

    def compute(self, ctx, images, size, offsets):
        if self.error:
            raise invalid_argument(self.error)
        if images.ndim != 4:
            raise invalid_argument("input must be 4-dimensional (batch_size, height, width, depth)"
                                   f"{dims_text(images.shape)}")
        if size.shape != (2,):
            raise invalid_argument("input must be a vector of size 2 (height, width)"
                                   f"{dims_text(size.shape)}")
        for d in size:
            if d < 0:
                raise invalid_argument(f"Expected a non-negative size, got {int(d)}")
        if offsets.ndim != 2:
            raise invalid_argument(f"input must be a matrix{dims_text(offsets.shape)}")
        if offsets.shape[0] != images.shape[0]:
            raise invalid_argument(f"first dimension should be batch{dims_text(offsets.shape)}")
        if offsets.shape[1] != 2:
            raise invalid_argument("second dimension should be of size 2 "
                                   f"(y,x){dims_text(offsets.shape)}")
        batch, height, width, depth = images.shape
        shape = (batch, int(size[0]), int(size[1]), depth)
        if not np.prod(shape):
            return np.zeros(shape, _F32)
        top, left = _glimpse_corners(offsets, size, (height, width), self.normalized,
                                     self.centered)
        rows = top[:, None] + np.arange(shape[1])
        cols = left[:, None] + np.arange(shape[2])
        inside = (((rows >= 0) & (rows < height))[:, :, None]
                  & ((cols >= 0) & (cols < width))[:, None, :])
        picked = images[np.arange(batch)[:, None, None], np.clip(rows, 0, height - 1)[:, :, None],
                        np.clip(cols, 0, width - 1)[:, None, :]] if images.size else \
            np.zeros(shape, _F32)
        if inside.all():
            return picked
        with self.lock:
            noise = _glimpse_noise(images, shape, self.noise, self.rng)
        return np.where(inside[..., None], picked, noise)
