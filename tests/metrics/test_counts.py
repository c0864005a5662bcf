"""tf.metrics true/false positive/negative counts, precision and recall: streamed against NumPy,
with TF's variable names, value/update ops and weight-rank errors."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(11)
BATCHES = [dict(labels=RNG.uniform(size=(5, 3)) > 0.5,
                predictions=RNG.uniform(size=(5, 3)).astype(np.float32) > 0.4,
                w=RNG.uniform(size=(5, 1)).astype(np.float32))
           for _ in range(3)]

OUTCOMES = {
    tf.metrics.true_positives: (True, True),
    tf.metrics.false_positives: (False, True),
    tf.metrics.true_negatives: (False, False),
    tf.metrics.false_negatives: (True, False),
}


def _count(labels, predictions, w, want):
    hit = (labels == want[0]) & (predictions == want[1])
    return (hit * np.broadcast_to(w, hit.shape)).sum()


@pytest.mark.parametrize("metric", list(OUTCOMES), ids=lambda f: f.__name__)
def test_counts_weighted(stream, kind, metric):
    stream.check(lambda d: metric(d["labels"], d["predictions"], d["w"]), BATCHES,
                 lambda labels, predictions, w: _count(labels, predictions, w, OUTCOMES[metric]),
                 kind)


@pytest.mark.parametrize("metric", list(OUTCOMES), ids=lambda f: f.__name__)
def test_counts_cast_numbers_to_bool(stream, metric):
    """Nonzero labels and predictions of any dtype count as true."""
    batches = [dict(labels=b["labels"].astype(np.int32) * 3,
                    predictions=b["predictions"].astype(np.float32) * 0.5) for b in BATCHES]
    stream.check(lambda d: metric(d["labels"], d["predictions"]), batches,
                 lambda labels, predictions: _count(labels != 0, predictions != 0, 1.0,
                                                    OUTCOMES[metric]))


def _ratio(labels, predictions, w, other):
    tp = _count(labels, predictions, w, (True, True))
    n = _count(labels, predictions, w, other)
    return tp / (tp + n) if tp + n > 0 else 0.0


def test_precision(stream, kind):
    stream.check(lambda d: tf.metrics.precision(d["labels"], d["predictions"], d["w"]),
                 BATCHES, lambda labels, predictions, w: _ratio(labels, predictions, w,
                                                               (False, True)), kind)


def test_recall(stream, kind):
    stream.check(lambda d: tf.metrics.recall(d["labels"], d["predictions"], d["w"]),
                 BATCHES, lambda labels, predictions, w: _ratio(labels, predictions, w,
                                                               (True, False)), kind)


def test_precision_and_recall_are_zero_without_positives():
    with tf.Graph().as_default():
        p, p_update = tf.metrics.precision([True, False], [False, False])
        r, r_update = tf.metrics.recall([False, False], [True, False])
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run([p_update, r_update]) == [0.0, 0.0]


def test_names_and_ops_like_tf():
    with tf.Graph().as_default():
        value, update = tf.metrics.false_negatives([True], [False])
        assert (value.op.type, value.op.name) == ("Identity", "false_negatives/Identity")
        assert (update.op.type, update.dtype) == ("AssignAdd", tf.float32._as_ref)
        p, p_update = tf.metrics.precision([True], [False], name="prec")
        assert [v.op.name for v in tf.local_variables()] == [
            "false_negatives/count", "prec/true_positives/count", "prec/false_positives/count"]
        assert (p.op.name, p_update.op.name) == ("prec/value", "prec/update_op")


def test_weights_of_another_rank_are_refused():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Tensor Const:0 must have rank in \(0, 2\).  "
                                             r"Received rank 4, shape \(2, 3, 1, 1\)"):
            tf.metrics.true_positives(tf.ones([2, 3], tf.bool), tf.ones([2, 3], tf.bool),
                                      tf.constant(np.ones((2, 3, 1, 1))))


def test_weights_rank_checked_when_run():
    with tf.Graph().as_default():
        w = tf.placeholder(tf.float32)
        _, update = tf.metrics.true_positives([[True, True]], [[True, False]], w)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(update, {w: 2.0}) == 2.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="must have rank in"):
                sess.run(update, {w: np.ones((1, 1, 1, 1))})


def test_mismatched_shapes():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="incompatible"):
        tf.metrics.recall(tf.ones([3], tf.bool), tf.ones([2], tf.bool))
