"""Reductions and element-wise ops over SparseTensor entries: SparseReduceSum/Max (dense or
sparse result), SparseSoftmax, SparseSparseMaximum/Minimum and SparseDenseCwiseAdd/Mul/Div.

Reductions consider only the stored entries (a reduced position without any is 0).
Gradients, as TensorFlow registers them: SparseReduceSum and SparseSoftmax have one for the
values; SparseDenseCwiseMul/Div for the values and the dense operand; SparseReduceMax(Sparse)
and SparseReduceSumSparse have none; SparseSparseMaximum/Minimum and SparseDenseCwiseAdd have
a gradient that raises NotImplementedError. Kernels: kernels/sparse_reduce.py.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.sparse_reshape_ops import (
    as_sparse_input,
    deprecated_alias,
    sparse_components,
)

__all__ = ["sparse_reduce_sum", "sparse_reduce_sum_sparse", "sparse_reduce_max",
           "sparse_reduce_max_sparse", "sparse_softmax", "sparse_maximum", "sparse_minimum"]

TensorShape = _ts.TensorShape
_REDUCE_INPUTS = ["input_indices: int64", "input_values: T", "input_shape: int64",
                  "reduction_axes: int32"]
_SPARSE_OUTPUTS = ["output_indices: int64", "output_values: T", "output_shape: int64"]


def _reduce_shape(ctx):
    """The reduced shape where the dense shape and the axes are graph constants."""
    sparse_components(ctx)
    shape, axes = ctx.static_value(2), ctx.static_value(3)
    if shape is None or axes is None:
        return _ts.unknown_shape()
    rank = len(shape)
    axes = {int(a) % rank for a in np.ravel(axes) if -rank <= a < rank}
    if ctx.attr("keep_dims"):
        return TensorShape([1 if i in axes else int(d) for i, d in enumerate(shape)])
    return TensorShape([int(d) for i, d in enumerate(shape) if i not in axes])


def _reduce_op(name, allowed, sparse_output):
    outputs = _SPARSE_OUTPUTS if sparse_output else ["output: T"]
    shape_fn = (lambda ctx: [_ts.unknown_shape()] * 3) if sparse_output else _reduce_shape
    return define_op(name, inputs=_REDUCE_INPUTS, outputs=outputs,
                     attrs=[Attr("keep_dims", "bool", False), TypeAttr("T", allowed)],
                     shape_fn=shape_fn,
                     not_differentiable=name != "SparseReduceSum",
                     doc="" if name == "SparseReduceSum" else
                     "A reduction of a SparseTensor's entries; not differentiable in TF.")


SparseReduceSum = _reduce_op("SparseReduceSum", _dtypes.NUMERIC, False)
SparseReduceSumSparse = _reduce_op("SparseReduceSumSparse", _dtypes.NUMERIC, True)
SparseReduceMax = _reduce_op("SparseReduceMax", _dtypes.REAL_NUMERIC, False)
SparseReduceMaxSparse = _reduce_op("SparseReduceMaxSparse", _dtypes.REAL_NUMERIC, True)


def _kept_shape(shape, axes):
    """`shape` with the reduced `axes` set to 1 (the keep_dims shape of the reduction)."""
    from tensorweave.ops.array_creation_ops import ones_like
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.array_ops import reshape, size
    from tensorweave.ops.math_ops import equal
    from tensorweave.ops.reduction_ops import reduce_any
    rank = size(shape)
    axes = (reshape(axes, [1, -1]) + rank) % rank
    reduced = reduce_any(equal(reshape(range_(rank), [-1, 1]), axes), axis=1)
    return where_v2(reduced, ones_like(shape), shape)


@SparseReduceSum.gradient
def _sparse_reduce_sum_grad(op, out_grad):
    """Each entry gets the gradient of the position it was summed into."""
    from tensorweave.ops.array_index_ops import gather_nd
    from tensorweave.ops.array_ops import reshape
    indices, _, shape, axes = op.inputs
    kept = _kept_shape(shape, axes)
    return [None, gather_nd(reshape(out_grad, kept), indices // (shape // kept)), None, None]


def _softmax_shape(ctx):
    n, _ = sparse_components(ctx)
    return TensorShape([n])


SparseSoftmax = define_op(
    "SparseSoftmax", inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"],
    outputs=["output: T"], attrs=[TypeAttr("T", [_dtypes.float16, _dtypes.float32,
                                                 _dtypes.float64])],
    shape_fn=_softmax_shape)


def _cwise_shape(ctx):
    n, _ = sparse_components(ctx)
    return TensorShape([n])


def _cwise_op(name):
    return define_op(
        name, inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64", "dense: T"],
        outputs=["output: T"], attrs=[TypeAttr("T", _dtypes.NUMERIC)], shape_fn=_cwise_shape)


SparseDenseCwiseAdd = _cwise_op("SparseDenseCwiseAdd")
SparseDenseCwiseMul = _cwise_op("SparseDenseCwiseMul")
SparseDenseCwiseDiv = _cwise_op("SparseDenseCwiseDiv")


@SparseSoftmax.gradient
def _sparse_softmax_grad(op, grad):
    """d x = (grad - sum_row(grad * y)) * y, the softmax Jacobian applied per row."""
    from tensorweave.ops.math_ops import negative
    indices, _, shape = op.inputs
    y = op.outputs[0]
    row_sums = negative(apply_op(SparseReduceSum, [indices, y * grad, shape, [-1]],
                                 {"keep_dims": True}))
    shifted = apply_op(SparseDenseCwiseAdd, [indices, grad, shape, row_sums])
    return [None, shifted * y, None]


def _cwise_mul_div_grad(op, grad, is_mul):
    """Values: grad times (or over) the dense entry each value met; dense: the entries'
    gradients summed into the (broadcast) dense positions they came from."""
    from tensorweave.ops.array_creation_ops import ones, zeros_like
    from tensorweave.ops.array_index_ops import gather_nd
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import expand_dims, shape, size
    from tensorweave.ops.array_slicing_ops import slice as slice_
    from tensorweave.ops.math_ops import square
    from tensorweave.ops.math_unary_ops import cast
    x_indices, x_values, x_shape, y = op.inputs
    y_shape = cast(shape(y), _dtypes.int64)
    added = expand_dims(size(x_shape) - size(y_shape), 0)
    scaling = x_shape // concat([ones(added, _dtypes.int64), y_shape], 0)
    scaled = slice_(x_indices // scaling, concat([[0], added], 0), [-1, -1])
    dense_values = gather_nd(y, scaled)
    if is_mul:
        dx, dy_values = grad * dense_values, grad * x_values
    else:
        dx = grad / dense_values
        dy_values = grad * (-x_values / square(dense_values))
    from tensorweave.ops.sparse_math_ops import sparse_add
    dy = sparse_add(zeros_like(y), SparseTensor(scaled, dy_values, y_shape))
    return [None, dx, None, dy]


SparseDenseCwiseMul.gradient(lambda op, grad: _cwise_mul_div_grad(op, grad, True))
SparseDenseCwiseDiv.gradient(lambda op, grad: _cwise_mul_div_grad(op, grad, False))


def _not_implemented(op, *grads):
    """TensorFlow registers these gradients but they only raise."""
    raise NotImplementedError(f"Gradient for {op.type} is not implemented.")


SparseDenseCwiseAdd.gradient(_not_implemented)


def _sparse_sparse_shape(ctx):
    sparse_components(ctx)
    sparse_components(ctx, 3)
    return [TensorShape([None, None]), TensorShape([None])]


def _sparse_sparse_op(name):
    op = define_op(
        name, inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64",
                      "b_values: T", "b_shape: int64"],
        outputs=["output_indices: int64", "output_values: T"],
        attrs=[TypeAttr("T", _dtypes.REAL_NUMERIC)], shape_fn=_sparse_sparse_shape)
    op.gradient(_not_implemented)
    return op


SparseSparseMaximum = _sparse_sparse_op("SparseSparseMaximum")
SparseSparseMinimum = _sparse_sparse_op("SparseSparseMinimum")


# --- wrappers -----------------------------------------------------------------------------
def _reduction_axes(sp_input, axis):
    """TF's _ReductionDims: all dimensions when `axis` is None."""
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_ops import size
    if axis is not None:
        return axis
    rank = sp_input.shape.ndims
    if rank is not None:
        return convert_to_tensor(np.arange(rank, dtype=np.int32))
    return range_(0, size(sp_input.dense_shape), 1)


