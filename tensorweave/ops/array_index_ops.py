"""Indexing and selection: GatherV2, GatherNd, ScatterNd, OneHot, Where, Select, SelectV2,
Unique, and the composites boolean_mask and sequence_mask.

`tf.where` is TF1's: one argument gives the int64 coordinates of true elements (op Where);
three give an element-wise choice (op Select) where a vector condition picks whole rows of
higher-rank inputs. `where_v2` broadcasts all three (op SelectV2).

Gradients: GatherV2 along axis 0 gives TensorFlow's sparse IndexedSlices, other gathers a dense
ScatterNd; GatherNd and ScatterNd are each other's gradient; Select sends zeros where a branch
was not taken.
"""
from __future__ import annotations

import collections

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns, tensor_conversion
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices, to_dense
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.shape_text import dims_text
from tensorweave.framework.static_value import register_static_value, static_value, static_values
from tensorweave.ops.array_join_ops import INDEX_TYPES, concat, static_int

__all__ = ["boolean_mask", "gather", "gather_nd", "one_hot", "scatter_nd", "sequence_mask",
           "unique", "where", "where_v2"]

TensorShape = _ts.TensorShape
_GATHER_INDEX = frozenset({_dtypes.int16, *INDEX_TYPES})
# TF 2.21's GatherNd / ScatterNd family attr; "" keeps its default handling of bad indices.
BAD_INDICES_POLICY = Attr("bad_indices_policy", "string", "")


def _dims(ctx, i: int):
    return ctx.input_shape(i)._dims


# --- GatherV2 --------------------------------------------------------------------------------
def _gather_shape(ctx):
    params, indices = _dims(ctx, 0), _dims(ctx, 1)
    dims_with_rank(_dims(ctx, 2), 0)
    batch_dims = ctx.attrs["batch_dims"]
    if batch_dims < 0 and indices is not None:
        batch_dims += len(indices)
    axis = static_int(ctx, 2)
    if params is None:
        return _ts.unknown_shape()
    rank = len(params)
    if axis is None:
        if indices is None:
            return _ts.unknown_shape()
        return _ts.unknown_shape(rank=rank - 1 + len(indices) - batch_dims)
    if not -rank <= axis < rank:
        if axis >= 0:
            raise ValueError(f"Shape must be at least rank {axis + 1} but is rank {rank}")
        raise ValueError(f"Expected axis in the range [{-rank}, {rank}), but got {axis}")
    axis %= rank
    if indices is None:
        return _ts.unknown_shape()
    if not 0 <= batch_dims <= min(axis, len(indices)):
        raise ValueError(f"batch_dims ({ctx.attrs['batch_dims']}) must be in [0, "
                         f"min(axis, rank(indices))] = [0, {min(axis, len(indices))}]")
    batch = merge_dims(params[:batch_dims], indices[:batch_dims])
    return TensorShape._from_dims(batch + params[batch_dims:axis] + indices[batch_dims:]
                                  + params[axis + 1:])


GatherV2 = define_op(
    "GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
    outputs=["output: Tparams"],
    attrs=[Attr("batch_dims", "int", 0), TypeAttr("Tparams"),
           TypeAttr("Tindices", _GATHER_INDEX), TypeAttr("Taxis", INDEX_TYPES)],
    shape_fn=_gather_shape)


@register_static_value("GatherV2")
def _gather_value(op, index):
    values = static_values(op.inputs)
    if values is None or op._attrs["batch_dims"] != 0:
        return None
    params, indices, axis = values
    axis = int(axis)
    if not -params.ndim <= axis < params.ndim:
        return None
    if indices.size and (indices.min() < 0 or indices.max() >= params.shape[axis]):
        return None
    return np.take(params, indices, axis=axis)


