"""tf.losses: per-element losses reduced with weights, added to the LOSSES collection.

Every loss computes element-wise losses under its own name scope ("mean_squared_error", ...),
then `compute_weighted_loss` multiplies them by `weights` (a scalar, or a tensor broadcastable
to the losses: of rank 0 or of their rank, each dimension 1 or equal) and reduces them as
`reduction` says. Like TensorFlow, the arithmetic is in float32 and the result is cast back to
the losses' dtype; the reduced value is a DivNoNan named "value", so zero weights give 0, not
NaN. The weights are checked by TF's assert_broadcastable (metrics/weights.py): statically
where shapes tell, else by an Assert that the loss depends on; labels and weights of sparse
losses are squeezed statically, or by a `cond` on the run-time ranks.
"""
from __future__ import annotations

import numbers

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.losses.util import add_loss
from tensorweave.metrics.weights import assert_broadcastable
from tensorweave.ops.array_creation_ops import ones_like, zeros_like
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_ops import rank, shape, size, squeeze, stop_gradient
from tensorweave.ops.cond import cond
from tensorweave.ops.confusion_matrix_ops import remove_squeezable_dimensions
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import (
    add,
    div_no_nan,
    equal,
    minimum,
    multiply,
    squared_difference,
    subtract,
)
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import cast, log
from tensorweave.ops.nn_loss_ops import (
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
)
from tensorweave.ops.nn_ops import relu
from tensorweave.ops.reduction_ops import reduce_sum

__all__ = [
    "Reduction", "compute_weighted_loss", "absolute_difference", "mean_squared_error",
    "huber_loss", "log_loss", "hinge_loss", "cosine_distance", "softmax_cross_entropy",
    "sparse_softmax_cross_entropy", "sigmoid_cross_entropy",
]

_F32 = _dtypes.float32


class Reduction:
    """Types of loss reduction (TF1's tf.losses.Reduction).

    NONE: the weighted losses, unreduced. SUM: their sum. MEAN: the sum divided by the sum of
    the weights. SUM_OVER_BATCH_SIZE: the sum divided by the number of losses.
    SUM_BY_NONZERO_WEIGHTS (the default; SUM_OVER_NONZERO_WEIGHTS is the same): the sum divided
    by the number of losses whose weight is nonzero.
    """

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


_DEFAULT = Reduction.SUM_BY_NONZERO_WEIGHTS


# --- weighting and reduction ---------------------------------------------------------------
def _num_elements(losses: Tensor) -> Tensor:
    """The number of losses as float32: a constant when the shape is static."""
    count = losses.shape.num_elements()
    if count is not None:
        return constant(float(count), _F32, name="num_elements")
    with name_scope(None, "num_elements") as scope:
        return cast(size(losses, name=scope), _F32)


def _num_present(losses: Tensor, weights: Tensor, python_weight) -> Tensor:
    """How many losses have a nonzero weight (weights broadcast over the losses)."""
    if isinstance(python_weight, numbers.Real) and python_weight != 0:
        return _num_elements(losses)
    with name_scope(None, "num_present", (losses, weights)) as scope:
        present = where(equal(weights, 0.0), zeros_like(weights), ones_like(weights))
        if present.shape != losses.shape or not losses.shape.is_fully_defined():
            present = multiply(present, ones_like(losses), name="broadcast_weights")
        return reduce_sum(present, name=scope)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=_DEFAULT):
    """Computes the weighted loss and adds it to `loss_collection`.

    Args:
      losses: A Tensor of element-wise losses.
      weights: A scalar, or a Tensor of the losses' rank whose dimensions are 1 or equal to
        theirs.
      scope: The name scope (default "weighted_loss").
      loss_collection: The collection the loss is added to (default GraphKeys.LOSSES).
      reduction: One of `Reduction`'s keys (default SUM_BY_NONZERO_WEIGHTS).

    Returns:
      The weighted loss, of `losses`' dtype: a scalar, or shaped like `losses` for NONE.

    Raises:
      ValueError: for an unknown reduction, or weights that cannot broadcast to the losses.
    """
    Reduction.validate(reduction)
    python_weight = weights if isinstance(weights, numbers.Real) else None
    with name_scope(scope, "weighted_loss", (losses, weights)):
        losses = convert_to_tensor(losses)
        # As in TF, the check converts weights under its own scope and guards everything after.
        with control_dependencies((assert_broadcastable(weights, losses),)):
            return _weighted_loss(losses, weights, python_weight, loss_collection, reduction)