def _reduce(op_def, sp_input, axis, keepdims, reduction_axes, keep_dims):
    keepdims = deprecated_alias("keepdims", keepdims, "keep_dims", keep_dims)
    axis = deprecated_alias("axis", axis, "reduction_axes", reduction_axes)
    sp_input = as_sparse_input(sp_input)
    out = apply_op(op_def, [sp_input.indices, sp_input.values, sp_input.dense_shape,
                            _reduction_axes(sp_input, axis)], {"keep_dims": bool(keepdims)})
    return SparseTensor(*out) if isinstance(out, (list, tuple)) else out


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None):
    """Sums a SparseTensor's entries over `axis` (tf.sparse.reduce_sum); dense result.

    Args:
      sp_input: a SparseTensor.
      axis: the dimensions to reduce, in [-rank, rank) (default: all).
      keepdims: keep reduced dimensions with size 1.
      reduction_axes: deprecated alias of `axis`.
      keep_dims: deprecated alias of `keepdims`.

    Returns:
      The reduced dense Tensor.

    Raises:
      InvalidArgumentError: at run time for an axis out of range.
    """
    return _reduce(SparseReduceSum, sp_input, axis, keepdims, reduction_axes, keep_dims)


def sparse_reduce_sum_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """`sparse_reduce_sum` with a SparseTensor result holding the reduced positions that had
    entries (tf.sparse.reduce_sum_sparse); see `sparse_reduce_sum`."""
    return _reduce(SparseReduceSumSparse, sp_input, axis, keepdims, reduction_axes, keep_dims)


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None,
                      keep_dims=None):
    """Maximum of a SparseTensor's entries over `axis` (tf.sparse.reduce_max); positions
    without entries are 0. Not differentiable. See `sparse_reduce_sum` for the arguments."""
    return _reduce(SparseReduceMax, sp_input, axis, keepdims, reduction_axes, keep_dims)


