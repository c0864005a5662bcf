"""Box and window ops of tf.image: SampleDistortedBoundingBoxV2, DrawBoundingBoxes(V2),
ExtractGlimpse, with TF1's `tf.image.sample_distorted_bounding_box`, `draw_bounding_boxes` and
`extract_glimpse` wrappers.

Boxes are `[y_min, x_min, y_max, x_max]` in coordinates relative to the image (0 to 1).
SampleDistortedBoundingBoxV2 draws a random crop window (Inception-style preprocessing feeds
its `begin` and `size` to `tf.slice`); it is stateful, seeded by its own `seed`/`seed2` attrs
(as TF1 passes them, without the graph seed). None of these ops is differentiable (TensorFlow
declares them not differentiable). Kernels: `kernels/image_boxes.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dim

__all__: list[str] = []

_d = _dtypes
_SIZE_TYPES = (_d.uint8, _d.int8, _d.int16, _d.int32, _d.int64)


def _check_dim(value, expected: int) -> None:
    if value is not None and value != expected:
        raise ValueError(f"Dimension must be {expected} but is {value}")


def _sample_shape(ctx):
    """image_size [3], bounding_boxes [batch, n, 4], min_object_covered a scalar; begin and
    size [3], bboxes [1, 1, 4]."""
    _check_dim(dims_with_rank(ctx.input_shape(0)._dims, 1)[0], 3)
    _check_dim(dims_with_rank(ctx.input_shape(1)._dims, 3)[2], 4)
    dims_with_rank(ctx.input_shape(2)._dims, 0)
    return [_ts.TensorShape([3]), _ts.TensorShape([3]), _ts.TensorShape([1, 1, 4])]


SampleDistortedBoundingBoxV2 = define_op(
    "SampleDistortedBoundingBoxV2",
    inputs=["image_size: T", "bounding_boxes: float32", "min_object_covered: float32"],
    outputs=["begin: T", "size: T", "bboxes: float32"],
    attrs=[TypeAttr("T", _SIZE_TYPES), Attr("seed", "int", 0), Attr("seed2", "int", 0),
           Attr("aspect_ratio_range", "list(float)", [0.75, 1.33]),
           Attr("area_range", "list(float)", [0.05, 1.0]), Attr("max_attempts", "int", 100),
           Attr("use_image_if_no_bounding_boxes", "bool", False)],
    shape_fn=_sample_shape, is_stateful=True, not_differentiable=True,
    doc="A random crop window of an image that covers enough of one of its boxes.")


def _draw_shape(ctx):
    """images [batch, height, width, depth] (returned as they are), boxes [batch, n, 4]; the
    V1 op also wants depth 1, 3 or 4 (V2 and the batch sizes are checked at run time)."""
    images = dims_with_rank(ctx.input_shape(0)._dims, 4)
    _check_dim(dims_with_rank(ctx.input_shape(1)._dims, 3)[2], 4)
    if ctx.op_type == "DrawBoundingBoxes" and images[3] not in (None, 1, 3, 4):
        raise ValueError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    return ctx.input_shape(0)


_DRAW_TYPE = TypeAttr("T", (_d.float32, _d.float16), _d.float32)
DrawBoundingBoxes = define_op(
    "DrawBoundingBoxes", inputs=["images: T", "boxes: float32"], outputs=["output: T"],
    attrs=[_DRAW_TYPE], shape_fn=_draw_shape, not_differentiable=True,
    doc="Images with the outlines of boxes drawn in TF's default colour table.")
DrawBoundingBoxesV2 = define_op(
    "DrawBoundingBoxesV2", inputs=["images: T", "boxes: float32", "colors: float32"],
    outputs=["output: T"], attrs=[_DRAW_TYPE], shape_fn=_draw_shape, not_differentiable=True,
    doc="Images with the outlines of boxes drawn, cycling through the given colours.")


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None,
                                  min_object_covered=0.1, aspect_ratio_range=None,
                                  area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """Generates a randomly distorted crop window of an image (TF1's
    tf.image.sample_distorted_bounding_box).

    Up to `max_attempts` times, an aspect ratio in `aspect_ratio_range` and a height giving an
    area in `area_range` of the image are drawn, then a position; the first window that covers
    at least `min_object_covered` of one of `bounding_boxes` is returned, else the whole image.
    `begin` and `size` can be fed to `tf.slice`, `bboxes` to `draw_bounding_boxes`.

    Like TensorFlow's compat.v1 function, `seed` and `seed2` become the op's attrs as given
    (the graph seed of `tf.set_random_seed` is not used); with both unset (or 0) the windows
    are nondeterministic. A session draws a fresh window at every run; a new session with the
    same seeds repeats the sequence. The windows are TensorFlow 2.21's bit for bit.

    Args:
      image_size: a 1-D uint8/int8/int16/int32/int64 Tensor `[height, width, channels]`.
      bounding_boxes: a float32 Tensor `[batch, N, 4]` of `[y_min, x_min, y_max, x_max]`
        boxes in [0, 1] (all batches are pooled).
      seed: the first seed of the op's generator (default 0).
      seed2: the second seed (default 0).
      min_object_covered: a float32 scalar: the fraction of some box the window must cover
        (0 accepts any window).
      aspect_ratio_range: `[min, max]` of width / height of the window (default
        [0.75, 1.33]), both positive.
      area_range: `[min, max]` of the window's fraction of the image area (default
        [0.05, 1.0]), both in (0, 1].
      max_attempts: the number of windows tried before returning the whole image (default
        100).
      use_image_if_no_bounding_boxes: with no boxes, use the whole image as the box (an
        error otherwise).
      name: a name scope (default "sample_distorted_bounding_box"); the op is named after it.

    Returns:
      (begin, size, bboxes): `[offset_height, offset_width, 0]` and
      `[target_height, target_width, -1]` in `image_size`'s dtype, and the window as a
      float32 `[1, 1, 4]` box.

    Raises:
      ValueError: if the shapes are statically wrong (image_size not [3], boxes not
        [batch, N, 4], min_object_covered not a scalar).
      TypeError: if `image_size` has another dtype.
      InvalidArgumentError: (at run time) for bad attrs, shapes, coordinates outside [0, 1],
        a negative `min_object_covered`, a size of 2**31 - 1 or more, or no boxes without
        `use_image_if_no_bounding_boxes`.
    """
    attrs = {"seed": seed or 0, "seed2": seed2 or 0}
    optional = {"aspect_ratio_range": aspect_ratio_range, "area_range": area_range,
                "max_attempts": max_attempts,
                "use_image_if_no_bounding_boxes": use_image_if_no_bounding_boxes}
    attrs.update({key: value for key, value in optional.items() if value is not None})
    for key in ("aspect_ratio_range", "area_range"):
        if key in attrs:
            attrs[key] = [float(v) for v in attrs[key]]
    with name_scope(name, "sample_distorted_bounding_box"):
        return tuple(apply_op(SampleDistortedBoundingBoxV2,
                              [image_size, bounding_boxes, min_object_covered], attrs,
                              name=name))


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Draws the outlines of boxes onto a batch of images (TF1's tf.image.draw_bounding_boxes).

    Box `[y_min, x_min, y_max, x_max]` covers rows `int(y_min * (height - 1))` to
    `int(y_max * (height - 1))` and the columns likewise; its one-pixel outline is drawn where
    it falls inside the image. Inverted boxes and boxes wholly outside are skipped. Box k gets
    colour `k % len(colors)`; without colours, TF's table (yellow, blue, red, lime, purple,
    olive, maroon, navy, aqua, fuchsia; 1 for every table entry of a one-channel image).

    Args:
      images: a float32 or float16 Tensor `[batch, height, width, depth]`, depth 1, 3 or 4.
      boxes: a float32 Tensor `[batch, num_boxes, 4]`.
      name: the op name (default "DrawBoundingBoxes", or "DrawBoundingBoxesV2" with colours).
      colors: None, or a float32 `[num_colors, >= depth]` array of RGBA colours (an empty one
        means the default table).

    Returns:
      A Tensor like `images` with the boxes drawn.

    Raises:
      ValueError: if the ranks are statically wrong or the depth is not 1, 3 or 4.
      InvalidArgumentError: (at run time) for the same reasons, batch sizes that differ, or
        colours that are not 2-D or have fewer columns than the depth.
    """
    if colors is None:
        return apply_op(DrawBoundingBoxes, [images, boxes], name=name)
    return apply_op(DrawBoundingBoxesV2, [images, boxes, colors], name=name)


