"""Convolutions: Conv2D and DepthwiseConv2dNative with their backprop ops, and the TF1 wrappers
(conv2d, conv2d_transpose, conv1d, depthwise_conv2d, separable_conv2d, ...).

The six ops are two rows of one table: a forward op `input, filter -> output` and its two
backprop ops, `Conv2DBackpropInput(input_sizes, filter, out_backprop)` and
`Conv2DBackpropFilter(input, filter_sizes, out_backprop)`. Each backprop op is itself
differentiable (it is linear in its two tensor inputs, and the gradient of one member of the
trio is built from the other two), so second derivatives work. Windows follow TensorFlow:
SAME gives ceil(in / stride) outputs with the padding split low-side-first, VALID
(in - effective_filter) // stride + 1, EXPLICIT the given (before, after) pairs; a dilated
filter covers (k - 1) * dilation + 1 inputs. `WindowSpec` and `window` are shared with the
pooling ops and the kernels (`kernels/conv.py`), so shape functions and kernels agree.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_dim, shape_dims
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import expand_dims, shape, shape_n, squeeze

__all__ = [
    "atrous_conv2d", "conv1d", "conv2d", "conv2d_backprop_filter", "conv2d_backprop_input",
    "conv2d_transpose", "convolution",
    "depthwise_conv2d", "depthwise_conv2d_native", "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input", "separable_conv2d",
]

TensorShape = _ts.TensorShape


# --- window geometry (shared with pooling and the kernels) -------------------------------------
def check_string_attr(op_type: str, name: str, value, allowed) -> str:
    """`value` if it is one of `allowed`, else TF's ValueError for a bad string attr."""
    if isinstance(value, bytes):
        value = value.decode()
    if value not in allowed:
        choices = ", ".join(f'"{a}"' for a in allowed)
        raise ValueError(f"Attr '{name}' of '{op_type}' Op passed string '{value}' not in: "
                         f"{choices}.")
    return value


@dataclass(frozen=True)
class WindowSpec:
    """The sliding-window attrs of one conv or pool node, validated and split per dimension.

    `strides`, `dilations`, `ksize` and `pads` ((before, after) pairs) hold the spatial
    dimensions only, in order; `channels_first` says whether the layout is N C spatial...
    """

    rank: int
    channels_first: bool
    strides: tuple
    dilations: tuple
    padding: str
    pads: tuple
    ksize: tuple = ()
    outer_strides: tuple = (1, 1)   # batch and channel entries of the strides attr
    outer_ksize: tuple = (1, 1)

    @property
    def spatial_axes(self) -> tuple:
        first = 2 if self.channels_first else 1
        return tuple(range(first, first + self.rank - 2))

    @property
    def channel_axis(self) -> int:
        return 1 if self.channels_first else self.rank - 1

    def output_dims(self, in_dims, kernel_dims):
        """Output spatial sizes and (before, after) pads for the given spatial sizes (None where
        unknown). ValueError when a known output would be negative."""
        out, pads = [], []
        for i, (size, k) in enumerate(zip(in_dims, kernel_dims)):
            o, before, after = window(size, k, self.strides[i], self.dilations[i], self.padding,
                                      self.pads[i] if self.pads else (0, 0))
            out.append(o)
            pads.append((before, after))
        return out, pads


def _outer(values, channels_first: bool):
    """(batch, channel) entries and spatial entries of an N-entry attr list."""
    if channels_first:
        return (values[0], values[1]), tuple(values[2:])
    return (values[0], values[-1]), tuple(values[1:-1])


