"""Sorting and searching: tf.sort and tf.argsort (composites of TopKV2, as TensorFlow builds
them), tf.searchsorted (ops LowerBound / UpperBound).

Sorting follows TensorFlow's sort_ops.py op for op: a descending sort is a TopKV2 with k the
length of the sorted axis, the axis swapped with the last one by a Transpose when needed; an
ascending sort is a descending sort of an order-reversing map (-x for floats, -x - 1 for
signed integers, dtype.max - x for unsigned ones) mapped back. TopKV2 orders equal values by
index, so both directions (and argsort's `stable`) are stable. Gradients flow through TopKV2,
Transpose and Neg. LowerBound/UpperBound are not differentiable (integer outputs); their
kernel lives in `kernels/sorting.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_index_ops import where_v2
from tensorweave.ops.array_ops import rank, reshape, shape_internal, transpose
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import equal
from tensorweave.ops.reduction_ops import top_k

__all__ = ["argsort", "searchsorted", "sort"]


# --- sort, argsort -----------------------------------------------------------------------------
def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sorts a tensor along one axis (TF1's tf.sort).

    Equal values keep their order. NaN is not ordered: where NaN occurs the order follows
    TopKV2's kernel (see `tf.nn.top_k`), which need not equal TensorFlow's.

    Args:
      values: a real numeric Tensor of rank >= 1.
      axis: the axis to sort, a constant int (default -1, the last axis).
      direction: "ASCENDING" (default) or "DESCENDING".
      name: a name scope for the ops (default "sort").

    Returns:
      A Tensor like `values`, sorted along `axis`.

    Raises:
      ValueError: if `axis` is not a constant scalar or is out of range, or `direction` is
        not one of the two.
      TypeError: if `values` is not of a real numeric dtype.
    """
    with name_scope(name, "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort a tensor along one axis (TF1's tf.argsort).

    Args:
      values: a real numeric Tensor of rank >= 1.
      axis: the axis to sort, a constant int (default -1, the last axis).
      direction: "ASCENDING" (default) or "DESCENDING".
      stable: accepted as in TensorFlow; equal values always keep their order (lower index
        first).
      name: a name scope for the ops (default "argsort").

    Returns:
      An int32 Tensor shaped like `values`: along `axis`, the positions of the sorted values.

    Raises:
      ValueError: if `axis` is not a constant scalar or is out of range, or `direction` is
        not one of the two.
      TypeError: if `values` is not of a real numeric dtype.
    """
    del stable  # TopKV2 breaks ties by index: every sort here is stable.
    with name_scope(name, "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)


def _sort_or_argsort(values, axis, direction: str, return_argsort: bool):
    if direction not in _SORT_IMPL:
        raise ValueError(f"Argument `direction` should be one of {', '.join(sorted(_SORT_IMPL))}"
                         f". Received: direction={direction}")
    axis = convert_to_tensor(axis, name="axis")
    axis_static = static_value(axis)
    if axis.shape.ndims not in (None, 0) or axis_static is None:
        raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={axis}.")
    values = convert_to_tensor(values, name="values")
    return _SORT_IMPL[direction](values, int(axis_static), return_argsort)


def _descending_sort(values, axis: int, return_argsort: bool):
    """TopKV2 over the whole axis; a non-last axis is swapped with the last one first."""
    k = shape_internal(values)[axis]
    static_rank = values.shape.ndims
    if axis == -1 or axis + 1 == static_rank:
        top_k_input, transposition = values, None
    else:
        if static_rank is not None:
            axis += static_rank if axis < 0 else 0
            transposition = constant(np.r_[np.arange(axis), [static_rank - 1],
                                           np.arange(axis + 1, static_rank - 1), [axis]],
                                     name="transposition")
        else:
            transposition = _swap_with_last(axis, rank(values))
        top_k_input = transpose(values, transposition)
    sorted_values, indices = top_k(top_k_input, k)
    out = indices if return_argsort else sorted_values
    # A swap of two axes is its own inverse.
    return transpose(out, transposition) if transposition is not None else out


def _swap_with_last(axis: int, rank_t):
    """The permutation [0, ..., rank) with `axis` and rank - 1 swapped, for a rank known only
    at run time: position p maps to rank - 1 if p == axis, to axis if p == rank - 1."""
    axis_t = axis + rank_t if axis < 0 else axis
    positions = _range(0, rank_t, 1)
    last = rank_t - 1
    return where_v2(equal(positions, axis_t), last,
                    where_v2(equal(positions, last), axis_t, positions))


def _ascending_sort(values, axis: int, return_argsort: bool):
    """A descending sort of an order-reversing map of `values`, mapped back."""
    dtype = values.dtype
    if dtype.is_unsigned:
        offset = dtype.max
        out = _descending_sort(offset - values, axis, return_argsort)
        return out if return_argsort else offset - out
    if dtype.is_integer:
        # -x - 1 (= ~x) maps the minimum to the maximum without overflow; -x would not.
        out = _descending_sort(-values - 1, axis, return_argsort)
        return out if return_argsort else -out - 1
    out = _descending_sort(-values, axis, return_argsort)
    return out if return_argsort else -out


_SORT_IMPL = {"ASCENDING": _ascending_sort, "DESCENDING": _descending_sort}


# --- LowerBound, UpperBound, searchsorted ------------------------------------------------------
def _bound_shape(ctx):
    """Both inputs are matrices (rows of one batch); the output is shaped like the values."""
    dims_with_rank(ctx.input_shape(0)._dims, 2)
    dims_with_rank(ctx.input_shape(1)._dims, 2)
    return ctx.input_shape(1)


def _bound_op(name: str):
    return define_op(name, inputs=["sorted_inputs: T", "values: T"], outputs=["output: out_type"],
                     attrs=[TypeAttr("T"), TypeAttr("out_type", _dtypes.INDEX, _dtypes.int32)],
                     shape_fn=_bound_shape, not_differentiable=True)


LowerBound = _bound_op("LowerBound")
UpperBound = _bound_op("UpperBound")


def searchsorted(sorted_sequence, values, side="left", out_type=_dtypes.int32, name=None):
    """Finds where values would go in sorted sequences (TF1's tf.searchsorted).

    Works on the innermost axis: row i of `values` is looked up in row i of `sorted_sequence`
    (the leading dimensions must match). With side "left" the result is the first position
    whose entry is not less than the value (C++'s std::lower_bound), with "right" the first
    whose entry is greater (std::upper_bound). Rows are assumed sorted; nothing checks it.

    Args:
      sorted_sequence: a Tensor of rank >= 1, sorted along its last axis.
      values: a Tensor of the same dtype and leading dimensions.
      side: "left" (default) or "right".
      out_type: int32 (default) or int64.
      name: the op name (default "LowerBound" or "UpperBound").

    Returns:
      A Tensor of `out_type` shaped like `values`: indices into the last axis.

    Raises:
      ValueError: if `side` is neither "left" nor "right", or either input is a scalar.
    """
    if side not in ("left", "right"):
        raise ValueError("Argument `side` must be either 'right' or 'left'. Received: `side` = "
                         f"'{side}'.")
    sorted_sequence = convert_to_tensor(sorted_sequence)
    values = convert_to_tensor(values)
    sequence_2d = reshape(sorted_sequence, [-1, shape_internal(sorted_sequence)[-1]])
    values_2d = reshape(values, [-1, shape_internal(values)[-1]])
    op_def = UpperBound if side == "right" else LowerBound
    output = apply_op(op_def, [sequence_2d, values_2d], {"out_type": out_type}, name=name)
    return reshape(output, shape_internal(values))
