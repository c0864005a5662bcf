"""tf.metrics precision/recall/average precision @k with dense and sparse labels, class ids and
weights, streamed against a NumPy reference written with Python sets; names and errors as TF."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(13)
C = 6  # classes; label value C is out of range, -1 pads dense rows


def _batch(rows=5):
    return dict(labels=RNG.randint(-1, C + 1, (rows, 3)).astype(np.int64),
                scores=RNG.uniform(size=(rows, C)).astype(np.float32),
                w=RNG.uniform(size=(rows,)).astype(np.float32))


BATCHES = [_batch() for _ in range(3)]


def _top_k(scores, k):
    return np.argsort(-scores, axis=-1, kind="stable")[..., :k]


def _label_rows(labels, sparse):
    """Each row's labels as a list: dense rows keep every value, sparse ones only ids >= 0
    (the entries the sparse test labels hold)."""
    return [[v for v in row if v >= 0] if sparse else list(row) for row in labels]


def _set_counts(labels, top, class_id, sparse):
    tp, fp, fn = [], [], []
    for row, predicted in zip(_label_rows(labels, sparse), top):
        want, got = set(row), set(predicted.tolist())
        if class_id is not None:
            want, got = want & {class_id}, got & {class_id}
        tp.append(len(want & got))
        fp.append(len(got - want))
        fn.append(len(want - got))
    return np.array(tp, float), np.array(fp, float), np.array(fn, float)


def _fraction_reference(kind, k, class_id=None, sparse=False, weighted=False):
    def reference(labels, scores, w):
        tp, fp, fn = _set_counts(labels, _top_k(scores, k), class_id, sparse)
        weights = w if weighted else 1.0
        tp, other = (tp * weights).sum(), ((fp if kind == "precision" else fn) * weights).sum()
        with np.errstate(invalid="ignore"):
            return tp / (tp + other)
    return reference


def _sparse(labels):
    """The ids >= 0 of dense labels as a SparseTensor of the same dense shape."""
    indices = tf.where(labels >= 0)
    return tf.SparseTensor(indices, tf.gather_nd(labels, indices),
                           tf.shape(labels, out_type=tf.int64))


@pytest.mark.parametrize("metric, name", [(tf.metrics.precision_at_k, "precision"),
                                          (tf.metrics.sparse_precision_at_k, "precision"),
                                          (tf.metrics.recall_at_k, "recall")])
@pytest.mark.parametrize("k, class_id, sparse, weighted", [
    (1, None, False, False), (3, None, False, True), (2, 4, False, True),
    (3, None, True, False), (4, 1, True, True), (2, 0, False, False)])
def test_precision_and_recall_at_k(stream, metric, name, k, class_id, sparse, weighted):
    def build(d):
        labels = _sparse(d["labels"]) if sparse else d["labels"]
        return metric(labels, d["scores"], k, class_id=class_id,
                      weights=d["w"] if weighted else None)
    stream.check(build, BATCHES, _fraction_reference(name, k, class_id, sparse, weighted))


@pytest.mark.parametrize("metric, name", [(tf.metrics.precision_at_top_k, "precision"),
                                          (tf.metrics.recall_at_top_k, "recall")])
def test_at_top_k_from_ids_with_repeats(stream, kind, metric, name):
    """Repeated predicted ids and labels count once each, as in a set."""
    batches = [dict(labels=b["labels"], ids=np.sort(_top_k(b["scores"], 4) % 4, axis=1),
                    w=b["w"]) for b in BATCHES]

    def reference(labels, ids, w):
        tp, fp, fn = _set_counts(labels, ids, None, False)
        other = fp if name == "precision" else fn
        with np.errstate(invalid="ignore"):
            return (tp * w).sum() / ((tp + other) * w).sum()
    stream.check(lambda d: metric(d["labels"], d["ids"], weights=d["w"]), batches, reference,
                 kind)


def test_single_label_per_example_is_expanded(stream, kind):
    batches = [dict(labels=np.abs(b["labels"][:, 0]), scores=b["scores"], w=b["w"])
               for b in BATCHES]
    stream.check(lambda d: tf.metrics.recall_at_k(d["labels"], d["scores"], 2), batches,
                 lambda labels, scores, w: _fraction_reference("recall", 2)(
                     labels[:, None], scores, w), kind)


def _average_precision_reference(k, sparse=False, weighted=False):
    def reference(labels, scores, w):
        top = _top_k(scores, k)
        present = labels >= 0  # the entries of the sparse test labels
        labels = np.where(labels >= C, -1, labels)
        ap = []
        for row, held, predicted in zip(labels, present, top):
            relevant = np.isin(predicted, row[row >= 0]).astype(float)
            precision_sum = (relevant * np.cumsum(relevant) / np.arange(1, k + 1)).sum()
            # Dense rows count their ids in range; sparse ones their distinct entries, out of
            # range ones included.
            count = len(set(row[held])) if sparse else (row >= 0).sum()
            with np.errstate(invalid="ignore", divide="ignore"):
                ap.append(precision_sum / min(count, k))
        weights = w if weighted else np.ones(len(ap))
        return (np.array(ap) * weights).sum() / weights.sum() if len(ap) else 0.0
    return reference


@pytest.mark.parametrize("k, weighted", [(1, False), (3, True), (6, False)])
def test_average_precision_at_k(stream, k, weighted):
    batches = [dict(labels=np.maximum(b["labels"], 0), scores=b["scores"], w=b["w"])
               for b in BATCHES]
    stream.check(lambda d: tf.metrics.average_precision_at_k(
        d["labels"], d["scores"], k, weights=d["w"] if weighted else None),
        batches, _average_precision_reference(k, weighted=weighted))


@pytest.mark.parametrize("kind", ["static", "batch"])
def test_average_precision_counts_out_of_range_sparse_labels(stream, kind):
    """Sparse ids >= num_classes never match, yet count among the example's labels. (Scores
    of unknown rank are refused, as in TF: k must be static.)"""
    batches = [dict(labels=np.where(b["labels"] < 0, C + 1, b["labels"]), scores=b["scores"],
                    w=b["w"]) for b in BATCHES]
    stream.check(lambda d: tf.metrics.sparse_average_precision_at_k(
        _sparse(d["labels"]), d["scores"], 2), batches,
        _average_precision_reference(2, sparse=True), kind)


def test_average_precision_is_nan_for_an_example_without_labels():
    with tf.Graph().as_default():
        value, update = tf.metrics.average_precision_at_k(
            tf.constant([[-1, -1], [1, 2]], tf.int64), [[0.1, 0.5, 0.2], [0.1, 0.5, 0.2]], 2)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert np.isnan(sess.run(update)) and np.isnan(sess.run(value))


def test_rank_one_and_rank_three_inputs(stream):
    """One example as vectors (average precision), and a [2, rows] batch of examples."""
    batches = [dict(labels=np.maximum(b["labels"][0], 0), scores=b["scores"][0], w=b["w"])
               for b in BATCHES]
    stream.check(lambda d: tf.metrics.average_precision_at_k(d["labels"], d["scores"], 3),
                 [dict(labels=b["labels"], scores=b["scores"]) for b in batches],
                 lambda labels, scores: _average_precision_reference(3)(
                     labels.reshape(-1, 3), scores.reshape(-1, C), np.ones(len(labels) // 3)))
    deep = [dict(labels=b["labels"][:4].reshape(2, 2, 3), scores=b["scores"][:4].reshape(
        2, 2, C)) for b in BATCHES]
    stream.check(lambda d: tf.metrics.precision_at_k(d["labels"], d["scores"], 2), deep,
                 lambda labels, scores: _fraction_reference("precision", 2)(
                     labels.reshape(-1, 3), scores.reshape(-1, C), None))


def test_names_and_variables_like_tf():
    with tf.Graph().as_default():
        labels = tf.constant([[1, 2]], tf.int64)
        scores = tf.constant([[0.1, 0.5, 0.2]])
        p, p_update = tf.metrics.precision_at_k(labels, scores, 2, class_id=1)
        r, r_update = tf.metrics.recall_at_top_k(labels, tf.constant([[0, 1]]))
        ap, ap_update = tf.metrics.average_precision_at_k(labels, scores, 2)
        assert [v.op.name for v in tf.local_variables()] == [
            "precision_at_2_class1/true_positive_at_2_class1",
            "precision_at_2_class1/false_positive_at_2_class1",
            "recall_at_k/true_positive_at_k", "recall_at_k/false_negative_at_k",
            "average_precision_at_2/max_1", "average_precision_at_2/total"]
        assert all(v.dtype.base_dtype == tf.float64 for v in tf.local_variables())
        assert [t.op.name for t in (p, p_update, r, r_update, ap, ap_update)] == [
            "precision_at_2_class1", "precision_at_2_class1/update", "recall_at_k",
            "recall_at_k/update", "average_precision_at_2/mean", "average_precision_at_2"]


def test_shape_and_type_errors():
    with tf.Graph().as_default():
        ids = tf.constant([[1, 3]] * 3, tf.int64)
        with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
            tf.metrics.precision_at_top_k(tf.constant([1, 2], tf.int64),
                                          tf.constant([1, 3], tf.int64))
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but "
                                             r"are 3 and 1. Shapes are \[3\] and \[1\]."):
            tf.metrics.precision_at_top_k(tf.constant([[1, 2]], tf.int64), ids)
        with pytest.raises(ValueError, match=r"Unexpected labels shape \(3, 1, 2\) for "
                                             r"predictions shape \(3, 2\)"):
            tf.metrics.recall_at_top_k(tf.constant([[[1, 2]]] * 3, tf.int64), ids)
        with pytest.raises(TypeError, match="Types don't match, <dtype: 'int64'> vs "
                                            "<dtype: 'int32'>."):
            tf.metrics.precision_at_k(tf.constant([[1]], tf.int32), [[0.1, 0.2]], 1)
        with pytest.raises(ValueError, match=r"Invalid k=0. `k` should be >= 1."):
            tf.metrics.average_precision_at_k(tf.constant([[1]], tf.int64), [[0.1, 0.2]], 0)
        with pytest.raises(ValueError, match="as_list.. is not defined on an unknown"):
            tf.metrics.average_precision_at_k(tf.constant([[1]], tf.int64),
                                              tf.placeholder(tf.float32), 2)
        with pytest.raises(ValueError, match="input must have last dimension >= k = 3"):
            tf.metrics.recall_at_k(tf.constant([[1]], tf.int64), [[0.1, 0.2]], 3)
        with pytest.raises(ValueError, match="weights can not be broadcast to values"):
            tf.metrics.precision_at_top_k(tf.constant([[1, 2]] * 3, tf.int64), ids,
                                          weights=[1.0, 2.0])


def test_mismatched_rows_fail_when_run():
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int64, [None, None])
        ids = tf.placeholder(tf.int64, [None, None])
        _, update = tf.metrics.recall_at_top_k(labels, ids)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(update, {labels: [[1, 2]], ids: [[1, 3]]}) == 0.5
            with pytest.raises(tf.errors.InvalidArgumentError, match="Mismatched shapes"):
                sess.run(update, {labels: [[1, 2]], ids: [[1, 3]] * 3})
