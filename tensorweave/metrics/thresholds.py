"""Counts at a list of thresholds, and the precision and recall at each of them.

`confusion_counts_at_thresholds` is TF's _confusion_matrix_at_thresholds: predictions (checked
to lie in [0, 1]) are compared with every threshold at once, a [num_thresholds, N] grid, and
each requested count (tp, fn, tn, fp) sums its weighted hits per threshold into a float32
variable of shape [num_thresholds]. A prediction counts as positive when it is strictly above
the threshold. AUC and the sensitivity/specificity metrics (curves.py) build on the same counts.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import control_dependencies
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.util import check_graph_mode, collect, metric_variable, remove_squeezable
from tensorweave.metrics.weights import broadcast_weights
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.array_ops import expand_dims, identity, reshape, shape, tile, transpose
from tensorweave.ops.check_ops import assert_greater_equal, assert_less_equal
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import divide, greater, logical_and
from tensorweave.ops.math_unary_ops import cast, logical_not
from tensorweave.ops.reduction_ops import reduce_sum
from tensorweave.ops.state_ops import assign_add
from tensorweave.ops.variable_scope import variable_scope

__all__ = ["true_positives_at_thresholds", "false_positives_at_thresholds",
           "true_negatives_at_thresholds", "false_negatives_at_thresholds",
           "precision_at_thresholds", "recall_at_thresholds"]

_F32 = _dtypes.float32
_KEYS = ("tp", "fn", "tn", "fp")
# Each key's variable name and the (label, prediction) it counts.
_COUNTS = {"tp": ("true_positives", True, True), "fn": ("false_negatives", True, False),
           "tn": ("true_negatives", False, False), "fp": ("false_positives", False, True)}


def confusion_counts_at_thresholds(labels, predictions, thresholds, weights=None,
                                   includes=None):
    """Weighted true/false positive/negative counts at each threshold.

    Args:
      labels: A Tensor whose shape matches `predictions` (cast to bool).
      predictions: A floating-point Tensor of values in [0, 1].
      thresholds: A list of float thresholds.
      weights: Optional Tensor of rank 0 or of the labels' rank, broadcastable to them.
      includes: The keys to compute, from "tp", "fn", "tn", "fp" (default all four).

    Returns:
      (values, update_ops): dicts keyed like `includes` of the [len(thresholds)] variables and
      of the AssignAdd ops adding a batch's counts to them.

    Raises:
      ValueError: for an unknown key, or shapes of labels, predictions, weights that do not fit.
    """
    if includes is None:
        includes = _KEYS
    for key in includes:
        if key not in _KEYS:
            raise ValueError(f"Invalid key: {key}")
    predictions = convert_to_tensor(predictions)
    in_range = [
        assert_greater_equal(predictions, cast(0.0, dtype=predictions.dtype),
                             message="predictions must be in [0, 1]"),
        assert_less_equal(predictions, cast(1.0, dtype=predictions.dtype),
                          message="predictions must be in [0, 1]")]
    with control_dependencies(in_range):
        predictions, labels, weights = remove_squeezable(
            cast(predictions, _F32), cast(labels, dtype=_dtypes.bool), weights)
    num_thresholds = len(thresholds)
    predictions_2d = reshape(predictions, [-1, 1])
    labels_2d = reshape(cast(labels, dtype=_dtypes.bool), [1, -1])
    num_predictions = predictions_2d.shape.as_list()[0]
    if num_predictions is None:
        num_predictions = shape(predictions_2d)[0]
    thresh_tiled = tile(expand_dims(constant(thresholds), [1]), stack([1, num_predictions]))
    pred_is_pos = greater(tile(transpose(predictions_2d), [num_thresholds, 1]), thresh_tiled)
    label_is_pos = tile(labels_2d, [num_thresholds, 1])
    if weights is not None:
        weights = broadcast_weights(cast(weights, _F32), predictions)
        weights_tiled = tile(reshape(weights, [1, -1]), [num_thresholds, 1])
        thresh_tiled.shape.assert_is_compatible_with(weights_tiled.shape)
    values, update_ops = {}, {}
    for key in _KEYS:
        if key not in includes:
            continue
        var_name, label_wanted, prediction_wanted = _COUNTS[key]
        var = metric_variable([num_thresholds], _F32, name=var_name)
        hit = logical_and(label_is_pos if label_wanted else logical_not(label_is_pos),
                          pred_is_pos if prediction_wanted else logical_not(pred_is_pos))
        hit = cast(hit, _F32)
        if weights is not None:
            hit *= weights_tiled
        update_ops[key] = assign_add(var, reduce_sum(hit, 1))
        values[key] = var
    return values, update_ops


def _count_at_thresholds_metric(key: str, meaning: str):
    """The TF1 wrapper `tf.metrics.<count>_at_thresholds` of one key of _COUNTS: the variable
    read through an Identity, and its AssignAdd."""
    default_name = _COUNTS[key][0]
    public_name = f"{default_name}_at_thresholds"

    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        check_graph_mode(public_name)
        with variable_scope(name, default_name, (predictions, labels, weights)):
            values, update_ops = confusion_counts_at_thresholds(
                labels, predictions, thresholds, weights=weights, includes=(key,))
            return collect(identity(values[key]), update_ops[key], metrics_collections,
                           updates_collections)

    metric.__name__ = metric.__qualname__ = public_name
    metric.__doc__ = f"""Computes {default_name.replace("_", " ")} at the given thresholds
    (TF1's tf.metrics.{public_name}): per threshold, the weight of examples {meaning}.

    Args:
      labels: A Tensor whose shape matches `predictions` (cast to bool).
      predictions: A floating-point Tensor of arbitrary shape with values in [0, 1].
      thresholds: A Python list or tuple of float thresholds; a prediction is positive when
        strictly above one.
      weights: Optional Tensor of rank 0 or of the labels' rank, broadcastable to them.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "{default_name}").

    Returns:
      (value, update_op): a float32 Tensor of shape [len(thresholds)] with the counts so far,
      and the op adding a batch's counts.

    Raises:
      ValueError: if the shapes of predictions, labels or weights do not fit.
      InvalidArgumentError: when it runs, if a prediction is outside [0, 1].
      RuntimeError: if eager execution is enabled.
    """
    return metric


true_positives_at_thresholds = _count_at_thresholds_metric(
    "tp", "labeled true and predicted above it")
false_positives_at_thresholds = _count_at_thresholds_metric(
    "fp", "labeled false and predicted above it")
true_negatives_at_thresholds = _count_at_thresholds_metric(
    "tn", "labeled false and predicted at or below it")
false_negatives_at_thresholds = _count_at_thresholds_metric(
    "fn", "labeled true and predicted at or below it")


def _ratio_at_thresholds(other, labels, predictions, thresholds, weights,
                         metrics_collections, updates_collections, name, default_name):
    """tp / (1e-7 + tp + other) per threshold, other being "fp" (precision) or "fn" (recall);
    the ops are named "<default_name's first word>_value" and "..._update_op" as in TF."""
    with variable_scope(name, default_name, (predictions, labels, weights)):
        values, update_ops = confusion_counts_at_thresholds(labels, predictions, thresholds,
                                                            weights, includes=("tp", other))
        prefix = default_name.split("_")[0]

        def ratio(counts, suffix):
            return divide(counts["tp"], 1e-7 + counts["tp"] + counts[other],
                          name=f"{prefix}_{suffix}")

        return collect(ratio(values, "value"), ratio(update_ops, "update_op"),
                       metrics_collections, updates_collections)


def precision_at_thresholds(labels, predictions, thresholds, weights=None,
                            metrics_collections=None, updates_collections=None, name=None):
    """Computes precision values for different `thresholds` on `predictions` (TF1's
    tf.metrics.precision_at_thresholds): per threshold, tp / (tp + fp), with 1e-7 added to the
    denominator.

    Args: as `true_positives_at_thresholds`' (default name "precision_at_thresholds").

    Returns:
      (value, update_op): a float32 Tensor of shape [len(thresholds)] with the precisions so
      far, and an op adding a batch's counts and returning the new precisions.

    Raises:
      ValueError: if the shapes of predictions, labels or weights do not fit.
      InvalidArgumentError: when it runs, if a prediction is outside [0, 1].
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("precision_at_thresholds")
    return _ratio_at_thresholds("fp", labels, predictions, thresholds, weights,
                                metrics_collections, updates_collections, name,
                                "precision_at_thresholds")


def recall_at_thresholds(labels, predictions, thresholds, weights=None,
                         metrics_collections=None, updates_collections=None, name=None):
    """Computes recall values for different `thresholds` on `predictions` (TF1's
    tf.metrics.recall_at_thresholds): per threshold, tp / (tp + fn), with 1e-7 added to the
    denominator. Arguments, result and errors as `precision_at_thresholds`' (default name
    "recall_at_thresholds")."""
    check_graph_mode("recall_at_thresholds")
    return _ratio_at_thresholds("fn", labels, predictions, thresholds, weights,
                                metrics_collections, updates_collections, name,
                                "recall_at_thresholds")
