"""tf.confusion_matrix and the label/prediction rank reconciliation TF's metrics share.

`confusion_matrix` is TF's composite, not a kernel: labels and predictions (checked to be
non-negative and below `num_classes`) are stacked into [N, 2] coordinates and ScatterNd adds
one (or the example's weight) at each, so repeated pairs accumulate. `remove_squeezable_dimensions`
drops a trailing size-1 dimension of whichever of labels and predictions has one rank too many:
from static ranks when both are known, otherwise with a `cond` on the run-time ranks.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import ones_like
from tensorweave.ops.array_index_ops import scatter_nd
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.array_ops import rank, squeeze
from tensorweave.ops.check_ops import assert_less, assert_non_negative
from tensorweave.ops.cond import cond
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.math_ops import equal, maximum
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.reduction_ops import reduce_max

__all__ = ["confusion_matrix"]


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0, name=None):
    """Squeezes the last dimension of `labels` or `predictions` if their ranks differ from
    `expected_rank_diff` by exactly one (TF's confusion_matrix.remove_squeezable_dimensions).

    Only a last dimension that may be 1 is squeezed; with static ranks nothing is added to the
    graph unless a squeeze is needed, otherwise a `cond` on the ranks decides when it runs.

    Args:
      labels: Label values, a Tensor whose rank is usually predictions' rank.
      predictions: Predicted values, a Tensor of arbitrary rank.
      expected_rank_diff: The expected rank(predictions) - rank(labels).
      name: A name scope for the ops (default "remove_squeezable_dimensions").

    Returns:
      The tuple (labels, predictions), each possibly with its last dimension removed.
    """
    with name_scope(name, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_shape, l_shape = predictions.shape, labels.shape
        p_rank, l_rank = p_shape.ndims, l_shape.ndims
        if l_rank is not None and p_rank is not None:
            diff = p_rank - l_rank
            if diff == expected_rank_diff + 1 and p_shape.dims[-1].is_compatible_with(1):
                predictions = squeeze(predictions, [-1])
            elif diff == expected_rank_diff - 1 and l_shape.dims[-1].is_compatible_with(1):
                labels = squeeze(labels, [-1])
            return labels, predictions
        diff = rank(predictions) - rank(labels)
        if p_rank is None or p_shape.dims[-1].is_compatible_with(1):
            predictions = _squeeze_if(equal(expected_rank_diff + 1, diff), predictions)
        if l_rank is None or l_shape.dims[-1].is_compatible_with(1):
            labels = _squeeze_if(equal(expected_rank_diff - 1, diff), labels)
        return labels, predictions


def _squeeze_if(pred, x):
    """`x` without its last dimension when the run-time `pred` holds, else `x`."""
    return cond(pred, lambda: squeeze(x, [-1]), lambda: x)


def confusion_matrix(labels, predictions, num_classes=None, dtype=_dtypes.int32, name=None,
                     weights=None):
    """Computes the confusion matrix from predictions and labels (TF1's tf.confusion_matrix).

    Row i, column j counts the examples with label i predicted as j (or sums their weights).
    Class ids run from 0 to `num_classes` - 1; without `num_classes` it is one more than the
    largest label or prediction.

    Args:
      labels: 1-D Tensor of real labels (a trailing size-1 dimension is squeezed).
      predictions: 1-D Tensor of predictions, the same length as `labels`.
      num_classes: The number of classes (optional): the result is [num_classes, num_classes].
      dtype: The result's dtype (default int32).
      name: A name scope for the ops (default "confusion_matrix").
      weights: Optional Tensor of weights, one per prediction.

    Returns:
      A Tensor of `dtype` and shape [n, n], n the number of classes (op ScatterNd).

    Raises:
      ValueError: if labels, predictions and weights have incompatible shapes.
      InvalidArgumentError: when it runs (or at once, for constant inputs) if a label or
        prediction is negative or not below `num_classes`.
    """
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name, "confusion_matrix",
                    (predictions, labels, num_classes, weights)):
        labels, predictions = remove_squeezable_dimensions(
            convert_to_tensor(labels, name="labels"),
            convert_to_tensor(predictions, name="predictions"))
        predictions = cast(predictions, _dtypes.int64)
        labels = cast(labels, _dtypes.int64)
        labels = with_dependencies([assert_non_negative(
            labels, message="`labels` contains negative values")], labels)
        predictions = with_dependencies([assert_non_negative(
            predictions, message="`predictions` contains negative values")], predictions)
        if num_classes is None:
            num_classes = maximum(reduce_max(predictions), reduce_max(labels)) + 1
        else:
            limit = cast(num_classes, _dtypes.int64)
            labels = with_dependencies([assert_less(
                labels, limit, message="`labels` out of bound")], labels)
            predictions = with_dependencies([assert_less(
                predictions, limit, message="`predictions` out of bound")], predictions)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = cast(weights, dtype)
        shape = stack([num_classes, num_classes])
        indices = stack([labels, predictions], axis=1)
        values = ones_like(predictions, dtype) if weights is None else weights
        return scatter_nd(indices=indices, updates=values,
                          shape=cast(shape, _dtypes.int64))
