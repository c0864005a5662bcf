"""Max pooling that also returns where each maximum came from: MaxPoolWithArgmax, its gradient
op MaxPoolGradWithArgmax, and TF1's `max_pool_with_argmax`.

The argmax of an NHWC window is the flat index of its first maximum in scan order, (y * width
+ x) * channels + c, plus batch * height * width * channels with `include_batch_in_index`
(as TF's CPU kernel; padding never wins, and a window of only -inf or NaN still points at its
first element). The gradient scatters each output's gradient to its argmax (MaxPoolGradWith-
Argmax); TensorFlow registers no gradient for MaxPoolGradWithArgmax (its MaxPoolGradGrad-
WithArgmax has no CPU kernel), so neither does this module: differentiating it raises
LookupError, as in TF. Kernels: `kernels/pool_argmax.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import shape_dims
from tensorweave.ops.nn_conv_ops import assemble, split_dims, window_spec

__all__ = ["max_pool_with_argmax"]

_INDEX_TYPES = {_dtypes.int32, _dtypes.int64}


def argmax_pool_spec(op_type: str, attrs: dict):
    """The validated NHWC WindowSpec of a MaxPool*WithArgmax node (shared with the kernels).

    Raises:
      ValueError: TF's message for a ksize or strides list shorter than 4, else window_spec's.
    """
    for name in ("ksize", "strides"):
        if len(attrs[name]) < 4:
            raise ValueError(f"Attr '{name}' of '{op_type}' Op passed list of length "
                             f"{len(attrs[name])} less than minimum 4.")
    return window_spec(op_type, attrs, 4, ("NHWC",), ("SAME", "VALID"), ksize=True)


def _pool_shape(ctx):
    """Output and argmax: the pooled shape (depth pooling divides the channels)."""
    spec = argmax_pool_spec(ctx.op_type, ctx.attrs)
    batch, channels, spatial = split_dims(spec, shape_dims(ctx.input_shape(0), 4))
    out, _ = spec.output_dims(spatial, spec.ksize)
    if channels is not None and spec.outer_ksize[1] > 1:
        channels //= spec.outer_ksize[1]
    return assemble(spec, batch, channels, out)


def _grad_shape(ctx):
    """MaxPoolGradWithArgmax: shaped like the pooled input."""
    argmax_pool_spec(ctx.op_type, ctx.attrs)
    shape_dims(ctx.input_shape(1), 4)
    shape_dims(ctx.input_shape(2), 4)
    return _ts.TensorShape(shape_dims(ctx.input_shape(0), 4))


_ATTRS = [Attr("ksize", "list(int)"), Attr("strides", "list(int)"), Attr("padding", "string"),
          Attr("include_batch_in_index", "bool", False)]

MaxPoolWithArgmax = define_op(
    "MaxPoolWithArgmax", ["input: T"], ["output: T", "argmax: Targmax"],
    [*_ATTRS, TypeAttr("Targmax", _INDEX_TYPES, _dtypes.int64),
     TypeAttr("T", _dtypes.REAL_NUMERIC)], _pool_shape)
MaxPoolGradWithArgmax = define_op(
    "MaxPoolGradWithArgmax", ["input: T", "grad: T", "argmax: Targmax"], ["output: T"],
    [*_ATTRS, TypeAttr("Targmax", _INDEX_TYPES), TypeAttr("T", _dtypes.REAL_NUMERIC)],
    _grad_shape)


@MaxPoolWithArgmax.gradient
def _max_pool_with_argmax_grad(op, grad, unused_argmax_grad):
    """Each output's gradient goes to the input element its argmax names."""
    attrs = {k: op.get_attr(k) for k in ("ksize", "strides", "padding",
                                          "include_batch_in_index")}
    return [apply_op(MaxPoolGradWithArgmax, [op.inputs[0], grad, op.outputs[1]], attrs)]


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC",  # noqa: A002
                         Targmax=None, name=None, output_dtype=None,  # noqa: N803 - TF's name
                         include_batch_in_index=False):
    """Performs max pooling on the input and outputs both max values and their indices.

    The index of input[b, y, x, c] is ((b * height + y) * width + x) * channels + c with
    `include_batch_in_index`, else (y * width + x) * channels + c; ties go to the first
    maximum in scan order.

    Args:
      input: A 4-D NHWC Tensor of a real numeric type.
      ksize: A list of 4 ints: the window size per dimension.
      strides: A list of 4 ints: the window stride per dimension.
      padding: "SAME" or "VALID".
      data_format: Only "NHWC" is supported.
      Targmax: The index dtype, int32 or int64 (default int64).
      name: A name for the operation (default "MaxPoolWithArgmax").
      output_dtype: Alias for `Targmax`.
      include_batch_in_index: Whether the flat index counts the batch dimension too.

    Returns:
      A tuple (output, argmax) of Tensors, both shaped like the pooled input.

    Raises:
      ValueError: if `data_format` is not "NHWC", both `Targmax` and `output_dtype` are given,
        or for malformed attrs and shapes.
      TypeError: if `ksize` or `strides` is not a list.
    """
    if data_format != "NHWC":
        raise ValueError("`data_format` values other  than 'NHWC' are not supported. "
                         f"Received: data_format={data_format}")
    if Targmax is not None and output_dtype is not None:
        raise ValueError("Cannot specify both 'output_dtype' and 'Targmax'")
    index_dtype = output_dtype if output_dtype is not None else Targmax
    for arg_name, value in (("ksize", ksize), ("strides", strides)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"Expected list for '{arg_name}' argument to "
                            f"'max_pool_with_argmax' Op, not {value}.")
    attrs = {"ksize": list(ksize), "strides": list(strides), "padding": padding,
             "include_batch_in_index": bool(include_batch_in_index),
             "Targmax": _dtypes.as_dtype(index_dtype or _dtypes.int64)}
    output, argmax = apply_op(MaxPoolWithArgmax, [input], attrs, name=name)
    return output, argmax