def window_spec(op_type: str, attrs: dict, rank: int = 4, formats=("NHWC", "NCHW"),
                paddings=("SAME", "VALID", "EXPLICIT"), ksize: bool = False) -> WindowSpec:
    """Validates the strides/dilations/ksize/padding/data_format attrs of a window op.

    Raises:
      ValueError: with TensorFlow's message for a malformed attr.
    """
    fmt = check_string_attr(op_type, "data_format", attrs.get("data_format", formats[0]),
                            formats)
    padding = check_string_attr(op_type, "padding", attrs["padding"], paddings)
    channels_first = fmt.startswith("NC")
    strides = list(attrs["strides"])
    if len(strides) != rank:
        raise ValueError(f"{op_type} requires the stride attribute to contain {rank} values, "
                         f"but got: {len(strides)}")
    dilations = list(attrs.get("dilations") or [1] * rank)
    if len(dilations) != rank:
        raise ValueError(f"{op_type} requires the dilation attribute to contain {rank} values, "
                         f"but got: {len(dilations)}")
    if any(s <= 0 for s in strides) or any(d <= 0 for d in dilations):
        raise ValueError(f"{op_type}: strides and dilations must be positive, got strides "
                         f"{strides} and dilations {dilations}")
    kernel, outer_k = (), (1, 1)
    if ksize:
        sizes = list(attrs["ksize"])
        if len(sizes) != rank:
            raise ValueError(f"{op_type} requires the ksize attribute to contain {rank} values, "
                             f"but got: {len(sizes)}")
        if any(k <= 0 for k in sizes):
            raise ValueError(f"Sliding window ksize for dimension must be positive: {sizes}")
        outer_k, kernel = _outer(sizes, channels_first)
    pads = ()
    if padding == "EXPLICIT":
        flat = list(attrs.get("explicit_paddings") or [])
        if len(flat) != 2 * rank:
            raise ValueError(f"explicit_paddings attribute must contain {2 * rank} values, "
                             f"but got: {len(flat)}")
        pairs = [tuple(flat[2 * i:2 * i + 2]) for i in range(rank)]
        if any(p < 0 for p in flat):
            raise ValueError(f"All elements of explicit_paddings must be nonnegative, got {flat}")
        outer_p, pads = _outer(pairs, channels_first)
        if any(p != (0, 0) for p in outer_p):
            raise ValueError("Nonzero explicit padding in the batch or depth dimensions is not "
                             "supported")
    elif attrs.get("explicit_paddings"):
        raise ValueError("explicit_paddings attribute must be empty if the padding attribute "
                         f"is not EXPLICIT, but got padding {padding}")
    outer_s, spatial_s = _outer(strides, channels_first)
    _, spatial_d = _outer(dilations, channels_first)
    return WindowSpec(rank, channels_first, spatial_s, spatial_d, padding, pads, kernel,
                      outer_s, outer_k)


def window(size, k, stride: int, dilation: int, padding: str, pads=(0, 0)):
    """(output size, pad before, pad after) of one windowed dimension; None where unknown.

    Raises:
      ValueError: if a known output size would be negative.
    """
    if size is None or k is None:
        return None, None, None
    effective = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + effective - size, 0)
        return out, total // 2, total - total // 2
    before, after = pads if padding == "EXPLICIT" else (0, 0)
    span = size + before + after - effective
    if span < 0:
        if padding == "VALID":
            raise ValueError(f"Negative dimension size caused by subtracting {effective} from "
                             f"{size}")
        raise ValueError(f"Computed output size would be negative: {span // stride + 1} "
                         f"[input_size: {size}, effective_filter_size: {effective}, stride: "
                         f"{stride}]")
    return span // stride + 1, before, after


def assemble(spec: WindowSpec, batch, channels, spatial) -> TensorShape:
    """A 4-D (or 5-D) shape from its parts in the spec's layout."""
    if spec.channels_first:
        return TensorShape([batch, channels, *spatial])
    return TensorShape([batch, *spatial, channels])


def split_dims(spec: WindowSpec, dims):
    """(batch, channels, spatial list) of a full dims list in the spec's layout."""
    c = spec.channel_axis
    return dims[0], dims[c], [dims[a] for a in spec.spatial_axes]


# --- shape functions ----------------------------------------------------------------------------
def _conv_shape(ctx) -> TensorShape:
    """Output shape of Conv2D / DepthwiseConv2dNative from input and filter shapes."""
    spec = window_spec(ctx.op_type, ctx.attrs)
    batch, in_depth, spatial = split_dims(spec, shape_dims(ctx.input_shape(0), 4))
    kh, kw, filter_in, filter_out = shape_dims(ctx.input_shape(1), 4)
    if ctx.op_type.startswith("Depthwise"):
        in_depth = merge_dim(in_depth, filter_in)
        out_depth = None if in_depth is None or filter_out is None else in_depth * filter_out
    else:
        if in_depth is not None and filter_in is not None and (
                filter_in == 0 or in_depth % filter_in):
            raise ValueError(f"Depth of input ({in_depth}) is not a multiple of input depth of "
                             f"filter ({filter_in})")
        out_depth = filter_out
    out_spatial, _ = spec.output_dims(spatial, (kh, kw))
    return assemble(spec, batch, out_depth, out_spatial)


