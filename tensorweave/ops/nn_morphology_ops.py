"""Grayscale morphology: Dilation2D with its two backprop ops, and TF1's `dilation2d` and
`erosion2d`.

output[b, y, x, c] = max over filter taps (i, j) of input[b, y * strides[1] + i * rates[1] -
pad_top, x * strides[2] + j * rates[2] - pad_left, c] + filter[i, j, c], over the taps inside
the input (SAME / VALID windows as convolutions, the filter dilated by `rates`). The gradient
goes, per output, to the input element and filter tap of the first maximum in scan order (TF's
CPU rule). TensorFlow registers no gradient for the two backprop ops, so neither does this
module (differentiating them raises LookupError). Erosion is dilation by duality:
-dilation2d(-value, reverse(kernel)). Kernels: `kernels/morphology.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_dim, shape_dims
from tensorweave.ops.array_tile_pad_ops import reverse_v2
from tensorweave.ops.math_unary_ops import negative
from tensorweave.ops.nn_conv_ops import window

__all__ = ["dilation2d", "erosion2d"]


def morphology_geometry(op_type: str, attrs: dict) -> tuple:
    """((stride_h, stride_w), (rate_h, rate_w), padding) of a Dilation2D-family node, and
    whether its strides / rates touch the batch or depth dimension.

    Raises:
      ValueError: TF's messages for short strides / rates lists or a bad padding.
    """
    for name in ("strides", "rates"):
        if len(attrs[name]) < 4:
            raise ValueError(f"Attr '{name}' of '{op_type}' Op passed list of length "
                             f"{len(attrs[name])} less than minimum 4.")
    padding = attrs["padding"]
    padding = padding.decode() if isinstance(padding, bytes) else padding
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"Attr 'padding' of '{op_type}' Op passed string '{padding}' not in: "
                         '"SAME", "VALID".')
    strides, rates = list(attrs["strides"]), list(attrs["rates"])
    return tuple(strides[1:3]), tuple(rates[1:3]), padding


def output_size(size, k, stride: int, rate: int, padding: str):
    """(output size, pad before) of one dimension; None where unknown.

    SAME as for convolutions; VALID is TF's (size - effective + stride) / stride, so a filter
    reaching up to stride - 1 past the input gives an empty output rather than an error.

    Raises:
      ValueError: if a known VALID output size would be negative.
    """
    if size is None or k is None:
        return None, None
    if padding == "SAME":
        out, before, _ = window(size, k, stride, rate, padding)
        return out, before
    effective = (k - 1) * rate + 1
    if size - effective + stride < 0:
        raise ValueError(f"Negative dimension size caused by subtracting {effective} from "
                         f"{size}")
    return (size - effective + stride) // stride, 0


def _dilation_shape(ctx):
    strides, rates, padding = morphology_geometry(ctx.op_type, ctx.attrs)
    batch, h, w, depth = shape_dims(ctx.input_shape(0), 4)
    kh, kw, k_depth = shape_dims(ctx.input_shape(1), 3)
    depth = merge_dim(depth, k_depth)
    oh, _ = output_size(h, kh, strides[0], rates[0], padding)
    ow, _ = output_size(w, kw, strides[1], rates[1], padding)
    return _ts.TensorShape([batch, oh, ow, depth])


def _like_input(i: int, rank: int):
    """Backprop ops are shaped like their input `i` (input: rank 4, filter: rank 3)."""
    def shape_fn(ctx):
        morphology_geometry(ctx.op_type, ctx.attrs)
        shape_dims(ctx.input_shape(0), 4)
        shape_dims(ctx.input_shape(1), 3)
        shape_dims(ctx.input_shape(2), 4)
        return _ts.TensorShape(shape_dims(ctx.input_shape(i), rank))
    return shape_fn


_ATTRS = [TypeAttr("T", _dtypes.REAL_NUMERIC), Attr("strides", "list(int)"),
          Attr("rates", "list(int)"), Attr("padding", "string")]

Dilation2D = define_op("Dilation2D", ["input: T", "filter: T"], ["output: T"], _ATTRS,
                       _dilation_shape)
Dilation2DBackpropInput = define_op(
    "Dilation2DBackpropInput", ["input: T", "filter: T", "out_backprop: T"],
    ["in_backprop: T"], _ATTRS, _like_input(0, 4))
Dilation2DBackpropFilter = define_op(
    "Dilation2DBackpropFilter", ["input: T", "filter: T", "out_backprop: T"],
    ["filter_backprop: T"], _ATTRS, _like_input(1, 3))


@Dilation2D.gradient
def _dilation2d_grad(op, grad):
    """Each output's gradient goes to the input element and filter tap of its maximum."""
    attrs = {k: op.get_attr(k) for k in ("strides", "rates", "padding")}
    inputs = [op.inputs[0], op.inputs[1], grad]
    return [apply_op(Dilation2DBackpropInput, inputs, attrs),
            apply_op(Dilation2DBackpropFilter, inputs, attrs)]