@GatherV2.gradient
def _gather_grad(op, grad):
    """Along axis 0 without batch dims (an embedding lookup): the sparse IndexedSlices (rows of
    the gradient at the gathered indices), like TensorFlow. Otherwise a dense gradient: the
    same gather applied to the positions 0..size-1 tells where each output element came from,
    and ScatterNd sums the gradient into those places."""
    import tensorweave as tw
    params, indices, axis = op.inputs
    params_shape = tw.cast(tw.shape(params, out_type=_dtypes.int64), _dtypes.int32)
    axis_value = static_value(axis)
    if axis_value is not None and int(axis_value) == 0 and op.get_attr("batch_dims") == 0:
        count = tw.expand_dims(tw.size(indices), 0)
        if isinstance(grad, IndexedSlices):   # a gather of a gather: densified silently, as TF
            grad = to_dense(grad, warn=False)
        values = tw.reshape(grad, concat([count, params_shape[1:]], 0))
        return [IndexedSlices(values, tw.reshape(indices, count), params_shape), None, None]
    n = tw.size(params)
    positions = tw.reshape(tw.range(n), params_shape)
    sources = gather(positions, indices, axis=axis, batch_dims=op.get_attr("batch_dims"))
    dense = scatter_nd(tw.reshape(sources, [-1, 1]), tw.reshape(grad, [-1]),
                       tw.reshape(n, [1]))
    return [tw.reshape(dense, params_shape), None, None]


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Gathers slices of `params` along `axis` at `indices` (TF1's tf.gather, op GatherV2).

    Along axis 0, a resource variable's rows are read by its `sparse_read` (ResourceGather)
    instead of copying the whole variable, as in TensorFlow.

    Args:
      params: the tensor (or variable) to gather from.
      indices: an int16/int32/int64 tensor of indices into dimension `axis`; on CPU an index
        outside [0, params.shape[axis]) fails the step with InvalidArgumentError.
      validate_indices: deprecated and ignored (TF1 keeps it for compatibility).
      name: the op name.
      axis: the dimension to gather along (default `batch_dims`); negative counts from the
        end.
      batch_dims: the number of leading batch dimensions shared by params and indices.

    Returns:
      A Tensor of shape params.shape[:axis] + indices.shape[batch_dims:] +
      params.shape[axis + 1:].
    """
    del validate_indices
    if axis is None:
        axis = batch_dims
    axis_value = static_value(axis) if isinstance(axis, Tensor) else axis
    if axis_value is not None and int(axis_value) == 0:
        sparse_read = getattr(params, "sparse_read", None)
        if sparse_read is not None:   # a resource variable: only the rows are read
            return sparse_read(indices, name=name)
    return apply_op(GatherV2, [params, indices, axis], {"batch_dims": batch_dims}, name=name)


# --- GatherNd / ScatterNd --------------------------------------------------------------------
def gather_nd_shape(ctx):
    params, indices = _dims(ctx, 0), _dims(ctx, 1)
    if indices is not None and not indices:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if params is None or indices is None or indices[-1] is None:
        return _ts.unknown_shape()
    depth = indices[-1]
    if depth > len(params):
        raise ValueError(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                         f"{dims_text(indices)} and params shape: {dims_text(params)}")
    return TensorShape._from_dims(indices[:-1] + params[depth:])


GatherNd = define_op(
    "GatherNd", inputs=["params: Tparams", "indices: Tindices"], outputs=["output: Tparams"],
    attrs=[TypeAttr("Tparams"), TypeAttr("Tindices", _GATHER_INDEX), BAD_INDICES_POLICY],
    shape_fn=gather_nd_shape)


def gather_nd(params, indices, name=None, batch_dims=0):
    """Gathers slices of `params` addressed by the last dimension of `indices` (TF1's
    tf.gather_nd).

    Args:
      params: the tensor to gather from.
      indices: int tensor whose last dimension K indexes the first K dimensions of params.
      name: the op name.
      batch_dims: the number of leading dimensions params and indices share as a batch; the
        index vectors then address params' dimensions after the batch.

    Returns:
      A Tensor of shape indices.shape[:-1] + params.shape[batch_dims + K:].

    Raises:
      TypeError: if batch_dims is not an int.
      ValueError: if batch_dims is negative or not below the rank of params and of indices.
    """
    value = static_value(batch_dims) if isinstance(batch_dims, Tensor) else None
    if value is not None:
        batch_dims = int(value)
    if batch_dims == 0:
        return apply_op(GatherNd, [params, indices], name=name)
    return _batch_gather_nd(params, indices, batch_dims, name)


def _batch_gather_nd(params, indices, batch_dims, name):
    """gather_nd over `batch_dims` shared leading dimensions, as TensorFlow's batch_gather_nd:
    the batch is flattened to one dimension B, each index vector gets its batch position b
    prepended, and one GatherNd on params reshaped to [B, ...] does the work."""
    import tensorweave as tw
    with name_scope(name, "BatchGatherND", [params, indices]) as scope:
        indices = tensor_conversion.convert_to_tensor(indices, name="indices")
        params = tensor_conversion.convert_to_tensor(params, name="params")
        if not isinstance(batch_dims, int) or isinstance(batch_dims, bool):
            raise TypeError(f"Argument `batch_dims` must be an int; got {batch_dims}")
        if batch_dims < 0:
            raise ValueError("tf.gather_nd does not allow negative batch_dims.")
        for what, t in (("indices", indices), ("params", params)):
            ndims = t.shape.ndims
            if ndims is not None and batch_dims >= ndims:
                raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than "
                                 f"rank(`{what}`) = {ndims}")
        index_type = indices.dtype.base_dtype
        params_shape = tw.shape(params, out_type=index_type)
        indices_shape = tw.shape(indices, out_type=index_type)
        batch_shape = params_shape[:batch_dims]
        batch_size = tw.reduce_prod(batch_shape, keepdims=True)
        flat_params = tw.reshape(params, concat([batch_size, params_shape[batch_dims:]], 0))
        flat_indices = tw.reshape(indices, concat([batch_size, indices_shape[batch_dims:]], 0))
        # b as an index vector [b] broadcast over the inner index dimensions i1..iK:
        # [B] -> [B, 1, ..., 1, 1] -> tiled to [B, i1, ..., iK, 1].
        inner = indices_shape[batch_dims:-1]
        ones = tw.ones_like(inner)
        positions = tw.reshape(tw.range(batch_size[0], dtype=index_type),
                               concat([batch_size, ones, [1]], 0))
        positions = tw.tile(positions, concat([[1], inner, [1]], 0))
        out = apply_op(GatherNd, [flat_params, concat([positions, flat_indices], -1)])
        out_shape = tw.shape(out, out_type=index_type)
        return tw.reshape(out, concat([batch_shape, out_shape[1:]], 0), name=scope)


@GatherNd.gradient
def _gather_nd_grad(op, grad):
    """Each gathered slice's gradient summed back into its place (ScatterNd)."""
    import tensorweave as tw
    params, indices = op.inputs
    index = indices.dtype.base_dtype
    shape = tw.shape(params, out_type=index if index in INDEX_TYPES else _dtypes.int32)
    if shape.dtype.base_dtype != index:
        shape = tw.cast(shape, index)
    return [scatter_nd(indices, grad, shape), None]


def check_dims_match(what_a, a, lo_a, what_b, b, lo_b, n=None) -> None:
    """ValueError in TF's words unless dims [lo_a, lo_a+n) of a and [lo_b, lo_b+n) of b merge;
    without `n`, the dims from lo_a and from lo_b to the end of each."""
    hi_a, hi_b = (len(a), len(b)) if n is None else (lo_a + n, lo_b + n)
    try:
        merge_dims(a[lo_a:hi_a], b[lo_b:hi_b])
    except ValueError as e:
        raise ValueError(
            f"Dimensions [{lo_a},{hi_a}) of {what_a}[shape={dims_text(a)}] = "
            f"{dims_text(a[lo_a:hi_a])} must match dimensions [{lo_b},{hi_b}) of "
            f"{what_b}[shape={dims_text(b)}] = {dims_text(b[lo_b:hi_b])}: {e}") from None


def _num_elements(dims):
    """TF's NumElements: 0 if any dim is 0, else the product; None if not known."""
    if dims is None:
        return None
    if 0 in dims:
        return 0
    return None if None in dims else int(np.prod(dims))


def check_scatter_nd_shapes(tensor, indices, updates) -> None:
    """TF's ScatterNdShapeHelper on dims tuples (None: unknown rank), shared by ScatterNd, the
    TensorScatter ops and the variables' ScatterNd updates: ValueError unless `updates` is
    indices.shape[:-1] + tensor.shape[K:] as far as the shapes are known (K =
    indices.shape[-1]). A scalar `updates` is left to the kernel."""
    if _num_elements(tensor) == 0 and (_num_elements(indices) or _num_elements(updates)):
        raise ValueError("Indices and updates specified for empty input")
    if indices is None or not updates or indices[-1] is None:
        return
    outer, depth = len(indices) - 1, indices[-1]
    check_dims_match("indices", indices, 0, "updates", updates, 0, outer)
    if tensor is not None:
        check_dims_match("input", tensor, depth, "updates", updates, outer)


def _scatter_nd_shape(ctx):
    indices, updates = _dims(ctx, 0), _dims(ctx, 1)
    dims_with_rank(_dims(ctx, 2), 1)
    out = ctx.static_shape(2)
    if (indices is not None and not indices) or (updates is not None and not updates):
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    check_scatter_nd_shapes(out._dims, indices, updates)
    return out


ScatterNd = define_op(
    "ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
    outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.NUMERIC | {_dtypes.bool}),
           TypeAttr("Tindices", _GATHER_INDEX), BAD_INDICES_POLICY],
    shape_fn=_scatter_nd_shape)