def _weighted_loss(losses, weights, python_weight, loss_collection, reduction):
    """The body of `compute_weighted_loss`, once the weights are known to broadcast."""
    input_dtype = losses.dtype.base_dtype
    losses = cast(losses, _F32)
    weights = cast(weights, _F32)
    if python_weight == 1 and reduction != Reduction.NONE:
        weighted = losses  # multiplying by 1.0 would change nothing
    else:
        weighted = multiply(losses, weights)
    if reduction == Reduction.NONE:
        loss = weighted
    else:
        loss = reduce_sum(weighted)
        if reduction == Reduction.MEAN:
            total_weight = reduce_sum(multiply(ones_like(losses), weights))
            loss = div_no_nan(loss, total_weight, name="value")
        elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
            loss = div_no_nan(loss, _num_present(losses, weights, python_weight),
                              name="value")
        elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
            loss = div_no_nan(loss, _num_elements(losses), name="value")
    loss = cast(loss, input_dtype)
    add_loss(loss, loss_collection)
    return loss


# --- losses on predictions --------------------------------------------------------------------
def _require(value, what: str) -> None:
    if value is None:
        raise ValueError(f"Argument `{what}` must not be None.")


def _float_pair(predictions, labels):
    """Both cast to float32, with compatible static shapes (ValueError otherwise)."""
    predictions = cast(convert_to_tensor(predictions, name="predictions"), _F32)
    labels = cast(convert_to_tensor(labels, name="labels"), _F32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return predictions, labels


def _pointwise_loss(default_name: str, fn):
    """A loss `fn(predictions, labels) -> element-wise losses`, with TF1's signature."""
    def loss(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=_DEFAULT):
        _require(labels, "labels")
        _require(predictions, "predictions")
        with name_scope(scope, default_name, (predictions, labels, weights)) as scope:
            predictions, labels = _float_pair(predictions, labels)
            return compute_weighted_loss(fn(predictions, labels), weights, scope,
                                         loss_collection, reduction=reduction)
    return loss


_POINTWISE_DOC = """Adds {what} to the training procedure.

    Args:
      labels: The ground truth output tensor, same dimensions as `predictions`.
      predictions: The predicted outputs.
      weights: A scalar, or a Tensor of the losses' rank broadcastable to them.
      scope: The name scope (default "{name}").
      loss_collection: The collection the loss is added to (default GraphKeys.LOSSES).
      reduction: How to reduce the weighted losses (default SUM_BY_NONZERO_WEIGHTS).

    Returns:
      The weighted loss, float32: a scalar, or shaped like `labels` for Reduction.NONE.

    Raises:
      ValueError: if labels or predictions is None, their shapes are incompatible, or
        `weights` cannot broadcast to them.
    """

absolute_difference = _pointwise_loss(
    "absolute_difference", lambda p, t: _abs(subtract(p, t)))
mean_squared_error = _pointwise_loss(
    "mean_squared_error", lambda p, t: squared_difference(p, t))
for _fn, _name, _what in (
        (absolute_difference, "absolute_difference", "an absolute-difference loss |p - l|"),
        (mean_squared_error, "mean_squared_error", "a sum-of-squares loss (p - l) ** 2")):
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__doc__ = _POINTWISE_DOC.format(what=_what, name=_name)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None,
               loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT):
    """Adds a Huber loss: 0.5 e^2 for |e| <= delta, delta (|e| - 0.5 delta) beyond.

    Written as 0.5 q^2 + delta (|e| - q) with q = min(|e|, delta), so the gradient is
    continuous.

    Args:
      labels: The ground truth output tensor, same dimensions as `predictions`.
      predictions: The predicted outputs.
      weights: A scalar, or a Tensor broadcastable to the losses.
      delta: The point where the loss changes from quadratic to linear.
      scope: The name scope (default "huber_loss").
      loss_collection: The collection the loss is added to.
      reduction: How to reduce the weighted losses.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: if labels or predictions is None or their shapes are incompatible.
    """
    _require(labels, "labels")
    _require(predictions, "predictions")
    with name_scope(scope, "huber_loss", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        abs_error = _abs(subtract(predictions, labels))
        quadratic = minimum(abs_error, delta)
        linear = subtract(abs_error, quadratic)
        losses = add(multiply(0.5, multiply(quadratic, quadratic)), multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None,
             loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT):
    """Adds a log loss: -l log(p + eps) - (1 - l) log(1 - p + eps).

    Args:
      labels: The ground truth output tensor, same dimensions as `predictions`.
      predictions: The predicted probabilities.
      weights: A scalar, or a Tensor broadcastable to the losses.
      epsilon: A small increment added to avoid taking the log of zero.
      scope: The name scope (default "log_loss").
      loss_collection: The collection the loss is added to.
      reduction: How to reduce the weighted losses.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: if labels or predictions is None or their shapes are incompatible.
    """
    _require(labels, "labels")
    _require(predictions, "predictions")
    with name_scope(scope, "log_loss", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = -multiply(labels, log(predictions + epsilon)) - multiply(
            (1 - labels), log(1 - predictions + epsilon))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=_DEFAULT):
    """Adds a hinge loss: max(0, 1 - (2 l - 1) * logits) for labels l in {0, 1}.

    Args:
      labels: The ground truth, 0 or 1, same dimensions as `logits`.
      logits: The logits.
      weights: A scalar, or a Tensor broadcastable to the losses.
      scope: The name scope (default "hinge_loss").
      loss_collection: The collection the loss is added to.
      reduction: How to reduce the weighted losses.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: if labels or logits is None or their shapes are incompatible.
    """
    _require(labels, "labels")
    _require(logits, "logits")
    with name_scope(scope, "hinge_loss", (logits, labels, weights)) as scope:
        logits, labels = _float_pair(logits, labels)
        all_ones = ones_like(labels)
        signs = subtract(2 * labels, all_ones)
        losses = relu(subtract(all_ones, multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None,
                    loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT, dim=None):
    """Adds a cosine-distance loss 1 - sum(p * l, axis), for unit-normalized inputs.

    Args:
      labels: The ground truth, unit-normalized along `axis`.
      predictions: The predictions, unit-normalized along `axis`.
      axis: The dimension to compute the distance over (required).
      weights: A scalar, or a Tensor broadcastable to the losses.
      scope: The name scope (default "cosine_distance_loss").
      loss_collection: The collection the loss is added to.
      reduction: How to reduce the weighted losses.
      dim: Deprecated alias of `axis`.

    Returns:
      The weighted loss, float32.

    Raises:
      ValueError: if `axis` is missing or the shapes are incompatible.
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'dim' and 'axis'.")
    axis = axis if axis is not None else dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _require(labels, "labels")
    _require(predictions, "predictions")
    with name_scope(scope, "cosine_distance_loss", (predictions, labels, weights)) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = 1 - reduce_sum(multiply(predictions, labels), axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


# --- losses on logits -------------------------------------------------------------------------
def _is_positive(value) -> bool:
    """Whether a label-smoothing amount applies: a positive number, or any Tensor."""
    return isinstance(value, Tensor) or value > 0


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT):
    """Creates a softmax cross-entropy loss (tf.nn.softmax_cross_entropy_with_logits_v2).

    With label_smoothing s > 0 the labels become l (1 - s) + s / num_classes. No gradient flows
    into the labels.

    Args:
      onehot_labels: One-hot labels [batch, num_classes] (cast to logits' type).
      logits: Logits [batch, num_classes].
      weights: A scalar, or a Tensor broadcastable to the per-example losses [batch].
      label_smoothing: The smoothing amount in [0, 1].
      scope: The name scope (default "softmax_cross_entropy_loss").
      loss_collection: The collection the loss is added to.
      reduction: How to reduce the weighted losses.

    Returns:
      The weighted loss, of logits' type.

    Raises:
      ValueError: if the shapes of logits and labels are incompatible.
    """
    _require(onehot_labels, "onehot_labels")
    _require(logits, "logits")
    with name_scope(scope, "softmax_cross_entropy_loss",
                    (logits, onehot_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        onehot_labels = cast(convert_to_tensor(onehot_labels), logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(onehot_labels.shape)
        if _is_positive(label_smoothing):
            classes = onehot_labels.shape.as_list()[-1] if onehot_labels.shape.ndims else None
            if classes is None:
                classes = cast(shape(onehot_labels)[-1], logits.dtype.base_dtype)
            onehot_labels = onehot_labels * (1.0 - label_smoothing) + label_smoothing / classes
        onehot_labels = stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits,
                                                      name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def _remove_squeezable_dimensions(labels, predictions, weights, expected_rank_diff):
    """TF's losses._remove_squeezable_dimensions: labels and predictions reconciled by
    `remove_squeezable_dimensions`, then a trailing size-1 dimension dropped from weights one
    rank above the labels (by a `cond` on the run-time ranks when static ranks are unknown)."""
    labels, predictions = remove_squeezable_dimensions(labels, predictions, expected_rank_diff)
    if isinstance(weights, numbers.Real):
        return labels, predictions, weights
    weights = convert_to_tensor(weights)
    lr, w_shape = labels.shape.ndims, weights.shape
    wr = w_shape.ndims
    if lr is not None and wr is not None:
        if wr - lr == 1:
            weights = squeeze(weights, [-1])
        return labels, predictions, weights
    if wr is None or (wr > 0 and w_shape.dims[-1].is_compatible_with(1)):
        weights = cond(equal(1, rank(weights) - rank(labels)),
                       lambda: squeeze(weights, [-1]), lambda: weights)
    return labels, predictions, weights


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT):
    """Cross-entropy loss from class indices (tf.nn.sparse_softmax_cross_entropy_with_logits).

    Args:
      labels: Class indices [batch] (or [batch, 1]), int32 or int64, in [0, num_classes).
      logits: Logits [batch, num_classes].
      weights: A scalar, or a Tensor broadcastable to the per-example losses ([batch] or
        [batch, 1]).
      scope: The name scope (default "sparse_softmax_cross_entropy_loss").
      loss_collection: The collection the loss is added to.
      reduction: How to reduce the weighted losses.

    Returns:
      The weighted loss, of logits' type.

    Raises:
      ValueError: if the shapes of logits, labels and weights are incompatible.
    """
    _require(labels, "labels")
    _require(logits, "logits")
    with name_scope(scope, "sparse_softmax_cross_entropy_loss",
                    (logits, labels, weights)) as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights, 1)
        losses = sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=GraphKeys.LOSSES, reduction=_DEFAULT):
    """Creates a sigmoid cross-entropy loss (tf.nn.sigmoid_cross_entropy_with_logits).

    With label_smoothing s > 0 the labels become l (1 - s) + s / 2.

    Args:
      multi_class_labels: Labels in [0, 1] shaped like `logits` (cast to logits' type).
      logits: Logits.
      weights: A scalar, or a Tensor broadcastable to the losses.
      label_smoothing: The smoothing amount in [0, 1].
      scope: The name scope (default "sigmoid_cross_entropy_loss").
      loss_collection: The collection the loss is added to.
      reduction: How to reduce the weighted losses.

    Returns:
      The weighted loss, of logits' type.

    Raises:
      ValueError: if the shapes of logits and labels are incompatible.
    """
    _require(multi_class_labels, "multi_class_labels")
    _require(logits, "logits")
    with name_scope(scope, "sigmoid_cross_entropy_loss",
                    (logits, multi_class_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = cast(convert_to_tensor(multi_class_labels), logits.dtype.base_dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if _is_positive(label_smoothing):
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                   name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection,
                                     reduction=reduction)
