"""3-D convolution (Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2) and the transposed
convolution wrappers of every rank (conv1d_transpose, conv3d_transpose, conv_transpose,
atrous_conv2d_transpose).

The three ops are one family in the sense of `nn_conv_ops.register_family`: each one's gradient
is built from the other two, as TensorFlow registers them, so second derivatives work. Windows
follow `nn_conv_ops.window_spec` with rank 5 and only SAME / VALID padding (Conv3D has no
EXPLICIT). Layouts NDHWC and NCDHW are both computed (TensorFlow's default oneDNN CPU build
accepts NCDHW and dilations; its Eigen-only build rejects them). Kernels: `kernels/conv3d.py`.
"""
from __future__ import annotations

from collections.abc import Sized

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_dim, shape_dims
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import expand_dims, squeeze
from tensorweave.ops.nn_conv_ops import (
    Conv2DBackpropInput,
    assemble,
    conv2d_transpose,
    get_sequence,
    register_family,
    split_dims,
    window_spec,
)

__all__ = ["atrous_conv2d_transpose", "conv1d_transpose", "conv3d", "conv3d_backprop_filter",
           "conv3d_backprop_filter_v2", "conv3d_transpose", "conv_transpose"]

TensorShape = _ts.TensorShape
FORMATS = ("NDHWC", "NCDHW")
PADDINGS = ("SAME", "VALID")


def conv3d_spec(op_type: str, attrs: dict):
    """The validated WindowSpec of a Conv3D-family node (shared with the kernels).

    Raises:
      ValueError: TF's message for a short strides list (its OpDef's minimum length), else
        window_spec's.
    """
    if len(attrs["strides"]) < 5:
        raise ValueError(f"Attr 'strides' of '{op_type}' Op passed list of length "
                         f"{len(attrs['strides'])} less than minimum 5.")
    return window_spec(op_type, attrs, 5, FORMATS, PADDINGS)


# --- shape functions ----------------------------------------------------------------------------
def _check_depths(in_depth, filter_in, filter_out) -> None:
    """TF's grouped-convolution checks between the input's and the filter's depths."""
    if filter_in == 0:
        raise ValueError("Depth of filter must not be 0")
    if in_depth is None or filter_in is None:
        return
    if in_depth % filter_in:
        raise ValueError(f"Depth of input ({in_depth}) is not a multiple of input depth of "
                         f"filter ({filter_in})")
    groups = in_depth // filter_in
    if filter_out is not None and filter_out % groups:
        raise ValueError(f"Depth of output ({filter_out}) is not a multiple of the number of "
                         f"groups ({groups})")


def _conv3d_shape(ctx) -> TensorShape:
    """Output of Conv3D: spatial sizes from the windows, depth from the filter."""
    spec = conv3d_spec(ctx.op_type, ctx.attrs)
    batch, in_depth, spatial = split_dims(spec, shape_dims(ctx.input_shape(0), 5))
    *k_spatial, filter_in, filter_out = shape_dims(ctx.input_shape(1), 5)
    _check_depths(in_depth, filter_in, filter_out)
    out_spatial, _ = spec.output_dims(spatial, k_spatial)
    return assemble(spec, batch, filter_out, out_spatial)


def _sizes(ctx, i: int) -> list:
    """Input i, a 5-element sizes vector, as 5 possibly unknown dims."""
    sizes = ctx.input_shape(i)
    if sizes.ndims is not None and sizes.ndims != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {sizes.ndims}")
    return shape_dims(ctx.static_shape(i), 5)


def _backprop_input_shape(ctx) -> TensorShape:
    """Conv3DBackpropInputV2: the input's shape (input_sizes), checked against the others."""
    spec = conv3d_spec(ctx.op_type, ctx.attrs)
    batch, depth, spatial = split_dims(spec, _sizes(ctx, 0))
    filter_dims = shape_dims(ctx.input_shape(1), 5)
    g_batch, g_depth, _ = split_dims(spec, shape_dims(ctx.input_shape(2), 5))
    merge_dim(g_depth, filter_dims[4])
    return assemble(spec, merge_dim(batch, g_batch), depth, spatial)