# --- ExtractGlimpse --------------------------------------------------------------------------
def _glimpse_shape(ctx):
    """input [batch, height, width, depth], size [2], offsets [batch, 2]: [batch, size[0],
    size[1], depth] (a negative or unknown size gives an unknown dimension)."""
    images = dims_with_rank(ctx.input_shape(0)._dims, 4)
    offsets = dims_with_rank(ctx.input_shape(2)._dims, 2)
    batch = merge_dim(images[0], offsets[0])
    _check_dim(offsets[1], 2)
    _check_dim(dims_with_rank(ctx.input_shape(1)._dims, 1)[0], 2)
    if ctx.attr("uniform_noise") and ctx.attr("noise") not in ("", "uniform"):
        raise ValueError("The uniform_noise and noise should not be specified at the same time")
    size = ctx.static_value(1)
    dims = [None, None] if size is None else [int(d) if d >= 0 else None for d in size]
    return _ts.TensorShape([batch, *dims, images[3]])


ExtractGlimpse = define_op(
    "ExtractGlimpse", inputs=["input: float32", "size: int32", "offsets: float32"],
    outputs=["glimpse: float32"],
    attrs=[Attr("centered", "bool", True), Attr("normalized", "bool", True),
           Attr("uniform_noise", "bool", True), Attr("noise", "string", "uniform")],
    shape_fn=_glimpse_shape, not_differentiable=True,
    doc="A window of each image around an offset, noise where it leaves the image.")


