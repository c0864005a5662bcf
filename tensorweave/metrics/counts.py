"""Weighted counts of binary outcomes (true/false positives/negatives) and the precision and
recall built from them.

Labels and predictions are cast to bool. Each count is one float32 variable `count` under the
metric's scope; its value is read through an Identity, its update is the AssignAdd itself.
Precision and recall keep a true-positive count and a false-positive (or false-negative) count
in scopes of their own, and are 0 while both are 0.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.metrics.util import check_graph_mode, collect, metric_variable, remove_squeezable
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.array_ops import identity, rank, shape
from tensorweave.ops.check_ops import assert_type
from tensorweave.ops.control_flow_ops import no_op
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.math_ops import divide, equal, greater, logical_and, logical_or, multiply
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.reduction_ops import reduce_sum
from tensorweave.ops.state_ops import assign_add
from tensorweave.ops.variable_scope import variable_scope

__all__ = ["true_positives", "false_positives", "true_negatives", "false_negatives",
           "precision", "recall"]

_F32 = _dtypes.float32

# Which (label, prediction) pair each count counts.
_OUTCOMES = {"true_positives": (True, True), "false_positives": (False, True),
             "true_negatives": (False, False), "false_negatives": (True, False)}


def _assert_scalar_or_rank_of(weights, values):
    """TF's assert_rank_in(weights, (0, rank(values))): a ValueError from static ranks (else a
    NoOp, as TF's), or an Assert on the run-time ranks."""
    with name_scope(None, "assert_rank_in", (weights, values)):
        values_rank = rank(values)
        w_rank, want = weights.shape.ndims, static_value(values_rank)
        if w_rank is not None and want is not None:
            if w_rank not in (0, int(want)):
                raise ValueError(f"Tensor {weights.name} must have rank in (0, {int(want)}).  "
                                 f"Received rank {w_rank}, shape {weights.shape}")
            return no_op(name="static_checks_determined_all_ok")
        actual = rank(weights)
        data = ["", f"Tensor {weights.name} must have rank in", 0, values_rank,
                "Received shape: ", shape(weights)]
        return Assert(logical_or(equal(actual, 0), equal(actual, values_rank)), data)


def _count_condition(values, weights, metrics_collections, updates_collections):
    """Sums the weights where the boolean `values` are true, into a variable `count`."""
    assert_type(values, _dtypes.bool)
    count = metric_variable([], _F32, name="count")
    values = cast(values, _F32)
    if weights is not None:
        check = _assert_scalar_or_rank_of(weights, values)
        with control_dependencies([check]):
            weights = cast(weights, _F32)
            values = multiply(values, weights)
    value = identity(count)
    update_op = assign_add(count, reduce_sum(values))
    return collect(value, update_op, metrics_collections, updates_collections)


def _count_metric(outcome: str, meaning: str):
    """The TF1 wrapper `tf.metrics.<outcome>`: the weighted count of examples whose (label,
    prediction) is _OUTCOMES[outcome]."""
    want_label, want_prediction = _OUTCOMES[outcome]

    def metric(labels, predictions, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        check_graph_mode(outcome)
        with variable_scope(name, outcome, (predictions, labels, weights)):
            predictions, labels, weights = remove_squeezable(
                cast(predictions, _dtypes.bool), cast(labels, _dtypes.bool), weights)
            hit = logical_and(equal(labels, want_label), equal(predictions, want_prediction))
            return _count_condition(hit, weights, metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = outcome
    metric.__doc__ = f"""Sums the weights of {outcome.replace("_", " ")} (TF1's
    tf.metrics.{outcome}): examples {meaning}.

    The count is a float32 local variable `{outcome}/count`.

    Args:
      labels: The ground truth values, a Tensor whose shape matches `predictions` (cast to
        bool).
      predictions: The predicted values, a Tensor of arbitrary dimensions (cast to bool).
      weights: Optional Tensor of rank 0 or of the labels' rank.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "{outcome}").

    Returns:
      (value, update_op): the float32 count so far (an Identity of the variable), and the
      AssignAdd op adding a batch's count.

    Raises:
      ValueError: if the shapes of predictions and labels, or the rank of weights, do not fit.
      RuntimeError: if eager execution is enabled.
    """
    return metric


true_positives = _count_metric("true_positives", "whose label and prediction are both true")
false_positives = _count_metric("false_positives", "predicted true whose label is false")
true_negatives = _count_metric("true_negatives", "whose label and prediction are both false")
false_negatives = _count_metric("false_negatives", "predicted false whose label is true")


def _ratio_of_counts(other, labels, predictions, weights, metrics_collections,
                     updates_collections, name, default_name):
    """tp / (tp + other), 0 while both are 0: precision (other = false_positives) or recall
    (other = false_negatives)."""
    with variable_scope(name, default_name, (predictions, labels, weights)):
        predictions, labels, weights = remove_squeezable(
            cast(predictions, _dtypes.bool), cast(labels, _dtypes.bool), weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        other_count, other_update = other(labels, predictions, weights)

        def ratio(tp, other_count, name):
            total = tp + other_count
            return where(greater(total, 0), divide(tp, total), 0, name)

        return collect(ratio(tp, other_count, "value"), ratio(tp_update, other_update,
                                                              "update_op"),
                       metrics_collections, updates_collections)


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """Computes the precision of the predictions with respect to the labels (TF1's
    tf.metrics.precision): true positives / (true positives + false positives).

    Keeps `true_positives/count` and `false_positives/count` under the metric's scope; the
    value is 0 while both are 0.

    Args: as the counts' (`true_positives`), with default name "precision".

    Returns:
      (value, update_op): the float32 precision so far, and an op adding a batch's counts and
      returning the new precision.

    Raises:
      ValueError: if the shapes of predictions and labels, or the rank of weights, do not fit.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("precision")
    return _ratio_of_counts(false_positives, labels, predictions, weights, metrics_collections,
                            updates_collections, name, "precision")


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """Computes the recall of the predictions with respect to the labels (TF1's
    tf.metrics.recall): true positives / (true positives + false negatives), kept in
    `true_positives/count` and `false_negatives/count`. Arguments, result and errors as
    `precision`'s (default name "recall")."""
    check_graph_mode("recall is not supported")
    return _ratio_of_counts(false_negatives, labels, predictions, weights, metrics_collections,
                            updates_collections, name, "recall")
