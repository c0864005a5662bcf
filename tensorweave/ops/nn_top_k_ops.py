"""tf.nn.in_top_k (InTopKV2) and tf.nn.top_k with its gradient.

InTopKV2 follows TensorFlow's tie rule: a target is in the top k when fewer than k predictions
of its row are strictly larger. TopKV2 itself is defined with the reductions; tf.nn.top_k is its
public name, so this module re-exports it and attaches its gradient (a scatter of the value
gradients back to the chosen positions).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_index_ops import scatter_nd
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.array_ops import expand_dims, reshape, shape, size
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.reduction_ops import TopKV2, top_k

__all__ = ["in_top_k", "top_k"]


def _in_top_k_shape(ctx):
    """[batch]: predictions [batch, classes], targets [batch], k a scalar."""
    for i, rank in ((0, 2), (1, 1), (2, 0)):
        ndims = ctx.input_shape(i).ndims
        if ndims is not None and ndims != rank:
            raise ValueError(f"Shape must be rank {rank} but is rank {ndims}")
    preds, targets = ctx.input_shape(0), ctx.input_shape(1)
    a = preds._dims[0] if preds.ndims is not None else None
    b = targets._dims[0] if targets.ndims is not None else None
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return _ts.TensorShape([a if a is not None else b])


InTopKV2 = define_op("InTopKV2", inputs=["predictions: float32", "targets: T", "k: T"],
                     outputs=["precision: bool"],
                     attrs=[TypeAttr("T", _dtypes.INDEX, _dtypes.int32)],
                     shape_fn=_in_top_k_shape, not_differentiable=True)


def in_top_k(predictions, targets, k, name=None):
    """Says whether each target is among the top `k` predictions of its row.

    Ties count in the target's favour: it is in the top k when fewer than k predictions of its
    row are strictly larger. A row with any non-finite prediction, or a target outside
    [0, classes), gives False.

    Args:
      predictions: A float32 Tensor [batch, classes].
      targets: An int32 or int64 Tensor [batch] of class ids.
      k: The number of top predictions to look at, an int or a scalar of targets' type.
      name: A name for the operation (default scope "in_top_k").

    Returns:
      A bool Tensor [batch].
    """
    with name_scope(name, "in_top_k"):
        return apply_op(InTopKV2, [predictions, targets, k], name=name)


@TopKV2.gradient
def top_k_grad(op, grad, _indices_grad):
    """Scatters each row's value gradient back to the positions its indices name.

    The rows are flattened so one ScatterNd does the work: position = row * n + index, where
    n is the length of the input's last axis.
    """
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = shape(x)
    n = cast(in_shape[-1], _dtypes.int64)
    k = cast(shape(indices)[-1], _dtypes.int64)
    flat = reshape(cast(indices, _dtypes.int64), stack([-1, k]))
    rows = cast(shape(flat)[0], _dtypes.int64)
    offsets = expand_dims(_range(0, rows * n, n), -1)
    positions = reshape(flat + offsets, [-1, 1])
    total = cast(size(x), _dtypes.int64)
    scattered = scatter_nd(positions, reshape(grad, [-1]), expand_dims(total, 0))
    return [reshape(scattered, in_shape), None]
