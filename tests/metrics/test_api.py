"""The tf.metrics namespace as a whole: TF 2.21's names, and for every metric the collections
arguments, the LOCAL/METRIC_VARIABLES state and the refusal to run eagerly."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.metrics import util as metrics_util

TF_NAMES = [
    "accuracy", "auc", "average_precision_at_k", "false_negatives",
    "false_negatives_at_thresholds", "false_positives", "false_positives_at_thresholds", "mean",
    "mean_absolute_error", "mean_cosine_distance", "mean_iou", "mean_per_class_accuracy",
    "mean_relative_error", "mean_squared_error", "mean_tensor", "percentage_below", "precision",
    "precision_at_k", "precision_at_thresholds", "precision_at_top_k", "recall", "recall_at_k",
    "recall_at_thresholds", "recall_at_top_k", "root_mean_squared_error",
    "sensitivity_at_specificity", "sparse_average_precision_at_k", "sparse_precision_at_k",
    "specificity_at_sensitivity", "true_negatives", "true_negatives_at_thresholds",
    "true_positives", "true_positives_at_thresholds",
]


def _calls():
    """Every metric on small constant inputs that make its state nonzero."""
    b = tf.constant([True, False, True])
    p = tf.constant([0.2, 0.7, 0.9])
    x = tf.constant([1.0, 2.0, 4.0])
    ids = tf.constant([0, 1, 1], tf.int64)
    labels = tf.constant([[1], [0], [2]], tf.int64)
    scores = tf.constant([[0.1, 0.5, 0.4]] * 3)
    m = tf.metrics
    return {
        "accuracy": lambda **kw: m.accuracy(ids, ids, **kw),
        "auc": lambda **kw: m.auc(b, p, **kw),
        "average_precision_at_k": lambda **kw: m.average_precision_at_k(labels, scores, 2, **kw),
        "false_negatives": lambda **kw: m.false_negatives(b, ~b, **kw),
        "false_negatives_at_thresholds": lambda **kw: m.false_negatives_at_thresholds(
            b, p, [0.5], **kw),
        "false_positives": lambda **kw: m.false_positives(b, ~b, **kw),
        "false_positives_at_thresholds": lambda **kw: m.false_positives_at_thresholds(
            b, p, [0.5], **kw),
        "mean": lambda **kw: m.mean(x, **kw),
        "mean_absolute_error": lambda **kw: m.mean_absolute_error(x, x, **kw),
        "mean_cosine_distance": lambda **kw: m.mean_cosine_distance(x, x, 0, **kw),
        "mean_iou": lambda **kw: m.mean_iou(ids, ids, 2, **kw),
        "mean_per_class_accuracy": lambda **kw: m.mean_per_class_accuracy(ids, ids, 2, **kw),
        "mean_relative_error": lambda **kw: m.mean_relative_error(x, x, x, **kw),
        "mean_squared_error": lambda **kw: m.mean_squared_error(x, x, **kw),
        "mean_tensor": lambda **kw: m.mean_tensor(x, **kw),
        "percentage_below": lambda **kw: m.percentage_below(x, 2.0, **kw),
        "precision": lambda **kw: m.precision(b, b, **kw),
        "precision_at_k": lambda **kw: m.precision_at_k(labels, scores, 2, **kw),
        "precision_at_thresholds": lambda **kw: m.precision_at_thresholds(b, p, [0.5], **kw),
        "precision_at_top_k": lambda **kw: m.precision_at_top_k(labels, labels, **kw),
        "recall": lambda **kw: m.recall(b, b, **kw),
        "recall_at_k": lambda **kw: m.recall_at_k(labels, scores, 2, **kw),
        "recall_at_thresholds": lambda **kw: m.recall_at_thresholds(b, p, [0.5], **kw),
        "recall_at_top_k": lambda **kw: m.recall_at_top_k(labels, labels, **kw),
        "root_mean_squared_error": lambda **kw: m.root_mean_squared_error(x, x, **kw),
        "sensitivity_at_specificity": lambda **kw: m.sensitivity_at_specificity(b, p, 0.5, **kw),
        "sparse_average_precision_at_k": lambda **kw: m.sparse_average_precision_at_k(
            labels, scores, 2, **kw),
        "sparse_precision_at_k": lambda **kw: m.sparse_precision_at_k(labels, scores, 2, **kw),
        "specificity_at_sensitivity": lambda **kw: m.specificity_at_sensitivity(b, p, 0.5, **kw),
        "true_negatives": lambda **kw: m.true_negatives(b, b, **kw),
        "true_negatives_at_thresholds": lambda **kw: m.true_negatives_at_thresholds(
            b, p, [0.8], **kw),
        "true_positives": lambda **kw: m.true_positives(b, b, **kw),
        "true_positives_at_thresholds": lambda **kw: m.true_positives_at_thresholds(
            b, p, [0.5], **kw),
    }


def test_the_namespace_is_tfs():
    assert sorted(n for n in dir(tf.metrics) if not n.startswith("_")
                  and callable(getattr(tf.metrics, n))) == TF_NAMES
    assert all(getattr(tf.metrics, n).__doc__ for n in TF_NAMES)


@pytest.mark.parametrize("name", TF_NAMES)
def test_collections_state_and_reset(name):
    with tf.Graph().as_default():
        value, update = _calls()[name](metrics_collections=["values"],
                                       updates_collections=["updates"])
        assert tf.get_collection("values") == [value]
        assert tf.get_collection("updates") == [update]
        state = tf.local_variables()
        assert state and state == tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)
        assert not tf.global_variables()
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            before = sess.run(state)
            sess.run(update)
            sess.run(update)
            after = sess.run(state)
            sess.run(tf.variables_initializer(state))
            reset = sess.run(state)
        assert all(np.all(v == 0) for v in before + reset)
        assert any(np.any(v != 0) for v in after)


ALWAYS_CHECKED = [n for n in TF_NAMES if n != "recall_at_top_k"]  # TF does not check that one


@pytest.mark.parametrize("name", ALWAYS_CHECKED)
def test_eager_execution_is_refused(monkeypatch, name):
    monkeypatch.setattr(metrics_util, "executing_eagerly", lambda: True)
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="is not supported when "
                                                                    "eager execution is enabled"):
        _calls()[name]()