def _sizes_shape(ctx, i: int) -> TensorShape:
    """Input i, a 4-element sizes vector (input_sizes / filter_sizes), as a partial shape."""
    sizes = ctx.input_shape(i)
    if sizes.ndims is not None and (sizes.ndims != 1 or sizes._dims[0] not in (None, 4)):
        raise ValueError(f"Shape must be rank 1 with 4 elements but is {sizes}")
    return ctx.static_shape(i)


def _backprop_input_shape(ctx):
    """The input's shape, from input_sizes; checked against filter and out_backprop."""
    spec = window_spec(ctx.op_type, ctx.attrs)
    dims = shape_dims(_sizes_shape(ctx, 0), 4)
    filter_dims = shape_dims(ctx.input_shape(1), 4)
    grad = shape_dims(ctx.input_shape(2), 4)
    batch, depth, spatial = split_dims(spec, dims)
    g_batch, g_depth, _ = split_dims(spec, grad)
    batch = merge_dim(batch, g_batch)
    out_channels = filter_dims[3]
    if ctx.op_type.startswith("Depthwise"):   # filter [h, w, in, multiplier]
        out_channels = None if None in filter_dims[2:] else filter_dims[2] * filter_dims[3]
    merge_dim(g_depth, out_channels)
    if depth is None:
        depth = filter_dims[2]
    return assemble(spec, batch, depth, spatial)


def _backprop_filter_shape(ctx):
    """The filter's shape, from filter_sizes; checked against input and out_backprop."""
    window_spec(ctx.op_type, ctx.attrs)
    dims = shape_dims(_sizes_shape(ctx, 1), 4)
    shape_dims(ctx.input_shape(0), 4)
    shape_dims(ctx.input_shape(2), 4)
    return TensorShape(dims)


_CONV_ATTRS = [
    Attr("strides", "list(int)"),
    Attr("padding", "string"),
    Attr("explicit_paddings", "list(int)", []),
    Attr("data_format", "string", "NHWC"),
    Attr("dilations", "list(int)", [1, 1, 1, 1]),
]
_CUDNN = Attr("use_cudnn_on_gpu", "bool", True)
_FLOAT = _dtypes.FLOATING
_FLOAT_INT32 = _FLOAT | {_dtypes.int32}


def _define_family(prefix: str, suffixes: tuple, allowed: tuple, extra: list):
    """A forward op and its two backprop ops, sharing attrs."""
    forward, bp_input, bp_filter = (prefix + s for s in suffixes)
    return (
        define_op(forward, ["input: T", "filter: T"], ["output: T"],
                  [TypeAttr("T", allowed[0]), *extra, *_CONV_ATTRS], _conv_shape),
        define_op(bp_input, ["input_sizes: int32", "filter: T", "out_backprop: T"],
                  ["output: T"], [TypeAttr("T", allowed[1]), *extra, *_CONV_ATTRS],
                  _backprop_input_shape),
        define_op(bp_filter, ["input: T", "filter_sizes: int32", "out_backprop: T"],
                  ["output: T"], [TypeAttr("T", allowed[2]), *extra, *_CONV_ATTRS],
                  _backprop_filter_shape),
    )


Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter = _define_family(
    "Conv2D", ("", "BackpropInput", "BackpropFilter"), (_FLOAT_INT32, _FLOAT_INT32, _FLOAT),
    [_CUDNN])
DepthwiseConv2dNative, DepthwiseConv2dNativeBackpropInput, \
    DepthwiseConv2dNativeBackpropFilter = _define_family(
        "DepthwiseConv2dNative", ("", "BackpropInput", "BackpropFilter"), (_FLOAT,) * 3, [])

# op type -> (forward, BackpropInput, BackpropFilter) of its family (see register_family).
_FAMILY_OF: dict = {}


# --- gradients: each member of a trio differentiates through the other two -------------------
def _family_of(op):
    return _FAMILY_OF[op.type]


def _same_attrs(op) -> dict:
    """The window attrs a family's three ops share (not their dtype attrs)."""
    return {k: v for k, v in op._attrs.items()
            if not k.startswith("_") and k not in ("T", "Tshape")}


