"""Array ops TF1 programs reach for now and then: InvertPermutation, Bitcast, Cross,
ParallelConcat (tf.parallel_stack), SegmentProd / UnsortedSegmentProd, the variable updates
ScatterNdAdd / ScatterNdSub / ScatterNdUpdate (each with its resource twin, ResourceScatterNdAdd
..., used on a resource variable's handle), and the compositions tf.repeat and tf.batch_gather,
which TensorFlow builds from other ops (as here, op for op).

InvertPermutation, Bitcast and ParallelConcat have no gradient in TensorFlow: InvertPermutation
is declared not differentiable; Bitcast and ParallelConcat have nothing registered, so
tf.gradients through them is a LookupError there and here. Kernels live in `kernels/misc_array.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import merge_shapes, shape_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_index_ops import BAD_INDICES_POLICY, check_scatter_nd_shapes
from tensorweave.ops.math_segment_ops import sorted_segment_shape, unsorted_segment_shape
from tensorweave.ops.state_ops import on_variable_shapes
from tensorweave.ops.variables import is_resource_variable

__all__ = ["batch_gather", "bitcast", "cross", "invert_permutation", "parallel_stack", "repeat",
           "scatter_nd_add", "scatter_nd_sub", "scatter_nd_update", "segment_prod",
           "unsorted_segment_prod"]

_INDEX = _dtypes.INDEX
# Bitcast's types: every numeric type with a fixed bit layout (no bool, no string).
_BITCAST_TYPES = _dtypes.NUMERIC


# --- InvertPermutation --------------------------------------------------------------------------
InvertPermutation = define_op(
    "InvertPermutation", inputs=["x: T"], outputs=["y: T"],
    attrs=[TypeAttr("T", _INDEX, _dtypes.int32)],
    shape_fn=lambda ctx: shape_with_rank(ctx.input_shape(0), 1), not_differentiable=True)


def invert_permutation(x, name=None):
    """The inverse permutation of `x`: y[x[i]] = i (tf.invert_permutation).

    Args:
      x: a 1-D int32/int64 Tensor holding a permutation of 0 .. n - 1.
      name: the op name (default "InvertPermutation").

    Returns:
      A Tensor of x's dtype and shape.

    Raises:
      ValueError: if `x` is statically not a vector.
      InvalidArgumentError: at run time, if `x` is not a permutation.
    """
    return apply_op(InvertPermutation, [x], name=name)


# --- Bitcast ------------------------------------------------------------------------------------
def _bitcast_shape(ctx):
    """Same bytes: a wider input gains a last dimension of in/out size; a narrower one loses a
    last dimension that must hold exactly out/in elements."""
    shape = ctx.input_shape(0)
    if shape.ndims is None:
        return shape
    in_size, out_size = ctx.attrs["T"].size, ctx.attrs["type"].size
    if in_size == out_size:
        return shape
    if out_size < in_size:
        return shape.concatenate([in_size // out_size])
    if shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    last = shape.as_list()[-1]
    if last is not None and last != out_size // in_size:
        raise ValueError(f"Cannot bitcast from {ctx.attrs['T'].as_datatype_enum} to "
                         f"{ctx.attrs['type'].as_datatype_enum} due to shape. {last} does "
                         f"not match {out_size // in_size}")
    return shape[:-1]


Bitcast = define_op(
    "Bitcast", inputs=["input: T"], outputs=["output: type"],
    attrs=[TypeAttr("T", _BITCAST_TYPES), TypeAttr("type", _BITCAST_TYPES)],
    shape_fn=_bitcast_shape)


def bitcast(input, type, name=None):  # noqa: A002 - TF's argument names
    """Reinterprets the bytes of `input` as `type`, without copying data (tf.bitcast).

    Args:
      input: a numeric Tensor.
      type: the numeric dtype to reinterpret as. A narrower type adds a last dimension of
        size(input dtype) / size(type); a wider one consumes a last dimension of
        size(type) / size(input dtype).
      name: the op name (default "Bitcast").

    Returns:
      A Tensor of dtype `type`.

    Raises:
      TypeError: for a non-numeric dtype.
      ValueError: if the static shape does not fit the size ratio.
      InvalidArgumentError: at run time, if the shape does not fit.
    """
    return apply_op(Bitcast, [input], {"type": _dtypes.as_dtype(type)}, name=name)


# --- Cross --------------------------------------------------------------------------------------
def _cross_shape(ctx):
    a, b = ctx.input_shape(0), ctx.input_shape(1)
    if a.ndims == 0 or b.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    out = merge_shapes(a, b)
    if out.ndims is not None:
        last = out.as_list()[-1]
        if last is not None and last != 3:
            raise ValueError(f"Dimension must be 3 but is {last}")
    return out


Cross = define_op("Cross", inputs=["a: T", "b: T"], outputs=["product: T"],
                  attrs=[TypeAttr("T", _dtypes.REAL_NUMERIC)], shape_fn=_cross_shape)


@Cross.gradient
def _cross_grad(op, grad):
    """d(u x v) = du x v + u x dv: u gets v x g, v gets g x u."""
    u, v = op.inputs
    return [cross(v, grad), cross(grad, u)]


def cross(a, b, name=None):
    """Pairwise cross products of 3-element vectors along the last axis (tf.cross,
    tf.linalg.cross).

    Args:
      a: a real numeric Tensor whose last dimension is 3.
      b: a Tensor of the same dtype and shape.
      name: the op name (default "Cross").

    Returns:
      A Tensor of a's dtype and shape.

    Raises:
      ValueError: if the static shapes differ or the last dimension is not 3.
      InvalidArgumentError / FailedPreconditionError: the same at run time.
    """
    return apply_op(Cross, [a, b], name=name)


# --- ParallelConcat (tf.parallel_stack) ---------------------------------------------------------
def _parallel_concat_shape(ctx):
    """The `shape` attr; every input must be a [1, ...] slice of it."""
    out = ctx.attrs["shape"]
    if out.ndims is None or not out.is_fully_defined():
        raise ValueError("shape attr must be fully defined.")
    piece = _ts.TensorShape([1] + out.as_list()[1:])
    for i in range(len(ctx.inputs)):
        merge_shapes(ctx.input_shape(i), piece)
    return out


ParallelConcat = define_op(
    "ParallelConcat", inputs=["values: N * T"], outputs=["output: T"],
    attrs=[Attr("N", "int", minimum=1), TypeAttr("T"), Attr("shape", "shape")],
    shape_fn=_parallel_concat_shape)


def parallel_stack(values, name="parallel_stack"):
    """Stacks equally shaped tensors along a new first axis, copying each into place as it
    becomes available (tf.parallel_stack); unlike tf.stack, the shapes must be known when the
    graph is built and there is no gradient.

    Args:
      values: a list of Tensors of one dtype and one fully known shape.
      name: a name scope (default "parallel_stack").

    Returns:
      A Tensor of shape [len(values)] + values[0].shape.

    Raises:
      ValueError: if the shapes are not fully known or differ.
    """
    from tensorweave.ops.array_ops import expand_dims
    with name_scope(name):
        first = convert_to_tensor(values[0])
        shape = _ts.TensorShape([len(values)]).concatenate(first.shape)
        return apply_op(ParallelConcat, [[expand_dims(v, 0) for v in values]],
                        {"shape": shape})


# --- SegmentProd / UnsortedSegmentProd ----------------------------------------------------------
SegmentProd = define_op(
    "SegmentProd", inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.NUMERIC), TypeAttr("Tindices", _INDEX)],
    shape_fn=sorted_segment_shape)
UnsortedSegmentProd = define_op(
    "UnsortedSegmentProd", inputs=["data: T", "segment_ids: Tindices",
                                   "num_segments: Tnumsegments"],
    outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.NUMERIC), TypeAttr("Tindices", _INDEX),
           TypeAttr("Tnumsegments", _INDEX, _dtypes.int32)],
    shape_fn=unsorted_segment_shape)


def _segment_prod_grad_parts(op, grad, ids, segment_sum_fn, prod_fn):
    """TensorFlow's three cases per segment: no zero (product / x), one zero (that entry gets
    the product of the others, the rest 0), two or more zeros (all 0). Returns the gathered
    gradient's mask-free pieces: (grad with those segments zeroed, partial derivatives)."""
    from tensorweave.ops.array_creation_ops import ones_like, zeros_like
    from tensorweave.ops.array_index_ops import gather, where_v2
    from tensorweave.ops.math_ops import equal, greater
    from tensorweave.ops.math_unary_ops import cast
    data = op.inputs[0]
    is_zero = equal(data, 0)
    num_zeros = segment_sum_fn(cast(is_zero, _dtypes.int32))
    grad = where_v2(greater(num_zeros, 1), zeros_like(grad), grad)
    non_zero_data = where_v2(is_zero, ones_like(data), data)
    non_zero_prod = prod_fn(non_zero_data)
    partial = where_v2(is_zero, gather(non_zero_prod, ids),
                       gather(op.outputs[0], ids) / data)
    return grad, partial


