"""ExtractImagePatches: the sliding windows of a convolution, laid out in the depth dimension
(TF1's tf.extract_image_patches, tf.image.extract_image_patches, tf.image.extract_patches).

The gradient is TensorFlow's: the op is applied to an image of pixel numbers, which says which
input pixel each output entry copied (0 for padding), and an UnsortedSegmentSum adds the
gradient entries back onto those pixels. Window arithmetic is TensorFlow's
GetWindowedOutputSizeVerbose (kernel_shape_util.cc). The kernel lives in
`kernels/image_patches.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.static_value import static_value
from tensorweave.ops.nn_conv_ops import check_string_attr

__all__ = ["extract_image_patches"]

_OP = "ExtractImagePatches"
WINDOW_ATTRS = ("ksizes", "strides", "rates")
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


def window_attrs(attrs: dict) -> dict:
    """The ksizes/strides/rates lists (each of 4 entries) and the padding, checked."""
    out = {}
    for name in WINDOW_ATTRS:
        values = list(attrs[name])
        if len(values) < 4:
            raise ValueError(f"Attr '{name}' of '{_OP}' Op passed list of length {len(values)} "
                             f"less than minimum 4.")
        if len(values) != 4:
            what = "stride" if name == "strides" else name
            raise ValueError(f"{_OP} requires the {what} attribute to contain 4 values, but "
                             f"got: {len(values)}")
        out[name] = values
    out["padding"] = check_string_attr(_OP, "padding", attrs["padding"], PADDINGS)
    return out


def _patches_shape(ctx):
    """[batch, rows, cols, depth] -> [batch, out rows, out cols, ksize_r * ksize_c * depth]."""
    batch, rows, cols, depth = dims_with_rank(ctx.input_shape(0)._dims, 4)
    spec = window_attrs(ctx.attrs)
    (_, kr, kc, _), strides, rates = spec["ksizes"], spec["strides"], spec["rates"]
    if depth is not None and depth * kr * kc < 0:
        raise ValueError(f"Negative dimension size caused by overflow when multiplying {depth} "
                         f"and {kr * kc}")
    depth = None if depth is None else depth * kr * kc
    if rows is None or cols is None:
        return _ts.TensorShape([batch, None, None, depth])
    out_rows = window_size(rows, kr, strides[1], rates[1], spec["padding"])[0]
    out_cols = window_size(cols, kc, strides[2], rates[2], spec["padding"])[0]
    return _ts.TensorShape([batch, out_rows, out_cols, depth])


ExtractImagePatches = define_op(
    _OP, inputs=["images: T"], outputs=["patches: T"],
    attrs=[Attr("ksizes", "list(int)"), Attr("strides", "list(int)"),
           Attr("rates", "list(int)"),
           TypeAttr("T", _dtypes.REAL_NUMERIC | _dtypes.COMPLEX | {_dtypes.bool}),
           Attr("padding", "string")],
    shape_fn=_patches_shape)


@ExtractImagePatches.gradient
def _extract_image_patches_grad(op, grad):
    """Adds each patch entry's gradient onto the input pixel it copied (TF's construction)."""
    from tensorweave.ops.array_creation_ops import range as _range
    from tensorweave.ops.array_join_ops import unstack
    from tensorweave.ops.array_ops import reshape, shape, transpose
    from tensorweave.ops.math_segment_ops import unsorted_segment_sum
    from tensorweave.ops.math_unary_ops import cast
    batch, rows_in, cols_in, channels = unstack(shape(op.inputs[0], out_type=_dtypes.int64))
    rows_out, cols_out = unstack(shape(op.outputs[0], out_type=_dtypes.int64)[1:3])
    _, k_rows, k_cols, _ = op.get_attr("ksizes")
    # Pixel numbers from 1, so that padding (0) lands on segment -1, which is dropped.
    num_pixels = rows_in * cols_in
    pixel = reshape(_range(1, num_pixels + 1, dtype=_dtypes.float32), (1, rows_in, cols_in, 1))
    attrs = {name: op.get_attr(name) for name in (*WINDOW_ATTRS, "padding")}
    source = cast(apply_op(ExtractImagePatches, [pixel], attrs), _dtypes.int64)
    grad = transpose(reshape(grad, (batch, rows_out, cols_out, k_rows, k_cols, channels)),
                     (1, 2, 3, 4, 0, 5))
    summed = unsorted_segment_sum(reshape(grad, (-1, batch * channels)),
                                  reshape(source, [-1]) - 1, num_pixels)
    return [transpose(reshape(summed, (rows_in, cols_in, batch, channels)), (2, 0, 1, 3))]


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
