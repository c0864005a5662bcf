"""tf.metrics counts, precision and recall at thresholds: streamed against NumPy, with TF's
names, the [0, 1] check on predictions and shape errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.metrics.thresholds import confusion_counts_at_thresholds

RNG = np.random.RandomState(3)
THRESHOLDS = [0.0, 0.25, 0.5, 0.9, 1.0]
BATCHES = [dict(labels=RNG.uniform(size=(6, 2)) > 0.5,
                predictions=np.round(RNG.uniform(size=(6, 2)), 1).astype(np.float32),
                w=RNG.uniform(size=(6, 1)).astype(np.float32))
           for _ in range(3)]


def counts(labels, predictions, w, thresholds=THRESHOLDS):
    """tp, fn, tn, fp per threshold: a prediction is positive when strictly above it."""
    w = np.broadcast_to(w, predictions.shape).ravel()
    labels, predictions = labels.ravel().astype(bool), predictions.ravel()
    above = predictions[None, :] > np.asarray(thresholds, np.float32)[:, None]
    return {"tp": ((labels & above) * w).sum(1), "fn": ((labels & ~above) * w).sum(1),
            "tn": ((~labels & ~above) * w).sum(1), "fp": ((~labels & above) * w).sum(1)}


@pytest.mark.parametrize("metric, key", [
    (tf.metrics.true_positives_at_thresholds, "tp"),
    (tf.metrics.false_negatives_at_thresholds, "fn"),
    (tf.metrics.true_negatives_at_thresholds, "tn"),
    (tf.metrics.false_positives_at_thresholds, "fp"),
])
def test_counts_at_thresholds(stream, kind, metric, key):
    stream.check(lambda d: metric(d["labels"], d["predictions"], THRESHOLDS, d["w"]), BATCHES,
                 lambda **seen: counts(**seen)[key], kind)


@pytest.mark.parametrize("metric, other", [
    (tf.metrics.precision_at_thresholds, "fp"),
    (tf.metrics.recall_at_thresholds, "fn"),
])
def test_precision_and_recall_at_thresholds(stream, kind, metric, other):
    def reference(**seen):
        c = counts(**seen)
        return c["tp"] / (1e-7 + c["tp"] + c[other])
    stream.check(lambda d: metric(d["labels"], d["predictions"], THRESHOLDS, d["w"]), BATCHES,
                 reference, kind)


def test_unweighted_float64_predictions(stream):
    batches = [dict(labels=b["labels"], predictions=b["predictions"].astype(np.float64))
               for b in BATCHES]
    stream.check(lambda d: tf.metrics.precision_at_thresholds(
        d["labels"], d["predictions"], [0.3]),
        batches, lambda labels, predictions: (lambda c: c["tp"] / (1e-7 + c["tp"] + c["fp"]))(
            counts(labels, predictions, 1.0, [0.3])))


def test_names_like_tf():
    with tf.Graph().as_default():
        p, p_update = tf.metrics.precision_at_thresholds([True], [0.5], [0.5])
        tp, tp_update = tf.metrics.true_positives_at_thresholds([True], [0.5], [0.5, 0.7])
        assert (p.op.name, p_update.op.name) == ("precision_at_thresholds/precision_value",
                                                 "precision_at_thresholds/precision_update_op")
        assert (tp.op.name, tp_update.op.type, tp.shape.as_list()) == (
            "true_positives/Identity", "AssignAdd", [2])
        assert [v.op.name for v in tf.local_variables()] == [
            "precision_at_thresholds/true_positives", "precision_at_thresholds/false_positives",
            "true_positives/true_positives"]


def test_predictions_outside_zero_one_are_refused():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"predictions must be in"):
            tf.metrics.recall_at_thresholds([True], [1.5], [0.5])
        x = tf.placeholder(tf.float32, [None])
        _, update = tf.metrics.false_positives_at_thresholds([True, False], x, [0.5])
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            np.testing.assert_array_equal(sess.run(update, {x: [0.2, 0.7]}), [1.0])
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"predictions must be in"):
                sess.run(update, {x: [0.2, -0.1]})


def test_shape_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="incompatible"):
            tf.metrics.true_negatives_at_thresholds([True, False], [0.5], [0.5])
        with pytest.raises(ValueError, match="weights can not be broadcast to values. Mismatch "
                                             "at dim 0"):
            tf.metrics.true_positives_at_thresholds([True], [0.5], [0.5], weights=[1.0, 2.0])
        with pytest.raises(ValueError, match="Invalid key: xx"):
            confusion_counts_at_thresholds([True], [0.5], [0.5], includes=("tp", "xx"))