def _backprop_filter_shape(ctx) -> TensorShape:
    """Conv3DBackpropFilterV2: the filter's shape (filter_sizes)."""
    conv3d_spec(ctx.op_type, ctx.attrs)
    shape_dims(ctx.input_shape(0), 5)
    shape_dims(ctx.input_shape(2), 5)
    return TensorShape(_sizes(ctx, 1))


_ATTRS = [Attr("strides", "list(int)", minimum=5), Attr("padding", "string"),
          Attr("data_format", "string", "NDHWC"),
          Attr("dilations", "list(int)", [1, 1, 1, 1, 1])]
_T = TypeAttr("T", _dtypes.FLOATING)

Conv3D = define_op("Conv3D", ["input: T", "filter: T"], ["output: T"], [_T, *_ATTRS],
                   _conv3d_shape)
Conv3DBackpropInputV2 = define_op(
    "Conv3DBackpropInputV2", ["input_sizes: Tshape", "filter: T", "out_backprop: T"],
    ["output: T"], [_T, *_ATTRS, TypeAttr("Tshape", {_dtypes.int32, _dtypes.int64},
                                          _dtypes.int32)], _backprop_input_shape)
Conv3DBackpropFilterV2 = define_op(
    "Conv3DBackpropFilterV2", ["input: T", "filter_sizes: int32", "out_backprop: T"],
    ["output: T"], [_T, *_ATTRS], _backprop_filter_shape)
register_family(Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2)


# --- wrappers -----------------------------------------------------------------------------------
def _attrs(strides, padding, data_format, dilations) -> dict:
    return {"strides": strides, "padding": padding, "data_format": data_format,
            "dilations": dilations}


def _pick(new, old, new_name, old_name):
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new if new is not None else old


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002
           dilations=(1, 1, 1, 1, 1), name=None, filters=None):
    """Computes a 3-D convolution given 5-D `input` and `filter` tensors.

    For NDHWC, output[b, i, j, k, o] = sum_{di, dj, dk, q} input[b, strides[1] * i +
    dilations[1] * di, strides[2] * j + dilations[2] * dj, strides[3] * k + dilations[3] * dk,
    q] * filter[di, dj, dk, q, o] (after padding the input).

    Args:
      input: A Tensor of type float16, bfloat16, float32 or float64, shaped [batch, in_depth,
        in_height, in_width, in_channels] (NDHWC) or [batch, in_channels, in_depth, in_height,
        in_width] (NCDHW).
      filter: A Tensor of the same type, shaped [filter_depth, filter_height, filter_width,
        in_channels, out_channels].
      strides: A list of 5 ints (1 at batch and channels).
      padding: "SAME" or "VALID".
      data_format: "NDHWC" (default) or "NCDHW".
      dilations: A list of 5 ints: the filter dilation per dimension.
      name: A name for the operation (default "Conv3D").
      filters: Alias for `filter`.

    Returns:
      A Tensor of the input's type.

    Raises:
      ValueError: for malformed attrs or incompatible static shapes.
      TypeError: for an unsupported dtype.
    """
    filter = _pick(filters, filter, "filters", "filter")  # noqa: A001 - TF1's argument name
    return apply_op(Conv3D, [input, filter],
                    _attrs(list(strides), padding, data_format, list(dilations)), name=name)


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides,  # noqa: A002
                              padding, data_format="NDHWC", dilations=(1, 1, 1, 1, 1),
                              name=None):
    """Computes the gradient of conv3d with respect to its filter.

    Args:
      input: The convolution's 5-D input.
      filter_sizes: An int32 Tensor of 5 elements: the filter's shape.
      out_backprop: The gradient of the convolution's output (5-D).
      strides, padding, data_format, dilations: As for `conv3d`.
      name: A name for the operation (default "Conv3DBackpropFilterV2").

    Returns:
      A Tensor shaped `filter_sizes`.

    Raises:
      ValueError: for malformed attrs or incompatible static shapes.
    """
    return apply_op(Conv3DBackpropFilterV2, [input, filter_sizes, out_backprop],
                    _attrs(list(strides), padding, data_format, list(dilations)), name=name)