@ScatterNd.gradient
def _scatter_nd_grad(op, grad):
    """Each update's gradient is the output gradient at its place (GatherNd)."""
    return [None, gather_nd(grad, op.inputs[0]), None]


def scatter_nd(indices, updates, shape, name=None):
    """Scatters `updates` into a zero tensor of `shape` at `indices`, summing duplicates (TF1's
    tf.scatter_nd).

    Args:
      indices: int tensor whose last dimension K indexes the first K dimensions of the output.
      updates: values of shape indices.shape[:-1] + shape[K:].
      shape: 1-D shape of the output, of the same dtype as `indices`.
      name: the op name.

    Returns:
      A Tensor of `shape` and `updates`' dtype.
    """
    return apply_op(ScatterNd, [indices, updates, shape], name=name)


# --- OneHot ----------------------------------------------------------------------------------
def _one_hot_shape(ctx):
    indices = _dims(ctx, 0)
    axis = ctx.attrs["axis"]
    for i in (1, 2, 3):
        dims_with_rank(_dims(ctx, i), 0)
    if axis < -1:
        raise ValueError("axis must be >= -1")
    depth = static_int(ctx, 1)
    if depth is not None and depth < 0:
        raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative but is "
                         f"{depth}")
    if indices is None:
        return _ts.unknown_shape()
    where = len(indices) if axis == -1 else axis
    if where > len(indices):
        raise ValueError(f"Expected axis to be -1 or between [0, {len(indices) + 1}).  But "
                         f"received: {axis}")
    return TensorShape._from_dims(indices[:where] + (depth,) + indices[where:])


