"""Cutting and joining SparseTensors: SparseSlice (+SparseSliceGrad), SparseSplit, SparseConcat,
and the compositions tf.sparse_merge and tf.sparse_to_indicator.

SparseSlice's value gradient (SparseSliceGrad) puts each kept entry's gradient back at its
input position; SparseConcat is not differentiable (as in TensorFlow) and neither is SparseSplit
(TensorFlow registers no gradient). Kernels: kernels/sparse_slice.py.
"""
from __future__ import annotations

import numbers

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_shapes, shape_with_rank
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.sparse_reshape_ops import (
    as_sparse_input,
    deprecated_alias,
    sparse_components,
)

__all__ = ["sparse_concat", "sparse_slice", "sparse_split", "sparse_merge",
           "sparse_to_indicator"]

TensorShape = _ts.TensorShape


def _slice_shape(ctx):
    _, rank = sparse_components(ctx)
    shape_with_rank(ctx.input_shape(3), 1)
    shape_with_rank(ctx.input_shape(4), 1)
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


SparseSlice = define_op(
    "SparseSlice",
    inputs=["indices: int64", "values: T", "shape: int64", "start: int64", "size: int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=[TypeAttr("T")], shape_fn=_slice_shape)


def _slice_grad_shape(ctx):
    shape_with_rank(ctx.input_shape(0), 1)
    n = shape_with_rank(ctx.input_shape(1), 2).as_list()[0]
    shape_with_rank(ctx.input_shape(2), 1)
    shape_with_rank(ctx.input_shape(3), 2)
    return TensorShape([n])


SparseSliceGrad = define_op(
    "SparseSliceGrad",
    inputs=["backprop_val_grad: T", "input_indices: int64", "input_start: int64",
            "output_indices: int64"],
    outputs=["val_grad: T"], attrs=[TypeAttr("T", _dtypes.NUMERIC)],
    shape_fn=_slice_grad_shape, not_differentiable=True,
    doc="SparseSlice's value gradient: each kept entry's gradient at its input position.")


@SparseSlice.gradient
def _sparse_slice_grad(op, _indices_grad, values_grad, _shape_grad):
    grad = apply_op(SparseSliceGrad, [values_grad, op.inputs[0], op.inputs[3], op.outputs[0]])
    grad.set_shape(op.inputs[1].shape)
    return [None, grad, None, None, None]


def _split_shape(ctx):
    shape_with_rank(ctx.input_shape(0), 0)
    _, rank = sparse_components(ctx, 1)
    n = ctx.attr("num_split")
    return [TensorShape([None, rank])] * n + [TensorShape([None])] * n + \
        [TensorShape([rank])] * n


SparseSplit = define_op(
    "SparseSplit",
    inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
    outputs=["output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"],
    attrs=[Attr("num_split", "int", minimum=1), TypeAttr("T")], shape_fn=_split_shape,
    not_differentiable=True, doc="Splits a SparseTensor into num_split along split_dim.")


def _concat_shape(ctx):
    """indices [sum of N, rank], values [sum of N], shape [rank]; ranks must agree."""
    count = ctx.attr("N")
    rank, total = None, 0
    for i in range(count):
        indices = shape_with_rank(ctx.input_shape(i), 2).as_list()
        values = shape_with_rank(ctx.input_shape(count + i), 1)
        shape = shape_with_rank(ctx.input_shape(2 * count + i), 1).as_list()
        n = merge_shapes(TensorShape(indices[:1]), values).as_list()[0]
        for dim in (indices[1], shape[0]):
            if rank is not None and dim is not None and dim != rank:
                raise ValueError(f"Dimensions must be equal, but are {rank} and {dim}")
            rank = dim if rank is None else rank
        total = None if total is None or n is None else total + n
    return [TensorShape([total, rank]), TensorShape([total]), TensorShape([rank])]


SparseConcat = define_op(
    "SparseConcat",
    inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=[Attr("concat_dim", "int"), Attr("N", "int", minimum=2), TypeAttr("T")],
    shape_fn=_concat_shape, not_differentiable=True,
    doc="Concatenates SparseTensors along concat_dim, in row-major order.")


def sparse_slice(sp_input, start, size, name=None):
    """The entries of a SparseTensor inside the box [start, start + size) (tf.sparse.slice),
    re-indexed from `start`; the box is clipped to the dense shape.

    Args:
      sp_input: a SparseTensor.
      start: 1-D int64, the box's first index.
      size: 1-D int64, the box's extent.
      name: the name scope (default "SparseSlice").

    Returns:
      A SparseTensor of the clipped box's shape.

    Raises:
      InvalidArgumentError: at run time for `start`/`size` not of the input's rank, or a
        negative size.
    """
    sp_input = as_sparse_input(sp_input)
    start = convert_to_tensor(start, _dtypes.int64)
    size = convert_to_tensor(size, _dtypes.int64)
    with name_scope(name, "SparseSlice") as scope:
        return SparseTensor(*apply_op(SparseSlice, [sp_input.indices, sp_input.values,
                                                    sp_input.dense_shape, start, size],
                                      name=scope))


class _KeywordRequired:
    """The default of sparse_split's first argument: any other value was passed by position."""

    def __repr__(self) -> str:
        return "KeywordRequired()"


_KEYWORD_REQUIRED = _KeywordRequired()


def sparse_split(keyword_required=_KEYWORD_REQUIRED, sp_input=None, num_split=None,
                 axis=None, name=None, split_dim=None):
    """Splits a SparseTensor into `num_split` along `axis` (tf.sparse.split); the first
    dim % num_split parts are one longer. Arguments must be given by keyword.

    Args:
      keyword_required: not to be given (forces keyword arguments).
      sp_input: the SparseTensor to split.
      num_split: the number of parts.
      axis: the dimension to split, in [-rank, rank).
      name: the op name (default "SparseSplit").
      split_dim: deprecated alias of `axis`.

    Returns:
      A list of `num_split` SparseTensors.

    Raises:
      ValueError: for positional arguments or a missing `sp_input`, `num_split` or `axis`.
      InvalidArgumentError: at run time for an axis out of range or too many parts.
    """
    if not isinstance(keyword_required, _KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    axis = deprecated_alias("axis", axis, "split_dim", split_dim)
    if axis is None:
        raise ValueError("axis is required")
    sp_input = as_sparse_input(sp_input)
    outputs = apply_op(SparseSplit, [convert_to_tensor(axis, _dtypes.int64), sp_input.indices,
                                     sp_input.values, sp_input.dense_shape],
                       {"num_split": num_split}, name=name)
    return [SparseTensor(outputs[i], outputs[num_split + i], outputs[2 * num_split + i])
            for i in range(num_split)]


def _static_concat_shape(sp_inputs, axis, expand):
    """The output's static dense shape (TF's rule), or an unknown one."""
    shapes = [s.shape for s in sp_inputs]
    if any(s.ndims is None for s in shapes):
        return _ts.unknown_shape()
    dims = [_max_dim(s[d] for s in shapes) if expand else shapes[0][d]
            for d in range(shapes[0].ndims)]
    along = [_ts.dimension_value(s[axis]) for s in shapes]
    dims[axis] = None if None in along else sum(along)
    return TensorShape([_ts.dimension_value(d) for d in dims])


def _max_dim(dims):
    values = [_ts.dimension_value(d) for d in dims]
    return None if None in values else max(values)


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """Concatenates SparseTensors along `axis` (TF1's tf.sparse.concat); the result is in
    row-major order.

    Args:
      axis: the dimension to concatenate along, in [-rank, rank).
      sp_inputs: a list of SparseTensors.
      name: the op name (default "SparseConcat").
      expand_nonconcat_dim: allow other dimensions to differ (each becomes the maximum).
      concat_dim: deprecated alias of `axis`.
      expand_nonconcat_dims: alias of `expand_nonconcat_dim`.

    Returns:
      The concatenated SparseTensor.

    Raises:
      TypeError: if `sp_inputs` is not a list or tuple of SparseTensors.
      ValueError: for inputs of different ranks.
      InvalidArgumentError: at run time for other dimensions that differ.
    """
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import reshape
    from tensorweave.ops.reduction_ops import reduce_max
    # As in TF, expand_nonconcat_dim's default False counts as given: the alias always fails.
    expand_nonconcat_dim = deprecated_alias("expand_nonconcat_dim", expand_nonconcat_dim,
                                            "expand_nonconcat_dims", expand_nonconcat_dims)
    axis = deprecated_alias("axis", axis, "concat_dim", concat_dim)
    if not isinstance(sp_inputs, (list, tuple)):
        raise TypeError("Inputs must be a list or tuple.")
    sp_inputs = [as_sparse_input(s) for s in sp_inputs]
    if len(sp_inputs) == 1:
        return sp_inputs[0]
    shapes = [s.dense_shape for s in sp_inputs]
    if expand_nonconcat_dim:
        max_shape = reduce_max(concat([reshape(s, [1, -1]) for s in shapes], 0), 0)
        shapes = [concat([max_shape[:axis], s[-1:] if axis == -1 else s[axis:axis + 1],
                          [] if axis == -1 else max_shape[axis + 1:]], 0) for s in shapes]
    indices, values, shape = apply_op(
        SparseConcat, [[s.indices for s in sp_inputs], [s.values for s in sp_inputs], shapes],
        {"concat_dim": axis}, name=name)
    static = _static_concat_shape(sp_inputs, axis, expand_nonconcat_dim)
    if static.is_fully_defined() and all(s.shape.is_fully_defined() for s in sp_inputs):
        shape = convert_to_tensor(static.as_list(), dtype=_dtypes.int64)
    return SparseTensor(indices, values, shape)


def _check_vocab_size(sp_ids, vocab_size):
    """TF's argument checks: one vocabulary size (int or Tensor) per SparseTensor of ids."""
    if isinstance(sp_ids, (SparseTensor, SparseTensorValue)):
        if not isinstance(vocab_size, (Tensor, numbers.Integral)):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found "
                            f"{type(vocab_size)}")
        return [sp_ids], [vocab_size]
    if not isinstance(sp_ids, (list, tuple)):
        raise TypeError(f"sp_ids has to be a SparseTensor or list thereof. Found "
                        f"{type(sp_ids)}")
    if not isinstance(vocab_size, (list, tuple)):
        raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found "
                        f"{type(vocab_size)}")
    for dim in vocab_size:
        if not isinstance(dim, (Tensor, numbers.Integral)):
            raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found "
                            f"{type(dim)}")
    if len(sp_ids) != len(vocab_size):
        raise ValueError("sp_ids and vocab_size have to have equal lengths.")
    return list(sp_ids), list(vocab_size)


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """Turns ids and values into a SparseTensor whose last dimension is the id
    (TF1's tf.sparse_merge): out[..., ids[k]] = values[k] for the k-th entry of a row.

    Args:
      sp_ids: an int SparseTensor of ids, or a list of them (one new dimension each).
      sp_values: a SparseTensor of values with the same indices.
      vocab_size: the size of the new last dimension (a list, with a list of ids).
      name: the name scope (default "SparseMerge").
      already_sorted: skip the reordering when the ids are known to be sorted per row.

    Returns:
      A SparseTensor of shape sp_ids.dense_shape[:-1] + vocab_size.

    Raises:
      TypeError, ValueError: for arguments of the wrong kind or lengths.
    """
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import expand_dims
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.sparse_reshape_ops import sparse_reorder
    sp_ids, vocab_size = _check_vocab_size(sp_ids, vocab_size)
    with name_scope(name, "SparseMerge"):
        sp_ids = [as_sparse_input(s) for s in sp_ids]
        sp_values = as_sparse_input(sp_values)
        ids = [expand_dims(s.values if s.dtype == _dtypes.int64
                           else cast(s.values, _dtypes.int64), axis=1) for s in sp_ids]
        vocab_size = [cast(v, _dtypes.int64) for v in vocab_size]
        new_indices = concat([sp_ids[0].indices[:, :-1]] + ids, 1)
        new_shape = concat([sp_ids[0].dense_shape[:-1], vocab_size], 0)
        result = SparseTensor(new_indices, sp_values.values, new_shape)
        if already_sorted:
            return result
        ordered = sparse_reorder(result)
        return SparseTensor(ordered.indices, ordered.values, new_shape)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool Tensor, True at [..., id] for each id in a row (tf.sparse.to_indicator).

    Args:
      sp_input: an int SparseTensor of ids, shape [..., k].
      vocab_size: the size of the new last dimension (ids must be below it).
      name: the name scope and op name (default "SparseToIndicator").

    Returns:
      A bool Tensor of shape sp_input.dense_shape[:-1] + [vocab_size].

    Raises:
      InvalidArgumentError: at run time for an id out of range.
    """
    from tensorweave.ops.array_creation_ops import fill
    from tensorweave.ops.array_ops import expand_dims, shape
    from tensorweave.ops.sparse_ops import sparse_tensor_to_dense
    sp_input = as_sparse_input(sp_input)
    with name_scope(name, "SparseToIndicator") as scope:
        entries = shape(sp_input.indices)[0]
        flags = SparseTensor(sp_input.indices, fill(expand_dims(entries, 0), True),
                             sp_input.dense_shape)
        merged = sparse_merge(sp_input, flags, vocab_size, scope)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False,
                                      name=scope)