def extract_glimpse(input, size, offsets, centered=True,  # noqa: A002 - TF's name
                    normalized=True, uniform_noise=True, name=None):
    """Extracts a window ("glimpse") of each image around a location (TF1's
    tf.image.extract_glimpse, the ExtractGlimpse op with its version-1 coordinates).

    An offset (y, x) is scaled by the image size when `normalized`, then (when `centered`)
    taken relative to the image centre as in [-1, 1]: halved and moved by half the image size;
    half the glimpse size is subtracted in every case and the result truncated to whole
    pixels: the glimpse's top-left corner. Glimpse pixels outside the image are noise,
    uniform between the image's minimum and maximum (TF1's op gets `noise="uniform"`, so
    `uniform_noise=False` draws uniform noise too, as in TensorFlow); the noise is not
    seeded, as in TensorFlow.

    Args:
      input: a float32 Tensor `[batch, height, width, channels]`.
      size: a 1-D int32 Tensor of 2 elements, the glimpse's height and width.
      offsets: a float32 Tensor `[batch, 2]` of (y, x) locations.
      centered: whether offsets are relative to the image centre.
      normalized: whether offsets are relative to the image size.
      uniform_noise: kept for compatibility (see above).
      name: the op name (default "ExtractGlimpse").

    Returns:
      A float32 Tensor `[batch, size[0], size[1], channels]`.

    Raises:
      ValueError: if the shapes are statically wrong or the batch sizes differ.
      InvalidArgumentError: (at run time) for the same reasons or a negative size.
    """
    attrs = {"centered": centered, "normalized": normalized, "uniform_noise": uniform_noise}
    return apply_op(ExtractGlimpse, [input, size, offsets], attrs, name=name)
