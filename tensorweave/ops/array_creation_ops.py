"""Creating tensors: Fill, ZerosLike, OnesLike, Range, LinSpace and the TF1 wrappers built on them
(zeros, ones, zeros_like, ones_like, range, linspace, meshgrid).

Like TensorFlow, `zeros`/`ones` of a small static shape are constants and otherwise `Fill` ops,
so `tf.zeros(tf.shape(x))` follows a fed batch size. Range and LinSpace share their element
rules (`range_values`, `linspace_values`) between the shape function, the static value and the
kernel. Kernels live in `kernels/array_creation.py`.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.static_value import register_static_value, static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.framework.tensor_util import to_numpy
from tensorweave.ops.constant_op import constant

__all__ = ["fill", "lin_space", "linspace", "meshgrid", "ones", "ones_like", "range", "zeros",
           "zeros_like"]

TensorShape = _ts.TensorShape
_INDEX = _dtypes.INDEX
_STATIC_LIMIT = 1 << 16   # larger values are not materialized at graph construction
_SMALL = 1000             # TF1 makes zeros/ones of fewer elements a Const, else a Fill


def _dims(shape: TensorShape):
    return shape._dims


def _require_scalars(ctx, names) -> None:
    for i, arg_name in enumerate(names):
        dims = _dims(ctx.input_shape(i))
        if dims is not None and len(dims) != 0:
            raise ValueError(f"Shape must be rank 0 but is rank {len(dims)} for '{arg_name}'")


def _empty_like(dtype: _dtypes.DType, shape) -> np.ndarray:
    """Zeros of `dtype` (b"" for strings, False for bool)."""
    if dtype.base_dtype == _dtypes.string:
        return np.full(shape, b"", dtype=object)
    return np.zeros(shape, dtype=dtype.as_numpy_dtype)


# --- Fill --------------------------------------------------------------------------------------
def _fill_shape(ctx):
    dims_with_rank(_dims(ctx.input_shape(0)), 1)
    dims_with_rank(_dims(ctx.input_shape(1)), 0)
    dims = ctx.static_value(0)
    if dims is not None:
        if (dims < 0).any():
            raise ValueError("Fill dimensions must be >= 0")
        return TensorShape(dims.tolist())
    return ctx.static_shape(0)


Fill = define_op("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
                 attrs=[TypeAttr("T"), TypeAttr("index_type", _INDEX, _dtypes.int32)],
                 shape_fn=_fill_shape, doc="A tensor of shape `dims` filled with `value`.")


@register_static_value("Fill")
def _fill_value(op, index):
    dims, value = static_value(op.inputs[0]), static_value(op.inputs[1])
    if dims is None or value is None or math.prod(dims.tolist()) > _STATIC_LIMIT:
        return None
    return np.full(dims.tolist(), value, dtype=value.dtype)


@Fill.gradient
def _fill_grad(op, grad):
    """Every element is `value`: its gradient is the sum of the output's."""
    from tensorweave.ops.reduction_ops import reduce_sum
    return [None, reduce_sum(grad)]


def fill(dims, value, name=None):
    """Creates a tensor of shape `dims` filled with the scalar `value` (TF1's tf.fill).

    Args:
      dims: a 1-D int32/int64 Tensor or list: the output shape (entries >= 0).
      value: a scalar; its dtype is the output's.
      name: the op name (default "Fill").

    Returns:
      A Tensor of shape `dims`.

    Raises:
      ValueError: if `dims` has a statically negative entry or `value` is not a scalar.
    """
    return apply_op(Fill, [dims, value], name=name)


def _python_dims(shape):
    """A shape given as Python values as a list of ints; None if it holds tensors or non-ints."""
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {shape} to a Tensor.")
        return shape.as_list()
    if is_tensor_like(shape):
        return None
    if isinstance(shape, (list, tuple)):
        dims = []
        for d in shape:
            if isinstance(d, _ts.Dimension):
                d = d.value
            if d is None:  # tf.zeros(x.shape.as_list()) with an unknown dimension
                raise TypeError("Expected int32, but got None of type 'NoneType'.")
            if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 0:
                return None
            dims.append(int(d))
        return dims
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        return [int(shape)] if shape >= 0 else None
    if isinstance(shape, np.ndarray) and shape.dtype.kind in "iu" and shape.ndim <= 1:
        return _python_dims(shape.reshape(-1).tolist())
    return None


