"""Constants and placeholders: where values enter a graph."""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_conversion
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import merge_shapes
from tensorweave.framework.static_value import register_static_value
from tensorweave.framework.tensor_util import to_numpy

__all__ = ["constant", "placeholder", "placeholder_with_default"]


def _const_shape(ctx):
    return _ts.TensorShape(ctx.attrs["value"].shape)


Const = define_op("Const", outputs=["output: dtype"],
                  attrs=[Attr("value", "tensor"), TypeAttr("dtype")], shape_fn=_const_shape,
                  not_differentiable=True)


@register_static_value("Const")
def _const_value(op, index):
    return op._attrs["value"]


def _fill_to_shape(arr: np.ndarray, shape: tuple) -> np.ndarray:
    """TF1's make_tensor_proto with a `shape`: one value fills it; several go in order, the
    last one repeated to fill the rest (zeros when there are none); more values than the
    shape holds is an error."""
    size = int(np.prod(shape))
    if arr.size == 1:   # one value fills any shape, an empty one too
        return np.full(shape, arr.reshape(()), dtype=arr.dtype)
    if arr.size == size:
        return arr.reshape(shape)
    if arr.size > size:
        raise ValueError(f"Too many elements provided. Takes at most {size}, but got "
                         f"{arr.size}.")
    flat = arr.reshape(-1)
    fill = flat[-1] if flat.size else np.zeros((), arr.dtype)
    out = np.full(size, fill, dtype=arr.dtype)
    out[:flat.size] = flat
    return out.reshape(shape)


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """Creates a constant tensor (TF1's tf.constant).

    Args:
      value: a Python value, nested list or NumPy array.
      dtype: the element type; inferred from `value` when None (Python ints → int32, floats →
        float32, NumPy arrays keep theirs).
      shape: optional shape; fewer values than it holds are padded with the last one (TF1).
      name: the op name.
      verify_shape: if True, `value`'s shape must equal `shape`.

    Returns:
      A Tensor.

    Raises:
      TypeError: if `value` cannot be represented exactly in `dtype`.
      ValueError: for ragged lists or an impossible `shape`.
    """
    # A ref dtype (a TF1 variable's `v.dtype`) means its base type: TF's Const holds a value,
    # never a reference, so tf.constant(x, tf.float64_ref) is a float64 constant.
    dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
    arr = to_numpy(value, dtype)
    if isinstance(value, np.ndarray) and np.may_share_memory(arr, value):
        arr = arr.copy()   # the graph holds the value at creation, as TF's TensorProto does
    if shape is not None:
        shape = tuple(_ts.as_shape(shape).as_list())
        if arr.shape != shape:
            if verify_shape:
                raise TypeError(f"Expected Tensor's shape: {shape}, got {arr.shape}.")
            arr = _fill_to_shape(arr, shape)
    out_dtype = dtype if dtype is not None else _dtypes.from_numpy(arr.dtype)
    return apply_op(Const, [], {"value": arr, "dtype": out_dtype}, name=name)


def _constant_hook(value, dtype, name):
    return constant(value, dtype=dtype, name=name)


tensor_conversion.set_hook("constant", _constant_hook)


def _placeholder_shape(ctx):
    shape = ctx.attrs["shape"]
    return shape if shape is not None else _ts.unknown_shape()


Placeholder = define_op("Placeholder", outputs=["output: dtype"],
                        attrs=[TypeAttr("dtype"), Attr("shape", "shape", None)],
                        shape_fn=_placeholder_shape, is_stateful=True, not_differentiable=True)


def placeholder(dtype, shape=None, name=None):
    """A tensor that must be fed at run time (TF1's tf.placeholder).

    Args:
      dtype: the element type.
      shape: optional (partial) shape; None accepts any shape.
      name: the op name.

    Returns:
      A Tensor; running a step that needs it without feeding it raises InvalidArgumentError.
    """
    shape = _ts.as_shape(shape) if shape is not None else _ts.unknown_shape()
    # TF makes every type attr a base type, so placeholder(tf.float64_ref) feeds float64.
    return apply_op(Placeholder, [], {"dtype": _dtypes.as_dtype(dtype).base_dtype,
                                      "shape": shape}, name=name)


def _with_default_shape(ctx):
    """The `shape` attr; the default must merge with it (TF's check, with its messages)."""
    merge_shapes(ctx.input_shape(0), ctx.attrs["shape"])
    return ctx.attrs["shape"]


PlaceholderWithDefault = define_op(
    "PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
    attrs=[TypeAttr("dtype"), Attr("shape", "shape")], shape_fn=_with_default_shape)


@PlaceholderWithDefault.gradient
def _placeholder_with_default_grad(op, grad):
    """The default flows through unchanged."""
    return [grad]


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF1's argument name
    """A placeholder that yields `input` when it is not fed (TF1's tf.placeholder_with_default).

    Args:
      input: the default value.
      shape: the (partial) shape a fed value must have.
      name: the op name.
    """
    default = tensor_conversion.convert_to_tensor(input)
    return apply_op(PlaceholderWithDefault, [default], {"shape": _ts.as_shape(shape)}, name=name)
