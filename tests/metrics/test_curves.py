"""tf.metrics.auc (ROC and PR, every summation method, given thresholds) and sensitivity /
specificity at a target rate, streamed against a NumPy transcription of TF's formulas."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(5)
BATCHES = [dict(labels=RNG.uniform(size=(8, 2)) > 0.4,
                predictions=RNG.uniform(size=(8, 2)).astype(np.float32),
                w=RNG.uniform(size=(8, 1)).astype(np.float32))
           for _ in range(3)]
EPS = 1e-7


def _thresholds(num, top=1.0 + EPS):
    return [-EPS] + [(i + 1) / (num - 1) for i in range(num - 2)] + [top]


def _counts(labels, predictions, w, thresholds):
    w = np.broadcast_to(w, predictions.shape).ravel().astype(np.float64)
    labels, predictions = labels.ravel(), predictions.ravel()
    above = predictions[None, :] > np.asarray(thresholds, np.float32)[:, None]
    return (((labels & above) * w).sum(1), ((labels & ~above) * w).sum(1),
            ((~labels & ~above) * w).sum(1), ((~labels & above) * w).sum(1))


def _div_no_nan(a, b):
    return np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b))


def _interpolated_pr_auc(tp, fp, fn):
    """Davis & Goadrich's interpolation, as TF's interpolate_pr_auc."""
    dtp = tp[:-1] - tp[1:]
    p = tp + fp
    slope = _div_no_nan(dtp, np.maximum(p[:-1] - p[1:], 0))
    intercept = tp[1:] - slope * p[1:]
    ratio = np.where((p[:-1] > 0) & (p[1:] > 0), _div_no_nan(p[:-1], np.maximum(p[1:], 0)), 1)
    return _div_no_nan(slope * (dtp + intercept * np.log(ratio)),
                       np.maximum(tp[1:] + fn[1:], 0)).sum()


def auc_reference(curve="ROC", method="trapezoidal", num=200, thresholds=None):
    if thresholds is not None:
        thresholds = [-EPS] + sorted(thresholds) + [1.0 + EPS]
    else:
        thresholds = _thresholds(num)

    def reference(labels, predictions, w):
        tp, fn, tn, fp = _counts(labels, predictions, w, thresholds)
        if curve == "PR" and method == "careful_interpolation":
            return _interpolated_pr_auc(tp, fp, fn)
        rec = (tp + 1e-6) / (tp + fn + 1e-6)
        if curve == "ROC":
            x, y = fp / (fp + tn + 1e-6), rec
        else:
            x, y = rec, (tp + 1e-6) / (tp + fp + 1e-6)
        height = {"trapezoidal": (y[:-1] + y[1:]) / 2, "careful_interpolation":
                  (y[:-1] + y[1:]) / 2, "minoring": np.minimum(y[:-1], y[1:]),
                  "majoring": np.maximum(y[:-1], y[1:])}[method]
        return ((x[:-1] - x[1:]) * height).sum()
    return reference


@pytest.mark.parametrize("curve, method", [
    ("ROC", "trapezoidal"), ("ROC", "careful_interpolation"), ("ROC", "minoring"),
    ("ROC", "majoring"), ("PR", "trapezoidal"), ("PR", "careful_interpolation"),
    ("PR", "minoring"), ("PR", "majoring"),
])
def test_auc(stream, curve, method):
    stream.check(lambda d: tf.metrics.auc(d["labels"], d["predictions"], d["w"], curve=curve,
                                          summation_method=method),
                 BATCHES, auc_reference(curve, method), rtol=1e-4, atol=1e-5)


def test_auc_dynamic_shapes_few_thresholds(stream, kind):
    stream.check(lambda d: tf.metrics.auc(d["labels"], d["predictions"], num_thresholds=7),
                 BATCHES, lambda labels, predictions, w: auc_reference(num=7)(
                     labels, predictions, 1.0), kind, rtol=1e-4, atol=1e-5)


def test_auc_given_thresholds(stream):
    stream.check(lambda d: tf.metrics.auc(d["labels"], d["predictions"], curve="PR",
                                          thresholds=[0.8, 0.3, 0.5]),
                 BATCHES, lambda labels, predictions, w: auc_reference(
                     "PR", thresholds=[0.8, 0.3, 0.5])(labels, predictions, 1.0),
                 rtol=1e-4, atol=1e-5)


def test_auc_perfect_ranking_is_one():
    with tf.Graph().as_default():
        value, update = tf.metrics.auc([False, False, True, True], [0.1, 0.2, 0.8, 0.9])
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            np.testing.assert_allclose(sess.run(update), 1.0, atol=1e-5)
            assert value.op.name == "auc/value" and len(tf.local_variables()) == 4


def test_auc_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Curve must be either ROC or PR. Curve XY is"):
            tf.metrics.auc([True], [0.5], curve="XY")
        with pytest.raises(ValueError, match="Invalid summation_method: XY"):
            tf.metrics.auc([True], [0.5], summation_method="XY")
        with pytest.raises(tf.errors.InvalidArgumentError, match="predictions must be in"):
            tf.metrics.auc([True], [1.5])


def _sensitivity_at_specificity(target, num=200):
    def reference(labels, predictions, w):
        tp, fn, tn, fp = _counts(labels, predictions, w, _thresholds(num))
        tp, fn, tn, fp = (np.float32(c) for c in (tp, fn, tn, fp))
        index = np.argmin(np.abs(tn / (tn + fp + np.float32(EPS)) - np.float32(target)))
        return tp[index] / (tp[index] + fn[index] + EPS)
    return reference


def _specificity_at_sensitivity(target, num=200):
    def reference(labels, predictions, w):
        tp, fn, tn, fp = _counts(labels, predictions, w, _thresholds(num, 1.0 - EPS))
        tp, fn, tn, fp = (np.float32(c) for c in (tp, fn, tn, fp))
        distance = np.abs(tp / (tp + fn + np.float32(EPS)) - np.float32(target))
        index = np.flatnonzero(distance == distance.min())[-1]
        return tn[index] / (tn[index] + fp[index] + EPS)
    return reference


@pytest.mark.parametrize("target", [0.0, 0.35, 0.8, 1.0])
def test_sensitivity_at_specificity(stream, target):
    stream.check(lambda d: tf.metrics.sensitivity_at_specificity(
        d["labels"], d["predictions"], target, d["w"], num_thresholds=30),
        BATCHES, _sensitivity_at_specificity(target, 30), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", [0.0, 0.5, 0.9, 1.0])
def test_specificity_at_sensitivity(stream, kind, target):
    stream.check(lambda d: tf.metrics.specificity_at_sensitivity(
        d["labels"], d["predictions"], target), BATCHES,
        lambda labels, predictions, w: _specificity_at_sensitivity(target)(
            labels, predictions, 1.0), kind, rtol=1e-4, atol=1e-5)


def test_rate_out_of_range():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"`specificity` must be in the range \[0, 1\]. "
                                             "Currently, `specificity` got 1.5."):
            tf.metrics.sensitivity_at_specificity([True], [0.5], 1.5)
        with pytest.raises(ValueError, match=r"Currently, `sensitivity` is -0.5."):
            tf.metrics.specificity_at_sensitivity([True], [0.5], -0.5)
