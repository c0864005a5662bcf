"""Colour ops RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustSaturation, AdjustHue, and
`tf.random_crop`.

The colour-space ops work on any tensor whose last dimension is 3; the adjust ops on images of
rank >= 3 (`[..., height, width, channels]`). TensorFlow registers a gradient for RGBToHSV only
(the piecewise derivative of max/min/ratio, `_rgb_to_hsv_grad` below) and declares HSVToRGB not
differentiable; the adjust ops have no gradient (a LookupError, as in TF). The public wrappers
of the adjust ops (`tf.image.adjust_hue`, ...) convert dtypes around these ops and live in
`tensorweave/image/color.py`. Kernels: `kernels/image.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["random_crop"]

_d = _dtypes
_COLOR_TYPES = (_d.float16, _d.bfloat16, _d.float32, _d.float64)


def rank_at_least(shape, rank: int):
    """`shape` checked to have at least `rank` dimensions when its rank is known (TF's
    WithRankAtLeast message)."""
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def check_choice(op_type: str, attr: str, value: str, allowed) -> str:
    """A string attr checked against its allowed values, with TF's ValueError."""
    if value not in allowed:
        options = ", ".join(f'"{a}"' for a in allowed)
        raise ValueError(f"Attr '{attr}' of '{op_type}' Op passed string '{value}' not in: "
                         f"{options}.")
    return value


def _colorspace_shape(ctx):
    """Rank >= 1 with a last dimension of 3 (when known)."""
    shape = rank_at_least(ctx.input_shape(0), 1)
    if shape.ndims is None:
        return shape
    last = shape.as_list()[-1]
    if last is not None and last != 3:
        raise ValueError(f"Dimension must be 3 but is {last}")
    return _ts.TensorShape(shape.as_list()[:-1] + [3])


def _colorspace_op(name, **kwargs):
    return define_op(name, inputs=["images: T"], outputs=["output: T"],
                     attrs=[TypeAttr("T", _COLOR_TYPES, _d.float32)],
                     shape_fn=_colorspace_shape, **kwargs)


RGBToHSV = _colorspace_op("RGBToHSV")
HSVToRGB = _colorspace_op("HSVToRGB", not_differentiable=True)


def _adjust_shape(ctx, factor_rank=None):
    """The image's shape (rank >= 3); AdjustContrastv2 also wants a scalar factor statically."""
    shape = rank_at_least(ctx.input_shape(0), 3)
    if factor_rank is not None:
        dims_with_rank(ctx.input_shape(1)._dims, factor_rank)
    return shape


def _adjust_op(name, factor, shape_fn=_adjust_shape):
    return define_op(name, inputs=["images: T", f"{factor}: float32"], outputs=["output: T"],
                     attrs=[TypeAttr("T", (_d.float16, _d.float32), _d.float32)],
                     shape_fn=shape_fn)


# Each channel of each image: (x - mean) * contrast_factor + mean.
AdjustContrastv2 = _adjust_op("AdjustContrastv2", "contrast_factor",
                              shape_fn=lambda ctx: _adjust_shape(ctx, factor_rank=0))
# RGB -> HSV, saturation * scale clipped to [0, 1], -> RGB.
AdjustSaturation = _adjust_op("AdjustSaturation", "scale")
# RGB -> hue and value range, hue + delta (wrapped into [0, 1)), -> RGB.
AdjustHue = _adjust_op("AdjustHue", "delta")


def rgb_to_hsv(images, name=None):
    """Converts RGB images to HSV (TF1's tf.image.rgb_to_hsv).

    Hue, saturation and value are all in [0, 1] for inputs in [0, 1]: hue 0 is red, 1/3 green,
    2/3 blue.

    Args:
      images: a float16/bfloat16/float32/float64 Tensor whose last dimension is 3.
      name: the op name (default "RGBToHSV").

    Returns:
      A Tensor of the same shape and dtype holding [hue, saturation, value].

    Raises:
      ValueError: if the last dimension is statically not 3 or the rank is 0.
      FailedPreconditionError: (at run time) if the last dimension is not 3.
    """
    return apply_op(RGBToHSV, [images], name=name)


def hsv_to_rgb(images, name=None):
    """Converts HSV images to RGB (TF1's tf.image.hsv_to_rgb); the inverse of `rgb_to_hsv`.

    Args:
      images: a float16/bfloat16/float32/float64 Tensor whose last dimension is 3, holding
        [hue, saturation, value] in [0, 1].
      name: the op name (default "HSVToRGB").

    Returns:
      A Tensor of the same shape and dtype holding [red, green, blue].

    Raises:
      ValueError: if the last dimension is statically not 3 or the rank is 0.
      FailedPreconditionError: (at run time) if the last dimension is not 3.
    """
    return apply_op(HSVToRGB, [images], name=name)


