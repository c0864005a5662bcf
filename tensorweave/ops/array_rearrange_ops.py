"""Rolling and broadcasting: Roll, BroadcastTo, BroadcastArgs, and tf.broadcast_static_shape.

Roll shifts entries cyclically along axes; its gradient rolls back by the negated shift.
BroadcastTo materializes NumPy-style broadcasting; its gradient sums over the broadcast axes
(found by BroadcastGradientArgs, as in TensorFlow) and reshapes to the input's shape.
BroadcastArgs computes the broadcast of two shape vectors at run time; broadcast_static_shape
does it on TensorShapes while the graph is built. Kernels live in `kernels/array_rearrange.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.static_value import register_static_value, static_values

__all__ = ["broadcast_dynamic_shape", "broadcast_static_shape", "broadcast_to", "roll"]

TensorShape = _ts.TensorShape
_INDEX = _dtypes.INDEX


def _dims(shape: TensorShape):
    return shape._dims


def with_rank_at_most(dims, rank: int):
    """`dims` (a dims tuple, None for unknown rank) checked to have at most `rank` dims."""
    if dims is not None and len(dims) > rank:
        raise ValueError(f"Shape must be at most rank {rank} but is rank {len(dims)}")
    return dims


# --- Roll --------------------------------------------------------------------------------------
def _roll_shape(ctx):
    """The input's shape; shift and axis are scalars or vectors of one shape."""
    dims = _dims(ctx.input_shape(0))
    if dims is not None and not dims:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    shift = with_rank_at_most(_dims(ctx.input_shape(1)), 1)
    axis = with_rank_at_most(_dims(ctx.input_shape(2)), 1)
    merge_dims(shift, axis)
    return ctx.input_shape(0)


Roll = define_op("Roll", inputs=["input: T", "shift: Tshift", "axis: Taxis"],
                 outputs=["output: T"],
                 attrs=[TypeAttr("T"), TypeAttr("Tshift", _INDEX), TypeAttr("Taxis", _INDEX)],
                 shape_fn=_roll_shape)


@Roll.gradient
def _roll_grad(op, grad):
    """Rolling is a permutation; its adjoint rolls back by -shift along the same axes."""
    from tensorweave.ops.math_unary_ops import negative
    return [apply_op(Roll, [grad, negative(op.inputs[1]), op.inputs[2]]), None, None]


def roll(input, shift, axis, name=None):  # noqa: A002 - TF1's argument name
    """Rolls the elements of a tensor along axes (TF1's tf.roll / tf.manip.roll).

    Entries shifted past the last position re-enter at the first. Shifts along a repeated
    axis add up; a negative shift rolls the other way.

    Args:
      input: a Tensor of rank >= 1.
      shift: an int32/int64 scalar or vector: how far to roll along each `axis`.
      axis: an int32/int64 scalar or vector of the same shape as `shift` (negative axes
        count from the end).
      name: the op name (default "Roll").

    Returns:
      A Tensor like `input`.

    Raises:
      ValueError: if `input` is a scalar, or `shift` and `axis` differ in shape, statically.
    """
    return apply_op(Roll, [input, shift, axis], name=name)


# --- BroadcastTo -------------------------------------------------------------------------------
def _broadcast_to_shape(ctx):
    """The target shape, with input dimensions > 1 filled in (and checked) from the right."""
    dims_with_rank(_dims(ctx.input_shape(1)), 1)
    out = ctx.static_shape(1)
    in_dims = _dims(ctx.input_shape(0))
    if out.ndims is None or in_dims is None:
        return out
    with_rank_at_most(in_dims, out.ndims)
    out_dims = list(_dims(out))
    for i in range(1, len(in_dims) + 1):
        d, o = in_dims[-i], out_dims[-i]
        if d is not None and d > 1:
            if o is not None and o != d:
                raise ValueError(f"Dimensions must be equal, but are {d} and {o}")
            out_dims[-i] = d
    return TensorShape(out_dims)


BroadcastTo = define_op("BroadcastTo", inputs=["input: T", "shape: Tidx"],
                        outputs=["output: T"],
                        attrs=[TypeAttr("T"), TypeAttr("Tidx", _INDEX, _dtypes.int32)],
                        shape_fn=_broadcast_to_shape)


