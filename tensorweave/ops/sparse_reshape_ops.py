"""Rearranging SparseTensors: SparseReorder, SparseReshape, SparseFillEmptyRows(+Grad), and the
compositions tf.sparse_retain, sparse_reset_shape, sparse_transpose, sparse.expand_dims,
sparse.eye and sparse.from_dense (built from dense ops, as in TensorFlow).

Only the values of a SparseTensor are differentiable: SparseReorder's gradient un-permutes the
value gradient, SparseFillEmptyRows' (SparseFillEmptyRowsGrad) routes it back to the input
values and sums the filled-in entries into `default_value`. Kernels: kernels/sparse_reshape.py.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_shapes, shape_with_rank
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.static_value import static_shape_value, static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["sparse_reorder", "sparse_reshape", "sparse_fill_empty_rows", "sparse_retain",
           "sparse_reset_shape", "sparse_transpose"]

TensorShape = _ts.TensorShape


def as_sparse_input(value) -> SparseTensor:
    """A SparseTensor from a SparseTensor or SparseTensorValue (TF's TypeError otherwise)."""
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if not isinstance(value, SparseTensor):
        raise TypeError("Input must be a SparseTensor.")
    return value


def deprecated_alias(name: str, value, alias_name: str, alias):
    """`value`, or the deprecated `alias` given in its place (TF's
    deprecated_argument_lookup): giving both is a ValueError."""
    if alias is None:
        return value
    if value is not None:
        raise ValueError(f"Cannot specify both '{name}' and '{alias_name}'.")
    return alias


def sparse_components(ctx, first: int = 0):
    """Checks inputs first..first+2 as (indices [N, R], values [N], shape [R]); (N, R)."""
    indices = shape_with_rank(ctx.input_shape(first), 2)
    values = shape_with_rank(ctx.input_shape(first + 1), 1)
    shape = shape_with_rank(ctx.input_shape(first + 2), 1)
    n = merge_shapes(TensorShape(indices.as_list()[:1]), values).as_list()[0]
    rank = merge_shapes(TensorShape(indices.as_list()[1:]), shape).as_list()[0]
    return n, rank


def _reorder_shape(ctx):
    n, rank = sparse_components(ctx)
    return [TensorShape([n, rank]), TensorShape([n])]


SparseReorder = define_op(
    "SparseReorder", inputs=["input_indices: int64", "input_values: T", "input_shape: int64"],
    outputs=["output_indices: int64", "output_values: T"], attrs=[TypeAttr("T")],
    shape_fn=_reorder_shape)


@SparseReorder.gradient
def _sparse_reorder_grad(op, _indices_grad, values_grad):
    """values were permuted into row-major order, output[k] = input[order[k]] (order: the
    reorder of 0..N-1): scatter their gradient back to the input positions."""
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_segment_ops import unsorted_segment_sum
    indices, _, dense_shape = op.inputs
    count = shape(indices)[0]
    _, order = apply_op(SparseReorder, [indices, range_(count), dense_shape])
    return [None, unsorted_segment_sum(values_grad, order, count), None]


def _reshape_shape(ctx):
    indices = shape_with_rank(ctx.input_shape(0), 2)
    merge_shapes(TensorShape(indices.as_list()[1:]), shape_with_rank(ctx.input_shape(1), 1))
    new_rank = shape_with_rank(ctx.input_shape(2), 1).as_list()[0]
    return [TensorShape([indices.as_list()[0], new_rank]), TensorShape([new_rank])]


SparseReshape = define_op(
    "SparseReshape", inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
    outputs=["output_indices: int64", "output_shape: int64"], shape_fn=_reshape_shape,
    not_differentiable=True, doc="Re-indexes a SparseTensor for a new dense shape.")


def _fill_shape(ctx):
    n, rank = sparse_components(ctx)
    shape_with_rank(ctx.input_shape(3), 0)
    shape = ctx.static_value(2)
    rows = int(shape[0]) if shape is not None and len(shape) else None
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rows]),
            TensorShape([n])]