@RGBToHSV.gradient
def _rgb_to_hsv_grad(op, grad):
    """TensorFlow's piecewise derivative of hue, saturation and value with respect to r, g, b:
    v = max, s = (max - min) / max, h from (mid - min) / (max - min) per sextant; ties resolve
    as r > g > b, and divisions by zero give 0 (div_no_nan)."""
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.math_ops import add, cast, div_no_nan, square
    rgb, hsv = op.inputs[0], op.outputs[0]
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    s, v = hsv[..., 1], hsv[..., 2]
    dtype = rgb.dtype

    def mask(condition):
        return cast(condition, dtype)

    def inv(x):
        return div_no_nan(cast(1.0, dtype), x)

    r_max, g_max, b_max = mask((r >= b) & (r >= g)), mask((g > r) & (g >= b)), \
        mask((b > r) & (b > g))
    r_min, g_min, b_min = mask((r < b) & (r < g)), mask((g <= r) & (g < b)), \
        mask((b <= r) & (b <= g))
    r_pos, g_pos, b_pos = mask(r > 0), mask(g > 0), mask(b > 0)
    # d(max - min)/max: the maximum contributes min / max^2, the minimum -1 / max.
    ds_dr = r_pos * (r_max * (g_min * g + b_min * b) * inv(square(r))
                     + r_min * -1 * inv(g_max * g + b_max * b))
    ds_dg = g_pos * (g_max * (r_min * r + b_min * b) * inv(square(g))
                     + g_min * -1 * inv(r_max * r + b_max * b))
    ds_db = b_pos * (b_max * (g_min * g + r_min * r) * inv(square(b))
                     + b_min * -1 * inv(g_max * g + r_max * r))
    # d(hue)/dc: one term per sextant the channel can take part in (as max, as min of the
    # sextant of another max, or as its middle), in TF's order; degrees / 360.
    dh_dr = (60 * (r_pos * r_max * -1 * (g - b) * inv(square(s)) * inv(square(v)))
             + 60 * (g_pos * g_max * r_min * (b - g) * inv(square(r - g)))
             + 60 * (g_pos * g_max * b_min * -1 * inv(g - b))
             + 60 * (b_pos * b_max * r_min * (b - g) * inv(square(b - r)))
             + 60 * (b_pos * b_max * g_min * inv(b - g))) / 360
    dh_dg = (60 * (g_pos * g_max * -1 * (b - r) * inv(square(s)) * inv(square(v)))
             + 60 * (r_pos * r_max * g_min * (r - b) * inv(square(r - g)))
             + 60 * (r_pos * r_max * b_min * inv(r - b))
             + 60 * (b_pos * b_max * g_min * (r - b) * inv(square(b - g)))
             + 60 * (b_pos * b_max * r_min * -1 * inv(b - r))) / 360
    dh_db = (60 * (b_pos * b_max * -1 * (r - g) * inv(square(s)) * inv(square(v)))
             + 60 * (r_pos * r_max * b_min * (g - r) * inv(square(r - b)))
             + 60 * (r_pos * r_max * g_min * -1 * inv(r - g))
             + 60 * (g_pos * g_max * b_min * (g - r) * inv(square(g - b)))
             + 60 * (g_pos * g_max * r_min * inv(g - r))) / 360
    g_h, g_s, g_v = grad[..., 0], grad[..., 1], grad[..., 2]
    return [add(add(stack([g_v * r_max, g_v * g_max, g_v * b_max], axis=-1),
                    stack([g_s * ds_dr, g_s * ds_dg, g_s * ds_db], axis=-1)),
                stack([g_h * dh_dr, g_h * dh_dg, g_h * dh_db], axis=-1))]


def random_crop(value, size, seed=None, name=None):
    """Randomly crops a tensor to `size` (TF1's tf.random_crop / tf.image.random_crop).

    Every offset that keeps the crop inside `value` is equally likely (per dimension, a
    uniform int32 modulo the number of positions, as TensorFlow draws it). A dimension kept
    whole has `size[i] = value.shape[i]`.

    Args:
      value: the Tensor to crop.
      size: a 1-D int32 Tensor with one entry per dimension of `value`.
      seed: the op-level random seed (see `tf.set_random_seed`).
      name: a name scope for the ops (default "random_crop"; the Slice is named after it).

    Returns:
      A cropped Tensor of `value`'s dtype and shape `size`.

    Raises:
      InvalidArgumentError: (at run time) if `value.shape < size` in some dimension.
    """
    from tensorweave.ops.array_ops import shape as shape_of
    from tensorweave.ops.array_slicing_ops import slice as slice_
    from tensorweave.ops.control_flow_ops import with_dependencies
    from tensorweave.ops.logging_ops import Assert
    from tensorweave.ops.random_ops import random_uniform
    from tensorweave.ops.reduction_ops import reduce_all
    with name_scope(name, "random_crop", [value, size]) as name:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=_d.int32, name="size")
        shape = shape_of(value)
        check = Assert(reduce_all(shape >= size),
                       ["Need value.shape >= size, got ", shape, size], summarize=1000)
        shape = with_dependencies([check], shape)
        limit = shape - size + 1
        offset = random_uniform(shape_of(shape), dtype=size.dtype, maxval=size.dtype.max,
                                seed=seed) % limit
        return slice_(value, offset, size, name=name)