OneHot = define_op(
    "OneHot", inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
    outputs=["output: T"],
    attrs=[Attr("axis", "int", -1), TypeAttr("T"),
           TypeAttr("TI", {_dtypes.uint8, _dtypes.int8, *INDEX_TYPES}, default=_dtypes.int64)],
    shape_fn=_one_hot_shape, not_differentiable=True)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """One-hot encodes `indices` (TF1's tf.one_hot).

    Args:
      indices: int tensor of indices; values outside [0, depth) give all-`off_value` rows.
      depth: the size of the new dimension.
      on_value: the value where the index matches (default 1).
      off_value: the value elsewhere (default 0).
      axis: where the new dimension goes (default -1, the last).
      dtype: the output dtype; inferred from on_value/off_value, else float32.
      name: the op name.

    Returns:
      A Tensor with one more dimension than `indices`.

    Raises:
      TypeError: if on_value, off_value and dtype disagree on the dtype.
    """
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
    with name_scope(name, "one_hot") as scope:
        on_exists, off_exists = on_value is not None, off_value is not None
        if on_exists:
            on_value = tensor_conversion.convert_to_tensor(on_value, dtype_hint=dtype)
        if off_exists:
            off_value = tensor_conversion.convert_to_tensor(off_value, dtype_hint=dtype)
        on_dtype = on_value.dtype.base_dtype if on_exists else None
        off_dtype = off_value.dtype.base_dtype if off_exists else None
        if on_exists or off_exists:
            if dtype is not None:
                for kind, got in (("on_value", on_dtype), ("off_value", off_dtype)):
                    if got is not None and got != dtype:
                        raise TypeError(f"dtype {got!r} of {kind} does not match dtype "
                                        f"parameter {dtype!r}")
            else:
                dtype = on_dtype if on_exists else off_dtype
        elif dtype is None:
            dtype = _dtypes.float32
        if on_exists and off_exists and on_dtype != off_dtype:
            raise TypeError(f"dtype {on_dtype!r} of on_value does not match dtype "
                            f"{off_dtype!r} of off_value")
        if not on_exists:
            on_value = tensor_conversion.convert_to_tensor(1, dtype, name="on_value")
        if not off_exists:
            off_value = tensor_conversion.convert_to_tensor(0, dtype, name="off_value")
        return apply_op(OneHot, [indices, depth, on_value, off_value],
                        {"axis": -1 if axis is None else axis}, name=scope)


# --- Where / Select / SelectV2 ---------------------------------------------------------------
def _where_shape(ctx):
    dims = _dims(ctx, 0)
    return TensorShape([None, None if dims is None else len(dims)])


