"""Per-class metrics of multi-class predictions: mean per-class accuracy and mean IOU.

Both flatten labels and predictions (integer class ids in [0, num_classes)) and weights.
`mean_per_class_accuracy` keeps per-class totals and correct counts ([num_classes] float32,
scatter-added); `mean_iou` keeps a float64 [num_classes, num_classes] confusion matrix.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.util import check_graph_mode, collect, metric_variable, safe_div
from tensorweave.ops.array_creation_ops import ones, ones_like
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_matrix_ops import matrix_diag_part
from tensorweave.ops.array_ops import reshape, size
from tensorweave.ops.confusion_matrix_ops import confusion_matrix
from tensorweave.ops.math_ops import equal, greater, not_equal
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.reduction_ops import reduce_mean, reduce_sum
from tensorweave.ops.scatter_ops import scatter_add
from tensorweave.ops.state_ops import assign_add
from tensorweave.ops.variable_scope import variable_scope

__all__ = ["mean_per_class_accuracy", "mean_iou"]

_F32 = _dtypes.float32


def _flat(x):
    """`x` as a vector (rank-1 and scalar tensors are left as they are)."""
    ndims = x.shape.ndims
    return reshape(x, [-1]) if ndims is None or ndims > 1 else x


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """Calculates the mean of the per-class accuracies (TF1's
    tf.metrics.mean_per_class_accuracy).

    Keeps `total` (the weight of examples of each class) and `count` (the weight of those
    predicted right), both [num_classes] float32; the value is the mean over classes of
    count / total, 0 for classes not seen.

    Args:
      labels: A Tensor of ground-truth class ids in [0, num_classes), flattened if of rank > 1.
      predictions: A Tensor of predicted class ids, of the labels' shape.
      num_classes: The number of classes (a Python int).
      weights: Optional Tensor of the labels' shape (flattened like them).
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "mean_accuracy").

    Returns:
      (value, update_op): the float32 mean per-class accuracy so far, and an op adding a batch
      and returning the per-class accuracies, a [num_classes] Tensor.

    Raises:
      ValueError: if the shapes of predictions and labels do not match.
      InvalidArgumentError: when it runs, if a label is outside [0, num_classes).
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("mean_per_class_accuracy")
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = _flat(cast(labels, _dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], _F32, name="total")
        count = metric_variable([num_classes], _F32, name="count")
        examples = ones([size(labels)], _F32)
        if labels.dtype != predictions.dtype:
            predictions = cast(predictions, labels.dtype)
        is_correct = cast(equal(predictions, labels), _F32)
        if weights is not None:
            weights = cast(_flat(convert_to_tensor(weights)), _F32)
            is_correct *= weights
            examples *= weights
        update_total = scatter_add(total, labels, examples)
        update_count = scatter_add(count, labels, is_correct)
        value = reduce_mean(safe_div(count, total, name=None), name="mean_accuracy")
        return collect(value, safe_div(update_count, update_total, name="update_op"),
                       metrics_collections, updates_collections)


def _mean_iou_of(total_cm, num_classes):
    """The mean over classes that occur (as label or prediction) of
    tp / (tp + fp + fn), read off the confusion matrix; 0 if none occurs."""
    sum_over_row = cast(reduce_sum(total_cm, 0), _F32)
    sum_over_col = cast(reduce_sum(total_cm, 1), _F32)
    cm_diag = cast(matrix_diag_part(total_cm), _F32)
    denominator = sum_over_row + sum_over_col - cm_diag
    num_valid = reduce_sum(cast(not_equal(denominator, 0), dtype=_F32))
    denominator = where(greater(denominator, 0), denominator, ones_like(denominator))
    iou = cm_diag / denominator
    return where(greater(num_valid, 0), reduce_sum(iou, name="mean_iou") / num_valid, 0)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """Calculates the per-step mean intersection-over-union (TF1's tf.metrics.mean_iou).

    IOU of a class is true positives / (true positives + false positives + false negatives);
    the value averages it over the classes that occur. The state is a float64 confusion
    matrix `total_confusion_matrix` of shape [num_classes, num_classes].

    Args: as `mean_per_class_accuracy`'s (default name "mean_iou").

    Returns:
      (value, update_op): the float32 mean IOU so far, and the op adding a batch's confusion
      matrix (its result is the updated float64 matrix).

    Raises:
      ValueError: if the shapes of predictions and labels do not match.
      InvalidArgumentError: when it runs, if a label or prediction is outside
        [0, num_classes).
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("mean_iou")
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm = metric_variable([num_classes, num_classes], _dtypes.float64,
                                   name="total_confusion_matrix")
        predictions = _flat(cast(predictions, _dtypes.int64))
        labels = _flat(cast(labels, _dtypes.int64))
        if weights is not None:
            weights = _flat(convert_to_tensor(weights))
        current_cm = confusion_matrix(labels, predictions, cast(num_classes, _dtypes.int64),
                                      weights=weights, dtype=_dtypes.float64)
        update_op = assign_add(total_cm, current_cm)
        return collect(_mean_iou_of(total_cm, num_classes), update_op, metrics_collections,
                       updates_collections)
