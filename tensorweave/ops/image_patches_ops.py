"""ExtractImagePatches and ExtractVolumePatches: the sliding windows of a 2-D or 3-D
convolution, laid out in the depth dimension (TF1's tf.extract_image_patches,
tf.image.extract_patches, tf.extract_volume_patches).

The gradient is TensorFlow's construction: the op is applied to an input of pixel numbers,
which says which input pixel each output entry copied (0 for padding), and the gradient entries
are added back onto those pixels (an UnsortedSegmentSum; TensorFlow's volume gradient gets the
same sums from a sparse matrix product). Window arithmetic is TensorFlow's
GetWindowedOutputSizeVerbose (kernel_shape_util.cc). The kernels live in
`kernels/image_patches.py`.
"""
from __future__ import annotations

import math

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OP_REGISTRY, Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.static_value import static_value
from tensorweave.ops.nn_conv_ops import check_string_attr

__all__ = ["extract_image_patches", "extract_volume_patches"]

# Each op's window attrs; a volume's taps are never dilated (its rates are all 1).
WINDOW_ATTRS = {"ExtractImagePatches": ("ksizes", "strides", "rates"),
                "ExtractVolumePatches": ("ksizes", "strides")}
SPATIAL_RANK = {"ExtractImagePatches": 2, "ExtractVolumePatches": 3}
PADDINGS = ("SAME", "VALID")


def window_size(size: int, k: int, stride: int, rate: int, padding: str) -> tuple:
    """(output size, pad before, pad after) of one spatial dimension (TF's
    GetWindowedOutputSizeVerbose, C++ division truncating toward zero).

    Raises:
      ValueError: for a non-positive stride or a negative output size.
    """
    if stride <= 0:
        raise ValueError(f"Stride must be > 0, but got {stride}")
    effective = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        span = size - effective + stride
        out = span // stride if span >= 0 else -(-span // stride)  # truncated, as in C++
        before = after = 0
    else:
        out = (size + stride - 1) // stride
        needed = max(0, (out - 1) * stride + effective - size)
        before, after = needed // 2, needed - needed // 2
    if out < 0:
        raise ValueError(f"Computed output size would be negative: {out} [input_size: {size}, "
                         f"effective_filter_size: {effective}, stride: {stride}]")
    return out, before, after


def window_attrs(op_type: str, attrs: dict) -> dict:
    """The op's window attr lists (each of spatial rank + 2 entries, `rates` all ones where the
    op has none) and its padding, checked with TensorFlow's messages."""
    length = SPATIAL_RANK[op_type] + 2
    out = {"rates": [1] * length}
    for name in WINDOW_ATTRS[op_type]:
        values = list(attrs[name])
        if len(values) < length:
            raise ValueError(f"Attr '{name}' of '{op_type}' Op passed list of length "
                             f"{len(values)} less than minimum {length}.")
        if len(values) != length:
            what = "stride" if name == "strides" else name
            raise ValueError(f"{op_type} requires the {what} attribute to contain {length} "
                             f"values, but got: {len(values)}")
        out[name] = values
    out["padding"] = check_string_attr(op_type, "padding", attrs["padding"], PADDINGS)
    return out


def _patches_shape(ctx):
    """[batch, *spatial, depth] -> [batch, *out spatial, prod(ksizes) * depth]."""
    rank = SPATIAL_RANK[ctx.op_type]
    batch, *spatial, depth = dims_with_rank(ctx.input_shape(0)._dims, rank + 2)
    spec = window_attrs(ctx.op_type, ctx.attrs)
    ksize = spec["ksizes"][1:-1]
    taps = math.prod(ksize)
    if depth is not None and depth * taps < 0:
        raise ValueError(f"Negative dimension size caused by overflow when multiplying {depth} "
                         f"and {taps}")
    depth = None if depth is None else depth * taps
    if None in spatial:
        return _ts.TensorShape([batch, *[None] * rank, depth])
    out = [window_size(size, k, s, r, spec["padding"])[0] for size, k, s, r in
           zip(spatial, ksize, spec["strides"][1:-1], spec["rates"][1:-1])]
    return _ts.TensorShape([batch, *out, depth])


