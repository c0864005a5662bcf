"""Segment reductions: rows of `data` reduced into the segments named by `segment_ids`.

Unsorted forms (`UnsortedSegmentSum/Max/Min`) take any ids and a segment count; negative ids
drop their rows. Sorted forms (`SegmentSum/Mean/Max/Min`) need non-decreasing ids of length
data.shape[0]. `unsorted_segment_mean` and `unsorted_segment_sqrt_n` are compositions, as in
TensorFlow. UnsortedSegmentSum is also how sparse gradients (IndexedSlices) become dense.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import shape_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min",
           "unsorted_segment_mean", "unsorted_segment_sqrt_n", "segment_sum", "segment_mean",
           "segment_max", "segment_min"]


# --- shape functions --------------------------------------------------------------------------
def unsorted_segment_shape(ctx):
    """[num_segments] + data.shape[rank(segment_ids):]; data must start with ids' shape."""
    data, ids = ctx.input_shape(0), ctx.input_shape(1)
    shape_with_rank(ctx.input_shape(2), 0)
    num = ctx.static_value(2)
    num = None if num is None else int(num)
    if data.ndims is None or ids.ndims is None:
        return _ts.unknown_shape()
    if ids.ndims > data.ndims:
        raise ValueError(f"Shape must be at least rank {ids.ndims} but is rank {data.ndims}")
    for d, i in zip(data.as_list(), ids.as_list()):
        if d is not None and i is not None and d != i:
            raise ValueError(f"Dimensions must be equal, but are {d} and {i}")
    return _ts.TensorShape([num] + data.as_list()[ids.ndims:])


def sorted_segment_shape(ctx):
    """[?] + data.shape[1:]: the segment count is only known at run time. As in TensorFlow,
    the lengths of data and segment_ids are not compared here: the kernel reports a mismatch
    (InvalidArgumentError), not graph construction."""
    data = ctx.input_shape(0)
    shape_with_rank(ctx.input_shape(1), 1)
    if data.ndims is None:
        return _ts.unknown_shape()
    if data.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return _ts.TensorShape([None] + data.as_list()[1:])


_UNSORTED_ATTRS = [TypeAttr("Tindices", _dtypes.INDEX),
                   TypeAttr("Tnumsegments", _dtypes.INDEX, default=_dtypes.int32)]


def _unsorted(name, allowed):
    return define_op(name, inputs=["data: T", "segment_ids: Tindices",
                                   "num_segments: Tnumsegments"],
                     outputs=["output: T"], attrs=[TypeAttr("T", allowed), *_UNSORTED_ATTRS],
                     shape_fn=unsorted_segment_shape)


def _sorted(name, allowed):
    return define_op(name, inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
                     attrs=[TypeAttr("T", allowed), TypeAttr("Tindices", _dtypes.INDEX)],
                     shape_fn=sorted_segment_shape)


UnsortedSegmentSum = _unsorted("UnsortedSegmentSum", _dtypes.NUMERIC)
UnsortedSegmentMax = _unsorted("UnsortedSegmentMax", _dtypes.REAL_NUMERIC)
UnsortedSegmentMin = _unsorted("UnsortedSegmentMin", _dtypes.REAL_NUMERIC)
SegmentSum = _sorted("SegmentSum", _dtypes.NUMERIC)
SegmentMean = _sorted("SegmentMean", _dtypes.NUMERIC)
SegmentMax = _sorted("SegmentMax", _dtypes.REAL_NUMERIC)
SegmentMin = _sorted("SegmentMin", _dtypes.REAL_NUMERIC)


# --- gradients --------------------------------------------------------------------------------
def gather_drop_negatives(params, ids, clipped=None, keep=None):
    """params gathered at ids, with zero rows where an id is negative (its row was dropped).

    Returns the gathered tensor, the clipped ids and the broadcastable keep mask for reuse.
    """
    from tensorweave.ops.array_creation_ops import ones, zeros_like
    from tensorweave.ops.array_index_ops import gather, where_v2
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import rank, reshape, shape
    from tensorweave.ops.math_ops import greater_equal, maximum
    if clipped is None:
        clipped = maximum(ids, 0)
    gathered = gather(params, clipped)
    if keep is None:
        keep = greater_equal(ids, 0)
        extra = ones([rank(gathered) - rank(keep)], dtype=_dtypes.int32)
        keep = reshape(keep, concat([shape(keep), extra], 0))
    return where_v2(keep, gathered, zeros_like(gathered)), clipped, keep


@UnsortedSegmentSum.gradient
def _unsorted_segment_sum_grad(op, grad):
    """Each row of data receives the gradient of its segment (zero for dropped rows)."""
    return [gather_drop_negatives(grad, op.inputs[1])[0], None, None]


def _unsorted_min_max_grad(op, grad):
    """The gradient goes to the rows equal to their segment's extremum, split among ties."""
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.math_ops import equal, logical_and
    from tensorweave.ops.math_unary_ops import cast
    data, ids, num = op.inputs
    extremum, clipped, keep = gather_drop_negatives(op.outputs[0], ids)
    selected = logical_and(equal(data, extremum), keep)
    count = unsorted_segment_sum(cast(selected, grad.dtype), ids, num)
    share, _, _ = gather_drop_negatives(grad / count, None, clipped, keep)
    return [where_v2(selected, share, zeros_like(share)), None, None]