@SegmentProd.gradient
def _segment_prod_grad(op, grad):
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.math_segment_ops import segment_sum
    ids = op.inputs[1]
    grad, partial = _segment_prod_grad_parts(
        op, grad, ids, lambda t: segment_sum(t, ids), lambda t: segment_prod(t, ids))
    return [gather(grad, ids) * partial, None]


@UnsortedSegmentProd.gradient
def _unsorted_segment_prod_grad(op, grad):
    """As SegmentProd's; rows with a negative id were dropped and get 0."""
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.math_ops import maximum
    from tensorweave.ops.math_segment_ops import gather_drop_negatives, unsorted_segment_sum
    _, ids, num = op.inputs
    clipped = maximum(ids, zeros_like(ids))
    grad, partial = _segment_prod_grad_parts(
        op, grad, clipped, lambda t: unsorted_segment_sum(t, ids, num),
        lambda t: unsorted_segment_prod(t, ids, num))
    return [gather_drop_negatives(grad, ids, clipped)[0] * partial, None, None]


def segment_prod(data, segment_ids, name=None):
    """Multiplies the rows of `data` within each segment of sorted `segment_ids`
    (tf.segment_prod, tf.math.segment_prod); ids with no rows give 1.

    Args:
      data: a numeric Tensor of rank >= 1.
      segment_ids: a sorted 1-D int32/int64 Tensor of length data.shape[0].
      name: the op name (default "SegmentProd").

    Returns:
      A Tensor of shape [segment_ids[-1] + 1] + data.shape[1:].

    Raises:
      InvalidArgumentError: at run time, for unsorted or negative ids.
    """
    return apply_op(SegmentProd, [data, segment_ids], name=name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """Multiplies the rows of `data` into `num_segments` segments (tf.unsorted_segment_prod);
    rows with a negative id are dropped, empty segments are 1.

    Args:
      data: a numeric Tensor whose shape starts with segment_ids' shape.
      segment_ids: an int32/int64 Tensor of ids below `num_segments`.
      num_segments: a scalar int32/int64 Tensor.
      name: the op name (default "UnsortedSegmentProd").

    Returns:
      A Tensor of shape [num_segments] + data.shape[rank(segment_ids):].

    Raises:
      InvalidArgumentError: at run time, for an id >= num_segments.
    """
    return apply_op(UnsortedSegmentProd, [data, segment_ids, num_segments], name=name)


# --- ScatterNdAdd / ScatterNdSub / ScatterNdUpdate ----------------------------------------------
def _scatter_nd_ref_shape(ctx):
    """ref's shape; updates must be indices.shape[:-1] + ref.shape[indices.shape[-1]:]."""
    ref, indices, updates = (ctx.input_shape(i)._dims for i in range(3))
    if updates is not None and not updates:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    if indices is not None and not indices:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    check_scatter_nd_shapes(ref, indices, updates)
    return ctx.input_shape(0)


def _scatter_nd_op(op_type: str, use_locking_default: bool):
    """The ref op `op_type` and its resource twin `Resource<op_type>` (which locks by
    default, as in TensorFlow)."""
    allowed = None if op_type == "ScatterNdUpdate" else _dtypes.NUMERIC
    ref_op = define_op(op_type, inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
                       outputs=["output_ref: Ref(T)"],
                       attrs=[TypeAttr("T", allowed), TypeAttr("Tindices", _INDEX),
                              Attr("use_locking", "bool", use_locking_default),
                              BAD_INDICES_POLICY],
                       shape_fn=_scatter_nd_ref_shape, is_stateful=True,
                       not_differentiable=True)
    twin = define_op("Resource" + op_type,
                     inputs=["ref: resource", "indices: Tindices", "updates: T"],
                     attrs=[TypeAttr("T", allowed), TypeAttr("Tindices", _INDEX),
                            Attr("use_locking", "bool", True), BAD_INDICES_POLICY],
                     shape_fn=on_variable_shapes(_scatter_nd_ref_shape), is_stateful=True,
                     not_differentiable=True)
    return ref_op, twin


ScatterNdUpdate, ResourceScatterNdUpdate = _scatter_nd_op("ScatterNdUpdate", True)
ScatterNdAdd, ResourceScatterNdAdd = _scatter_nd_op("ScatterNdAdd", False)
ScatterNdSub, ResourceScatterNdSub = _scatter_nd_op("ScatterNdSub", False)

_SCATTER_ND_DOC = """{summary}

    Args:
      ref: a Variable (or its ref tensor).
      indices: an int32/int64 Tensor whose last dimension K indexes ref's first K dimensions.
      updates: a Tensor of shape indices.shape[:-1] + ref.shape[K:].
      use_locking: if True, the update holds the variable's lock (default {locking}).
      name: the op name (default "{op}").

    Returns:
      `ref` after the update (a ref tensor; reading it gives the new value), or a resource
      variable's value read after it.

    Raises:
      ValueError: if the static shapes do not fit.
      InvalidArgumentError: at run time, for an index outside ref's shape.
    """


def _scatter_nd_fn(op_def, twin, public_name: str, summary: str):
    """The wrapper of `op_def`: on a resource variable, `twin` on its handle, returning the
    value read after it."""
    default = op_def.attrs["use_locking"].default

    def wrapper(ref, indices, updates, use_locking=default, name=None):
        if is_resource_variable(ref):
            update = apply_op(twin, [ref.handle, indices, convert_to_tensor(updates, ref.dtype)],
                              {"use_locking": use_locking}, name=name)
            return ref._read_after(update)
        return apply_op(op_def, [ref, indices, updates], {"use_locking": use_locking},
                        name=name)
    wrapper.__name__ = wrapper.__qualname__ = public_name
    wrapper.__doc__ = _SCATTER_ND_DOC.format(summary=summary, locking=default, op=op_def.name)
    return wrapper


scatter_nd_update = _scatter_nd_fn(
    ScatterNdUpdate, ResourceScatterNdUpdate, "scatter_nd_update", "Assigns `updates` to the "
    "slices of the variable `ref` at `indices`, in order: the last of repeated indices wins, "
    "as on TensorFlow's CPU (tf.scatter_nd_update).")
scatter_nd_add = _scatter_nd_fn(
    ScatterNdAdd, ResourceScatterNdAdd, "scatter_nd_add", "Adds `updates` to the slices of "
    "`ref` at `indices`; repeated indices accumulate (tf.scatter_nd_add).")
scatter_nd_sub = _scatter_nd_fn(
    ScatterNdSub, ResourceScatterNdSub, "scatter_nd_sub", "Subtracts `updates` from the "
    "slices of `ref` at `indices`; repeated indices accumulate (tf.scatter_nd_sub).")


# --- compositions: repeat, batch_gather ---------------------------------------------------------
def _positive_axis(axis: int, rank: int | None) -> int:
    """TF's get_positive_axis for rank(data)."""
    if rank is not None:
        if not -rank <= axis < rank:
            raise ValueError(f"axis={axis} out of bounds: expected {-rank}<=axis<{rank}")
        return axis % rank
    if axis < 0:
        raise ValueError(f"axis={axis} may only be negative if rank(data) is statically "
                         "known.")
    return axis


def _tile_one_dimension(data, axis: int, multiple):
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_join_ops import concat, stack
    from tensorweave.ops.array_ops import rank
    from tensorweave.ops.array_tile_pad_ops import tile
    if data.shape.ndims is not None:
        multiples = [1] * data.shape.ndims
        multiples[axis] = multiple
        multiples = stack(multiples)
    else:
        ones_value = ones(rank(data), _dtypes.int32)
        multiples = concat([ones_value[:axis], [multiple], ones_value[axis + 1:]], axis=0)
    return tile(data, multiples)


def _with_nonzero_rank(data):
    """A scalar becomes a 1-vector; other ranks stay."""
    from tensorweave.ops.array_join_ops import concat, stack
    from tensorweave.ops.array_ops import rank, reshape, shape
    if data.shape.ndims is not None:
        return stack([data]) if data.shape.ndims == 0 else data
    return reshape(data, concat([[1], shape(data)], axis=0)[-rank(data):])


def repeat(input, repeats, axis=None, name=None):  # noqa: A002 - TF's argument name
    """Repeats each element of `input` along `axis` (tf.repeat), built from Tile, SequenceMask
    and BooleanMask ops exactly as TensorFlow 2.21 builds it.

    Args:
      input: a Tensor (flattened first when `axis` is None).
      repeats: an integer scalar, or a 1-D integer Tensor with one count per entry along axis.
      axis: a Python int (negative counts from the end), or None.
      name: a name scope (default "Repeat").

    Returns:
      A Tensor with input's dims, except along `axis`: sum(repeats) entries.

    Raises:
      TypeError: if `axis` is not an int or `repeats` not an integer tensor.
      ValueError: if repeats has rank > 1, axis is out of bounds or the sizes clash.
    """
    from tensorweave.ops.array_index_ops import boolean_mask, sequence_mask
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import expand_dims, rank, reshape, shape
    from tensorweave.ops.array_rearrange_ops import broadcast_to
    from tensorweave.ops.math_ops import maximum
    from tensorweave.ops.reduction_ops import reduce_max, reduce_sum
    if axis is None:
        from tensorweave.ops.array_ops import reshape as _reshape
        input, axis = _reshape(input, [-1]), 0
    if not isinstance(axis, int):
        raise TypeError(f"Argument `axis` must be an int. Received `axis` = {axis} of type "
                        f"{type(axis).__name__}")
    with name_scope(name, "Repeat", [input, repeats]):
        data = convert_to_tensor(input, name="data")
        repeats = convert_to_tensor(repeats, name="repeats", preferred_dtype=_dtypes.int32)
        if not repeats.dtype.is_integer:
            raise TypeError(f"Argument `tensor` (name: repeats) must be of type integer. "
                            f"Received `tensor` = {repeats} of dtype: {repeats.dtype}")
        from tensorweave.ops.math_unary_ops import cast
        repeats = cast(repeats, _dtypes.int32)
        repeats.shape.with_rank_at_most(1)
        data = _with_nonzero_rank(data)
        data_shape = shape(data, out_type=repeats.dtype)
        axis = _positive_axis(axis, data.shape.ndims)
        if repeats.shape.num_elements() == 1:
            repeats = reshape(repeats, [])
            tiled = _tile_one_dimension(expand_dims(data, axis + 1), axis + 1, repeats)
            result_shape = concat([data_shape[:axis], [repeats * data_shape[axis]],
                                   data_shape[axis + 1:]], axis=0)
            return reshape(tiled, result_shape)
        if repeats.shape.ndims == 1 and data.shape.ndims is not None:
            data.shape[axis].assert_is_compatible_with(repeats.shape[0])
        repeats = broadcast_to(repeats, [data_shape[axis]])
        repeats_original = repeats
        if repeats.shape.ndims != axis + 1:
            broadcast_shape = concat([data_shape[:axis + 1 - rank(repeats)], shape(repeats)],
                                     axis=0)
            repeats = broadcast_to(repeats, broadcast_shape)
            repeats.set_shape([None] * (axis + 1))
        max_repeat = maximum(convert_to_tensor(0, name="zero", dtype=repeats.dtype),
                             reduce_max(repeats))
        mask = sequence_mask(repeats, max_repeat)
        tiled = _tile_one_dimension(expand_dims(data, axis + 1), axis + 1, max_repeat)
        result = boolean_mask(tiled, mask)
        if axis != 0:
            size = reduce_sum(repeats_original)
            result = reshape(result, concat([data_shape[:axis], [size], data_shape[axis + 1:]],
                                            axis=0))
        if data.shape.ndims is not None:
            new_axis_size = 0 if repeats.shape[0] == 0 else None
            result.set_shape(data.shape[:axis].concatenate([new_axis_size])
                             .concatenate(data.shape[axis + 1:]))
        return result


def batch_gather(params, indices, name=None):
    """Gathers params[b..., indices[b..., i], ...] within each batch (tf.batch_gather):
    indices' leading rank - 1 dimensions are batch dimensions shared with params. Built from
    Range, Reshape and GatherV2 as in TensorFlow.

    Args:
      params: a Tensor whose leading dims match indices' batch dims.
      indices: an int32/int64 Tensor of known rank.
      name: a name scope (default "BatchGather").

    Returns:
      A Tensor of shape indices.shape + params.shape[rank(indices):].

    Raises:
      ValueError: if indices has unknown rank or params has too few dimensions.
    """
    from tensorweave.ops.array_creation_ops import ones, zeros
    from tensorweave.ops.array_creation_ops import range as _range
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.array_join_ops import concat, stack
    from tensorweave.ops.array_ops import reshape, shape
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.reduction_ops import reduce_prod
    with name_scope(name, "BatchGather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        params = convert_to_tensor(params, name="params")
        ndims = indices.shape.ndims
        if ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        batch_dims = ndims - 1
        if params.shape.ndims is not None and batch_dims >= params.shape.ndims:
            raise ValueError(f"Argument `batch_dims` = {batch_dims} must be less than "
                             f"rank(`params`) = {params.shape.ndims}")
        indices_shape, params_shape = shape(indices), shape(params)
        index_dtype = indices.dtype.base_dtype
        batch_indices, accum = indices, ones((), dtype=index_dtype)
        dims = cast(params_shape, index_dtype)
        for dim in range(batch_dims, 0, -1):  # offset of each batch entry in the flat params
            dim_value = dims[dim - 1]
            accum *= dims[dim]
            dim_indices = _range(zeros((), index_dtype), dim_value, ones((), index_dtype))
            dim_indices *= accum
            dim_shape = stack([1] * (dim - 1) + [dim_value] + [1] * (ndims - dim), axis=0)
            batch_indices += reshape(dim_indices, dim_shape)
        flat_indices = reshape(batch_indices, [-1])
        outer_shape = params_shape[batch_dims + 1:]
        flat_inner = reduce_prod(params_shape[:batch_dims + 1], [0], keepdims=False)
        flat_params = reshape(params, concat([[flat_inner], outer_shape], axis=0))
        result = reshape(gather(flat_params, flat_indices),
                         concat([indices_shape, outer_shape], axis=0))
        final = indices.shape[:batch_dims].merge_with(params.shape[:batch_dims])
        final = final.concatenate(indices.shape[batch_dims:])
        result.set_shape(final.concatenate(params.shape[batch_dims + 1:]))
        return result