def _filled(shape, value, dtype, scope):
    """`value` broadcast to `shape`: a Const when small and static, else a Fill (TF1's rule)."""
    if not is_tensor_like(shape):
        dims = _python_dims(shape)
        if dims is not None:
            if math.prod(dims) < _SMALL:
                return constant(value, dtype=dtype, shape=dims, name=scope)
            index = _dtypes.int64 if max(dims) > np.iinfo(np.int32).max else _dtypes.int32
            shape = constant(dims, dtype=index, name="shape_as_tensor")
    shape = convert_to_tensor(shape, dtype=None if is_tensor_like(shape) else _dtypes.int32)
    if shape.shape.ndims == 0:
        from tensorweave.ops.array_ops import reshape
        shape = reshape(shape, [-1])
    return apply_op(Fill, [shape, constant(value, dtype=dtype)], name=scope)


def zeros(shape, dtype=_dtypes.float32, name=None):
    """Creates a tensor of zeros (TF1's tf.zeros).

    A static shape of fewer than 1000 elements gives a constant; otherwise (or for a shape
    tensor such as `tf.shape(x)`) a `Fill` op computes it at run time.

    Args:
      shape: a list of ints, a TensorShape, or a 1-D int32/int64 Tensor.
      dtype: the element type (zero is False for bool and "" for string).
      name: the op name (default "zeros").

    Returns:
      A Tensor of `shape` and `dtype`.
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    zero = False if dtype.is_bool else b"" if dtype == _dtypes.string else 0
    with name_scope(name, "zeros", [shape]) as scope:
        return _filled(shape, zero, dtype, scope)


def ones(shape, dtype=_dtypes.float32, name=None):
    """Creates a tensor of ones (TF1's tf.ones); see `zeros` for how it is built.

    Args:
      shape: a list of ints, a TensorShape, or a 1-D int32/int64 Tensor.
      dtype: the element type (one is True for bool; strings have no one: TypeError).
      name: the op name (default "ones").

    Returns:
      A Tensor of `shape` and `dtype`.
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "ones", [shape]) as scope:
        return _filled(shape, True if dtype.is_bool else 1, dtype, scope)


# --- ZerosLike, OnesLike -----------------------------------------------------------------------
ZerosLike = define_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=[TypeAttr("T")],
                      shape_fn=shape_fns.unchanged, not_differentiable=True)
OnesLike = define_op("OnesLike", inputs=["x: T"], outputs=["y: T"],
                     attrs=[TypeAttr("T", _dtypes.NUMERIC | {_dtypes.bool})],
                     shape_fn=shape_fns.unchanged, not_differentiable=True)