UnsortedSegmentMax.gradient(_unsorted_min_max_grad)
UnsortedSegmentMin.gradient(_unsorted_min_max_grad)


@SegmentSum.gradient
def _segment_sum_grad(op, grad):
    from tensorweave.ops.array_index_ops import gather
    return [gather(grad, op.inputs[1]), None]


@SegmentMean.gradient
def _segment_mean_grad(op, grad):
    """Each row receives its segment's gradient divided by the segment's size."""
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import rank, shape
    data, ids = op.inputs
    ones_shape = concat([shape(ids), ones([rank(data) - 1], dtype=_dtypes.int32)], 0)
    counts = segment_sum(ones(ones_shape, dtype=grad.dtype), ids)
    return [gather(grad / counts, ids), None]


def _segment_min_max_grad(op, grad):
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.array_index_ops import gather, where
    from tensorweave.ops.math_ops import equal
    from tensorweave.ops.math_unary_ops import cast
    data, ids = op.inputs
    selected = equal(data, gather(op.outputs[0], ids))
    count = segment_sum(cast(selected, grad.dtype), ids)
    share = gather(grad / count, ids)
    return [where(selected, share, zeros_like(data)), None]


SegmentMax.gradient(_segment_min_max_grad)
SegmentMin.gradient(_segment_min_max_grad)


# --- wrappers ---------------------------------------------------------------------------------
def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the rows of `data` into `num_segments` segments (tf.unsorted_segment_sum).

    output[i, ...] = sum of data[j..., ...] over j with segment_ids[j...] == i; rows with a
    negative id are dropped; empty segments are zero.

    Args:
      data: a numeric Tensor.
      segment_ids: int32/int64 Tensor whose shape is a prefix of data's shape.
      num_segments: scalar int32/int64, the number of segments.
      name: the op name (default "UnsortedSegmentSum").

    Returns:
      A Tensor of shape [num_segments] + data.shape[rank(segment_ids):].

    Raises:
      InvalidArgumentError: at run time, for an id >= num_segments.
    """
    return apply_op(UnsortedSegmentSum, [data, segment_ids, num_segments],
                    name=name or "UnsortedSegmentSum")


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Per-segment maximum (tf.unsorted_segment_max); empty segments hold the dtype's lowest
    value. See `unsorted_segment_sum` for the arguments."""
    return apply_op(UnsortedSegmentMax, [data, segment_ids, num_segments],
                    name=name or "UnsortedSegmentMax")


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """Per-segment minimum (tf.unsorted_segment_min); empty segments hold the dtype's highest
    value. See `unsorted_segment_sum` for the arguments."""
    return apply_op(UnsortedSegmentMin, [data, segment_ids, num_segments],
                    name=name or "UnsortedSegmentMin")


def _segment_counts(data, segment_ids, num_segments):
    """Rows per segment (at least 1), shaped to broadcast against the segment sums."""
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import expand_dims, rank, reshape, shape
    from tensorweave.ops.math_ops import maximum
    num_segments = convert_to_tensor(num_segments)
    n = unsorted_segment_sum(ones(shape(segment_ids), dtype=data.dtype), segment_ids,
                             num_segments)
    extra = ones([rank(data) - rank(segment_ids)], dtype=num_segments.dtype)
    n = reshape(n, concat([expand_dims(num_segments, 0), extra], 0))
    return maximum(n, 1)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """Per-segment mean (tf.unsorted_segment_mean): the sum divided by the row count (empty
    segments are zero). See `unsorted_segment_sum` for the arguments."""
    with name_scope(name, "UnsortedSegmentMean"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        counts = _segment_counts(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / counts


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Per-segment sum divided by sqrt(row count) (tf.unsorted_segment_sqrt_n)."""
    from tensorweave.ops.math_unary_ops import sqrt
    with name_scope(name, "UnsortedSegmentSqrtN"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        counts = _segment_counts(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / sqrt(counts)


def segment_sum(data, segment_ids, name=None):
    """Sums rows of `data` over sorted segments (tf.segment_sum).

    Args:
      data: a numeric Tensor of rank >= 1.
      segment_ids: a sorted (non-decreasing) 1-D int32/int64 Tensor of length data.shape[0].
      name: the op name (default "SegmentSum").

    Returns:
      A Tensor of shape [segment_ids[-1] + 1] + data.shape[1:]; segments without rows are 0.

    Raises:
      InvalidArgumentError: at run time, for unsorted or negative ids or a length mismatch.
    """
    return apply_op(SegmentSum, [data, segment_ids], name=name or "SegmentSum")


def segment_mean(data, segment_ids, name=None):
    """Mean of rows over sorted segments (tf.segment_mean); see `segment_sum`."""
    return apply_op(SegmentMean, [data, segment_ids], name=name or "SegmentMean")


def segment_max(data, segment_ids, name=None):
    """Maximum of rows over sorted segments (tf.segment_max); empty segments are 0."""
    return apply_op(SegmentMax, [data, segment_ids], name=name or "SegmentMax")


def segment_min(data, segment_ids, name=None):
    """Minimum of rows over sorted segments (tf.segment_min); empty segments are 0."""
    return apply_op(SegmentMin, [data, segment_ids], name=name or "SegmentMin")
