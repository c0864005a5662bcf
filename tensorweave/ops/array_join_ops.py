"""Joining and splitting: ConcatV2, Pack, Unpack, Split, SplitV, and autopacking.

Autopacking is the conversion that turns a (nested) list holding tensors into Pack ops, so
`tf.reshape(x, [n, -1])` works with a tensor `n`. The shape helpers at the top (TF's merge
rules and error messages) are shared by the slicing and indexing families.
"""
from __future__ import annotations

import numbers

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_conversion
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.static_value import register_static_value, static_value, static_values

__all__ = ["concat", "split", "stack", "unstack"]

TensorShape = _ts.TensorShape
INDEX_TYPES = (_dtypes.int32, _dtypes.int64)


# --- shape helpers ---------------------------------------------------------------------------
def static_int(ctx, i: int):
    """Input i's statically known value as an int, or None."""
    value = ctx.static_value(i)
    return None if value is None else int(value)


# --- ConcatV2 --------------------------------------------------------------------------------
def _concat_shape(ctx):
    shapes = [t._shape._dims for t in ctx.inputs[:-1]]
    dims_with_rank(ctx.input_shape(len(shapes))._dims, 0)
    known = [s for s in shapes if s is not None]
    axis = static_int(ctx, len(shapes))
    rank = len(known[0]) if known else None
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use tf.stack instead)")
    for s in known:
        if len(s) != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {len(s)}")
    if rank is None:
        return _ts.unknown_shape()
    if axis is None:
        return _ts.unknown_shape(rank=rank)
    if not -rank <= axis < rank:
        if axis >= 0:
            raise ValueError(f"Shape must be at least rank {axis + 1} but is rank {rank}")
        raise ValueError(f"ConcatOp : Expected concatenating dimensions in the range "
                         f"[{-rank}, {rank}), but got {axis}")
    axis %= rank
    # As TF does, the dims before and after the axis merge as two separate running subshapes,
    # so a clash names its index in that subshape and prints the two subshapes.
    before, after = known[0][:axis], known[0][axis + 1:]
    for s in known[1:]:
        before = merge_dims(before, s[:axis])
        after = merge_dims(after, s[axis + 1:])
    out = [*before, None, *after]
    sizes = [s[axis] for s in known]
    known_all = len(known) == len(shapes) and None not in sizes
    out[axis] = sum(sizes) if known_all else None
    return TensorShape._from_dims(tuple(out))


ConcatV2 = define_op(
    "ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
    attrs=[Attr("N", "int", minimum=2), TypeAttr("T"),
           TypeAttr("Tidx", INDEX_TYPES, default=_dtypes.int32)],
    shape_fn=_concat_shape)


@register_static_value("ConcatV2")
def _concat_value(op, index):
    values = static_values(op.inputs)
    return None if values is None else np.concatenate(values[:-1], axis=int(values[-1]))


@ConcatV2.gradient
def _concat_grad(op, grad):
    """Splits the gradient back into the inputs' sizes along the axis: one Split when the
    static shapes fix the sizes; else, as TF, the inputs' shapes (ShapeN) give each input's
    offset in the output (ConcatOffset) and its piece is a Slice."""
    import tensorweave as tw
    values, axis = op.inputs[:-1], op.inputs[-1]
    rank = values[0].shape.ndims
    value = static_value(axis)
    if value is not None and rank is not None:
        axis = int(value) % rank
        sizes = [None if v.shape.ndims is None else v.shape._dims[axis] for v in values]
        if None not in sizes:
            return split(grad, sizes, axis) + [None]
    else:
        axis = tw.floormod(tw.cast(axis, _dtypes.int32), tw.rank(values[0]))
    shapes = tw.shape_n(values)
    offsets = apply_op(ConcatOffset, [axis, shapes])
    return [tw.slice(grad, begin, size) for begin, size in zip(offsets, shapes)] + [None]


def _concat_offset_shape(ctx):
    """Each offset has its shape vector's shape (TF checks nothing more before running)."""
    return list(ctx.input_shapes[1:])