@register_static_value("ZerosLike")
@register_static_value("OnesLike")
def _like_value(op, index):
    shape = op.inputs[0]._shape
    if not shape.is_fully_defined() or shape.num_elements() > _STATIC_LIMIT:
        return None
    dtype = op._attrs["T"]
    if op.type == "OnesLike":
        return np.ones(shape.as_list(), dtype=dtype.as_numpy_dtype)
    return _empty_like(dtype, shape.as_list())


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Creates a tensor of zeros with the shape of `tensor` (TF1's tf.zeros_like).

    Args:
      tensor: a Tensor.
      dtype: the result's dtype; default `tensor`'s.
      name: the op name (default "zeros_like").
      optimize: if True, a fully-defined static shape gives a constant.

    Returns:
      A Tensor of zeros shaped like `tensor`.
    """
    with name_scope(name, "zeros_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        base = tensor.dtype.base_dtype
        dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else base
        if optimize and tensor.shape.is_fully_defined() and base != _dtypes.variant:
            return zeros(tensor.shape, dtype=dtype, name=scope)
        if dtype != base:
            from tensorweave.ops.array_ops import shape_internal
            return zeros(shape_internal(tensor, optimize=optimize), dtype=dtype, name=scope)
        return apply_op(ZerosLike, [tensor], name=scope)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Creates a tensor of ones with the shape of `tensor` (TF1's tf.ones_like).

    Built like TensorFlow as Fill(shape(tensor), 1), the shape being a constant when it is
    statically known.

    Args:
      tensor: a Tensor.
      dtype: the result's dtype; default `tensor`'s.
      name: the op name (default "ones_like").
      optimize: if True, a fully-defined static shape is used as a constant.

    Returns:
      A Tensor of ones shaped like `tensor`.
    """
    from tensorweave.ops.array_ops import shape_internal
    with name_scope(name, "ones_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else \
            tensor.dtype.base_dtype
        result = ones(shape_internal(tensor, optimize=optimize), dtype=dtype, name=scope)
        result.set_shape(tensor.shape)
        return result


# --- Range, LinSpace ---------------------------------------------------------------------------
_RANGE_TYPES = _dtypes.FLOATING | {_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64,
                                   _dtypes.uint16, _dtypes.uint32}
# tf.range's dtype inference: the widest of the arguments' dtypes in this order.
_RANGE_HIERARCHY = (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64)


def _fmt(v) -> str:
    return str(int(v)) if v.dtype.kind in "iu" else f"{float(v):g}"


def range_length(start, limit, delta) -> int:
    """The element count of Range (0-d arrays of one dtype); ValueError in TF's words."""
    if delta == 0:
        raise ValueError(f"Requires delta != 0: {_fmt(delta)}")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {_fmt(start)}/{_fmt(limit)}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {_fmt(start)}/{_fmt(limit)}")
    if start.dtype.kind in "iu":
        span, step = abs(int(limit) - int(start)), abs(int(delta))
        return (span + step - 1) // step
    return int(np.ceil(np.abs((limit - start) / delta)))


def range_values(start, limit, delta, np_dtype) -> np.ndarray:
    """Range's elements start + i * delta, computed in `np_dtype` like TensorFlow's kernel."""
    start, limit, delta = (np.asarray(v, dtype=np_dtype) for v in (start, limit, delta))
    return start + np.arange(range_length(start, limit, delta), dtype=np_dtype) * delta


def _range_shape(ctx):
    _require_scalars(ctx, ("start", "limit", "delta"))
    values = [ctx.static_value(i) for i in builtins.range(3)]
    if any(v is None for v in values):
        return TensorShape([None])
    if values[2] == 0:   # TF's shape function words this without the value its kernel adds
        raise ValueError("Requires delta != 0")
    return TensorShape([range_length(*values)])


Range = define_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"],
                  outputs=["output: Tidx"],
                  attrs=[TypeAttr("Tidx", _RANGE_TYPES, _dtypes.int32)],
                  shape_fn=_range_shape, not_differentiable=True)


@register_static_value("Range")
def _range_value(op, index):
    args = [static_value(t) for t in op.inputs]
    shape = op.outputs[0]._shape
    if any(a is None for a in args) or not shape.is_fully_defined() \
            or shape.num_elements() > _STATIC_LIMIT:
        return None
    return range_values(*args, op._attrs["Tidx"].as_numpy_dtype)


def _arg_dtype(value):
    if is_tensor_like(value):
        return convert_to_tensor(value).dtype.base_dtype
    return _dtypes.from_numpy(to_numpy(value).dtype)


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF1's name
    """Creates a sequence of numbers from `start` up to (not including) `limit` by `delta`.

    `tf.range(n)` is [0, 1, ..., n-1]. Without `dtype` the result has the widest of the
    arguments' dtypes (int32 < int64 < float32 < float64): int32 for Python ints, float32 if any
    argument is a Python float.

    Args:
      start: the first value (or the limit when `limit` is None).
      limit: the exclusive bound.
      delta: the increment (non-zero; negative counts down).
      dtype: the result's dtype.
      name: the op name (default "range").

    Returns:
      A 1-D Tensor.

    Raises:
      ValueError: if the values are static and delta is 0 or points away from `limit`.
    """
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    with name_scope(name, "Range", list(args)) as scope:
        if dtype is not None:
            target = _dtypes.as_dtype(dtype).base_dtype
        else:
            found = [_arg_dtype(a) for a in args]
            if any(d not in _RANGE_HIERARCHY for d in found):
                raise TypeError(f"tf.range infers its dtype from int32, int64, float32 and "
                                f"float64 arguments, got {[d.name for d in found]}")
            target = max(found, key=_RANGE_HIERARCHY.index)
        tensors = []
        for value, arg_name in zip(args, ("start", "limit", "delta")):
            if is_tensor_like(value):
                value = convert_to_tensor(value)
                if value.dtype.base_dtype != target:
                    import tensorweave
                    value = tensorweave.cast(value, target)
            else:
                value = convert_to_tensor(value, dtype=target, name=arg_name)
            tensors.append(value)
        return apply_op(Range, tensors, name=scope)


def linspace_values(start, stop, num, np_dtype) -> np.ndarray:
    """LinSpace's elements: start + i * step, the last exactly `stop`; ValueError if num <= 0."""
    num = int(num)
    if num <= 0:
        raise ValueError(f"Requires num > 0: {num}")
    start, stop = np.asarray(start, dtype=np_dtype), np.asarray(stop, dtype=np_dtype)
    if num == 1:
        return start.reshape(1)
    step = (stop - start) / np.asarray(num - 1, dtype=np_dtype)
    out = start + np.arange(num, dtype=np_dtype) * step
    out[-1] = stop
    return out


def _linspace_shape(ctx):
    _require_scalars(ctx, ("start", "stop", "num"))
    num = ctx.static_value(2)
    if num is None:
        return TensorShape([None])
    if int(num) <= 0:
        raise ValueError(f"Requires num > 0: {int(num)}")
    return TensorShape([int(num)])


LinSpace = define_op("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"],
                     outputs=["output: T"],
                     attrs=[TypeAttr("T", _dtypes.FLOATING),
                            TypeAttr("Tidx", _INDEX, _dtypes.int32)],
                     shape_fn=_linspace_shape, not_differentiable=True)