@BroadcastTo.gradient
def _broadcast_to_grad(op, grad):
    """Sums the gradient over the broadcast axes, keeping them, then reshapes to the input."""
    from tensorweave.ops.array_ops import reshape, shape
    from tensorweave.ops.broadcast_grad_ops import broadcast_gradient_args
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.reduction_ops import reduce_sum
    x, target = op.inputs
    x_shape = shape(x, out_type=target.dtype)
    if op.outputs[0].shape.is_fully_defined():
        target = constant(op.outputs[0].shape.as_list(), dtype=target.dtype)
    _, axes = broadcast_gradient_args(target, x_shape)
    return [reshape(reduce_sum(grad, axes, keepdims=True), x_shape), None]


def broadcast_to(input, shape, name=None):  # noqa: A002 - TF1's argument name
    """Broadcasts a tensor to a shape, as NumPy broadcasting would (TF1's tf.broadcast_to).

    Dimensions are matched from the right; an input dimension of 1 (or a missing leading one)
    is repeated to the target size, any other must equal it.

    Args:
      input: a Tensor.
      shape: a 1-D int32/int64 Tensor or list: the target shape.
      name: the op name (default "BroadcastTo").

    Returns:
      A Tensor of `input`'s dtype and shape `shape`.

    Raises:
      ValueError: if the shapes are statically incompatible.
    """
    return apply_op(BroadcastTo, [input, shape], name=name)


# --- BroadcastArgs and broadcast_static_shape --------------------------------------------------
def _broadcast_args_shape(ctx):
    """A vector as long as the longer of the two shape vectors."""
    (a,) = dims_with_rank(_dims(ctx.input_shape(0)), 1)
    (b,) = dims_with_rank(_dims(ctx.input_shape(1)), 1)
    return TensorShape([None if a is None or b is None else max(a, b)])


BroadcastArgs = define_op("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
                          attrs=[TypeAttr("T", _INDEX, _dtypes.int32)],
                          shape_fn=_broadcast_args_shape, not_differentiable=True)


def broadcast_shape_of(a, b) -> list | None:
    """The NumPy broadcast of two concrete shapes, or None if they are incompatible."""
    rank = max(len(a), len(b))
    pa = [1] * (rank - len(a)) + list(a)
    pb = [1] * (rank - len(b)) + list(b)
    if any(x != y and x != 1 and y != 1 for x, y in zip(pa, pb)):
        return None
    return [y if x == 1 else x for x, y in zip(pa, pb)]


@register_static_value("BroadcastArgs")
def _broadcast_args_value(op, index):
    args = static_values(op.inputs)
    if args is None:
        return None
    out = broadcast_shape_of(np.ravel(args[0]).tolist(), np.ravel(args[1]).tolist())
    return None if out is None else np.asarray(out, dtype=args[0].dtype)


def broadcast_dynamic_shape(shape_x, shape_y):
    """Computes the broadcast of two shape vectors at run time (TF1's tf.broadcast_dynamic_shape).

    Args:
      shape_x: a 1-D int32/int64 Tensor, e.g. the result of `tf.shape`.
      shape_y: a 1-D Tensor of the same dtype.

    Returns:
      A 1-D Tensor (op "BroadcastArgs"): the shape a broadcasting op on tensors of these
      shapes would produce.

    Raises:
      ValueError: if either input is statically not a vector.
    """
    return apply_op(BroadcastArgs, [shape_x, shape_y])


def broadcast_static_shape(shape_x, shape_y):
    """Computes the broadcast of two static shapes (TF1's tf.broadcast_static_shape).

    An unknown dimension facing a known one greater than 1 takes that size; facing 1 or
    another unknown dimension, it stays unknown.

    Args:
      shape_x: a TensorShape.
      shape_y: a TensorShape.

    Returns:
      The broadcast TensorShape (of unknown rank if either rank is unknown).

    Raises:
      ValueError: if the shapes cannot be broadcast together.
    """
    if shape_x.ndims is None or shape_y.ndims is None:
        return _ts.unknown_shape()
    rank = max(shape_x.ndims, shape_y.ndims)
    xs = [1] * (rank - shape_x.ndims) + shape_x.as_list()
    ys = [1] * (rank - shape_y.ndims) + shape_y.as_list()
    dims = []
    for x, y in zip(xs, ys):
        if x is None or y is None:
            known = x if x is not None else y
            dims.append(known if known is not None and known > 1 else None)
        elif x != y and x != 1 and y != 1:
            raise ValueError("Incompatible shapes for broadcasting. Two shapes are compatible "
                             "if for each dimension pair they are either equal or one of them "
                             f"is 1. Received: {shape_x} and {shape_y}.")
        else:
            dims.append(y if x == 1 else x)
    return TensorShape(dims)