SparseFillEmptyRows = define_op(
    "SparseFillEmptyRows",
    inputs=["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
    outputs=["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"],
    attrs=[TypeAttr("T")], shape_fn=_fill_shape)


def _fill_grad_shape(ctx):
    n = shape_with_rank(ctx.input_shape(0), 1)
    shape_with_rank(ctx.input_shape(1), 1)
    return [n, TensorShape([])]


SparseFillEmptyRowsGrad = define_op(
    "SparseFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
    outputs=["d_values: T", "d_default_value: T"], attrs=[TypeAttr("T")],
    shape_fn=_fill_grad_shape, not_differentiable=True,
    doc="SparseFillEmptyRows' value gradient: input values' share and the default's sum.")


@SparseFillEmptyRows.gradient
def _sparse_fill_empty_rows_grad(op, _indices_grad, values_grad, _empty_grad, _map_grad):
    d_values, d_default = apply_op(SparseFillEmptyRowsGrad, [op.outputs[3], values_grad])
    return [None, d_values, None, d_default]


def sparse_reorder(sp_input, name=None):
    """Reorders a SparseTensor's entries into canonical row-major order (tf.sparse.reorder).

    Args:
      sp_input: a SparseTensor (or SparseTensorValue).
      name: the op name (default "SparseReorder").

    Returns:
      A SparseTensor with the same dense shape and entries, indices sorted row-major.

    Raises:
      TypeError: if `sp_input` is not a SparseTensor.
    """
    from tensorweave.ops.array_ops import identity
    sp_input = as_sparse_input(sp_input)
    indices, values = apply_op(SparseReorder, [sp_input.indices, sp_input.values,
                                               sp_input.dense_shape], name=name)
    shape = sp_input.shape
    dense_shape = shape.as_list() if shape.is_fully_defined() else identity(
        sp_input.dense_shape)
    return SparseTensor(indices, values, dense_shape)


def _static_reshape(sp_input, shape) -> list | None:
    """The reshaped dense shape when the graph fixes it; TF's build-time size check."""
    known = static_shape_value(shape)
    if known.ndims is None or not sp_input.shape.is_fully_defined():
        return None
    given = static_value(shape)
    if given is not None and int(np.sum(given == -1)) > 1:
        raise ValueError(f"At most one dimension can be inferred (-1). Found: {given}")
    dims = known.as_list()
    size = int(np.prod(sp_input.shape.as_list()))
    implied = [i for i, d in enumerate(dims) if d is None]
    if len(implied) > 1 or (implied and 0 in dims):
        return None
    out = list(dims)
    if implied:
        out[implied[0]] = size // int(np.prod([d for d in dims if d is not None]))
    if int(np.prod(out)) != size:
        raise ValueError(f"Cannot reshape a tensor with {size} elements to shape {dims} "
                         f"({int(np.prod(out))} elements).")
    return out


def sparse_reshape(sp_input, shape, name=None):
    """Reshapes a SparseTensor to a new dense shape, keeping its row-major order
    (tf.sparse.reshape). One dimension of `shape` may be -1.

    Args:
      sp_input: a SparseTensor.
      shape: 1-D int64, the new dense shape.
      name: the name scope (default "SparseReshape").

    Returns:
      A SparseTensor of the same values, re-indexed for `shape`.

    Raises:
      ValueError: if the graph fixes both shapes and they hold different numbers of elements.
      InvalidArgumentError: at run time, for an impossible reshape.
    """
    from tensorweave.ops.array_ops import identity
    from tensorweave.ops.math_unary_ops import cast
    sp_input = as_sparse_input(sp_input)
    shape = cast(shape, _dtypes.int64)
    with name_scope(name, "SparseReshape") as scope:
        indices, new_shape = apply_op(SparseReshape, [sp_input.indices, sp_input.dense_shape,
                                                      shape], name=scope)
        static = _static_reshape(sp_input, shape)
        if static is not None:
            from tensorweave.ops.constant_op import constant
            new_shape = constant(static, _dtypes.int64)
        return SparseTensor(indices, identity(sp_input.values), new_shape)


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """Adds `default_value` at [row, 0, ..., 0] for every row without entries
    (tf.sparse.fill_empty_rows).

    Args:
      sp_input: a SparseTensor of rank >= 1.
      default_value: a scalar of the values' dtype.
      name: the name scope (default "SparseFillEmptyRows").

    Returns:
      (sp_ordered_output, empty_row_indicator): the filled SparseTensor in row-major order and
      a bool vector, True for rows that were empty.

    Raises:
      InvalidArgumentError: at run time for an index outside the dense shape.
    """
    sp_input = as_sparse_input(sp_input)
    with name_scope(name, "SparseFillEmptyRows"):
        default = convert_to_tensor(default_value, dtype=sp_input.values.dtype)
        indices, values, empty, _ = apply_op(
            SparseFillEmptyRows, [sp_input.indices, sp_input.values, sp_input.dense_shape,
                                  default])
        return SparseTensor(indices, values, sp_input.dense_shape), empty


def sparse_retain(sp_input, to_retain):
    """Keeps the entries of a SparseTensor where `to_retain` is True (tf.sparse.retain).

    Args:
      sp_input: a SparseTensor with N entries.
      to_retain: a bool vector of length N.

    Returns:
      A SparseTensor of the same dense shape with the retained entries.

    Raises:
      ValueError: if `to_retain` is not a vector of length N.
    """
    from tensorweave.ops.array_index_ops import gather, where_v2
    from tensorweave.ops.array_ops import identity, reshape
    sp_input = as_sparse_input(sp_input)
    to_retain = convert_to_tensor(to_retain)
    retain_shape = to_retain.shape.with_rank(1)
    sp_input.values.shape.with_rank(1)[0].assert_is_compatible_with(retain_shape[0])
    where_true = reshape(where_v2(to_retain), [-1])
    return SparseTensor(gather(sp_input.indices, where_true),
                        gather(sp_input.values, where_true), identity(sp_input.dense_shape))


def sparse_reset_shape(sp_input, new_shape=None):
    """Sets a SparseTensor's dense shape (tf.sparse.reset_shape): to `new_shape`, or to the
    tight bounding box of its indices.

    Args:
      sp_input: a SparseTensor.
      new_shape: optional 1-D int64, each dimension >= the current one.

    Returns:
      A SparseTensor with the same entries and the new dense shape.

    Raises:
      ValueError: if the graph fixes both shapes and `new_shape` is smaller, or has another
        rank; at run time an InvalidArgumentError from the same checks.
    """
    from tensorweave.ops import check_ops
    from tensorweave.ops.array_creation_ops import ones_like
    from tensorweave.ops.array_ops import identity
    from tensorweave.ops.array_ops import shape as shape_of
    from tensorweave.ops.control_flow_ops import with_dependencies
    from tensorweave.ops.math_ops import maximum
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.reduction_ops import reduce_max
    sp_input = as_sparse_input(sp_input)
    indices, values = identity(sp_input.indices), identity(sp_input.values)
    in_shape = identity(sp_input.dense_shape)
    if new_shape is None:
        bound = reduce_max(indices, axis=0) + ones_like(in_shape)
        return SparseTensor(indices, values, maximum(np.int64(0), bound))
    out = convert_to_tensor(new_shape)
    out.shape.with_rank(1)
    out = cast(out, _dtypes.int64)
    out.shape[0].assert_is_compatible_with(in_shape.shape[0])
    known = static_value(out)
    if known is not None and sp_input.shape.is_fully_defined():
        current = np.array(sp_input.shape.as_list())
        if not np.all(current <= known):
            raise ValueError("Requested new_shape should have dimension sizes >= "
                             f"sp_input.shape.  Found new_shape ({current}), sp_input.shape "
                             f"({known}).")
        return SparseTensor(indices, values, known)
    out = with_dependencies([check_ops.assert_equal(shape_of(in_shape), shape_of(out))], out)
    out = with_dependencies([check_ops.assert_less_equal(in_shape, out)], out)
    return SparseTensor(indices, values, out)


def sparse_transpose(sp_input, perm=None, name=None):
    """Transposes a SparseTensor's dimensions by `perm` (default: reversed), reordering its
    entries (tf.sparse.transpose).

    Args:
      sp_input: a SparseTensor.
      perm: the permutation of dimensions.
      name: the name scope (default "SparseTranspose").

    Returns:
      The transposed SparseTensor, in row-major order.
    """
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.array_ops import size, transpose
    sp_input = as_sparse_input(sp_input)
    with name_scope(name, "SparseTranspose") as scope:
        if perm is None:
            rank = sp_input.shape.ndims
            if rank is not None:
                perm = np.arange(rank)[::-1].copy()
            else:
                rank = size(sp_input.dense_shape)
                perm = (rank - 1) - range_(0, rank, 1)
        indices = transpose(gather(transpose(sp_input.indices), perm))
        perm_value = static_value(convert_to_tensor(perm))
        if perm_value is not None and sp_input.shape.is_fully_defined():
            old = sp_input.shape.as_list()
            dense_shape = [old[int(p)] for p in perm_value]
        else:
            dense_shape = gather(sp_input.dense_shape, perm)
        return sparse_reorder(SparseTensor(indices, sp_input.values, dense_shape),
                              name=None if scope is None else "SparseReorder")


def sparse_expand_dims(sp_input, axis=None, name=None):
    """Inserts a dimension of size 1 at `axis` of a SparseTensor (tf.sparse.expand_dims).

    Args:
      sp_input: a SparseTensor.
      axis: an int in [-rank - 1, rank] (default -1, a new last dimension).
      name: the name scope (default "expand_dims").

    Returns:
      A SparseTensor of rank + 1 with the same values.

    Raises:
      TypeError: if `axis` is neither an int nor a Tensor.
    """
    from tensorweave.framework.operation import Tensor
    from tensorweave.ops.array_creation_ops import zeros
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import shape, size
    from tensorweave.ops.array_slicing_ops import slice as slice_
    sp_input = as_sparse_input(sp_input)
    rank = _ts.dimension_value(sp_input.dense_shape.shape[0])
    axis = -1 if axis is None else axis
    with name_scope(name, "expand_dims"):
        if isinstance(axis, (int, np.integer)):
            axis = convert_to_tensor(axis, dtype=_dtypes.int32, name="axis")
        elif not isinstance(axis, Tensor):
            raise TypeError("axis must be an integer value in range [-rank(sp_input) - 1, "
                            "rank(sp_input)]")
        if rank is None:
            rank = size(sp_input.dense_shape)
        axis = where_v2(axis >= 0, axis, axis + rank + 1)
        new_column = zeros([shape(sp_input.indices)[0], 1], dtype=_dtypes.int64)
        indices = concat([slice_(sp_input.indices, [0, 0], [-1, axis]), new_column,
                          slice_(sp_input.indices, [0, axis], [-1, -1])], axis=1)
        one = convert_to_tensor([1], dtype=_dtypes.int64, name="new_shape")
        dense_shape = concat([slice_(sp_input.dense_shape, [0], [axis]), one,
                              slice_(sp_input.dense_shape, [axis], [-1])], axis=0)
        return SparseTensor(indices, sp_input.values, dense_shape)


def sparse_eye(num_rows, num_columns=None, dtype=_dtypes.float32, name=None):
    """A sparse identity matrix of shape [num_rows, num_columns] (tf.sparse.eye).

    Args:
      num_rows: a scalar, the number of rows.
      num_columns: a scalar, the number of columns (default `num_rows`).
      dtype: the values' dtype.
      name: the name scope (default "eye").

    Returns:
      A SparseTensor with ones on the main diagonal.
    """
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.math_ops import minimum
    from tensorweave.ops.math_unary_ops import cast
    with name_scope(name, "eye"):
        num_rows = cast(convert_to_tensor(num_rows, name="num_rows"), _dtypes.int64)
        num_columns = num_rows if num_columns is None else cast(
            convert_to_tensor(num_columns, name="num_columns"), _dtypes.int64)
        diag_size = minimum(num_rows, num_columns)
        diag = range_(diag_size, dtype=_dtypes.int64)
        return SparseTensor(stack([diag, diag], axis=1), ones(diag_size, dtype=dtype),
                            stack([num_rows, num_columns]))


def from_dense(tensor, name=None):
    """The SparseTensor of a dense tensor's non-zero entries (tf.sparse.from_dense).

    Args:
      tensor: a dense Tensor.
      name: the name scope (default "dense_to_sparse").

    Returns:
      A SparseTensor with the non-zero entries of `tensor`, in row-major order.
    """
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.array_index_ops import gather_nd, where_v2
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_ops import not_equal
    with name_scope(name, "dense_to_sparse"):
        tensor = convert_to_tensor(tensor)
        indices = where_v2(not_equal(tensor, zeros_like(tensor)))
        return SparseTensor(indices, gather_nd(tensor, indices),
                            shape(tensor, out_type=_dtypes.int64))