conv3d_backprop_filter = conv3d_backprop_filter_v2


def _transpose3d(input, filters, output_shape, strides, padding, data_format,  # noqa: A002
                 dilations, name):
    """TF's conv3d_transpose_v2: Conv3DBackpropInputV2 with expanded strides/dilations."""
    with name_scope(name, "conv3d_transpose") as scope:
        fmt = data_format or "NDHWC"
        ci = 1 if fmt.startswith("NC") else 4
        return apply_op(Conv3DBackpropInputV2, [output_shape, filters, input],
                        _attrs(get_sequence(strides, 3, ci, "strides"), padding, fmt,
                               get_sequence(dilations, 3, ci, "dilations")), name=scope)


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NDHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The transpose of conv3d (sometimes called deconvolution): conv3d's input gradient.

    Args:
      value: A 5-D Tensor [batch, depth, height, width, in_channels] (NDHWC) or NCDHW.
      filter: A 5-D Tensor [depth, height, width, output_channels, in_channels].
      output_shape: A 1-D int32 or int64 Tensor (or list) of 5 ints: the result's shape.
      strides: An int or a list of 1, 3 or 5 ints.
      padding: "SAME" or "VALID".
      data_format: "NDHWC" (default) or "NCDHW".
      name: A name for the operation (default "conv3d_transpose").
      input: Alias for `value`.
      filters: Alias for `filter`.
      dilations: An int or a list of 1, 3 or 5 ints.

    Returns:
      A Tensor shaped `output_shape` (a `Conv3DBackpropInputV2` op).

    Raises:
      ValueError: for malformed attrs or incompatible static shapes.
    """
    value = _pick(input, value, "input", "value")
    filter = _pick(filters, filter, "filters", "filter")  # noqa: A001 - TF1's argument name
    return _transpose3d(value, filter, output_shape, strides, padding, data_format, dilations,
                        name)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NWC", dilations=None, name=None):
    """The transpose of conv1d: a Conv2DBackpropInput over an inserted height of size 1.

    Args:
      input: A 3-D Tensor [batch, in_width, in_channels] (NWC) or NCW.
      filters: A 3-D Tensor [filter_width, output_channels, in_channels].
      output_shape: A 1-D Tensor (or list) of 3 ints: the result's shape.
      strides: An int or a list of 1 or 3 ints.
      padding: "SAME" or "VALID".
      data_format: "NWC" (default) or "NCW".
      dilations: An int or a list of 1 or 3 ints.
      name: A name for the operation (default "conv1d_transpose").

    Returns:
      A 3-D Tensor shaped `output_shape`.

    Raises:
      ValueError: if `data_format` is neither "NWC" nor "NCW".
    """
    with name_scope(name, "conv1d_transpose") as scope:
        if data_format is None or data_format == "NWC":
            fmt, axis, ci = "NHWC", 1, 2
        elif data_format == "NCW":
            fmt, axis, ci = "NCHW", 2, 1
        else:
            raise ValueError("`data_format` must be 'NWC' or 'NCW'. Received: "
                             f"data_format={data_format}")
        strides = [1] + get_sequence(strides, 1, ci, "stride")
        dilations = [1] + get_sequence(dilations, 1, ci, "dilations")
        output_shape = convert_to_tensor(output_shape)
        sizes = concat([output_shape[:axis], [1], output_shape[axis:]], 0)
        result = apply_op(Conv2DBackpropInput,
                          [sizes, expand_dims(filters, 0), expand_dims(input, axis)],
                          {"strides": strides, "padding": padding, "data_format": fmt,
                           "dilations": dilations}, name=scope)
        return squeeze(result, axis)


def conv_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                   data_format=None, dilations=None, name=None):
    """The transpose of `convolution`: conv1d/2d/3d_transpose by the length of output_shape.

    Args:
      input: An N+2 rank Tensor.
      filters: An N+2 rank Tensor [spatial..., output_channels, in_channels].
      output_shape: A 1-D Tensor or sized sequence of N+2 ints (N = 1, 2 or 3).
      strides: An int or a list of 1, N or N+2 ints.
      padding: "SAME" or "VALID".
      data_format: A string, or None for channels last.
      dilations: An int or a list of 1, N or N+2 ints.
      name: A name for the operation (default "conv_transpose").

    Returns:
      A Tensor shaped `output_shape`.

    Raises:
      ValueError: if `output_shape` is not of length 3, 4 or 5.
    """
    with name_scope(name, "conv_transpose") as scope:
        if hasattr(output_shape, "op"):
            n = _ts.dimension_value(output_shape.shape[0]) - 2
        elif isinstance(output_shape, Sized):
            n = len(output_shape) - 2
        else:
            raise ValueError("`output_shape` must be a tensor or sized collection")
        if not 1 <= n <= 3:
            raise ValueError(f"`output_shape` must be of length 3, 4 or 5. Received: "
                             f"output_shape={output_shape} of length {n + 2}.")
        if n == 1:
            return conv1d_transpose(input, filters, output_shape, strides, padding,
                                    data_format or "NWC", dilations, name=scope)
        if n == 2:
            return conv2d_transpose(input, filters, output_shape, strides, padding,
                                    data_format or "NHWC", name=scope, dilations=dilations)
        return _transpose3d(input, filters, output_shape, strides, padding, data_format,
                            dilations, scope)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of atrous_conv2d: conv2d_transpose with the filter taps `rate` apart.

    TensorFlow builds SpaceToBatch / Conv2DBackpropInput / BatchToSpace for rate > 1; this is
    one Conv2DBackpropInput with `dilations` [1, rate, rate, 1]: the same values.

    Args:
      value: A 4-D NHWC Tensor.
      filters: [height, width, out_channels, in_channels].
      output_shape: A 1-D Tensor (or list) of 4 ints: the result's shape.
      rate: A positive int: the dilation in both spatial dimensions.
      padding: "SAME" or "VALID".
      name: A name for the operation (default "atrous_conv2d_transpose").

    Returns:
      A 4-D Tensor shaped `output_shape`.

    Raises:
      ValueError: for incompatible channel counts, `rate` < 1, a bad `output_shape` or
        `padding`.
    """
    with name_scope(name, "atrous_conv2d_transpose") as scope:
        value = convert_to_tensor(value, name="value")
        filters = convert_to_tensor(filters, name="filters")
        v_dims = shape_dims(value.shape, 4)
        f_dims = shape_dims(filters.shape, 4)
        if None not in (v_dims[3], f_dims[3]) and v_dims[3] != f_dims[3]:
            raise ValueError("`value` channel count must be compatible with `filters` input "
                             f"channel count. Received: value.shape={value.shape} with "
                             f"channel count {v_dims[3]} and filters.shape={filters.shape} "
                             f"with input channel count {f_dims[3]}.")
        if rate < 1:
            raise ValueError(f"`rate` cannot be less than one. Received: rate={rate}")
        if padding not in PADDINGS:
            raise ValueError("`padding` must be either 'VALID' or 'SAME'. Received: "
                             f"padding={padding}")
        if rate == 1:
            return conv2d_transpose(value, filters, output_shape, [1, 1, 1, 1], padding,
                                    "NHWC")
        sizes = convert_to_tensor(output_shape, name="output_shape")
        if not sizes.shape.is_compatible_with(TensorShape([4])):
            raise ValueError(f"`output_shape` must have shape (4,). Received: "
                             f"output_shape={sizes.shape}")
        return apply_op(Conv2DBackpropInput, [sizes, filters, value],
                        {"strides": [1, 1, 1, 1], "padding": padding, "data_format": "NHWC",
                         "dilations": [1, rate, rate, 1]}, name=scope)