def sparse_reduce_max_sparse(sp_input, axis=None, keepdims=None, reduction_axes=None,
                             keep_dims=None):
    """`sparse_reduce_max` with a SparseTensor result (tf.sparse.reduce_max_sparse)."""
    return _reduce(SparseReduceMaxSparse, sp_input, axis, keepdims, reduction_axes, keep_dims)


def sparse_softmax(sp_input, name=None):
    """Softmax over the entries of each innermost row of a SparseTensor of rank >= 2
    (tf.sparse.softmax); absent entries take no part.

    Args:
      sp_input: a float SparseTensor.
      name: the name scope (default "SparseSoftmax").

    Returns:
      A SparseTensor with the same indices and the softmax values.

    Raises:
      InvalidArgumentError: at run time for a rank below 2.
    """
    with name_scope(name, "SparseSoftmax") as scope:
        values = apply_op(SparseSoftmax, [sp_input.indices, sp_input.values,
                                          sp_input.dense_shape], name=scope)
        return SparseTensor(sp_input.indices, values, sp_input.dense_shape)


def _sparse_sparse(op_def, sp_a, sp_b, name):
    with name_scope(name, op_def.name) as scope:
        indices, values = apply_op(op_def, [sp_a.indices, sp_a.values, sp_a.dense_shape,
                                            sp_b.indices, sp_b.values, sp_b.dense_shape],
                                   name=scope)
    return SparseTensor(indices, values, sp_a.dense_shape)


def sparse_maximum(sp_a, sp_b, name=None):
    """Element-wise maximum of two SparseTensors of one shape, absent entries counting as 0
    (tf.sparse.maximum).

    Args:
      sp_a: a SparseTensor.
      sp_b: a SparseTensor of the same dense shape.
      name: the name scope (default "SparseSparseMaximum").

    Returns:
      A SparseTensor on the union of the indices, in row-major order.

    Raises:
      InvalidArgumentError: at run time for different dense shapes.
    """
    return _sparse_sparse(SparseSparseMaximum, sp_a, sp_b, name)


def sparse_minimum(sp_a, sp_b, name=None):
    """Element-wise minimum of two SparseTensors (tf.sparse.minimum); see `sparse_maximum`."""
    return _sparse_sparse(SparseSparseMinimum, sp_a, sp_b, name)


def sparse_dense_cwise(op_def, sp_t, dense_t):
    """The values of `sp_t` combined with `dense_t` (broadcast to its shape), as a SparseTensor
    with `sp_t`'s indices (SparseTensor * / + dense)."""
    values = apply_op(op_def, [sp_t.indices, sp_t.values, sp_t.dense_shape, dense_t])
    return SparseTensor(sp_t.indices, values, sp_t.dense_shape)