def _forward_grad(op, grad):
    """d input = BackpropInput(shape(input), filter, grad);
    d filter = BackpropFilter(input, shape(filter), grad)."""
    _, bp_input, bp_filter = _family_of(op)
    attrs = _same_attrs(op)
    input_shape, filter_shape = shape_n([op.inputs[0], op.inputs[1]])
    return [apply_op(bp_input, [input_shape, op.inputs[1], grad], attrs),
            apply_op(bp_filter, [op.inputs[0], filter_shape, grad], attrs)]


def _backprop_input_grad(op, grad):
    """BackpropInput is linear in filter and out_backprop: its gradient w.r.t. the filter
    correlates the incoming gradient (shaped like the input) with out_backprop; w.r.t.
    out_backprop it is the forward convolution of the incoming gradient."""
    forward, _, bp_filter = _family_of(op)
    attrs = _same_attrs(op)
    return [None, apply_op(bp_filter, [grad, shape(op.inputs[1]), op.inputs[2]], attrs),
            apply_op(forward, [grad, op.inputs[1]], attrs)]


def _backprop_filter_grad(op, grad):
    """BackpropFilter is linear in input and out_backprop: w.r.t. the input it back-propagates
    out_backprop through the incoming gradient (as a filter); w.r.t. out_backprop it is the
    forward convolution of the input with the incoming gradient."""
    forward, bp_input, _ = _family_of(op)
    attrs = _same_attrs(op)
    return [apply_op(bp_input, [shape(op.inputs[0]), grad, op.inputs[2]], attrs), None,
            apply_op(forward, [op.inputs[0], grad], attrs)]


def register_family(forward, bp_input, bp_filter) -> None:
    """Makes a forward conv op and its two backprop ops one family: each one's gradient is
    built from the other two (used by the 2-D ops here and by Conv3D in nn_conv3d_ops)."""
    for op_def in (forward, bp_input, bp_filter):
        _FAMILY_OF[op_def.name] = (forward, bp_input, bp_filter)
    forward.gradient(_forward_grad)
    bp_input.gradient(_backprop_input_grad)
    bp_filter.gradient(_backprop_filter_grad)


register_family(Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter)
register_family(DepthwiseConv2dNative, DepthwiseConv2dNativeBackpropInput,
                DepthwiseConv2dNativeBackpropFilter)


# --- wrappers -----------------------------------------------------------------------------------
def _channel_index(data_format) -> int:
    return 1 if data_format is not None and str(data_format).startswith("NC") else 3


def get_sequence(value, n: int, channel_index: int, name: str) -> list:
    """TF's expansion of an int or an n-list attr to n + 2 entries, 1 at batch and channels
    (`channel_index` 1 means channels first)."""
    if value is None:
        return [1] * (n + 2)
    value = [int(v) for v in value] if isinstance(value, (list, tuple, np.ndarray)) \
        else [int(value)]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: "
                         f"{name}={value} of length {len(value)}")
    return [1, 1] + value if channel_index == 1 else [1] + value + [1]


def convert_padding(padding, rank: int = 4) -> tuple:
    """(padding string, explicit_paddings list) from a string or a list of pairs."""
    if isinstance(padding, (list, tuple)):
        if len(padding) != rank:
            raise ValueError(f"When padding is a list, it must be of size {rank}. Received: "
                             f"padding={list(padding)} of size {len(padding)}")
        flat = []
        for pair in padding:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError("When padding is a list, each element of padding must be a "
                                 f"list/tuple of size 2. Received: padding={list(padding)}")
            flat.extend(int(p) for p in pair)
        return "EXPLICIT", flat
    if isinstance(padding, bytes):
        padding = padding.decode()
    return padding, []


def _conv_attrs(strides, padding, data_format, dilations, cudnn=None) -> dict:
    fmt = data_format or "NHWC"
    ci = _channel_index(fmt)
    padding, explicit = convert_padding(padding)
    attrs = {"strides": get_sequence(strides, 2, ci, "strides"), "padding": padding,
             "explicit_paddings": explicit, "data_format": fmt,
             "dilations": get_sequence(dilations, 2, ci, "dilations")}
    if cudnn is not None:
        attrs["use_cudnn_on_gpu"] = bool(cudnn)
    return attrs


