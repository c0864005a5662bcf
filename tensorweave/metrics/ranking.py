"""Metrics of ranked predictions against sets of labels: precision@k, recall@k and average
precision@k, from scores (`*_at_k`, which take the top k first) or from the top-k ids
(`*_at_top_k`).

Each row of the leading dimensions is one example: its top-k predicted class ids against its
labels (a dense [.., num_labels] int64 Tensor or a SparseTensor). The counts are float64
variables named after TF's scopes ("precision_at_5/true_positive_at_5", ...); precision and
recall are NaN until something is counted, as in TF.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.label_sets import RowSets, dense_label_sets, distinct_count
from tensorweave.metrics.util import (
    check_graph_mode,
    collect,
    maybe_expand_labels,
    metric_variable,
)
from tensorweave.metrics.weights import assert_broadcastable, broadcast_weights
from tensorweave.ops.array_creation_ops import ones_like, zeros_like
from tensorweave.ops.array_index_ops import where_v2
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import expand_dims, shape, size, tile
from tensorweave.ops.cond import cond
from tensorweave.ops.math_ops import add, div_no_nan, divide, greater_equal, minimum, multiply
from tensorweave.ops.math_unary_ops import cast
from tensorweave.ops.nn_top_k_ops import top_k
from tensorweave.ops.reduction_ops import cumsum, reduce_max, reduce_sum
from tensorweave.ops.state_ops import assign_add

__all__ = ["precision_at_k", "sparse_precision_at_k", "precision_at_top_k", "recall_at_k",
           "recall_at_top_k", "average_precision_at_k", "sparse_average_precision_at_k"]

_F64 = _dtypes.float64


def _at_k_name(name, k=None, class_id=None):
    """TF's scope names: "precision_at_5", "recall_at_k_class3", ..."""
    name = f"{name}_at_{k:d}" if k is not None else f"{name}_at_k"
    return name if class_id is None else f"{name}_class{class_id:d}"


def _expand_rows(labels, predictions_idx):
    """Labels (values, valid) expanded to the rank of `predictions_idx` if one short."""
    values, valid = labels
    return maybe_expand_labels(values, predictions_idx), maybe_expand_labels(valid,
                                                                             predictions_idx)


def _streaming_count(kind, per_row, k, class_id, weights):
    """A float64 variable summing the (weighted) per-row counts of `kind` ("true_positive",
    ...), named like its scope; returns it and its update."""
    with name_scope(None, _at_k_name(kind, k, class_id=class_id), (per_row, weights)) as scope:
        if weights is not None:
            with control_dependencies((assert_broadcastable(weights, per_row),)):
                per_row = multiply(per_row, cast(weights, _F64))
        var = metric_variable([], _F64, name=scope)
        return var, assign_add(var, reduce_sum(per_row), name="update")