ConcatOffset = define_op(
    "ConcatOffset", inputs=["concat_dim: int32", "shape: N * shape_type"],
    outputs=["offset: N * shape_type"],
    attrs=[Attr("N", "int", minimum=2),
           TypeAttr("shape_type", INDEX_TYPES, default=_dtypes.int32)],
    shape_fn=_concat_offset_shape, not_differentiable=True,
    doc="Where each of N inputs of a concat along `concat_dim` starts in its output, "
        "given their shapes (the gradient of ConcatV2 slices by these).")


def concat(values, axis, name="concat"):
    """Concatenates tensors along one dimension (TF1's tf.concat).

    Args:
      values: a list of tensors (or convertible values) of one dtype and of equal rank, whose
        shapes agree except along `axis`. A single tensor is returned through an Identity.
      axis: a 0-d int32/int64 tensor or int; negative values count from the end.
      name: the op name.

    Returns:
      The concatenated Tensor.

    Raises:
      ValueError: if the shapes cannot be concatenated (checked when the graph is built).
    """
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        import tensorweave
        with name_scope(name):
            axis_t = tensor_conversion.convert_to_tensor(
                axis, name="concat_dim",
                dtype=None if isinstance(axis, Tensor) else _dtypes.int32)
            axis_t.shape.assert_has_rank(0)
            return tensorweave.identity(values[0], name=name)
    return apply_op(ConcatV2, [list(values), axis], name=name)


# --- Pack / Unpack ---------------------------------------------------------------------------
def _axis_in(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"Argument `axis` = {axis} not in range [{-rank}, {rank})")
    return axis % rank


def _pack_shape(ctx):
    dims = None
    for t in ctx.inputs:
        try:
            dims = merge_dims(dims, t._shape._dims)
        except ValueError as e:
            raise ValueError(f"{e}\n\tFrom merging shape 0 with other shapes.") from None
    if dims is None:
        return _ts.unknown_shape()
    axis = _axis_in(ctx.attrs["axis"], len(dims) + 1)
    return TensorShape._from_dims(dims[:axis] + (len(ctx.inputs),) + dims[axis:])


Pack = define_op("Pack", inputs=["values: N * T"], outputs=["output: T"],
                 attrs=[Attr("N", "int", minimum=1), TypeAttr("T"), Attr("axis", "int", 0)],
                 shape_fn=_pack_shape)


@register_static_value("Pack")
def _pack_value(op, index):
    values = static_values(op.inputs)
    return None if values is None else np.stack(values, axis=op._attrs["axis"])


@Pack.gradient
def _pack_grad(op, grad):
    return unstack(grad, num=op.get_attr("N"), axis=op.get_attr("axis"))


def _unpack_shape(ctx):
    dims = ctx.input_shape(0)._dims
    if dims is None:
        return _ts.unknown_shape()
    axis = _axis_in(ctx.attrs["axis"], len(dims))
    num = ctx.attrs["num"]
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[axis]}")
    return TensorShape._from_dims(dims[:axis] + dims[axis + 1:])


Unpack = define_op("Unpack", inputs=["value: T"], outputs=["output: num * T"],
                   attrs=[Attr("num", "int", minimum=0), TypeAttr("T"), Attr("axis", "int", 0)],
                   shape_fn=_unpack_shape)


@register_static_value("Unpack")
def _unpack_value(op, index):
    value = static_value(op.inputs[0])
    return None if value is None else np.take(value, index, axis=op._attrs["axis"])


@Unpack.gradient
def _unpack_grad(op, *grads):
    return [stack(list(grads), axis=op.get_attr("axis"))]


