"""Metrics read off a curve of counts at many thresholds: AUC (ROC or PR), sensitivity at a
given specificity and specificity at a given sensitivity.

All keep the four [num_thresholds] counts of `confusion_counts_at_thresholds` (thresholds.py)
at evenly spaced thresholds in (0, 1) plus two just outside it, and compute the value from the
counts both for the variables (the value) and for the updated counts (the update op), as TF.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.metrics.thresholds import confusion_counts_at_thresholds
from tensorweave.metrics.util import check_graph_mode, collect
from tensorweave.ops.array_creation_ops import ones_like
from tensorweave.ops.array_index_ops import where
from tensorweave.ops.math_ops import (
    div_no_nan,
    divide,
    equal,
    logical_and,
    maximum,
    minimum,
    multiply,
)
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import cast, log
from tensorweave.ops.reduction_ops import argmax, argmin, cumsum, reduce_min, reduce_sum
from tensorweave.ops.variable_scope import variable_scope
from tensorweave.platform import tf_logging as logging

__all__ = ["auc", "sensitivity_at_specificity", "specificity_at_sensitivity"]

_KEPSILON = 1e-7  # puts the outer thresholds just outside [0, 1]
_SUMMATIONS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def _even_thresholds(num_thresholds, top):
    """num_thresholds - 2 evenly spaced thresholds in (0, 1), between -1e-7 and `top`."""
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON] + inner + [top]


def _interpolate_pr_auc(tp, fp, fn, n):
    """PR-AUC with precision interpolated between thresholds as Davis & Goadrich (2006), sec. 4:
    within an interval precision is tp / p with tp linear in p, integrated in closed form."""
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    prec_slope = div_no_nan(dtp, maximum(p[:n - 1] - p[1:], 0), name="prec_slope")
    intercept = tp[1:] - multiply(prec_slope, p[1:])
    safe_p_ratio = where(logical_and(p[:n - 1] > 0, p[1:] > 0),
                         div_no_nan(p[:n - 1], maximum(p[1:], 0),
                                    name="recall_relative_ratio"),
                         ones_like(p[1:]))
    increments = div_no_nan(prec_slope * (dtp + intercept * log(safe_p_ratio)),
                            maximum(tp[1:] + fn[1:], 0), name="pr_auc_increment")
    return reduce_sum(increments, name="interpolate_pr_auc")


def _riemann_sum(x, y, n, summation_method, name):
    """The area under y(x), x falling with the threshold: trapezoids, or rectangles at the
    lower ("minoring") or upper ("majoring") of the two ends of each interval."""
    dx = x[:n - 1] - x[1:]
    if summation_method in ("trapezoidal", "careful_interpolation"):
        heights = (y[:n - 1] + y[1:]) / 2.0
    elif summation_method == "minoring":
        heights = minimum(y[:n - 1], y[1:])
    elif summation_method == "majoring":
        heights = maximum(y[:n - 1], y[1:])
    else:
        raise ValueError(f"Invalid summation_method: {summation_method} summation_method "
                         "should be 'trapezoidal', 'careful_interpolation', 'minoring', or "
                         "'majoring'.")
    return reduce_sum(multiply(dx, heights), name=name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None,
        updates_collections=None, curve="ROC", name=None, summation_method="trapezoidal",
        thresholds=None):
    """Computes the approximate AUC via a Riemann sum (TF1's tf.metrics.auc).

    Keeps `true_positives`, `true_negatives`, `false_positives` and `false_negatives` at
    `num_thresholds` thresholds; the ROC curve plots recall against the false-positive rate,
    the PR curve precision against recall (1e-6 smooths each ratio).

    Args:
      labels: A Tensor whose shape matches `predictions` (cast to bool).
      predictions: A floating-point Tensor of arbitrary shape with values in [0, 1].
      weights: Optional Tensor of rank 0 or of the labels' rank, broadcastable to them.
      num_thresholds: The number of thresholds (at least 2) when `thresholds` is not given.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      curve: "ROC" (default) or "PR".
      name: An optional variable_scope name (default "auc").
      summation_method: "trapezoidal" (default), "careful_interpolation" (for PR: precision
        interpolated between thresholds; for ROC the same as trapezoidal), "minoring" or
        "majoring" (rectangles under or over the curve).
      thresholds: Optional list of thresholds in [0, 1] to use instead of evenly spaced ones
        (sorted; -1e-7 and 1 + 1e-7 are added at the ends).

    Returns:
      (value, update_op): the float32 AUC of the counts so far, and an op adding a batch's
      counts and returning the new AUC.

    Raises:
      ValueError: for an unknown `curve` or `summation_method`, or shapes of predictions,
        labels and weights that do not fit.
      InvalidArgumentError: when it runs, if a prediction is outside [0, 1].
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("auc")
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if curve != "ROC" and curve != "PR":
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if thresholds is not None:
            thresholds = [0.0 - _KEPSILON] + sorted(thresholds) + [1.0 + _KEPSILON]
            num_thresholds = len(thresholds)
        else:
            thresholds = _even_thresholds(num_thresholds, 1.0 + _KEPSILON)
        values, update_ops = confusion_counts_at_thresholds(labels, predictions, thresholds,
                                                            weights)
        epsilon = 1e-6

        def compute_auc(counts, name):
            tp, fn, tn, fp = (counts[k] for k in ("tp", "fn", "tn", "fp"))
            if curve == "PR":
                if summation_method == "trapezoidal":
                    logging.warning("Trapezoidal rule is known to produce incorrect PR-AUCs; "
                                    'please switch to "careful_interpolation" instead.')
                elif summation_method == "careful_interpolation":
                    return _interpolate_pr_auc(tp, fp, fn, num_thresholds)
            rec = divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = divide(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, divide(tp + epsilon, tp + fp + epsilon)
            return _riemann_sum(x, y, num_thresholds, summation_method, name)

        return collect(compute_auc(values, "value"), compute_auc(update_ops, "update_op"),
                       metrics_collections, updates_collections)


def _check_rate(what, rate, got):
    """TF's range check of the target sensitivity or specificity."""
    if rate < 0 or rate > 1:
        raise ValueError(f"`{what}` must be in the range [0, 1]. Currently, `{what}` {got} "
                         f"{rate}.")


def _reported_at_target(counts, given, reported, target, last, name):
    """The `reported` rate (a (numerator, other) pair of count keys, rate = n / (n + other))
    at the threshold whose `given` rate is closest to `target`: the first such threshold, or
    the `last`. 1e-7 is added to each denominator."""
    def rate(numerator, other, name=None):
        return divide(numerator, numerator + other + _KEPSILON, name)

    distance = _abs(rate(counts[given[0]], counts[given[1]]) - target)
    if last:
        # The running count of minima first reaches its total at the last minimum.
        index = argmax(cumsum(cast(equal(distance, reduce_min(distance)), _dtypes.int64)), 0)
    else:
        index = argmin(distance, 0)
    index = cast(index, _dtypes.int32)
    return rate(counts[reported[0]][index], counts[reported[1]][index], name)


def _rate_at_rate(labels, predictions, weights, num_thresholds, metrics_collections,
                  updates_collections, name, default_name, top, **pick):
    """The shared body of sensitivity_at_specificity and specificity_at_sensitivity."""
    with variable_scope(name, default_name, (predictions, labels, weights)):
        thresholds = _even_thresholds(num_thresholds, top)
        values, update_ops = confusion_counts_at_thresholds(labels, predictions, thresholds,
                                                            weights)
        return collect(_reported_at_target(values, name="value", **pick),
                       _reported_at_target(update_ops, name="update_op", **pick),
                       metrics_collections, updates_collections)


def sensitivity_at_specificity(labels, predictions, specificity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """Computes the sensitivity at a given specificity (TF1's
    tf.metrics.sensitivity_at_specificity).

    Among `num_thresholds` thresholds it picks the first whose specificity tn / (tn + fp) is
    closest to `specificity`, and reports the sensitivity tp / (tp + fn) there (1e-7 added
    to each denominator).

    Args:
      labels: A Tensor whose shape matches `predictions` (cast to bool).
      predictions: A floating-point Tensor of arbitrary shape with values in [0, 1].
      specificity: A scalar in [0, 1].
      weights: Optional Tensor of rank 0 or of the labels' rank, broadcastable to them.
      num_thresholds: The number of thresholds to try.
      metrics_collections: Optional collections to add the value to.
      updates_collections: Optional collections to add the update op to.
      name: An optional variable_scope name (default "sensitivity_at_specificity").

    Returns:
      (value, update_op): the float32 sensitivity for the counts so far, and an op adding a
      batch's counts and returning the new sensitivity.

    Raises:
      ValueError: if `specificity` is outside [0, 1], or shapes of predictions, labels and
        weights do not fit.
      InvalidArgumentError: when it runs, if a prediction is outside [0, 1].
      RuntimeError: if eager execution is enabled.
    """
    check_graph_mode("sensitivity_at_specificity")
    _check_rate("specificity", specificity, "got")
    return _rate_at_rate(labels, predictions, weights, num_thresholds, metrics_collections,
                         updates_collections, name, "sensitivity_at_specificity",
                         1.0 + _KEPSILON, given=("tn", "fp"), reported=("tp", "fn"),
                         target=specificity, last=False)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None,
                               num_thresholds=200, metrics_collections=None,
                               updates_collections=None, name=None):
    """Computes the specificity at a given sensitivity (TF1's
    tf.metrics.specificity_at_sensitivity).

    Among `num_thresholds` thresholds (the last one at 1 - 1e-7) it picks the last whose
    sensitivity tp / (tp + fn) is closest to `sensitivity`, and reports the specificity
    tn / (tn + fp) there (1e-7 added to each denominator). Arguments, result and errors as
    `sensitivity_at_specificity`'s, with `sensitivity` the target in [0, 1] (default name
    "specificity_at_sensitivity").
    """
    check_graph_mode("specificity_at_sensitivity")
    _check_rate("sensitivity", sensitivity, "is")
    return _rate_at_rate(labels, predictions, weights, num_thresholds, metrics_collections,
                         updates_collections, name, "specificity_at_sensitivity",
                         1.0 - _KEPSILON, given=("tp", "fn"), reported=("tn", "fp"),
                         target=sensitivity, last=True)