def dilation2d(input, filter=None, strides=None, rates=None, padding=None,  # noqa: A002
               name=None, filters=None, dilations=None):
    """Computes the grayscale dilation of a 4-D `input` by a 3-D `filter`.

    output[b, y, x, c] = max_{dy, dx} input[b, strides[1] * y + rates[1] * dy,
    strides[2] * x + rates[2] * dx, c] + filter[dy, dx, c] (over the taps inside the padded
    window that fall inside the input).

    Args:
      input: A 4-D NHWC Tensor of a real numeric type.
      filter: A 3-D Tensor of the same type, [filter_height, filter_width, depth].
      strides: A list of 4 ints (1 at batch and depth).
      rates: A list of 4 ints: the filter dilation (1 at batch and depth).
      padding: "SAME" or "VALID".
      name: A name for the operation (default "Dilation2D").
      filters: Alias for `filter`.
      dilations: Alias for `rates`.

    Returns:
      A 4-D Tensor of the input's type.

    Raises:
      ValueError: for malformed attrs or incompatible static shapes, or when both a name
        and its alias are given.
    """
    if filters is not None and filter is not None:
        raise ValueError("Cannot specify both 'filters' and 'filter'")
    if dilations is not None and rates is not None:
        raise ValueError("Cannot specify both 'dilations' and 'rates'")
    filter = filters if filters is not None else filter  # noqa: A001 - TF1's argument name
    rates = dilations if dilations is not None else rates
    return apply_op(Dilation2D, [input, filter],
                    {"strides": list(strides), "rates": list(rates), "padding": padding},
                    name=name)


def erosion2d(value, kernel, strides, rates, padding, name=None):
    """Computes the grayscale erosion of a 4-D `value` by a 3-D `kernel`.

    output[b, y, x, c] = min_{dy, dx} value[b, strides[1] * y - rates[1] * dy,
    strides[2] * x - rates[2] * dx, c] - kernel[dy, dx, c]: by duality,
    -dilation2d(-value, reverse(kernel, [0, 1])).

    Args:
      value: A 4-D NHWC Tensor of a real numeric type.
      kernel: A 3-D Tensor of the same type, [kernel_height, kernel_width, depth].
      strides: A list of 4 ints (1 at batch and depth).
      rates: A list of 4 ints (1 at batch and depth).
      padding: "SAME" or "VALID".
      name: A name for the operation (default "erosion2d").

    Returns:
      A 4-D Tensor of the value's type.

    Raises:
      ValueError: for malformed attrs or incompatible static shapes.
    """
    with name_scope(name, "erosion2d") as scope:
        dilated = apply_op(Dilation2D, [negative(value), reverse_v2(kernel, [0, 1])],
                           {"strides": list(strides), "rates": list(rates),
                            "padding": padding}, name=scope)
        return negative(dilated)
