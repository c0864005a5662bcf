"""tf.metrics.mean_iou and mean_per_class_accuracy streamed against NumPy, and
tf.confusion_matrix (the composite they build on) with its checks."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(9)
C = 4
BATCHES = [dict(labels=RNG.randint(0, C, (6, 2)).astype(np.int64),
                predictions=RNG.randint(0, C, (6, 2)).astype(np.int32),
                w=RNG.uniform(size=(6, 2)).astype(np.float32))
           for _ in range(3)]


def _confusion(labels, predictions, w=None, n=C):
    cm = np.zeros((n, n))
    np.add.at(cm, (labels.ravel(), predictions.ravel()), 1.0 if w is None else w.ravel())
    return cm


def _mean_iou(labels, predictions, w):
    cm = _confusion(labels, predictions, w)
    diag = np.diag(cm)
    denominator = cm.sum(0) + cm.sum(1) - diag
    valid = denominator != 0
    return (diag[valid] / denominator[valid]).sum() / valid.sum() if valid.any() else 0.0


def test_mean_iou(stream, kind):
    stream.check(lambda d: tf.metrics.mean_iou(d["labels"], d["predictions"], C, d["w"]),
                 BATCHES, _mean_iou, kind, update_reference=_confusion)


def test_mean_iou_unweighted_with_absent_classes(stream):
    batches = [dict(labels=b["labels"] % 2, predictions=b["predictions"] % 2) for b in BATCHES]
    stream.check(lambda d: tf.metrics.mean_iou(d["labels"], d["predictions"], C), batches,
                 lambda labels, predictions: _mean_iou(labels, predictions, None),
                 update_reference=lambda labels, predictions: _confusion(labels, predictions))


def _per_class_accuracy(labels, predictions, w):
    w = np.ones(labels.shape) if w is None else w
    total = np.bincount(labels.ravel(), w.ravel(), minlength=C)
    right = np.bincount(labels.ravel(), (w * (labels == predictions)).ravel(), minlength=C)
    return np.where(total > 0, right / np.where(total > 0, total, 1), 0.0)


def test_mean_per_class_accuracy(stream, kind):
    stream.check(lambda d: tf.metrics.mean_per_class_accuracy(d["labels"], d["predictions"], C,
                                                              d["w"]),
                 BATCHES, lambda **seen: _per_class_accuracy(**seen).mean(), kind,
                 update_reference=_per_class_accuracy)


def test_names_and_variables_like_tf():
    with tf.Graph().as_default():
        iou, iou_update = tf.metrics.mean_iou(tf.constant([0, 1]), tf.constant([1, 1]), 2)
        acc, acc_update = tf.metrics.mean_per_class_accuracy(tf.constant([0, 1]),
                                                             tf.constant([1, 1]), 2)
        assert [(v.op.name, v.dtype.base_dtype, v.shape.as_list())
                for v in tf.local_variables()] == [
            ("mean_iou/total_confusion_matrix", tf.float64, [2, 2]),
            ("mean_accuracy/total", tf.float32, [2]), ("mean_accuracy/count", tf.float32, [2])]
        assert (iou.op.type, iou.dtype, iou_update.op.type) == ("Select", tf.float32,
                                                               "AssignAdd")
        assert (acc.op.name, acc_update.op.name) == ("mean_accuracy/mean_accuracy",
                                                     "mean_accuracy/update_op")


def test_labels_out_of_range():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="`labels` out of bound"):
            tf.metrics.mean_iou(tf.constant([1, 5]), tf.constant([1, 2]), 3)
        with pytest.raises(ValueError, match="incompatible"):
            tf.metrics.mean_iou(tf.constant([1, 2]), tf.constant([1, 2, 0]), 3)
        with pytest.raises(ValueError, match="incompatible"):
            tf.metrics.mean_per_class_accuracy(tf.constant([1, 2]), tf.constant([1, 2, 0]), 3)


# --- tf.confusion_matrix ----------------------------------------------------------------------
def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.float32, tf.float64])
def test_confusion_matrix(dtype):
    labels, predictions = RNG.randint(0, 5, 20), RNG.randint(0, 5, 20)
    weights = RNG.uniform(size=20).astype(dtype.as_numpy_dtype)
    with tf.Graph().as_default():
        plain = tf.confusion_matrix(labels, predictions, dtype=dtype)
        weighted = tf.confusion_matrix(labels, predictions, 7, dtype=dtype, weights=weights,
                                       name="cm")
        assert (plain.op.type, plain.op.name, plain.dtype) == ("ScatterNd",
                                                               "confusion_matrix/ScatterNd",
                                                               dtype)
        assert weighted.op.name == "cm/ScatterNd"
        got_plain, got_weighted = _run([plain, weighted])
    n = max(labels.max(), predictions.max()) + 1
    np.testing.assert_array_equal(got_plain, _confusion(labels, predictions, n=n))
    np.testing.assert_allclose(got_weighted, _confusion(labels, predictions, weights, n=7),
                               rtol=1e-6)


def test_confusion_matrix_squeezes_and_casts():
    with tf.Graph().as_default():
        cm = tf.confusion_matrix([[1], [2], [2]], tf.constant([0.0, 2.7, 1.0]), num_classes=3)
        empty = tf.confusion_matrix(tf.constant([], tf.int64), tf.constant([], tf.int64), 2)
        np.testing.assert_array_equal(_run(cm), [[0, 0, 0], [1, 0, 0], [0, 1, 1]])
        np.testing.assert_array_equal(_run(empty), np.zeros((2, 2)))


def test_confusion_matrix_errors():
    with tf.Graph().as_default():
        for labels, predictions, message in [([1, -2], [2, 2], "`labels` contains negative"),
                                             ([1, 2], [2, -2], "`predictions` contains neg"),
                                             ([1, 4], [2, 2], "`labels` out of bound"),
                                             ([1, 2], [4, 2], "`predictions` out of bound")]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                tf.confusion_matrix(labels, predictions, num_classes=4)
        with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
            tf.confusion_matrix([1, 2, 3], [2, 2, 3], weights=[0.5, 1.5])
        with pytest.raises(ValueError, match="must be equal"):
            tf.confusion_matrix([1, 2, 3], [2, 2])
        labels = tf.placeholder(tf.int32, [None])
        cm = tf.confusion_matrix(labels, [2, 2], num_classes=3)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(cm, {labels: [0, 2]})[:, 2], [1, 0, 1])
            with pytest.raises(tf.errors.InvalidArgumentError, match="contains negative"):
                sess.run(cm, {labels: [-1, 2]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of bound"):
                sess.run(cm, {labels: [3, 2]})