_REAL = _dtypes.REAL_NUMERIC
ExtractImagePatches = define_op(
    "ExtractImagePatches", inputs=["images: T"], outputs=["patches: T"],
    attrs=[Attr("ksizes", "list(int)"), Attr("strides", "list(int)"),
           Attr("rates", "list(int)"), TypeAttr("T", _REAL | _dtypes.COMPLEX | {_dtypes.bool}),
           Attr("padding", "string")],
    shape_fn=_patches_shape)

ExtractVolumePatches = define_op(
    "ExtractVolumePatches", inputs=["input: T"], outputs=["patches: T"],
    attrs=[Attr("ksizes", "list(int)"), Attr("strides", "list(int)"), TypeAttr("T", _REAL),
           Attr("padding", "string")],
    shape_fn=_patches_shape)

# The dtype of the pixel numbers each gradient patches: TensorFlow numbers an image's pixels in
# float32 (exact up to 2^24 pixels) and a volume's in int64.
_INDEX_DTYPE = {"ExtractImagePatches": _dtypes.float32, "ExtractVolumePatches": _dtypes.int64}


@ExtractImagePatches.gradient
@ExtractVolumePatches.gradient
def _extract_patches_grad(op, grad):
    """Adds each patch entry's gradient onto the input pixel it copied (TF's construction)."""
    from tensorweave.ops.array_creation_ops import range as _range
    from tensorweave.ops.array_join_ops import unstack
    from tensorweave.ops.array_ops import reshape, shape, transpose
    from tensorweave.ops.math_segment_ops import unsorted_segment_sum
    from tensorweave.ops.math_unary_ops import cast
    rank = SPATIAL_RANK[op.type]
    batch, *spatial_in, channels = unstack(shape(op.inputs[0], out_type=_dtypes.int64),
                                           num=rank + 2)
    spatial_out = unstack(shape(op.outputs[0], out_type=_dtypes.int64)[1:-1], num=rank)
    ksize = op.get_attr("ksizes")[1:-1]
    # Pixel numbers from 1, so that padding (0) lands on segment -1, which is dropped.
    num_pixels = math.prod(spatial_in)
    pixel = reshape(_range(1, num_pixels + 1, dtype=_INDEX_DTYPE[op.type]),
                    (1, *spatial_in, 1))
    attrs = {name: op.get_attr(name) for name in (*WINDOW_ATTRS[op.type], "padding")}
    source = cast(apply_op(OP_REGISTRY[op.type], [pixel], attrs), _dtypes.int64)
    # [batch, *out, *ksize, channels] -> [*out, *ksize, batch, channels]
    grad = transpose(reshape(grad, (batch, *spatial_out, *ksize, channels)),
                     (*range(1, 2 * rank + 1), 0, 2 * rank + 1))
    summed = unsorted_segment_sum(reshape(grad, (-1, batch * channels)),
                                  reshape(source, [-1]) - 1, num_pixels)
    # [*spatial, batch, channels] -> [batch, *spatial, channels]
    return [transpose(reshape(summed, (*spatial_in, batch, channels)),
                      (rank, *range(rank), rank + 1))]


def _int_list(values, name: str, arg: str) -> list:
    """An attr list of Python ints; constant Tensors in it are read (TF's _get_int_list_attr)."""
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"Expected list for '{arg}' argument to 'extract_image_patches' Op, "
                        f"not {values!r}.")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, Tensor):
            value = static_value(v)
            if value is None:
                raise TypeError(f"'{name}' must contain compile-time constant values when using "
                                f"XLA compilation (jit_compile=True), but element {i} is a "
                                f"dynamic tensor: {v}. Use Python integers or values that can "
                                f"be evaluated at graph construction time.")
            v = value
        out.append(int(v))
    return out


