"""What every tf.metrics function shares: its state variables, input reconciliation, results.

A metric's state lives in zero-initialized, non-trainable variables in the LOCAL_VARIABLES and
METRIC_VARIABLES collections (so `tf.local_variables_initializer()` resets it). Before
computing, labels, predictions and weights are brought to matching ranks the way TensorFlow
does it: a trailing size-1 dimension is squeezed from whichever has one too many, and weights
one rank short get one. Every metric returns (value, update_op) after adding them to the
caller's `metrics_collections` and `updates_collections`.
"""
from __future__ import annotations

from tensorweave.compat.v2_behavior import executing_eagerly
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys, add_to_collections
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import zeros
from tensorweave.ops.array_ops import expand_dims, rank, squeeze
from tensorweave.ops.cond import cond
from tensorweave.ops.confusion_matrix_ops import remove_squeezable_dimensions
from tensorweave.ops.math_ops import div_no_nan, equal, maximum
from tensorweave.ops.variables import VariableV1

_F32 = _dtypes.float32


def check_graph_mode(what: str) -> None:
    """TF's guard at the top of each metric: `what` names it as TF's message does."""
    if executing_eagerly():
        raise RuntimeError(f"tf.metrics.{what} is not supported when eager execution is "
                           "enabled.")


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialized, non-trainable variable in LOCAL_VARIABLES and METRIC_VARIABLES."""
    return VariableV1(lambda: zeros(shape, dtype), trainable=False,
                      collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                      validate_shape=validate_shape, name=name)


def collect(value, update_op, metrics_collections, updates_collections):
    """Adds a metric's value and update op to the caller's collections; returns the pair."""
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update_op)
    return value, update_op


def safe_div(numerator, denominator, name):
    """numerator / max(denominator, 0), or 0 where the denominator is 0 (TF's running
    mean divisions)."""
    return div_no_nan(numerator, maximum(denominator, 0), name=name)


def remove_squeezable(predictions, labels, weights):
    """TF's _remove_squeezable_dimensions: labels and predictions reconciled by
    `remove_squeezable_dimensions`, then non-scalar weights squeezed or expanded at the end to
    predictions' rank (statically, or by `cond`s on the run-time ranks).

    Returns:
      (predictions, labels, weights), Tensors (labels and weights None when given None).
    """
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = remove_squeezable_dimensions(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_shape = weights.shape
    w_rank, p_rank = w_shape.ndims, predictions.shape.ndims
    if w_rank == 0:
        return predictions, labels, weights
    if p_rank is not None and w_rank is not None:
        if w_rank - p_rank == 1:
            weights = squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = expand_dims(weights, [-1])
        return predictions, labels, weights
    w_rank_t = rank(weights)
    diff = w_rank_t - rank(predictions)

    def expanded():
        return cond(equal(diff, -1), lambda: expand_dims(weights, [-1]), lambda: weights)

    # A squeeze that the static shape already rules out is not even built.
    squeezable = w_rank is None or w_shape.dims[-1].is_compatible_with(1)

    def adjusted():
        return cond(equal(diff, 1),
                    (lambda: squeeze(weights, [-1])) if squeezable else (lambda: weights),
                    expanded)

    weights = cond(equal(w_rank_t, 0), lambda: weights, adjusted)
    return predictions, labels, weights


def maybe_expand_labels(labels, predictions):
    """TF's _maybe_expand_labels for dense labels: labels of predictions' rank minus one get a
    last dimension of 1 (statically, or by a `cond` on the run-time ranks).

    Raises:
      ValueError: if static ranks are known and differ by anything but 0 or 1.
    """
    with name_scope(None, "expand_labels", (labels, predictions)) as scope:
        labels = convert_to_tensor(labels)
        l_rank, p_rank = labels.shape.ndims, predictions.shape.ndims
        if l_rank is not None and p_rank is not None:
            if p_rank == l_rank:
                return labels
            if p_rank == l_rank + 1:
                return expand_dims(labels, -1, name=scope)
            raise ValueError(f"Unexpected labels shape {labels.shape} for predictions shape "
                             f"{predictions.shape}. Predictions rank should be the same rank "
                             "as labels rank or labels rank plus one .")
        return cond(equal(rank(predictions), rank(labels) + 1),
                    lambda: expand_dims(labels, -1, name=scope), lambda: labels)
