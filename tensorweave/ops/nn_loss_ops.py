"""The cross-entropies, log_poisson_loss and l2_loss (the tf.nn namespace).

The two softmax cross-entropies are single fused ops, like TF's:
one kernel computes the per-example loss with a stable log-sum-exp (logits of 1000 give finite
losses) and, as a second output, the gradient with respect to the logits (softmax - labels), so
the backward pass only scales it. Wrappers flatten higher-rank inputs to the [batch, classes]
matrices the ops take. The sigmoid cross-entropies are composites in TF's stable form
max(x, 0) - x z + log(1 + e^-|x|). Kernels live in `kernels/nn_loss.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.autodiff.broadcast import reduce_to_shape_of
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import ones_like, zeros_like
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_join_ops import concat, stack
from tensorweave.ops.array_ops import expand_dims, rank, reshape, shape, stop_gradient, transpose
from tensorweave.ops.math_ops import add, logical_and
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import cast, exp, log, log1p
from tensorweave.ops.nn_ops import relu
from tensorweave.ops.nn_softmax_ops import log_softmax, softmax
from tensorweave.ops.reduction_ops import deprecated_argument_lookup, reduce_sum
from tensorweave.platform import tf_logging

__all__ = [
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits",
    "sigmoid_cross_entropy_with_logits", "weighted_cross_entropy_with_logits",
    "log_poisson_loss", "l2_loss",
]

_FLOAT = _dtypes.FLOATING
_LOW_PRECISION = (_dtypes.float16, _dtypes.bfloat16)


def _is_zero(t) -> bool:
    """Whether a gradient is known to be zero (the filler of an unconnected output: ZerosLike,
    a zero Const, or a Fill of 0 for large shapes), so the term it would multiply can be left
    out of the graph."""
    if t is None or t.op.type == "ZerosLike":
        return True
    source = t.op.inputs[1] if t.op.type == "Fill" else t
    value = static_value(source)
    return value is not None and not np.any(value)


# --- fused cross-entropy ops -----------------------------------------------------------------
def _require_rank(shape: _ts.TensorShape, rank_: int) -> None:
    if shape.ndims is not None and shape.ndims != rank_:
        raise ValueError(f"Shape must be rank {rank_} but is rank {shape.ndims}")


def _xent_shape(ctx):
    """loss [batch], backprop [batch, classes]; features and labels broadcast (TF 2.x)."""
    features, labels = ctx.input_shape(0), ctx.input_shape(1)
    _require_rank(features, 2)
    _require_rank(labels, 2)
    if features.ndims is None and labels.ndims is None:
        both = _ts.unknown_shape(rank=2)
    elif features.ndims is None or labels.ndims is None:
        both = features if labels.ndims is None else labels
        # the other side may broadcast a dimension of 1 up to anything
        both = _ts.TensorShape([None if d == 1 else d for d in both.as_list()])
    else:
        both = shape_fns.broadcast_shapes(features, labels)
    return [_ts.TensorShape([both.as_list()[0]]), both]


def _sparse_xent_shape(ctx):
    """loss [batch], backprop [batch, classes]; labels [batch]."""
    features, labels = ctx.input_shape(0), ctx.input_shape(1)
    _require_rank(features, 2)
    _require_rank(labels, 1)
    dims = features.as_list() if features.ndims is not None else [None, None]
    batch = labels.as_list()[0] if labels.ndims is not None else None
    if dims[0] is not None and batch is not None and dims[0] != batch:
        raise ValueError(f"Dimensions must be equal, but are {dims[0]} and {batch}")
    dims[0] = dims[0] if dims[0] is not None else batch
    return [_ts.TensorShape(dims[:1]), _ts.TensorShape(dims)]


SoftmaxCrossEntropyWithLogits = define_op(
    "SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
    outputs=["loss: T", "backprop: T"], attrs=[TypeAttr("T", _FLOAT)], shape_fn=_xent_shape)
SparseSoftmaxCrossEntropyWithLogits = define_op(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"],
    attrs=[TypeAttr("T", _FLOAT), TypeAttr("Tlabels", _dtypes.INDEX, _dtypes.int64)],
    shape_fn=_sparse_xent_shape)


def _logits_grad(op, grad_loss, grad_grad):
    """Gradient w.r.t. the logits: grad_loss scales the saved backprop; a gradient arriving
    at the backprop output itself (second derivatives) goes through the softmax Jacobian."""
    out = expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zero(grad_grad):
        probs = softmax(op.inputs[0])
        out += (grad_grad - reduce_sum(grad_grad * probs, -1, keepdims=True)) * probs
    return out


@SoftmaxCrossEntropyWithLogits.gradient
def _xent_grad(op, grad_loss, grad_grad):
    """Logits as above; labels get -log_softmax(logits) scaled by grad_loss (backprop is
    softmax - labels, so a gradient at it reaches the labels negated)."""
    features, labels = op.inputs
    g_labels = expand_dims(grad_loss, -1) * -log_softmax(features)
    if not _is_zero(grad_grad):
        g_labels -= grad_grad
    return [reduce_to_shape_of(_logits_grad(op, grad_loss, grad_grad), features),
            reduce_to_shape_of(g_labels, labels)]


@SparseSoftmaxCrossEntropyWithLogits.gradient
def _sparse_xent_grad(op, grad_loss, grad_grad):
    return [_logits_grad(op, grad_loss, grad_grad), None]


def _ensure_xent_args(name: str, labels, logits) -> None:
    """TF's guard: both labels and logits are required (by position or keyword)."""
    if labels is None or logits is None:
        raise ValueError(f"Both `labels` and `logits` must be provided for {name}Received: "
                         f"labels={labels} and logits={logits}")


