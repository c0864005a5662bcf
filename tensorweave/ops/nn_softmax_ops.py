"""tf.nn.softmax and tf.nn.log_softmax: the Softmax and LogSoftmax ops and their wrappers.

Both ops work on the last axis; another axis is swapped there and back with transposes, as in
TensorFlow. The kernels subtract the row maximum before exponentiating, so logits of 1000 give
finite results. Their gradients reuse the forward output. Kernels live in `kernels/nn_loss.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_index_ops import where_v2
from tensorweave.ops.array_ops import rank, transpose
from tensorweave.ops.math_ops import equal
from tensorweave.ops.math_unary_ops import exp
from tensorweave.ops.reduction_ops import deprecated_argument_lookup, reduce_sum

__all__ = ["softmax", "log_softmax"]

_FLOAT = _dtypes.FLOATING


def _at_least_rank_1(ctx):
    ndims = ctx.input_shape(0).ndims
    if ndims is not None and ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {ndims}")
    return ctx.input_shape(0)


Softmax = define_op("Softmax", inputs=["logits: T"], outputs=["softmax: T"],
                    attrs=[TypeAttr("T", _FLOAT)], shape_fn=_at_least_rank_1)
LogSoftmax = define_op("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"],
                       attrs=[TypeAttr("T", _FLOAT)], shape_fn=_at_least_rank_1)


@Softmax.gradient
def _softmax_grad(op, grad):
    """dx = (g - sum(g * y, -1)) * y, with y the softmax output."""
    y = op.outputs[0]
    return [(grad - reduce_sum(grad * y, -1, keepdims=True)) * y]


@LogSoftmax.gradient
def _log_softmax_grad(op, grad):
    """dx = g - sum(g, -1) * softmax, the softmax being exp of the output."""
    return [grad - reduce_sum(grad, -1, keepdims=True) * exp(op.outputs[0])]


def _axis_swap_perm(x: Tensor, axis: int):
    """A permutation swapping `axis` with the last axis (its own inverse)."""
    ndims = x.shape.ndims
    if ndims is not None:
        perm = list(range(ndims))
        a = axis % ndims
        perm[a], perm[-1] = perm[-1], perm[a]
        return perm
    r = rank(x)
    a = axis if axis >= 0 else r + axis
    last = r - 1
    positions = _range(0, r)
    return where_v2(equal(positions, a), last, where_v2(equal(positions, last), a, positions))


def _on_axis(op_def, logits, axis, name):
    """`op_def` (which works on the last axis) applied along `axis` of `logits`."""
    logits = convert_to_tensor(logits, name="logits")
    ndims = logits.shape.ndims
    axis = int(axis)
    if axis == -1 or (ndims is not None and axis == ndims - 1):
        return apply_op(op_def, [logits], name=name)
    if ndims is not None and not -ndims <= axis < ndims:
        raise errors.InvalidArgumentError(
            None, None, f"`dim` must be in the range [{-ndims}, {ndims}) where {ndims} is the "
            f"number of dimensions in the input. Received: dim={axis}")
    perm = _axis_swap_perm(logits, axis)
    out = apply_op(op_def, [transpose(logits, perm)])
    result = transpose(out, perm, name=name or "transpose")
    result.set_shape(logits.shape)
    return result


def softmax(logits, axis=None, name=None, dim=None):
    """Computes softmax activations: exp(logits) / sum(exp(logits), axis), stably.

    Args:
      logits: A non-empty floating Tensor.
      axis: The dimension softmax is computed over (default -1, the last).
      name: A name for the operation (default "Softmax").
      dim: Deprecated alias of `axis`.

    Returns:
      A Tensor of the same type and shape as `logits`.

    Raises:
      InvalidArgumentError: if `axis` is outside [-rank, rank) (like TensorFlow, at graph
        construction).
    """
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    return _on_axis(Softmax, logits, -1 if axis is None else axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """Computes log-softmax activations: logits - log(sum(exp(logits), axis)), stably.

    Args:
      logits: A non-empty floating Tensor.
      axis: The dimension log-softmax is computed over (default -1, the last).
      name: A name for the operation (default "LogSoftmax").
      dim: Deprecated alias of `axis`.

    Returns:
      A Tensor of the same type and shape as `logits`.
    """
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    return _on_axis(LogSoftmax, logits, -1 if axis is None else axis, name)
