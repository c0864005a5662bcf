"""Sparse segment reductions: rows of `data` picked by `indices`, reduced over sorted segments.

`SparseSegmentSum/Mean/SqrtN` compute output[s] = reduce(data[indices[i]] for segment_ids[i] == s)
with sorted segment ids; the `WithNumSegments` forms fix the number of output rows. They are
how `tf.nn.embedding_lookup_sparse` combines embeddings. The gradient of each is its own op
(`SparseSegmentSumGrad`, ...), scattering the output gradient back onto the rows of `data`
(with `sparse_gradient=True`, TF's `IndexedSlices` of the looked-up rows instead). The `*Grad`
ops are not differentiable, as in TensorFlow. Kernels are in kernels/sparse_segment.py.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import merge_shapes, shape_with_rank

__all__ = ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]

_INDEX_ATTRS = [TypeAttr("Tidx", _dtypes.INDEX, _dtypes.int32),
                TypeAttr("Tsegmentids", _dtypes.INDEX, _dtypes.int32)]


def _reduction_shape(ctx):
    """[num_segments or ?] + data.shape[1:]; indices and segment_ids are matching vectors."""
    data = ctx.input_shape(0)
    indices = shape_with_rank(ctx.input_shape(1), 1)
    merge_shapes(indices, shape_with_rank(ctx.input_shape(2), 1))
    if data.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    rows = None
    if len(ctx.inputs) == 4:
        shape_with_rank(ctx.input_shape(3), 0)
        value = ctx.static_value(3)
        rows = None if value is None else int(value)
    if data.ndims is None:
        return _ts.unknown_shape()
    return _ts.TensorShape([rows] + data.as_list()[1:])


def _grad_shape(ctx):
    """[output_dim0] + grad.shape[1:]: the gradient has data's shape."""
    grad = ctx.input_shape(0)
    merge_shapes(shape_with_rank(ctx.input_shape(1), 1), shape_with_rank(ctx.input_shape(2), 1))
    shape_with_rank(ctx.input_shape(3), 0)
    value = ctx.static_value(3)
    if grad.ndims is None:
        return _ts.unknown_shape()
    if grad.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return _ts.TensorShape([None if value is None else int(value)] + grad.as_list()[1:])


def _reduction_op(name, allowed, with_num_segments):
    inputs = ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"]
    attrs = [TypeAttr("T", allowed), *_INDEX_ATTRS, Attr("sparse_gradient", "bool", False)]
    if with_num_segments:
        inputs.append("num_segments: Tnumsegments")
        attrs.append(TypeAttr("Tnumsegments", _dtypes.INDEX, _dtypes.int32))
    return define_op(name, inputs=inputs, outputs=["output: T"], attrs=attrs,
                     shape_fn=_reduction_shape)


def _grad_op(name):
    return define_op(
        name, inputs=["grad: T", "indices: Tidx", "segment_ids: Tsegmentids",
                      "output_dim0: int32"],
        outputs=["output: T"], attrs=[TypeAttr("T", _dtypes.FLOATING), *_INDEX_ATTRS],
        shape_fn=_grad_shape, not_differentiable=True,
        doc="The gradient of a sparse segment reduction with respect to its data.")


SparseSegmentSumGrad = _grad_op("SparseSegmentSumGrad")
SparseSegmentMeanGrad = _grad_op("SparseSegmentMeanGrad")
SparseSegmentSqrtNGrad = _grad_op("SparseSegmentSqrtNGrad")

# (op, its gradient op) for plain and WithNumSegments forms of each reduction.
_REDUCTIONS = {}
for _kind, _allowed, _grad in (("Sum", _dtypes.REAL_NUMERIC, SparseSegmentSumGrad),
                               ("Mean", _dtypes.FLOATING, SparseSegmentMeanGrad),
                               ("SqrtN", _dtypes.FLOATING, SparseSegmentSqrtNGrad)):
    for _with_num in (False, True):
        _name = f"SparseSegment{_kind}" + ("WithNumSegments" if _with_num else "")
        _REDUCTIONS[_name] = _reduction_op(_name, _allowed, _with_num)
        _REDUCTIONS[_name].gradient(
            lambda op, grad, _grad_def=_grad: _sparse_segment_grad(op, grad, _grad_def))


def _sparse_segment_grad(op, grad, grad_def):
    """d data = the Grad op's scatter of `grad` onto data's rows; an IndexedSlices of the
    looked-up rows instead when the forward op asked for a sparse gradient."""
    from tensorweave.ops.array_index_ops import unique
    from tensorweave.ops.array_ops import shape
    data, indices, segment_ids = op.inputs[:3]
    data_shape = shape(data)
    nones = [None] * (len(op.inputs) - 1)
    if not op.get_attr("sparse_gradient"):
        return [apply_op(grad_def, [grad, indices, segment_ids, data_shape[0]]), *nones]
    # Only the rows named by `indices` get a gradient: one row per distinct index (in order of
    # first use; TF sorts them, which changes no sum).
    rows, position = unique(indices)
    dense = apply_op(grad_def, [grad, position, segment_ids, shape(rows)[0]])
    return [IndexedSlices(dense, rows, data_shape), *nones]


def _sparse_segment(kind, data, indices, segment_ids, name, num_segments, sparse_gradient):
    op_name = f"SparseSegment{kind}"
    inputs = [data, indices, segment_ids]
    if num_segments is not None:
        op_name += "WithNumSegments"
        inputs.append(num_segments)
    return apply_op(_REDUCTIONS[op_name], inputs, {"sparse_gradient": sparse_gradient},
                    name=name or op_name)


def sparse_segment_sum(data, indices, segment_ids, name=None, num_segments=None,
                       sparse_gradient=False):
    """Sums rows of `data` picked by `indices` over sorted segments (tf.sparse.segment_sum).

    output[s] = sum of data[indices[i]] over i with segment_ids[i] == s; segments without
    rows are zero.

    Args:
      data: a real numeric Tensor of rank >= 1.
      indices: 1-D int32/int64 row indices into `data`.
      segment_ids: 1-D int32/int64, sorted (non-decreasing), one per index.
      name: the op name (default "SparseSegmentSum", or "SparseSegmentSumWithNumSegments").
      num_segments: optional scalar int32/int64, the number of output rows (default
        segment_ids[-1] + 1).
      sparse_gradient: if True the gradient for `data` is an IndexedSlices of the rows used.

    Returns:
      A Tensor of data's dtype and shape [num_segments] + data.shape[1:].

    Raises:
      ValueError: for `indices` and `segment_ids` that are not vectors of one length.
      InvalidArgumentError: at run time for an index out of range, unsorted or negative
        segment ids, or an id >= num_segments.
    """
    return _sparse_segment("Sum", data, indices, segment_ids, name, num_segments,
                           sparse_gradient)


def sparse_segment_mean(data, indices, segment_ids, name=None, num_segments=None,
                        sparse_gradient=False):
    """Mean of the rows of `data` picked by `indices` over sorted segments
    (tf.sparse.segment_mean); `data` must be floating. See `sparse_segment_sum`."""
    return _sparse_segment("Mean", data, indices, segment_ids, name, num_segments,
                           sparse_gradient)


def sparse_segment_sqrt_n(data, indices, segment_ids, name=None, num_segments=None,
                          sparse_gradient=False):
    """Sum of the rows of `data` picked by `indices` over sorted segments divided by the square
    root of the segment's size (tf.sparse.segment_sqrt_n); see `sparse_segment_sum`."""
    return _sparse_segment("SqrtN", data, indices, segment_ids, name, num_segments,
                           sparse_gradient)