def _pick(new, old, new_name, old_name):
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new if new is not None else old


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """Computes a 2-D convolution given a 4-D `input` and a 4-D `filter` tensor.

    For NHWC, output[b, i, j, k] = sum_{di, dj, q} input[b, strides[1] * i + dilations[1] * di,
    strides[2] * j + dilations[2] * dj, q] * filter[di, dj, q, k] (after padding the input).

    Args:
      input: A Tensor of type float16, bfloat16, float32, float64 or int32, of rank 4, laid
        out as `data_format` says.
      filter: A Tensor of the same type, shaped [filter_height, filter_width, in_channels,
        out_channels].
      strides: An int or a list of 1, 2 or 4 ints: the window stride per dimension (the batch
        and channel strides must be 1).
      padding: "SAME", "VALID", or a list of 4 [before, after] pairs (explicit padding; the
        batch and channel pairs must be [0, 0]).
      use_cudnn_on_gpu: Kept for compatibility; no effect.
      data_format: "NHWC" (default) or "NCHW".
      dilations: An int or a list of 1, 2 or 4 ints: the filter dilation per dimension.
      name: A name for the operation (default "Conv2D").
      filters: Alias for `filter`.

    Returns:
      A Tensor of the input's type.

    Raises:
      ValueError: for malformed attrs or incompatible static shapes.
    """
    filter = _pick(filters, filter, "filters", "filter")  # noqa: A001 - TF1's argument name
    return apply_op(Conv2D, [input, filter],
                    _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu),
                    name=name)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None,  # noqa: A002
                          strides=None, padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
                          dilations=(1, 1, 1, 1), name=None, filters=None):
    """Computes the gradient of conv2d with respect to its input.

    Args:
      input_sizes: An int32 Tensor of 4 elements: the shape of the convolution's input.
      filter: The convolution's filter, [height, width, in_channels, out_channels].
      out_backprop: The gradient of the convolution's output (4-D).
      strides, padding, use_cudnn_on_gpu, data_format, dilations: As for `conv2d`.
      name: A name for the operation (default "Conv2DBackpropInput").
      filters: Alias for `filter`.

    Returns:
      A Tensor shaped `input_sizes`.
    """
    filter = _pick(filters, filter, "filters", "filter")  # noqa: A001 - TF1's argument name
    return apply_op(Conv2DBackpropInput, [input_sizes, filter, out_backprop],
                    _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu),
                    name=name)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1),
                           name=None):
    """Computes the gradient of conv2d with respect to its filter.

    Args:
      input: The convolution's input (4-D).
      filter_sizes: An int32 Tensor of 4 elements: the filter's shape.
      out_backprop: The gradient of the convolution's output (4-D).
      strides, padding, use_cudnn_on_gpu, data_format, dilations: As for `conv2d`.
      name: A name for the operation (default "Conv2DBackpropFilter").

    Returns:
      A Tensor shaped `filter_sizes`.
    """
    return apply_op(Conv2DBackpropFilter, [input, filter_sizes, out_backprop],
                    _conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu),
                    name=name)


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None, filters=None,
                     dilations=None):
    """The transpose of conv2d (sometimes called deconvolution): conv2d's input gradient.

    Args:
      value: A 4-D Tensor [batch, height, width, in_channels] (NHWC) or NCHW.
      filter: A 4-D Tensor [height, width, output_channels, in_channels].
      output_shape: A 1-D Tensor (or list) of 4 ints: the shape of the result.
      strides: An int or a list of 1, 2 or 4 ints.
      padding: "SAME", "VALID" or explicit pairs.
      data_format: "NHWC" (default) or "NCHW".
      name: A name for the operation (default "conv2d_transpose").
      input: Alias for `value`.
      filters: Alias for `filter`.
      dilations: An int or a list of 1, 2 or 4 ints.

    Returns:
      A Tensor shaped `output_shape` (a `Conv2DBackpropInput` op).
    """
    value = _pick(input, value, "input", "value")
    filter = _pick(filters, filter, "filters", "filter")  # noqa: A001 - TF1's argument name
    with name_scope(name, "conv2d_transpose") as scope:
        return apply_op(Conv2DBackpropInput, [output_shape, filter, value],
                        _conv_attrs(strides, padding, data_format, dilations), name=scope)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """Computes a 1-D convolution: a conv2d over an inserted height dimension of size 1.

    Args:
      value: A 3-D Tensor [batch, in_width, in_channels] ("NWC") or [batch, in_channels,
        in_width] ("NCW").
      filters: A 3-D Tensor [filter_width, in_channels, out_channels].
      stride: An int or a list of 1 or 3 ints.
      padding: "SAME", "VALID" or explicit pairs.
      use_cudnn_on_gpu: Kept for compatibility; no effect.
      data_format: "NWC" (default) or "NCW".
      name: A name for the operation (default "conv1d").
      input: Alias for `value`.
      dilations: An int or a list of 1 or 3 ints.

    Returns:
      A 3-D Tensor in the input's layout.

    Raises:
      ValueError: if `data_format` is neither "NWC" nor "NCW".
    """
    value = _pick(input, value, "input", "value")
    with name_scope(name, "conv1d") as scope:
        if data_format is None or data_format in ("NHWC", "NWC"):
            fmt, axis, channel_index = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            fmt, axis, channel_index = "NCHW", -2, 1
        else:
            raise ValueError("`data_format` must be 'NWC' or 'NCW'. Received: "
                             f"data_format={data_format}")
        strides = [1] + get_sequence(stride, 1, channel_index, "stride")
        dilation = [1] + get_sequence(dilations, 1, channel_index, "dilations")
        value = expand_dims(value, axis)
        filters = expand_dims(filters, 0)
        result = conv2d(value, filters, strides, padding, use_cudnn_on_gpu, fmt, dilation,
                        name=scope)
        return squeeze(result, [axis])


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=(1, 1, 1, 1), name=None):
    """Depthwise 2-D convolution: each input channel convolved with its own filters.

    Args:
      input: A 4-D Tensor of float type.
      filter: A 4-D Tensor [height, width, in_channels, channel_multiplier].
      strides: A list of 4 ints.
      padding: "SAME", "VALID" or explicit pairs.
      data_format: "NHWC" (default) or "NCHW".
      dilations: A list of 4 ints.
      name: A name for the operation (default "DepthwiseConv2dNative").

    Returns:
      A Tensor with in_channels * channel_multiplier channels.
    """
    return apply_op(DepthwiseConv2dNative, [input, filter],
                    _conv_attrs(strides, padding, data_format, dilations), name=name)


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides,
                                           padding, data_format="NHWC",
                                           dilations=(1, 1, 1, 1), name=None):
    """The gradient of depthwise_conv2d_native with respect to its input (shaped
    `input_sizes`)."""
    return apply_op(DepthwiseConv2dNativeBackpropInput, [input_sizes, filter, out_backprop],
                    _conv_attrs(strides, padding, data_format, dilations), name=name)


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop,  # noqa: A002
                                            strides, padding, data_format="NHWC",
                                            dilations=(1, 1, 1, 1), name=None):
    """The gradient of depthwise_conv2d_native with respect to its filter (shaped
    `filter_sizes`)."""
    return apply_op(DepthwiseConv2dNativeBackpropFilter, [input, filter_sizes, out_backprop],
                    _conv_attrs(strides, padding, data_format, dilations), name=name)


