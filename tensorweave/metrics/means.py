"""Running (weighted) means: tf.metrics.mean and mean_tensor, and the metrics that are means of
a per-element quantity (accuracy, percentage_below, the regression errors).

State: `total` (the weighted sum) and `count` (the sum of the weights) in float32. The value is
total / count, or 0 while count is 0; the update op adds a batch and returns the new mean.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import control_dependencies
from tensorweave.metrics.util import (
    check_graph_mode,
    collect,
    metric_variable,
    remove_squeezable,
    safe_div,
)
from tensorweave.metrics.weights import broadcast_weights
from tensorweave.ops.array_creation_ops import ones_like, zeros_like
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_ops import size
from tensorweave.ops.confusion_matrix_ops import remove_squeezable_dimensions
from tensorweave.ops.math_ops import divide, equal, less, multiply, squared_difference, subtract
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import cast, sqrt
from tensorweave.ops.reduction_ops import reduce_sum
from tensorweave.ops.state_ops import assign_add
from tensorweave.ops.variable_scope import variable_scope

__all__ = ["mean", "mean_tensor", "accuracy", "percentage_below", "mean_absolute_error",
           "mean_squared_error", "root_mean_squared_error", "mean_relative_error",
           "mean_cosine_distance"]

_F32 = _dtypes.float32

def _running_mean(values, weights, metrics_collections, updates_collections, name,
                  elementwise: bool):
    """The state, value and update of `mean` (scalar sums) or `mean_tensor` (per element)."""
    with variable_scope(name, "mean", (values, weights)):
        values = cast(values, _F32)
        suffix = "_tensor" if elementwise else ""
        var_shape = values.shape if elementwise else []
        total = metric_variable(var_shape, _F32, name="total" + suffix)
        count = metric_variable(var_shape, _F32, name="count" + suffix)
        if elementwise:
            num_values = ones_like(values)
        elif weights is None:
            num_values = cast(size(values), _F32)
        if weights is not None:
            values, _, weights = remove_squeezable(values, None, weights)
            weights = broadcast_weights(cast(weights, _F32), values)
            values = multiply(values, weights)
            num_values = multiply(num_values, weights) if elementwise else reduce_sum(weights)
        update_total = assign_add(total, values if elementwise else reduce_sum(values))
        with control_dependencies([values]):
            update_count = assign_add(count, num_values)
        value = safe_div(total, count, name="value")
        update_op = safe_div(update_total, update_count, name="update_op")
        return collect(value, update_op, metrics_collections, updates_collections)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """Computes the (weighted) mean of the given values (TF1's tf.metrics.mean).

    Creates local variables `total` and `count`: the update op adds the sum of
    values * weights to `total` and the sum of the weights to `count`; the value is their
    ratio (0 while `count` is 0).

    Args:
      values: A Tensor of arbitrary dimensions (cast to float32).
      weights: Optional Tensor of rank 0 or of the values' rank, broadcastable to them (each
        dimension 1 or equal); None means weight 1 everywhere.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "mean").

    Returns:
      (value, update_op): the current mean, total / count as a Tensor, and an op that adds a
      batch to the state and returns the new value.

    Raises:
      ValueError: if `weights` cannot be broadcast to `values`.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("mean")
    return _running_mean(values, weights, metrics_collections, updates_collections, name,
                         elementwise=False)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None,
                name=None):
    """Computes the element-wise (weighted) mean of the given tensors (TF1's
    tf.metrics.mean_tensor).

    Like `mean`, but `total_tensor` and `count_tensor` keep one running sum per element, so
    the value has the shape of `values`, which must be fully defined. Arguments and errors as
    `mean`'s.

    Returns:
      (value, update_op): the current element-wise mean, total_tensor / count_tensor as a
      Tensor, and an op that adds a batch to the state and returns the new value.
    """
    check_graph_mode("mean_tensor")
    return _running_mean(values, weights, metrics_collections, updates_collections, name,
                         elementwise=True)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Calculates how often `predictions` matches `labels` (TF1's tf.metrics.accuracy).

    The running mean of 1.0 where they are equal and 0.0 elsewhere (predictions are cast to the
    labels' dtype), kept in `accuracy/total` and `accuracy/count`.

    Args:
      labels: The ground truth values, a Tensor whose shape matches `predictions`.
      predictions: The predicted values, a Tensor of any shape.
      weights: Optional Tensor of rank 0 or of the labels' rank, broadcastable to them.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "accuracy").

    Returns:
      (value, update_op): the current accuracy as a Tensor, and an op that adds a batch to the
      state and returns the new value.

    Raises:
      ValueError: if the shapes of predictions and labels, or of weights, do not match.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("accuracy")
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = cast(predictions, labels.dtype)
    is_correct = cast(equal(predictions, labels), _F32)
    return mean(is_correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def percentage_below(values, threshold, weights=None, metrics_collections=None,
                     updates_collections=None, name=None):
    """Computes the percentage of values less than the given threshold (TF1's
    tf.metrics.percentage_below).

    Args:
      values: A numeric Tensor of arbitrary size.
      threshold: A scalar threshold.
      weights: Optional Tensor of rank 0 or of the values' rank, broadcastable to them.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "percentage_below_threshold").

    Returns:
      (value, update_op): the current fraction of values below the threshold as a Tensor, and
      an op that adds a batch to the state and returns the new value.

    Raises:
      ValueError: if `weights` cannot be broadcast to `values`.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("percentage_below")
    is_below = cast(less(values, threshold), _F32)
    return mean(is_below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")


def _mean_of_errors(labels, predictions, weights, metrics_collections, updates_collections,
                    name, error_fn):
    """The running mean of error_fn(labels, predictions) after rank reconciliation."""
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    return mean(error_fn(labels, predictions), weights, metrics_collections,
                updates_collections, name)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """Computes the mean absolute error between labels and predictions (TF1's
    tf.metrics.mean_absolute_error): the running mean of |predictions - labels|.

    Args:
      labels: A Tensor of the same shape as `predictions`.
      predictions: A Tensor of arbitrary shape.
      weights: Optional Tensor of rank 0 or of the labels' rank, broadcastable to them.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "mean_absolute_error").

    Returns:
      (value, update_op): the current mean absolute error as a Tensor, and an op that adds a
      batch to the state and returns the new value.

    Raises:
      ValueError: if the shapes of predictions and labels, or of weights, do not match.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("mean_absolute_error")
    return _mean_of_errors(labels, predictions, weights, metrics_collections,
                           updates_collections, name or "mean_absolute_error",
                           lambda lab, pred: _abs(pred - lab))


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """Computes the mean squared error between labels and predictions (TF1's
    tf.metrics.mean_squared_error): the running mean of (labels - predictions)^2. Arguments,
    result and errors as `mean_absolute_error`'s (default name "mean_squared_error")."""
    check_graph_mode("mean_squared_error")
    return _mean_of_errors(labels, predictions, weights, metrics_collections,
                           updates_collections, name or "mean_squared_error",
                           squared_difference)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """Computes the root mean squared error between labels and predictions (TF1's
    tf.metrics.root_mean_squared_error): the square root of the running mean squared error
    (its state `total` and `count`). Arguments, result and errors as `mean_absolute_error`'s
    (default name "root_mean_squared_error")."""
    check_graph_mode("root_mean_squared_error")
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    return collect(sqrt(mse), sqrt(update_mse), metrics_collections, updates_collections)


def mean_relative_error(labels, predictions, normalizer, weights=None,
                        metrics_collections=None, updates_collections=None, name=None):
    """Computes the mean relative error by normalizing with the given values (TF1's
    tf.metrics.mean_relative_error): the running mean of |labels - predictions| / normalizer,
    counting 0 where the normalizer is 0.

    Args:
      labels: A Tensor of the same shape as `predictions`.
      predictions: A Tensor of arbitrary shape.
      normalizer: A Tensor of the same shape as `predictions`.
      weights: Optional Tensor of rank 0 or of the labels' rank, broadcastable to them.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "mean_relative_error").

    Returns:
      (value, update_op): the current mean relative error as a Tensor, and an op that adds a
      batch to the state and returns the new value.

    Raises:
      ValueError: if the shapes of predictions, labels, normalizer or weights do not match.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("mean_relative_error")
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    predictions, normalizer = remove_squeezable_dimensions(predictions, normalizer)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative_errors = where(equal(normalizer, 0.0), zeros_like(labels),
                            divide(_abs(labels - predictions), normalizer))
    return mean(relative_errors, weights, metrics_collections, updates_collections,
                name or "mean_relative_error")


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """Computes the cosine distance between labels and predictions (TF1's
    tf.metrics.mean_cosine_distance): 1 minus the running mean of the dot products along
    `dim`, the inputs being unit-normalized already.

    Args:
      labels: A Tensor of arbitrary shape, unit-normalized along `dim`.
      predictions: A Tensor of the same shape as `labels`, unit-normalized along `dim`.
      dim: The dimension along which the cosine distance is computed.
      weights: Optional Tensor of rank 0 or of the labels' rank (with `dim` of size 1),
        broadcastable to them.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "mean_cosine_distance").

    Returns:
      (value, update_op): the current mean cosine distance as a Tensor, and an op that adds a
      batch to the state and returns the new value.

    Raises:
      ValueError: if the shapes of predictions and labels, or of weights, do not match.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("mean_cosine_distance")
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    radial_diffs = reduce_sum(multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_distance, update_op = mean(radial_diffs, weights, None, None,
                                    name or "mean_cosine_distance")
    return collect(subtract(1.0, mean_distance), subtract(1.0, update_op),
                   metrics_collections, updates_collections)