def _move_axis_to_end(x: Tensor, axis: int) -> Tensor:
    """Transposes `axis` to the last position, keeping the others in order."""
    ndims = x.shape.ndims
    if ndims is not None:
        a = axis % ndims
        return transpose(x, [i for i in range(ndims) if i != a] + [a])
    r = rank(x)
    a = axis if axis >= 0 else r + axis
    perm = concat([_range(0, a), _range(a + 1, r), expand_dims(a, 0)], 0)
    return transpose(x, perm)


def _flat_classes(x: Tensor) -> Tensor:
    """x reshaped to [-1, classes] (classes = its last dimension)."""
    classes = x.shape.as_list()[-1] if x.shape.ndims else None
    if classes is None:
        classes = shape(x)[-1]
        return reshape(x, stack([-1, classes]))
    return reshape(x, [-1, classes])


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """Computes softmax cross entropy between `logits` and `labels`, per example.

    The loss of each example is -sum(labels * log_softmax(logits)) over the class axis,
    computed stably (with log-sum-exp) in one fused op. Gradients flow into both logits and
    labels. Each row of `labels` should be a probability distribution.

    Args:
      labels: Class probabilities, shaped like `logits` (cast to its type).
      logits: Unscaled log probabilities, a floating Tensor.
      axis: The class dimension (default -1, the last).
      name: A name for the operation (default "softmax_cross_entropy_with_logits").
      dim: Deprecated alias of `axis`.

    Returns:
      A Tensor of `logits`' type and shape without the class dimension.

    Raises:
      ValueError: if the shapes of logits and labels are incompatible.
    """
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    axis = -1 if axis is None else int(axis)
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        low = logits.dtype.base_dtype in _LOW_PRECISION
        precise = cast(logits, _dtypes.float32) if low else logits
        labels = cast(labels, precise.dtype.base_dtype)
        static = logits.shape
        ndims = static.ndims
        if ndims == 0:
            raise ValueError(f"`logits` cannot be a scalar. Received logits={logits}")
        if axis != -1 and not (ndims is not None and axis == ndims - 1):
            precise = _move_axis_to_end(precise, axis)
            labels = _move_axis_to_end(labels, axis)
        # As TF: both sides flattened to [rows, classes] (the op broadcasts rows, so rank-1
        # labels serve every row of the logits); the losses take the logits' outer shape,
        # which fails to build when the labels had more rows.
        outer = shape(precise)[:-1]
        cost, _ = apply_op(SoftmaxCrossEntropyWithLogits,
                           [_flat_classes(precise), _flat_classes(labels)], name=scope)
        cost = reshape(cost, outer)
        if ndims is not None:
            dims = static.as_list()
            del dims[axis]
            cost.set_shape(dims)
        return cast(cost, logits.dtype.base_dtype) if low else cost


