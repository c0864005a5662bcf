"""Scatter into a copy of a tensor: tf.tensor_scatter_nd_update / add / sub / max / min.

The ops are TensorScatterUpdate, TensorScatterAdd, ...; TF1 also names the first three
tf.tensor_scatter_update / add / sub. Each op returns `tensor` with the slices addressed by the
last dimension K of `indices` combined with `updates`, of shape indices.shape[:-1] +
tensor.shape[K:]; `tensor` itself is not changed (the variables' in-place versions are
tf.scatter_nd_update and friends). Repeated indices accumulate, except for update, where the
last one wins. The shape function is ScatterNd's (TF's ScatterNdShapeHelper); kernels:
kernels/tensor_scatter.py.

Gradients are TensorFlow's: `updates` gets the output gradient at its slices (GatherNd), negated
for sub; `tensor` gets it everywhere for add and sub, and for update everywhere but the
overwritten slices. For max and min, equality masks send each output's gradient to whichever of
`tensor` and `updates` produced it, split evenly between ties.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.ops.array_index_ops import (
    BAD_INDICES_POLICY,
    check_scatter_nd_shapes,
    gather_nd,
    scatter_nd,
)
from tensorweave.ops.image_ops import rank_at_least

__all__ = ["tensor_scatter_add", "tensor_scatter_nd_add", "tensor_scatter_nd_max",
           "tensor_scatter_nd_min", "tensor_scatter_nd_sub", "tensor_scatter_nd_update",
           "tensor_scatter_sub", "tensor_scatter_update"]


def _tensor_scatter_shape(ctx):
    """`tensor`'s shape (TF's ScatterNdTensorShape); a scalar `updates` is left to the kernel."""
    tensor = rank_at_least(ctx.input_shape(0), 1)
    indices = rank_at_least(ctx.input_shape(1), 1)
    check_scatter_nd_shapes(tensor._dims, indices._dims, ctx.input_shape(2)._dims)
    return tensor


def _tensor_scatter_op(op_type: str, index_types=_dtypes.INDEX):
    """TensorFlow's OpDef: any T (the kernels narrow it); int32 / int64 indices unless told."""
    return define_op(op_type, inputs=["tensor: T", "indices: Tindices", "updates: T"],
                     outputs=["output: T"],
                     attrs=[TypeAttr("T"), TypeAttr("Tindices", index_types),
                            BAD_INDICES_POLICY],
                     shape_fn=_tensor_scatter_shape)


TensorScatterUpdate = _tensor_scatter_op(
    "TensorScatterUpdate", _dtypes.INDEX | {_dtypes.int16, _dtypes.uint16})
TensorScatterAdd = _tensor_scatter_op("TensorScatterAdd")
TensorScatterSub = _tensor_scatter_op("TensorScatterSub")
TensorScatterMax = _tensor_scatter_op("TensorScatterMax")
TensorScatterMin = _tensor_scatter_op("TensorScatterMin")


@TensorScatterUpdate.gradient
def _tensor_scatter_update_grad(op, grad):
    """Overwritten slices pass nothing back to `tensor`; each update gets its slice's gradient
    (every one of repeated indices does, as in TensorFlow)."""
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.array_ops import identity
    indices, updates = op.inputs[1], op.inputs[2]
    tensor_grad = tensor_scatter_nd_update(identity(grad), indices,
                                           zeros_like(updates, dtype=grad.dtype))
    return [tensor_grad, None, gather_nd(grad, indices)]


@TensorScatterAdd.gradient
def _tensor_scatter_add_grad(op, grad):
    """d/dtensor = 1 everywhere, d/dupdates = 1 at each update's slice."""
    from tensorweave.ops.array_ops import identity
    return [identity(grad), None, gather_nd(grad, op.inputs[1])]


@TensorScatterSub.gradient
def _tensor_scatter_sub_grad(op, grad):
    """As add's, the updates' part negated."""
    from tensorweave.ops.array_ops import identity
    return [identity(grad), None, -gather_nd(grad, op.inputs[1])]


@TensorScatterMax.gradient
@TensorScatterMin.gradient
def _tensor_scatter_extremum_grad(op, grad):
    """Masks x == out and y == gather_nd(out, indices) mark who produced each output; the
    gradient is divided by how many did (x's mask plus the scattered y masks, always >= 1)."""
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_ops import equal
    from tensorweave.ops.math_unary_ops import cast
    x, indices, y = op.inputs
    output = op.outputs[0]
    x_indicators = cast(equal(x, output), grad.dtype)
    y_indicators = cast(equal(y, gather_nd(output, indices)), grad.dtype)
    ys_indicators = scatter_nd(indices, y_indicators, shape(x, out_type=indices.dtype))
    indicators = x_indicators + ys_indicators
    x_grad = grad * x_indicators / indicators
    y_grad = gather_nd(grad / indicators, indices) * y_indicators
    return [x_grad, None, y_grad]


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """Returns a copy of `tensor` with the slices at `indices` replaced by `updates`
    (tf.tensor_scatter_nd_update, TF1 alias tf.tensor_scatter_update).

    output[indices[i]] = updates[i]; with repeated indices the last update wins.

    Args:
      tensor: the Tensor to copy, of rank >= 1 and any dtype.
      indices: an int32/int64 Tensor whose last dimension K indexes tensor's first K dimensions.
      updates: a Tensor of tensor's dtype and shape indices.shape[:-1] + tensor.shape[K:].
      name: the op name (default "TensorScatterUpdate").

    Returns:
      A Tensor of tensor's shape and dtype.

    Raises:
      ValueError: if the static shapes do not fit.
      InvalidArgumentError: at run time, for an index outside tensor's shape.
    """
    return apply_op(TensorScatterUpdate, [tensor, indices, updates], name=name)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """Returns a copy of `tensor` with `updates` added to the slices at `indices`; repeated
    indices accumulate (tf.tensor_scatter_nd_add, TF1 alias tf.tensor_scatter_add).

    Args and errors as `tensor_scatter_nd_update`, for numeric dtypes (default name
    "TensorScatterAdd").
    """
    return apply_op(TensorScatterAdd, [tensor, indices, updates], name=name)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """Returns a copy of `tensor` with `updates` subtracted from the slices at `indices`;
    repeated indices accumulate (tf.tensor_scatter_nd_sub, TF1 alias tf.tensor_scatter_sub).

    Args and errors as `tensor_scatter_nd_update`, for numeric dtypes (default name
    "TensorScatterSub").
    """
    return apply_op(TensorScatterSub, [tensor, indices, updates], name=name)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """Returns a copy of `tensor` whose slices at `indices` are maximum(slice, updates), over
    all repeated indices (tf.tensor_scatter_nd_max). A NaN update is ignored; a NaN in
    `tensor` stays.

    Args and errors as `tensor_scatter_nd_update`, for real dtypes (default name
    "TensorScatterMax").
    """
    return apply_op(TensorScatterMax, [tensor, indices, updates], name=name)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """Returns a copy of `tensor` whose slices at `indices` are minimum(slice, updates), over
    all repeated indices (tf.tensor_scatter_nd_min). A NaN update is ignored; a NaN in
    `tensor` stays.

    Args and errors as `tensor_scatter_nd_update`, for real dtypes (default name
    "TensorScatterMin").
    """
    return apply_op(TensorScatterMin, [tensor, indices, updates], name=name)


tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