def _rate_dilations(rate, dilations) -> list:
    if dilations is not None:
        return dilations
    return list(rate) if rate is not None else [1, 1]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """Depthwise 2-D convolution (TF1's tf.nn.depthwise_conv2d).

    Given input [batch, height, width, in_channels] and filter [height, width, in_channels,
    channel_multiplier], applies a different filter to each input channel and concatenates
    the results: output channel k * channel_multiplier + q is input channel k convolved with
    filter[:, :, k, q].

    Args:
      input: A 4-D Tensor of float type.
      filter: A 4-D Tensor [height, width, in_channels, channel_multiplier].
      strides: A list of 4 ints (1 at batch and channels).
      padding: "SAME", "VALID" or explicit pairs.
      rate: A list of 2 ints: the dilation rate (atrous convolution); default [1, 1].
      name: A name for the operation (default "depthwise").
      data_format: "NHWC" (default) or "NCHW".
      dilations: Alias for `rate`.

    Returns:
      A 4-D Tensor with in_channels * channel_multiplier channels.
    """
    with name_scope(name, "depthwise") as scope:
        return apply_op(DepthwiseConv2dNative, [input, filter],
                        _conv_attrs(strides, padding, data_format,
                                    _rate_dilations(rate, dilations)), name=scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None, dilations=None):
    """A depthwise convolution followed by a 1x1 (pointwise) convolution mixing channels.

    Args:
      input: A 4-D Tensor.
      depthwise_filter: [height, width, in_channels, channel_multiplier].
      pointwise_filter: [1, 1, channel_multiplier * in_channels, out_channels].
      strides: A list of 4 ints: the depthwise convolution's strides.
      padding: "SAME", "VALID" or explicit pairs (for the depthwise convolution).
      rate: A list of 2 ints: the depthwise dilation rate.
      name: A name for the operation (default "separable_conv2d").
      data_format: "NHWC" (default) or "NCHW".
      dilations: Alias for `rate`.

    Returns:
      A 4-D Tensor with out_channels channels.

    Raises:
      ValueError: if `pointwise_filter` is not [1, 1, ...].
    """
    with name_scope(name, "separable_conv2d") as scope:
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        dims = shape_dims(pointwise_filter.shape, 4)
        for d in dims[:2]:
            if d not in (None, 1):
                raise ValueError(f"Dimensions {d} and 1 are not compatible")
        depthwise = apply_op(DepthwiseConv2dNative, [input, depthwise_filter],
                             _conv_attrs(strides, padding, data_format,
                                         _rate_dilations(rate, dilations)), name="depthwise")
        return apply_op(Conv2D, [depthwise, pointwise_filter],
                        _conv_attrs(1, "VALID", data_format, 1), name=scope)


