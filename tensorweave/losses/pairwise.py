"""tf.losses.mean_pairwise_squared_error: a loss on the differences between pairs of elements
of each example, so it is invariant to a constant shift of an example's predictions.

For the n present elements of an example with d = predictions - labels,
  mean over pairs i != j of (d_i - d_j)^2 = 2 * sum(d^2) / (n - 1) - 2 * sum(d)^2 / (n (n - 1)),
which is what TF computes (per example, then weighted and summed over the batch).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.losses.util import add_loss
from tensorweave.metrics.weights import assert_broadcastable

__all__ = ["mean_pairwise_squared_error"]


def _per_example_sum(x):
    """Sum over every axis but the first, keeping them (shape [batch, 1, ...])."""
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_ops import rank
    from tensorweave.ops.reduction_ops import reduce_sum
    return reduce_sum(x, axis=range_(1, rank(x)), keepdims=True)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None,
                                loss_collection=GraphKeys.LOSSES):
    """Adds a pairwise-errors-squared loss to the training procedure (TF1).

    For each example, the mean of (d_i - d_j)^2 over all pairs of its elements, d =
    predictions - labels; elements whose (broadcast) weight is 0 do not count as present. The
    per-example values are multiplied by `weights` and summed.

    Args:
      labels: The ground truth, a Tensor of rank >= 2 ([batch_size, d0, ..., dN]).
      predictions: The predicted outputs, shaped like `labels`.
      weights: A scalar, or a Tensor of per-example weights ([batch_size] plus dimensions of
        1) broadcastable to the labels.
      scope: The name scope (default "mean_pairwise_squared_error").
      loss_collection: The collection the loss is added to.

    Returns:
      A float32 scalar: the weighted sum over examples (0 when nothing is present).

    Raises:
      ValueError: `labels` or `predictions` is None, their shapes are incompatible, or the
        weights cannot be broadcast to them.
    """
    from tensorweave.ops.array_creation_ops import ones_like, zeros_like
    from tensorweave.ops.array_index_ops import where
    from tensorweave.ops.math_ops import div_no_nan, equal, maximum, multiply, subtract
    from tensorweave.ops.math_unary_ops import cast, square
    from tensorweave.ops.reduction_ops import reduce_sum
    if labels is None:
        raise ValueError("Argument `labels` must not be None.")
    if predictions is None:
        raise ValueError("Argument `predictions` must not be None.")
    with name_scope(scope, "mean_pairwise_squared_error", (predictions, labels, weights)):
        weights = cast(weights, _dtypes.float32)
        labels = cast(labels, _dtypes.float32)
        with control_dependencies((assert_broadcastable(weights, labels),)):
            predictions = cast(predictions, _dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = subtract(predictions, labels)
            with name_scope(None, "num_present", (diffs, weights)):
                present = where(equal(weights, 0.0), zeros_like(weights), ones_like(weights))
                present = multiply(present, ones_like(diffs), name="broadcast_weights")
                num_present = _per_example_sum(present)
            term1 = 2.0 * div_no_nan(_per_example_sum(square(diffs)),
                                     maximum(num_present - 1, 0), name="value")
            term2 = 2.0 * div_no_nan(square(_per_example_sum(diffs)),
                                     maximum(multiply(num_present, num_present - 1), 0),
                                     name="value")
            loss = reduce_sum(multiply(term1 - term2, weights))
            mean_loss = where(reduce_sum(num_present) > 0, loss, zeros_like(loss), name="value")
            add_loss(mean_loss, loss_collection)
            return mean_loss