def linspace(start, stop, num, name=None):
    """`num` evenly spaced values from `start` to `stop` inclusive (TF1's tf.linspace).

    Args:
      start: a float scalar.
      stop: a float scalar of the same dtype.
      num: an int32/int64 scalar > 0.
      name: the op name (default "LinSpace").

    Returns:
      A 1-D Tensor of `num` values of `start`'s dtype.
    """
    return apply_op(LinSpace, [start, stop, num], name=name)


lin_space = linspace


# --- meshgrid ----------------------------------------------------------------------------------
def meshgrid(*args, **kwargs):
    """Broadcasts N 1-D coordinate vectors to N N-D grids (TF1's tf.meshgrid).

    With indexing="xy" (Cartesian, NumPy's default) the first two output dimensions are
    swapped: for inputs of lengths M and N the outputs are N x M; with "ij" (matrix) M x N.

    Args:
      *args: tensors of rank 1 (other ranks are flattened).
      **kwargs: `indexing` ("xy" or "ij") and `name` (default "meshgrid").

    Returns:
      A list of N Tensors of rank N.

    Raises:
      TypeError: for an unknown keyword argument.
      ValueError: for an unknown indexing mode.
    """
    from tensorweave.ops.array_ops import reshape, size
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this "
                        "function")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got "
                         f"'{indexing}'")
    with name_scope(name, "meshgrid", list(args)):
        n = len(args)
        if not n:
            return []
        tensors = [convert_to_tensor(x, name="stack") for x in args]
        order = list(builtins.range(n))
        if indexing == "xy" and n > 1:
            order[0], order[1] = 1, 0   # Cartesian: x varies along columns
        outputs = []
        for t, axis in zip(tensors, order):
            target = [1] * n
            target[axis] = -1
            outputs.append(reshape(t, target))
        sizes = [size(t) for t in tensors]
        grid_shape = [sizes[order.index(axis)] for axis in builtins.range(n)]
        mult = ones(grid_shape, tensors[0].dtype.base_dtype)
        return [x * mult for x in outputs]