def convolution(input, filter=None, padding=None, strides=None,  # noqa: A002 - TF1's names
                dilation_rate=None, name=None, data_format=None, filters=None, dilations=None):
    """N-D convolution for N = 1 or 2 (TF1's tf.nn.convolution), dilated through the ops'
    `dilations` attr (TensorFlow builds SpaceToBatchND / BatchToSpaceND around the op instead:
    same values, different graph).

    Args:
      input: A Tensor of rank 3 (1-D convolution) or 4 (2-D), channels last unless
        `data_format` starts with "NC".
      filter: [spatial..., in_channels, out_channels].
      padding: "SAME" or "VALID".
      strides: A list of N ints (default 1).
      dilation_rate: A list of N ints (default 1).
      name: A name for the operation (default "convolution").
      data_format: "NWC"/"NCW" or "NHWC"/"NCHW".
      filters: Alias for `filter`.
      dilations: Alias for `dilation_rate`.

    Returns:
      The convolved Tensor.

    Raises:
      ValueError: if neither the input's nor the filter's rank says 1 or 2 spatial dims.
    """
    filter = _pick(filters, filter, "filters", "filter")  # noqa: A001 - TF1's argument name
    dilation_rate = _pick(dilations, dilation_rate, "dilations", "dilation_rate")
    input = convert_to_tensor(input, name="input")  # noqa: A001 - TF1's argument name
    filter = convert_to_tensor(filter, name="filter")  # noqa: A001 - TF1's argument name
    # Like TF, the number of spatial dimensions comes from the input, else from the filter.
    rank = input.shape.ndims if input.shape.ndims is not None else filter.shape.ndims
    with name_scope(name, "convolution") as scope:
        if rank == 3:
            fmt = "NCW" if data_format and str(data_format).startswith("NC") else "NWC"
            return conv1d(input, filter, strides or 1, padding, data_format=fmt,
                          dilations=dilation_rate or 1, name=scope)
        if rank == 4:
            fmt = "NCHW" if data_format and str(data_format).startswith("NC") else "NHWC"
            return conv2d(input, filter, strides or 1, padding, data_format=fmt,
                          dilations=dilation_rate or 1, name=scope)
    raise ValueError(f"convolution supports inputs of rank 3 or 4 here, got rank {rank}")


def atrous_conv2d(value, filters, rate, padding, name=None):
    """Atrous (dilated) 2-D convolution: conv2d with the filter taps `rate` pixels apart.

    Args:
      value: A 4-D NHWC Tensor.
      filters: [height, width, in_channels, out_channels].
      rate: A positive int: the dilation in both spatial dimensions.
      padding: "SAME" or "VALID".
      name: A name for the operation (default "convolution").

    Returns:
      A 4-D Tensor.

    Raises:
      ValueError: if `rate` is less than one.
    """
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return convolution(value, filters, padding, dilation_rate=[int(rate)] * 2, name=name)