def stack(values, axis=0, name="stack"):
    """Stacks rank-R tensors into one rank-(R+1) tensor (TF1's tf.stack, op Pack).

    Args:
      values: a list of tensors (or values) of one shape and dtype.
      axis: where the new dimension goes, in [-(R+1), R+1).
      name: the op name.

    Returns:
      The stacked Tensor; a list of plain values stacked on axis 0 becomes a Const.

    Raises:
      ValueError: if `axis` is out of range or the shapes differ.
    """
    if axis == 0:
        try:
            return tensor_conversion.convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass  # tensors of mismatched shapes: let Pack report it
    first = tensor_conversion.convert_to_tensor(values[0], name=name)
    if first.shape.ndims is not None:
        _axis_in(axis, first.shape.ndims + 1)
    return apply_op(Pack, [[first] + list(values[1:])], {"axis": axis}, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits a rank-R tensor into rank-(R-1) tensors along `axis` (TF1's tf.unstack).

    Args:
      value: the tensor to unpack.
      num: the length of `axis`; inferred from the static shape when None.
      axis: the dimension to unpack along; negative values count from the end.
      name: the op name.

    Returns:
      A list of `num` Tensors.

    Raises:
      ValueError: if `num` is None and the static shape does not fix it, or `axis` is out of
        range.
    """
    value = tensor_conversion.convert_to_tensor(value)
    dims = value.shape._dims
    if num is None:
        if dims is not None:
            num = dims[_axis_in(axis, len(dims))]
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {value.shape}")
    return apply_op(Unpack, [value], {"num": num, "axis": axis}, name=name)


# --- Split / SplitV --------------------------------------------------------------------------
def _split_axis(ctx, dims, i: int):
    """The static split axis (non-negative), or None; ValueError if out of range."""
    axis = static_int(ctx, i)
    if axis is None or dims is None:
        return None
    rank = len(dims)
    if not -rank <= axis < rank:
        raise ValueError(f"Dimension size, given by scalar input {axis} must be in range "
                         f"[{-rank}, {rank})")
    return axis % rank


def _split_shape(ctx):
    dims = ctx.input_shape(1)._dims
    n = ctx.attrs["num_split"]
    axis = _split_axis(ctx, dims, 0)
    if dims is None:
        return _ts.unknown_shape()
    if axis is None:
        return _ts.unknown_shape(rank=len(dims))
    size = dims[axis]
    if size is not None and size % n:
        raise ValueError(f"Dimension size must be evenly divisible by {n} but is {size}\n\t"
                         "Number of ways to split should evenly divide the split dimension")
    part = None if size is None else size // n
    return TensorShape._from_dims(dims[:axis] + (part,) + dims[axis + 1:])


Split = define_op("Split", inputs=["split_dim: int32", "value: T"],
                  outputs=["output: num_split * T"],
                  attrs=[Attr("num_split", "int", minimum=1), TypeAttr("T")],
                  shape_fn=_split_shape)


@Split.gradient
def _split_grad(op, *grads):
    return [None, concat(list(grads), op.inputs[0])]


def resolve_split_sizes(sizes, dim):
    """SplitV's sizes with the one -1 filled in (None where `dim` is unknown); ValueError."""
    sizes = [int(s) for s in sizes]
    holes = [j for j, s in enumerate(sizes) if s == -1]
    if len(holes) > 1:
        raise ValueError("size_splits can only have one -1")
    for j, s in enumerate(sizes):
        if s < -1:
            raise ValueError(f"Split size at index {j} must be >= 0. Got: {s}")
    if dim is None:
        return [None if s == -1 else s for s in sizes]
    if holes:
        rest = dim - (sum(sizes) + 1)
        if rest < 0:
            raise ValueError(f"Split size at index {holes[0]} must be >= 0. Got: {rest}")
        sizes[holes[0]] = rest
    elif sum(sizes) != dim:
        raise ValueError(f"can't split axis of size {dim} into pieces of size "
                         f"[{','.join(map(str, sizes))}]")
    return sizes


def _split_v_shape(ctx):
    dims = ctx.input_shape(0)._dims
    n = ctx.attrs["num_split"]
    axis = _split_axis(ctx, dims, 2)
    dims_with_rank(ctx.input_shape(1)._dims, 1)
    sizes = ctx.static_value(1)
    if sizes is not None and len(sizes) != n:
        raise ValueError(f"Dimension must be {n} but is {len(sizes)}")
    if dims is None:
        return [_ts.unknown_shape()] * n
    if axis is None:
        return [_ts.unknown_shape(rank=len(dims))] * n
    parts = [None] * n if sizes is None else resolve_split_sizes(sizes, dims[axis])
    return [TensorShape._from_dims(dims[:axis] + (p,) + dims[axis + 1:]) for p in parts]


SplitV = define_op("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
                   outputs=["output: num_split * T"],
                   attrs=[Attr("num_split", "int", minimum=1), TypeAttr("T"),
                          TypeAttr("Tlen", {_dtypes.int8, _dtypes.int32, _dtypes.int64},
                                   default=_dtypes.int64)],
                   shape_fn=_split_v_shape)


@SplitV.gradient
def _split_v_grad(op, *grads):
    return [concat(list(grads), op.inputs[2]), None, None]


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits a tensor into sub-tensors along `axis` (TF1's tf.split).

    Args:
      value: the tensor to split.
      num_or_size_splits: an int N (op Split: N equal parts; the dimension must divide evenly)
        or a 1-D list/tensor of sizes, one of which may be -1 for "the rest" (op SplitV).
      axis: the dimension to split; negative values count from the end.
      num: the number of outputs when it cannot be read from `num_or_size_splits`' shape.
      name: the op name.

    Returns:
      A list of Tensors.

    Raises:
      ValueError: if the split is statically impossible or `num` cannot be inferred.
    """
    if isinstance(num_or_size_splits, (numbers.Integral, _ts.Dimension)):
        n = int(num_or_size_splits)
        return apply_op(Split, [axis, value], {"num_split": n}, name=name)
    sizes = tensor_conversion.convert_to_tensor(num_or_size_splits)
    if sizes.shape.ndims == 0:
        raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument "
                         f"to split. Argument provided: {num_or_size_splits}")
    if num is None:
        dims = sizes.shape._dims
        num = dims[0] if dims else None
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {num_or_size_splits}")
    return apply_op(SplitV, [value, sizes, axis], {"num_split": num}, name=name)


# --- autopacking: convert_to_tensor([t, 1.0]) -> Pack -----------------------------------
def is_tensor(value) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def _nested_dtype(values):
    for v in values:
        if is_tensor(v):
            return tensor_conversion.convert_to_tensor(v).dtype.base_dtype
        if isinstance(v, (list, tuple)):
            found = _nested_dtype(v)
            if found is not None:
                return found
    return None


def _cast_nested(values, dtype):
    import tensorweave
    return [_cast_nested(v, dtype) if isinstance(v, (list, tuple))
            else tensorweave.cast(v, dtype) if is_tensor(v) else v for v in values]


def _autopack(values, dtype=None, name=None):
    """A (nested) list holding tensors as one Pack per level, elements in the tensors' dtype."""
    inferred = _nested_dtype(values)
    if dtype is None:
        dtype = inferred
    elif inferred is not None and dtype.base_dtype != inferred:
        values = _cast_nested(values, dtype.base_dtype)
    return _pack_nested(values, dtype.base_dtype, name or "packed")


def _pack_nested(values, dtype, name):
    from tensorweave.ops.constant_op import constant
    with name_scope(name) as scope:
        elems, must_pack = [], False
        for i, v in enumerate(values):
            if is_tensor(v):
                v = tensor_conversion.convert_to_tensor(v)
                if v.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype "
                                    f"{v.dtype.name} to {dtype.name} (Tensor is: {v!r})")
                must_pack = True
            elif isinstance(v, (list, tuple)):
                v = _pack_nested(v, dtype, str(i))
                must_pack = must_pack or isinstance(v, Tensor)
            elems.append(v)
        if not must_pack:
            return elems
        elems = [v if isinstance(v, Tensor) else constant(v, dtype=dtype, name=str(i))
                 for i, v in enumerate(elems)]
        return apply_op(Pack, [elems], {"axis": 0}, name=scope)


tensor_conversion.set_hook("pack", _autopack)