Where = define_op("Where", inputs=["input: T"], outputs=["index: int64"],
                  attrs=[TypeAttr("T", _dtypes.NUMERIC | {_dtypes.bool}, default=_dtypes.bool)],
                  shape_fn=_where_shape, not_differentiable=True)


def _select_shape(ctx):
    """TF1 Select: t and e agree; cond is a scalar, a vector over dim 0, or of their shape."""
    cond = _dims(ctx, 0)
    data = merge_dims(_dims(ctx, 1), _dims(ctx, 2))
    if cond is None or data is None or not cond:
        return TensorShape._from_dims(data)
    if len(cond) == 1 and data:
        data = merge_dims(cond, data[:1]) + data[1:]
    else:
        data = merge_dims(data, cond)
    return TensorShape._from_dims(data)


Select = define_op("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
                   attrs=[TypeAttr("T")], shape_fn=_select_shape)


def _select_v2_shape(ctx):
    shapes = ctx.input_shapes
    return shape_fns.broadcast_shapes(shape_fns.broadcast_shapes(shapes[1], shapes[2]),
                                      shapes[0])


SelectV2 = define_op("SelectV2", inputs=["condition: bool", "t: T", "e: T"],
                     outputs=["output: T"], attrs=[TypeAttr("T")], shape_fn=_select_v2_shape)


@Select.gradient
def _select_grad(op, grad):
    """The gradient goes to t where the condition holds and to e elsewhere (zeros otherwise)."""
    from tensorweave.ops.array_creation_ops import zeros_like
    condition = op.inputs[0]
    zeros = zeros_like(grad)
    return [None, where(condition, grad, zeros), where(condition, zeros, grad)]