_WARNED = set()


def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1, name=None, axis=None):
    """Computes softmax cross entropy between `logits` and `labels` (TF1's version).

    Like `softmax_cross_entropy_with_logits_v2`, except that no gradient flows into `labels`
    (they pass through a StopGradient named "labels_stop_gradient"). Deprecated in TF1.

    Args:
      labels: Class probabilities, shaped like `logits`.
      logits: Unscaled log probabilities.
      dim: The class dimension (default -1); `axis` is its newer name.
      name: A name for the operation (default "softmax_cross_entropy_with_logits_sg").
      axis: Alias of `dim`.

    Returns:
      A Tensor of `logits`' type and shape without the class dimension.
    """
    _ensure_xent_args("softmax_cross_entropy_with_logits", labels, logits)
    if "v1_xent" not in _WARNED:
        _WARNED.add("v1_xent")
        tf_logging.warning("softmax_cross_entropy_with_logits is deprecated: future major "
                           "versions of TensorFlow will allow gradients to flow into the "
                           "labels input on backprop by default. See "
                           "`tf.nn.softmax_cross_entropy_with_logits_v2`.")
    axis = deprecated_argument_lookup("axis", axis, "dim", dim)  # dim defaults to -1: never both
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis,
                                                name=scope)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Computes sparse softmax cross entropy between `logits` and class-index `labels`.

    Each example belongs to exactly one class: the loss is -log_softmax(logits)[label], from a
    stable log-sum-exp in one fused op. A label outside [0, classes) is an
    InvalidArgumentError when the op runs. No gradient flows into `labels`.

    Args:
      labels: An int32 or int64 Tensor shaped like `logits` without its last dimension.
      logits: Unscaled log probabilities [d_0, ..., d_{r-1}, classes], floating.
      name: A name for the operation (default "SparseSoftmaxCrossEntropyWithLogits").

    Returns:
      A Tensor shaped like `labels`, of `logits`' type.

    Raises:
      ValueError: if logits is a scalar or the static shapes do not line up.
    """
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", labels, logits)
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels)
        logits = convert_to_tensor(logits)
        low = logits.dtype.base_dtype in _LOW_PRECISION
        precise = cast(logits, _dtypes.float32) if low else logits
        labels_shape, logits_shape = labels.shape, logits.shape
        if logits_shape.ndims == 0:
            raise ValueError(f"`logits` cannot be a scalar. Received logits={logits}`")
        if logits_shape.ndims is not None and labels_shape.ndims is not None and \
                labels_shape.ndims != logits_shape.ndims - 1:
            raise ValueError("`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: "
                             f"labels.shape={labels_shape} of rank {labels_shape.ndims} and "
                             f"logits.shape={logits_shape} of rank {logits_shape.ndims}")
        if labels_shape.is_fully_defined() and logits_shape.ndims is not None and \
                logits_shape[:-1].is_fully_defined() and labels_shape != logits_shape[:-1]:
            raise ValueError("`labels.shape` must equal `logits.shape` except for the last "
                             f"dimension. Received: labels.shape={labels_shape} and "
                             f"logits.shape={logits_shape}")
        op_name = name or "SparseSoftmaxCrossEntropyWithLogits"
        if logits_shape.ndims == 2:
            cost, _ = apply_op(SparseSoftmaxCrossEntropyWithLogits, [precise, labels],
                               name=op_name)
        else:
            outer = shape(labels)
            cost, _ = apply_op(SparseSoftmaxCrossEntropyWithLogits,
                               [_flat_classes(precise), reshape(labels, [-1])], name=op_name)
            cost = reshape(cost, outer)
            cost.set_shape(labels_shape)
        return cast(cost, logits.dtype.base_dtype) if low else cost


def _checked_pair(logits, labels):
    logits = convert_to_tensor(logits, name="logits")
    labels = convert_to_tensor(labels, name="labels")
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError("`logits` and `labels` must have the same shape, received "
                         f"({logits.shape} vs {labels.shape}).")
    return logits, labels


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Computes sigmoid cross entropy given `logits`, element-wise.

    For logits x and labels z the loss is z * -log(sigmoid(x)) + (1 - z) * -log(1 - sigmoid(x)),
    computed as max(x, 0) - x * z + log(1 + exp(-|x|)), which neither overflows nor loses
    precision for large |x|. The max and |x| are Selects on x >= 0 so the gradient at 0 is
    sigmoid(0) - z, like TensorFlow's.

    Args:
      labels: A Tensor of the type and shape of `logits`, values in [0, 1].
      logits: A floating Tensor.
      name: A name for the operation (default "logistic_loss").

    Returns:
      A Tensor of the same shape as `logits` with the element-wise losses.

    Raises:
      ValueError: if `logits` and `labels` have incompatible shapes.
    """
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", labels, logits)
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits, labels = _checked_pair(logits, labels)
        zeros = zeros_like(logits)
        positive = logits >= zeros
        relu_logits = where(positive, logits, zeros)
        neg_abs_logits = where(positive, -logits, logits)
        return add(relu_logits - logits * labels, log1p(exp(neg_abs_logits)), name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """Sigmoid cross entropy with the positive term weighted by `pos_weight`.

    The loss is labels * -log(sigmoid(x)) * pos_weight + (1 - labels) * -log(1 - sigmoid(x)),
    computed stably as (1 - z) x + (1 + (q - 1) z) (log(1 + exp(-|x|)) + max(-x, 0)).

    Args:
      labels: A Tensor of the type and shape of `logits`.
      logits: A floating Tensor.
      pos_weight: The weight of positive examples (a number or Tensor).
      name: A name for the operation (default "logistic_loss").
      targets: Deprecated alias of `labels`.

    Returns:
      A Tensor of the same shape as `logits` with the element-wise weighted losses.

    Raises:
      ValueError: if `logits` and `labels` have incompatible shapes.
    """
    labels = deprecated_argument_lookup("labels", labels, "targets", targets)
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits, labels = _checked_pair(logits, labels)
        log_weight = 1 + (pos_weight - 1) * labels
        softplus_neg = log1p(exp(-_abs(logits))) + relu(-logits)
        return add((1 - labels) * logits, log_weight * softplus_neg, name=scope)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """Computes the log-Poisson loss: exp(log_input) - log_input * targets, element-wise.

    This is the negative log-likelihood of `targets` under a Poisson distribution of mean
    exp(log_input), without the log(targets!) term; with `compute_full_loss` that term is added
    through Stirling's approximation t log t - t + 0.5 log(2 pi t) (zero where 0 <= t <= 1).

    Args:
      targets: A Tensor of the type and shape of `log_input`.
      log_input: A Tensor of log means.
      compute_full_loss: Whether to add the Stirling approximation of log(targets!).
      name: A name for the operation (default "log_poisson_loss").

    Returns:
      A Tensor shaped like `log_input` with the element-wise losses.

    Raises:
      ValueError: if `log_input` and `targets` have incompatible shapes.
    """
    with name_scope(name, "log_poisson_loss", [log_input, targets]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError("log_input and targets must have the same shape "
                             f"({log_input.shape} vs {targets.shape})")
        result = exp(log_input) - log_input * targets
        if compute_full_loss:
            stirling = targets * log(targets) - targets + 0.5 * log(2 * np.pi * targets)
            zeros = zeros_like(targets)
            small = logical_and(targets >= zeros, targets <= ones_like(targets))
            result += where(small, zeros, stirling)
        return result


# --- L2Loss -----------------------------------------------------------------------------------
L2Loss = define_op("L2Loss", inputs=["t: T"], outputs=["output: T"],
                   attrs=[TypeAttr("T", _FLOAT)], shape_fn=shape_fns.scalar)


@L2Loss.gradient
def _l2_loss_grad(op, grad):
    """d(sum(t^2)/2)/dt = t."""
    return [op.inputs[0] * grad]


def l2_loss(t, name=None):
    """Computes half the squared L2 norm of a tensor: sum(t ** 2) / 2, without the sqrt.

    Args:
      t: A floating Tensor.
      name: A name for the operation (default "L2Loss").

    Returns:
      A scalar of `t`'s type.
    """
    return apply_op(L2Loss, [t], name=name)
