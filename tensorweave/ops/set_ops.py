"""Set operations on the last dimension: DenseToDenseSetOperation, DenseToSparseSetOperation,
SparseToSparseSetOperation and SetSize, with TF1's `tf.sets` wrappers.

Every index of the leading dimensions names one set: a dense row's values, or a SparseTensor's
values at that index prefix (duplicates count once). The result is a SparseTensor holding each
group's resulting set in ascending order, with dense shape `group_shape + [largest set size]`.
None of these ops is differentiable (as in TensorFlow). Kernels live in `kernels/sets.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["set_difference", "set_intersection", "set_size", "set_union"]

_VALID_DTYPES = frozenset({_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64,
                           _dtypes.uint8, _dtypes.uint16, _dtypes.string})
_SET_ATTRS = [Attr("set_operation", "string"), Attr("validate_indices", "bool", True),
              TypeAttr("T", _VALID_DTYPES)]
_SET_OUTPUTS = ["result_indices: int64", "result_values: T", "result_shape: int64"]


def _dims(ctx, i: int):
    return ctx.input_shape(i)._dims


def _rank_at_least_2(ctx, i: int):
    """Input i's dims tuple (None for unknown rank), checked to have rank >= 2."""
    dims = _dims(ctx, i)
    if dims is not None and len(dims) < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {len(dims)}")
    return dims


def _sparse_rank(ctx, first: int):
    """The rank of the SparseTensor given by inputs first..first+2 (indices, values, shape)."""
    indices = dims_with_rank(_dims(ctx, first), 2)
    dims_with_rank(_dims(ctx, first + 1), 1)
    (rank,) = dims_with_rank(_dims(ctx, first + 2), 1)
    return merge_dims((indices[1],), (rank,))[0]


def _set_outputs(rank):
    return [_ts.TensorShape([None, rank]), _ts.TensorShape([None]), _ts.TensorShape([rank])]


def _dense_to_dense_shape(ctx):
    """Both inputs have one rank >= 2 and compatible group (all but last) dimensions."""
    a, b = _rank_at_least_2(ctx, 0), _rank_at_least_2(ctx, 1)
    if a is not None and b is not None:
        merge_dims(a[:-1], dims_with_rank(b, len(a))[:-1])
    known = a if a is not None else b
    return _set_outputs(None if known is None else len(known))


def _dense_to_sparse_shape(ctx):
    a = _rank_at_least_2(ctx, 0)
    rank = _sparse_rank(ctx, 1)
    return _set_outputs(rank if a is None else merge_dims((len(a),), (rank,))[0])


def _sparse_to_sparse_shape(ctx):
    return _set_outputs(merge_dims((_sparse_rank(ctx, 0),), (_sparse_rank(ctx, 3),))[0])


def _set_size_shape(ctx):
    _sparse_rank(ctx, 0)
    return _ts.unknown_shape()


DenseToDenseSetOperation = define_op(
    "DenseToDenseSetOperation", inputs=["set1: T", "set2: T"], outputs=_SET_OUTPUTS,
    attrs=_SET_ATTRS, shape_fn=_dense_to_dense_shape, not_differentiable=True)
DenseToSparseSetOperation = define_op(
    "DenseToSparseSetOperation",
    inputs=["set1: T", "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
    outputs=_SET_OUTPUTS, attrs=_SET_ATTRS, shape_fn=_dense_to_sparse_shape,
    not_differentiable=True)
SparseToSparseSetOperation = define_op(
    "SparseToSparseSetOperation",
    inputs=["set1_indices: int64", "set1_values: T", "set1_shape: int64",
            "set2_indices: int64", "set2_values: T", "set2_shape: int64"],
    outputs=_SET_OUTPUTS, attrs=_SET_ATTRS, shape_fn=_sparse_to_sparse_shape,
    not_differentiable=True)
SetSize = define_op(
    "SetSize", inputs=["set_indices: int64", "set_values: T", "set_shape: int64"],
    outputs=["size: int32"], attrs=[Attr("validate_indices", "bool", True),
                                    TypeAttr("T", _VALID_DTYPES)],
    shape_fn=_set_size_shape, not_differentiable=True)


def _as_tensor_or_sparse(value, name: str):
    if isinstance(value, SparseTensor):
        return value
    return convert_to_tensor(value, name=name)


def _dtype_names() -> str:
    return "frozenset({" + ", ".join(sorted(f"tf.{d.name}" for d in _VALID_DTYPES)) + "})"


def _check_pair(a, b):
    """(a, b, flipped): a dense input goes first, as the ops take Dense,Sparse but not the
    reverse; TypeError for unsupported or different dtypes."""
    a = _as_tensor_or_sparse(a, "a")
    if a.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"'a' has invalid dtype `{a.dtype}` not in supported dtypes: "
                        f"`{_dtype_names()}`.")
    b = _as_tensor_or_sparse(b, "b")
    if b.dtype.base_dtype != a.dtype.base_dtype:
        raise TypeError(f"Types don't match, {a.dtype} vs {b.dtype}.")
    if isinstance(a, SparseTensor) and not isinstance(b, SparseTensor):
        return b, a, True
    return a, b, False