@SelectV2.gradient
def _select_v2_grad(op, grad):
    """As Select's, each part summed back over the axes its input was broadcast along."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    from tensorweave.ops.array_creation_ops import zeros_like
    condition, t, e = op.inputs
    zeros = zeros_like(grad)
    return [None, reduce_to_shape_of(where_v2(condition, grad, zeros), t),
            reduce_to_shape_of(where_v2(condition, zeros, grad), e)]


def _where_coordinates(condition, name):
    with name_scope(name, "Where") as scope:
        condition = tensor_conversion.convert_to_tensor(
            condition, preferred_dtype=_dtypes.bool, name="condition")
        return apply_op(Where, [condition], name=scope)


def where(condition, x=None, y=None, name=None):
    """TF1's tf.where: coordinates of true elements, or an element-wise choice.

    Args:
      condition: a bool tensor.
      x, y: tensors of one shape and dtype, or both None. With them, the result takes `x` where
        `condition` is true and `y` elsewhere; `condition` is a scalar, has their shape, or is a
        vector selecting whole rows (dimension 0) of higher-rank `x` and `y` (op Select).
      name: the op name.

    Returns:
      With x and y None: an int64 Tensor of shape [num_true, rank(condition)] (op Where).
      Otherwise a Tensor shaped like `x`.

    Raises:
      ValueError: if only one of x and y is given, or the shapes are incompatible.
    """
    if x is None and y is None:
        return _where_coordinates(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(Select, [condition, x, y], name=name)


def where_v2(condition, x=None, y=None, name=None):
    """tf.where_v2: like `where`, but condition, x and y broadcast together (op SelectV2).

    Args:
      condition: a bool tensor.
      x, y: tensors (or values) broadcastable with `condition`, or both None.
      name: the op name.

    Returns:
      The int64 coordinates of true elements (x, y None), else the broadcast selection.
    """
    if x is None and y is None:
        return _where_coordinates(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(SelectV2, [condition, x, y], name=name)


# --- Unique ----------------------------------------------------------------------------------
def _unique_shape(ctx):
    dims = dims_with_rank(_dims(ctx, 0), 1)
    return [TensorShape([None]), TensorShape._from_dims(dims)]


Unique = define_op("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"],
                   attrs=[TypeAttr("T"), TypeAttr("out_idx", INDEX_TYPES,
                                                  default=_dtypes.int32)],
                   shape_fn=_unique_shape)

UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])


@Unique.gradient
def _unique_grad(op, grad, _):
    """Each distinct value's gradient, split equally among the elements of x equal to it (as
    Max splits it among ties). TensorFlow defines no gradient for Unique; `idx` has none."""
    import tensorweave as tw
    from tensorweave.ops.math_segment_ops import unsorted_segment_sum
    x = op.inputs[0]
    y, idx = op.outputs
    counts = unsorted_segment_sum(tw.ones_like(x), idx, tw.size(y, out_type=idx.dtype))
    return [gather(grad / counts, idx)]


def unique(x, out_idx=_dtypes.int32, name=None):
    """The distinct elements of a 1-D tensor in order of first occurrence (TF1's tf.unique).

    Args:
      x: a 1-D tensor.
      out_idx: int32 or int64, the dtype of `idx`.
      name: the op name.

    Returns:
      A namedtuple (y, idx): `y` the distinct values, `idx` such that x == y[idx].
    """
    y, idx = apply_op(Unique, [x], {"out_idx": out_idx}, name=name)
    return UniqueOutput(y, idx)


# --- composites ------------------------------------------------------------------------------
def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The elements (or slices) of `tensor` where `mask` is true (TF1's tf.boolean_mask).

    Built like TF's: the masked dimensions are flattened into one, Where finds the true
    positions and GatherV2 takes them.

    Args:
      tensor: an N-D tensor.
      mask: a K-D bool tensor (K >= 1, rank known) matching tensor.shape[axis:axis + K].
      name: the name scope.
      axis: the first masked dimension of `tensor` (default 0).

    Returns:
      A Tensor of rank N - K + 1 whose dimension `axis` counts the true mask entries.

    Raises:
      ValueError: if the mask is a scalar, has unknown rank or a mismatched shape.
    """
    import tensorweave as tw
    with name_scope(name):
        tensor = tensor_conversion.convert_to_tensor(tensor, name="tensor")
        mask = tensor_conversion.convert_to_tensor(mask, name="mask")
        ndims = mask.shape.ndims
        if ndims == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims is None:
            raise ValueError("Number of mask dimensions must be specified, even if some "
                             "dimensions are None.  E.g. shape=[None] is ok, but shape=None is "
                             "not.")
        axis = 0 if axis is None else axis
        axis_value = static_value(axis) if hasattr(axis, "op") else np.asarray(axis)
        shape = tensor.shape
        if axis_value is not None:
            axis = int(axis_value)
            shape[axis:axis + ndims].assert_is_compatible_with(mask.shape)
        if ndims > 1:
            dynamic = tw.shape(tensor)
            leading = tw.reduce_prod(dynamic[axis:axis + ndims], [0])
            tensor = tw.reshape(tensor, concat(
                [dynamic[:axis], [leading], dynamic[axis + ndims:]], 0))
            if axis_value is not None and shape.ndims is not None:
                tensor.set_shape(shape[:axis].concatenate(
                    [shape[axis:axis + ndims].num_elements()]).concatenate(
                        shape[axis + ndims:]))
            mask = tw.reshape(mask, [-1])
        positions = _where_coordinates(mask, None)[:, 0]
        return gather(tensor, positions, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name=None):
    """A mask of the first `lengths[i]` positions of each row (TF1's tf.sequence_mask).

    Args:
      lengths: an integer tensor of lengths, any shape.
      maxlen: a scalar, the size of the new last dimension (default: max(lengths)).
      dtype: the output dtype (default bool).
      name: the name scope (default "SequenceMask").

    Returns:
      A Tensor of shape lengths.shape + [maxlen] with result[..., j] = j < lengths[...].

    Raises:
      ValueError: if `maxlen` is not a scalar.
    """
    import tensorweave as tw
    with name_scope(name, "SequenceMask"):
        lengths = tensor_conversion.convert_to_tensor(lengths)
        if maxlen is None:
            rank = lengths.shape.ndims
            axes = list(range(rank)) if rank is not None else tw.range(tw.rank(lengths))
            maxlen = tw.reduce_max(lengths, axes)
            maxlen = tw.maximum(tw.constant(0, maxlen.dtype), maxlen)
        else:
            maxlen = tensor_conversion.convert_to_tensor(maxlen)
        if maxlen.shape.ndims not in (None, 0):
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received "
                             f"`maxlen` = {maxlen} with shape '{maxlen.shape}' instead")
        row = tw.range(tw.constant(0, maxlen.dtype), maxlen, tw.constant(1, maxlen.dtype))
        matrix = tw.cast(tw.expand_dims(lengths, -1), maxlen.dtype)
        result = tw.less(row, matrix)
        dtype = _dtypes.as_dtype(dtype)
        if dtype is None or result.dtype.is_compatible_with(dtype):
            return result
        return tw.cast(result, dtype)