def _fraction_at_k(other_kind, labels, predictions_idx, k, class_id, weights,
                   metrics_collections, updates_collections, name, default_name):
    """tp / (tp + other) of the top-k ids, other being false positives (precision) or false
    negatives (recall)."""
    with name_scope(name, _at_k_name(default_name, k, class_id=class_id),
                    (predictions_idx, labels, weights)) as scope:
        predictions_idx = convert_to_tensor(predictions_idx)
        labels = _expand_rows(dense_label_sets(labels), predictions_idx)
        rows = RowSets(cast(predictions_idx, _dtypes.int64), labels, class_id)
        other_rows = (rows.predictions_only_size() if other_kind == "false_positive"
                      else rows.labels_only_size())
        tp, tp_update = _streaming_count("true_positive", rows.intersection_size(), k,
                                         class_id, weights)
        other, other_update = _streaming_count(other_kind, other_rows, k, class_id, weights)
        return collect(divide(tp, add(tp, other), name=scope),
                       divide(tp_update, add(tp_update, other_update), name="update"),
                       metrics_collections, updates_collections)


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                       metrics_collections=None, updates_collections=None, name=None):
    """Computes precision@k of the top-k predictions with respect to sparse labels (TF1's
    tf.metrics.precision_at_top_k).

    Per example, the predicted ids that are among its labels are true positives, the others
    false positives (each distinct id counted once); the value is tp / (tp + fp) over all
    examples so far (NaN while both are 0). With `class_id`, only that class is counted.

    Args:
      labels: int64 Tensor [D1, ..., DN, num_labels] or [D1, ..., DN] (then one label each),
        or a SparseTensor of the same rank; values are class ids (dense -1 counts as a label
        no prediction matches).
      predictions_idx: Integer Tensor [D1, ..., DN, k] of predicted class ids, best first.
      k: Used only to name the scope and variables ("precision_at_<k>").
      class_id: Optional class to compute precision for.
      weights: Optional Tensor of rank 0 or N, broadcastable to [D1, ..., DN].
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional name scope (default "precision_at_<k>[_class<class_id>]").

    Returns:
      (value, update_op): the float64 precision so far, and an op adding a batch's counts and
      returning the new precision.

    Raises:
      TypeError: if dense labels are not int64.
      ValueError: if the ranks or leading dimensions of labels and predictions_idx, or the
        shape of weights, do not fit.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("precision_at_top_k")
    return _fraction_at_k("false_positive", labels, predictions_idx, k, class_id, weights,
                          metrics_collections, updates_collections, name, "precision")


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None,
                    metrics_collections=None, updates_collections=None, name=None):
    """Computes recall@k of the top-k predictions with respect to sparse labels (TF1's
    tf.metrics.recall_at_top_k).

    Per example, the labels among the predicted ids are true positives, the others false
    negatives (each distinct label counted once); the value is tp / (tp + fn) over all
    examples so far (NaN while both are 0). Arguments and errors as `precision_at_top_k`'s
    (default name "recall_at_<k>[_class<class_id>]").

    Returns:
      (value, update_op): the float64 recall so far, and an op adding a batch's counts and
      returning the new recall.
    """
    return _fraction_at_k("false_negative", labels, predictions_idx, k, class_id, weights,
                          metrics_collections, updates_collections, name, "recall")


def _from_scores(at_top_k, default_name, labels, predictions, k, class_id, weights,
                 metrics_collections, updates_collections, name):
    """`at_top_k` applied to the indices of the k largest `predictions` (TF's TopKV2)."""
    with name_scope(name, _at_k_name(default_name, k, class_id=class_id),
                    (predictions, labels, weights)) as scope:
        _, top_k_idx = top_k(predictions, k)
        return at_top_k(labels, top_k_idx, k=k, class_id=class_id, weights=weights,
                        metrics_collections=metrics_collections,
                        updates_collections=updates_collections, name=scope)


def precision_at_k(labels, predictions, k, class_id=None, weights=None,
                   metrics_collections=None, updates_collections=None, name=None):
    """Computes precision@k of the predictions with respect to sparse labels (TF1's
    tf.metrics.precision_at_k): `precision_at_top_k` of the k highest-scoring classes.

    Args:
      labels: As `precision_at_top_k`'s: class ids, dense int64 or sparse.
      predictions: Float Tensor [D1, ..., DN, num_classes] of scores.
      k: The number of top predictions to consider.
      class_id, weights, metrics_collections, updates_collections, name: As
        `precision_at_top_k`'s.

    Returns:
      (value, update_op): the float64 precision so far, and an op adding a batch's counts and
      returning the new precision.

    Raises:
      TypeError: if dense labels are not int64.
      ValueError: if k exceeds the number of classes, or the shapes of labels, predictions
        and weights do not fit.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("sparse_precision_at_k")
    return _from_scores(precision_at_top_k, "precision", labels, predictions, k, class_id,
                        weights, metrics_collections, updates_collections, name)


def sparse_precision_at_k(labels, predictions, k, class_id=None, weights=None,
                          metrics_collections=None, updates_collections=None, name=None):
    """Renamed to `precision_at_k` (TF1's deprecated tf.metrics.sparse_precision_at_k); the
    same arguments, result and errors."""
    return precision_at_k(labels=labels, predictions=predictions, k=k, class_id=class_id,
                          weights=weights, metrics_collections=metrics_collections,
                          updates_collections=updates_collections, name=name)


def recall_at_k(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
                updates_collections=None, name=None):
    """Computes recall@k of the predictions with respect to sparse labels (TF1's
    tf.metrics.recall_at_k): `recall_at_top_k` of the k highest-scoring classes. Arguments
    and errors as `precision_at_k`'s (default name "recall_at_<k>[_class<class_id>]").

    Returns:
      (value, update_op): the float64 recall so far, and an op adding a batch's counts and
      returning the new recall.
    """
    check_graph_mode("recall_at_k")
    return _from_scores(recall_at_top_k, "recall", labels, predictions, k, class_id, weights,
                        metrics_collections, updates_collections, name)


def _expand_and_tile(x, multiple):
    """x [..., n] as [..., multiple, n]: each row repeated once per prediction."""
    expanded = expand_dims(x, -2, name="expand")
    ones = ones_like(shape(x))
    return tile(expanded, concat((ones[:-1], (multiple,), ones[-1:]), 0, name="multiples"))


def _average_precision_per_row(labels, predictions_idx, sparse):
    """Average precision@k of each row: the mean, over the first min(#labels, k) relevant
    positions, of the precision at each relevant position of the top-k ids."""
    with name_scope(None, "average_precision", (predictions_idx, labels)) as scope:
        predictions_idx = cast(predictions_idx, _dtypes.int64, name="predictions_idx")
        if predictions_idx.shape.ndims == 0:
            raise ValueError("The rank of `predictions_idx` must be at least 1.")
        k = predictions_idx.shape.as_list()[-1]
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set. Currently, "
                             "it is None.")
        values, valid = _expand_rows(labels, predictions_idx)
        # Each position against all labels of its row: a one-element set per position.
        per_position = RowSets(expand_dims(predictions_idx, -1, name="predictions_idx_per_k"),
                               (_expand_and_tile(values, k), _expand_and_tile(valid, k)))
        relevant_per_k = per_position.intersection_size()
        tp_per_k = cumsum(relevant_per_k, axis=-1, name="tp_per_k")
        retrieved_per_k = cumsum(ones_like(relevant_per_k), axis=-1, name="retrieved_per_k")
        precision_per_k = divide(tp_per_k, retrieved_per_k, name="precision_per_k")
        precision_sum = reduce_sum(multiply(precision_per_k, relevant_per_k), axis=(-1,),
                                   name="precision_sum")
        # Dense labels count every non-negative entry; sparse ones count distinct entries.
        if sparse:
            num_labels = distinct_count(values, valid)
        else:
            num_labels = reduce_sum(where_v2(greater_equal(values, 0), ones_like(values),
                                             zeros_like(values)), axis=-1)
        num_relevant = cast(minimum(num_labels, cast(k, num_labels.dtype)), _F64)
        return divide(precision_sum, num_relevant, name=scope)


def _clean_out_of_range(labels, num_classes):
    """Labels (values, valid) with ids >= num_classes replaced by -1, which matches nothing."""
    values, valid = labels
    replaced = cond(greater_equal(reduce_max(values), num_classes),
                    lambda: where_v2(greater_equal(values, num_classes), -1 * ones_like(values),
                                     values),
                    lambda: values)
    return replaced, valid


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None,
                           updates_collections=None, name=None):
    """Computes average precision@k of predictions with respect to sparse labels (TF1's
    tf.metrics.average_precision_at_k).

    For each example, the precision at every position of the top k predictions that holds a
    label, summed and divided by min(number of labels, k); the value is the (weighted) mean
    over all examples so far, kept in float64 variables `max` (the weight total) and `total`.
    An example without labels contributes NaN, as in TF.

    Args:
      labels: int64 Tensor [D1, ..., DN, num_labels] or [D1, ..., DN], or a SparseTensor, of
        class ids; ids >= num_classes are ignored.
      predictions: Float Tensor [D1, ..., DN, num_classes] of scores.
      k: The number of top predictions to consider, at least 1.
      weights: Optional Tensor of rank 0 or N, broadcastable to [D1, ..., DN].
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional name scope (default "average_precision_at_<k>").

    Returns:
      (value, update_op): the float64 mean average precision so far, and an op adding a
      batch and returning the new mean.

    Raises:
      ValueError: if k < 1, or the shapes of labels, predictions and weights do not fit.
      TypeError: if the labels are not int64.
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("sparse_average_precision_at_k")
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with name_scope(name, _at_k_name("average_precision", k),
                    (predictions, labels, weights)) as scope:
        _, predictions_idx = top_k(predictions, k)
        sparse = isinstance(labels, (SparseTensor, SparseTensorValue))
        num_classes = cast(shape(predictions)[-1], _dtypes.int64)
        labels = _clean_out_of_range(dense_label_sets(labels), num_classes)
        average_precision = _average_precision_per_row(labels, predictions_idx, sparse)
        if weights is not None:
            weights = broadcast_weights(cast(weights, _F64), average_precision)
            average_precision = multiply(average_precision, weights)
        with name_scope(None, "max", (average_precision,)) as max_scope:
            max_var = metric_variable([], _F64, name=max_scope)
            if weights is None:
                batch_max = cast(size(average_precision, name="batch_max"), _F64)
            else:
                batch_max = reduce_sum(weights, name="batch_max")
            max_update = assign_add(max_var, batch_max, name="update")
        with name_scope(None, "total", (average_precision,)) as total_scope:
            total_var = metric_variable([], _F64, name=total_scope)
            batch_total = reduce_sum(average_precision, name="batch_total")
            total_update = assign_add(total_var, batch_total, name="update")
        return collect(div_no_nan(total_var, max_var, name="mean"),
                       div_no_nan(total_update, max_update, name=scope),
                       metrics_collections, updates_collections)


def sparse_average_precision_at_k(labels, predictions, k, weights=None,
                                  metrics_collections=None, updates_collections=None,
                                  name=None):
    """Renamed to `average_precision_at_k` (TF1's deprecated
    tf.metrics.sparse_average_precision_at_k); the same arguments, result and errors."""
    return average_precision_at_k(labels=labels, predictions=predictions, k=k,
                                  weights=weights, metrics_collections=metrics_collections,
                                  updates_collections=updates_collections, name=name)