def extract_image_patches(images, ksizes=None, strides=None, rates=None, padding=None,
                          name=None, sizes=None):
    """Extracts the windows a convolution would see and stacks each in the depth dimension
    (TF1's tf.extract_image_patches / tf.image.extract_image_patches).

    Output entry [b, i, j, (r * ksize_cols + c) * depth + d] is input entry
    [b, i * stride_rows + r * rate_rows - pad_top, j * stride_cols + c * rate_cols - pad_left,
    d], zero where that falls in the padding.

    Args:
      images: a 4-D Tensor [batch, rows, cols, depth] of a real or complex dtype.
      ksizes: [1, ksize_rows, ksize_cols, 1], the window size (`sizes` is its newer name).
      strides: [1, stride_rows, stride_cols, 1], how far apart window origins are.
      rates: [1, rate_rows, rate_cols, 1], the spacing of the taps inside a window (dilation).
      padding: "VALID" (windows inside the image) or "SAME" (one window per stride step,
        zero-padded).
      name: the op name (default "ExtractImagePatches").
      sizes: the same as `ksizes`.

    Returns:
      A Tensor [batch, out_rows, out_cols, ksize_rows * ksize_cols * depth] of `images`' dtype.

    Raises:
      TypeError: if `ksizes`, `strides` or `rates` is not a list of ints.
      ValueError: for lists of the wrong length, an unknown padding, a rank other than 4 or a
        negative output size, statically.
    """
    if ksizes is not None and sizes is not None:
        raise ValueError("Cannot specify both 'ksizes' and 'sizes'.")
    attrs = {"ksizes": _int_list(sizes if ksizes is None else ksizes, "sizes", "ksizes"),
             "strides": _int_list(strides, "strides", "strides"),
             "rates": _int_list(rates, "rates", "rates"), "padding": padding}
    return apply_op(ExtractImagePatches, [images], attrs, name=name)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """TF's tf.image.extract_patches: `extract_image_patches` with the newer argument names.

    Not exported at the top level (TF has no tf.extract_patches); tf.image re-exports it.

    Args:
      images: a 4-D Tensor [batch, rows, cols, depth].
      sizes: [1, size_rows, size_cols, 1], the window size.
      strides: [1, stride_rows, stride_cols, 1].
      rates: [1, rate_rows, rate_cols, 1], the dilation of the taps.
      padding: "VALID" or "SAME".
      name: the op name (default "ExtractImagePatches").

    Returns:
      A Tensor [batch, out_rows, out_cols, size_rows * size_cols * depth].

    Raises:
      TypeError, ValueError: as `extract_image_patches`.
    """
    return extract_image_patches(images, sizes, strides, rates, padding, name)


def _listed_ints(values, arg: str) -> list:
    """An attr list of Python ints, refused with TF's TypeErrors (a Tensor is no int here)."""
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"Expected list for '{arg}' argument to 'extract_volume_patches' Op, "
                        f"not {values!r}.")
    for v in values:
        if isinstance(v, Tensor):
            raise TypeError(f"Expected int for argument '{arg}' not {v!r}.")
    return [int(v) for v in values]


def extract_volume_patches(input, ksizes, strides, padding, name=None):  # noqa: A002 - TF's
    """Extracts the windows a 3-D convolution would see and stacks each in the depth dimension
    (TF1's tf.extract_volume_patches).

    Output entry [b, i, j, k, ((p * ksize_rows + r) * ksize_cols + c) * depth + d] is input
    entry [b, i * stride_planes + p - pad_front, j * stride_rows + r - pad_top,
    k * stride_cols + c - pad_left, d], zero where that falls in the padding.

    Args:
      input: a 5-D Tensor [batch, planes, rows, cols, depth] of a real dtype.
      ksizes: [1, ksize_planes, ksize_rows, ksize_cols, 1], the window size.
      strides: [1, stride_planes, stride_rows, stride_cols, 1], how far apart window origins
        are.
      padding: "VALID" (windows inside the volume) or "SAME" (one window per stride step,
        zero-padded).
      name: the op name (default "ExtractVolumePatches").

    Returns:
      A Tensor [batch, out_planes, out_rows, out_cols, ksize_planes * ksize_rows * ksize_cols
      * depth] of `input`'s dtype.

    Raises:
      TypeError: if `ksizes` or `strides` is not a list of ints, or for a complex, bool or
        string `input`.
      ValueError: for lists of the wrong length, an unknown padding, a rank other than 5 or a
        negative output size, statically.
    """
    attrs = {"ksizes": _listed_ints(ksizes, "ksizes"),
             "strides": _listed_ints(strides, "strides"), "padding": padding}
    return apply_op(ExtractVolumePatches, [input], attrs, name=name)
