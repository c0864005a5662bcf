"""Sparse to dense: SparseToDense, tf.sparse_to_dense / tf.sparse.to_dense, sparse_placeholder.

`sparse_placeholder` is a SparseTensor of three placeholders, fed as a SparseTensorValue.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["SparseTensor", "SparseTensorValue", "sparse_placeholder", "sparse_tensor_to_dense",
           "sparse_to_dense"]


def _sparse_to_dense_shape(ctx):
    """The output's shape is the value of `output_shape` where the graph fixes it."""
    ctx.input_shape(0).with_rank_at_most(2)
    ctx.input_shape(1).with_rank_at_most(1)
    return _ts.TensorShape([]) if ctx.input_shape(1).ndims == 0 else ctx.static_shape(1)


SparseToDense = define_op(
    "SparseToDense",
    inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
            "default_value: T"],
    outputs=["dense: T"],
    attrs=[Attr("validate_indices", "bool", True), TypeAttr("T"),
           TypeAttr("Tindices", [_dtypes.int32, _dtypes.int64])],
    shape_fn=_sparse_to_dense_shape)


@SparseToDense.gradient
def _sparse_to_dense_grad(op, grad):
    """Each value gets the gradient at its index; the default gets the rest of the sum."""
    from tensorweave.ops.array_index_ops import gather_nd
    from tensorweave.ops.array_ops import reshape
    from tensorweave.ops.reduction_ops import reduce_sum
    indices = op.inputs[0]
    if indices.shape.ndims is not None and indices.shape.ndims < 2:
        indices = reshape(indices, [-1, 1])
    values_grad = gather_nd(grad, indices)
    if op.inputs[2].shape.ndims == 0:   # a scalar value broadcast to every index
        values_grad = reduce_sum(values_grad)
    default_grad = reduce_sum(grad) - reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """Dense tensor of shape `output_shape` with `sparse_values` at `sparse_indices`.

    Args:
      sparse_indices: int32/int64, 0-D, 1-D [N] or 2-D [N, rank] indices.
      output_shape: 1-D, the dense shape.
      sparse_values: 0-D (one value for every index) or 1-D [N] values.
      default_value: 0-D, the value everywhere else.
      validate_indices: check that indices are sorted, unique and in bounds.
      name: the op name.

    Returns:
      A dense Tensor of `sparse_values`' dtype.

    Raises:
      InvalidArgumentError: at run time for unsorted, repeated or out-of-bounds indices
        when `validate_indices`.
    """
    values = convert_to_tensor(sparse_values)
    default = convert_to_tensor(default_value, dtype=values.dtype.base_dtype)
    return apply_op(SparseToDense, [sparse_indices, output_shape, values, default],
                    {"validate_indices": validate_indices}, name=name or "SparseToDense")


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense Tensor of a SparseTensor (TF1's tf.sparse_tensor_to_dense, tf.sparse.to_dense).

    Args:
      sp_input: a SparseTensor (or SparseTensorValue).
      default_value: the value of absent entries; zero (or "" for strings) by default.
      validate_indices: check that indices are sorted, unique and in bounds.
      name: the op name.
    """
    sp_input = SparseTensor.from_value(sp_input)
    if default_value is None:
        dtype = sp_input.dtype.base_dtype
        default_value = b"" if dtype == _dtypes.string else dtype.as_numpy_dtype(0)
        default = convert_to_tensor(default_value, dtype=dtype, name="zeros")
    else:
        default = default_value
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values, default,
                           validate_indices=validate_indices, name=name)


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor that must be fed, as a SparseTensorValue or (indices, values, shape).

    Args:
      dtype: the values' dtype.
      shape: the dense shape, optionally partial; a fully unknown one must be fed too.
      name: the name prefix of the placeholders.
    """
    from tensorweave.ops.constant_op import placeholder, placeholder_with_default
    shape = _ts.as_shape(shape) if shape is not None else _ts.unknown_shape()
    rank = shape.ndims
    prefix = f"{name}/" if name else None
    if rank is None:   # TF makes the shape placeholder first in this case
        dense_shape = placeholder(_dtypes.int64, [None], name=prefix and prefix + "shape")
    values = placeholder(dtype, [None], name=prefix and prefix + "values")
    indices = placeholder(_dtypes.int64, [None, rank], name=prefix and prefix + "indices")
    if shape.is_fully_defined():
        dense_shape = convert_to_tensor(shape.as_list(), dtype=_dtypes.int64,
                                        name=prefix + "shape" if prefix else "Const")
    elif rank is not None:
        default = convert_to_tensor([-1 if d is None else d for d in shape.as_list()],
                                    dtype=_dtypes.int64)
        dense_shape = placeholder_with_default(default, [rank],
                                               name=prefix and prefix + "shape")
    return SparseTensor(indices, values, dense_shape)