def _set_operation(a, b, operation: str, validate_indices: bool) -> SparseTensor:
    attrs = {"set_operation": operation, "validate_indices": bool(validate_indices)}
    if isinstance(a, SparseTensor):   # then b is sparse too (_check_pair flips Sparse,Dense)
        outs = apply_op(SparseToSparseSetOperation,
                        [a.indices, a.values, a.dense_shape, b.indices, b.values,
                         b.dense_shape], attrs)
    elif isinstance(b, SparseTensor):
        outs = apply_op(DenseToSparseSetOperation, [a, b.indices, b.values, b.dense_shape],
                        attrs)
    else:
        outs = apply_op(DenseToDenseSetOperation, [a, b], attrs)
    return SparseTensor(*outs)


_PAIR_ARGS = """a: a Tensor or SparseTensor of rank >= 2 (int8/16/32/64, uint8/16 or string);
        its last dimension holds the sets, its leading dimensions index them.
      b: a Tensor or SparseTensor of the same dtype and leading dimensions."""
_PAIR_RETURNS = """A SparseTensor of `a`'s rank: each group's result in ascending order, dense
      shape `leading dimensions + [largest result size]`."""
_PAIR_RAISES = """TypeError: for an unsupported dtype or differing dtypes.
      ValueError: if the ranks or leading dimensions are statically incompatible."""


def set_intersection(a, b, validate_indices=True):
    return _set_operation(*_check_pair(a, b)[:2], "intersection", validate_indices)


def set_union(a, b, validate_indices=True):
    return _set_operation(*_check_pair(a, b)[:2], "union", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True):
    a, b, flipped = _check_pair(a, b)
    if flipped:
        aminusb = not aminusb
    return _set_operation(a, b, "a-b" if aminusb else "b-a", validate_indices)


def _pair_doc(what: str, extra: str = "") -> str:
    return f"""{what}

    Args:
      {_PAIR_ARGS}{extra}
      validate_indices: check that sparse inputs' indices are sorted and in bounds.

    Returns:
      {_PAIR_RETURNS}

    Raises:
      {_PAIR_RAISES}
    """


set_intersection.__doc__ = _pair_doc("The per-group intersection of the sets in `a` and `b`.")
set_union.__doc__ = _pair_doc("The per-group union of the sets in `a` and `b`.")
set_difference.__doc__ = _pair_doc(
    "The per-group difference of the sets in `a` and `b`: `a - b`, or `b - a`.",
    "\n      aminusb: True for `a - b`, False for `b - a`.")


def set_size(a, validate_indices=True):
    """The number of distinct values in each set of a SparseTensor's last dimension.

    Args:
      a: a SparseTensor of rank >= 2 (int8/16/32/64, uint8/16 or string values).
      validate_indices: check that the indices are sorted and in bounds.

    Returns:
      An int32 Tensor of shape `a.dense_shape[:-1]`.

    Raises:
      TypeError: if `a` is not a SparseTensor or has an unsupported dtype.
    """
    a = _as_tensor_or_sparse(a, "a")
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a}.")
    if a.values.dtype.base_dtype not in _VALID_DTYPES:
        raise TypeError(f"Invalid dtype `{a.values.dtype}` not in supported dtypes: "
                        f"`{_dtype_names()}`.")
    return apply_op(SetSize, [a.indices, a.values, a.dense_shape],
                    {"validate_indices": bool(validate_indices)})
