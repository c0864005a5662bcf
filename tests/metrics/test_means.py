"""tf.metrics running means: mean, mean_tensor, accuracy, percentage_below and the regression
errors, streamed over several batches against NumPy, with TF's variables, names, collections,
weight checks and errors."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(7)


def _batches(n=3, rows=4, cols=3):
    return [dict(x=RNG.randn(rows, cols).astype(np.float32),
                 y=RNG.randn(rows, cols).astype(np.float32),
                 w=(RNG.uniform(size=(rows, 1)) * (RNG.uniform(size=(rows, 1)) > 0.3))
                 .astype(np.float32))
            for _ in range(n)]


BATCHES = _batches()


def _weighted_mean(values, weights):
    weights = np.broadcast_to(weights, values.shape).astype(np.float64)
    total = weights.sum()
    return (values * weights).sum() / total if total else 0.0


def _mean(x, y, w):
    return x.mean() if x.size else 0.0


def test_mean_unweighted(stream, kind):
    stream.check(lambda d: tf.metrics.mean(d["x"]), BATCHES, _mean, kind)


def test_mean_weighted_broadcasts_weights(stream, kind):
    stream.check(lambda d: tf.metrics.mean(d["x"], d["w"]), BATCHES,
                 lambda x, y, w: _weighted_mean(x, w), kind)


def test_mean_weights_of_lower_rank_are_expanded(stream):
    """[rows] weights for [rows, 1] values: the weights get the missing last dimension."""
    batches = [dict(x=b["x"][:, :1], w=b["w"][:, 0]) for b in BATCHES]
    stream.check(lambda d: tf.metrics.mean(d["x"], d["w"]), batches,
                 lambda x, w: _weighted_mean(x, w[:, None]))


def test_mean_scalar_weight_and_integer_values(stream):
    batches = [dict(x=(b["x"] * 10).astype(np.int32)) for b in BATCHES]
    stream.check(lambda d: tf.metrics.mean(d["x"], 2.0), batches,
                 lambda x: x.mean() if x.size else 0.0)


def test_mean_tensor_is_elementwise(stream):
    """Batches of one fixed shape: the value is the element-wise weighted mean over batches."""
    def reference(x, y, w):
        x, w = x.reshape(-1, 4, 3), np.broadcast_to(w.reshape(-1, 4, 1), (len(w) // 4, 4, 3))
        total = w.sum(0)
        return np.where(total > 0, (x * w).sum(0) / np.where(total > 0, total, 1), 0)
    updates, final, reset = stream.session_run(lambda d: tf.metrics.mean_tensor(d["x"], d["w"]),
                                               BATCHES, "static")
    for i, got in enumerate(updates):
        seen = {k: np.concatenate([b[k] for b in BATCHES[:i + 1]]) for k in BATCHES[0]}
        np.testing.assert_allclose(got, reference(**seen), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(final, updates[-1])
    np.testing.assert_array_equal(reset, np.zeros((4, 3)))


def test_mean_tensor_needs_a_fully_defined_shape():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="partially known"):
        tf.metrics.mean_tensor(tf.placeholder(tf.float32, [None, 2]))


def test_accuracy(stream, kind):
    batches = [dict(labels=RNG.randint(0, 3, (5, 1)), predictions=RNG.randint(0, 3, (5,)),
                    w=RNG.uniform(size=(5,)).astype(np.float32)) for _ in range(3)]
    stream.check(lambda d: tf.metrics.accuracy(d["labels"], d["predictions"], d["w"]), batches,
                 lambda labels, predictions, w: _weighted_mean(
                     (labels[:, 0] == predictions).astype(np.float64), w), kind)


def test_accuracy_casts_predictions_to_the_labels_dtype(stream):
    batches = [dict(labels=(b["x"] > 0), predictions=(b["y"] > 0).astype(np.float32))
               for b in BATCHES]
    stream.check(lambda d: tf.metrics.accuracy(d["labels"], d["predictions"]), batches,
                 lambda labels, predictions: (labels == (predictions > 0)).mean()
                 if labels.size else 0.0)


def test_percentage_below(stream):
    stream.check(lambda d: tf.metrics.percentage_below(d["x"], 0.25, d["w"]), BATCHES,
                 lambda x, y, w: _weighted_mean((x < 0.25).astype(np.float64), w))


@pytest.mark.parametrize("metric, error", [
    (tf.metrics.mean_absolute_error, lambda x, y: np.abs(y - x)),
    (tf.metrics.mean_squared_error, lambda x, y: (x - y) ** 2),
])
def test_errors(stream, kind, metric, error):
    stream.check(lambda d: metric(d["x"], d["y"], d["w"]), BATCHES,
                 lambda x, y, w: _weighted_mean(error(x, y), w), kind)


def test_root_mean_squared_error(stream):
    stream.check(lambda d: tf.metrics.root_mean_squared_error(d["x"], d["y"]), BATCHES,
                 lambda x, y, w: np.sqrt(((x - y) ** 2).mean()) if x.size else 0.0)


def test_mean_relative_error_counts_zero_normalizers_as_zero(stream):
    def build(d):
        return tf.metrics.mean_relative_error(d["x"], d["y"], tf.round(d["x"]), d["w"])

    def reference(x, y, w):
        norm = np.round(x)
        rel = np.where(norm == 0, 0.0, np.abs(x - y) / np.where(norm == 0, 1, norm))
        return _weighted_mean(rel, w)
    stream.check(build, BATCHES, reference)


def test_mean_cosine_distance(stream):
    def unit(a):
        return a / np.linalg.norm(a, axis=1, keepdims=True)
    batches = [dict(x=unit(b["x"]), y=unit(b["y"]), w=b["w"]) for b in BATCHES]
    stream.check(lambda d: tf.metrics.mean_cosine_distance(d["x"], d["y"], 1, d["w"]), batches,
                 lambda x, y, w: 1.0 - _weighted_mean((x * y).sum(1, keepdims=True), w))


# --- state, names and collections -------------------------------------------------------------
def test_variables_are_local_metric_variables_named_like_tf():
    with tf.Graph().as_default():
        value, update = tf.metrics.accuracy([1, 2], [1, 3])
        value2, update2 = tf.metrics.accuracy([1, 2], [1, 3])
        named, _ = tf.metrics.mean([1.0], name="my_mean")
        names = [v.op.name for v in tf.local_variables()]
        assert names == ["accuracy/total", "accuracy/count", "accuracy_1/total",
                         "accuracy_1/count", "my_mean/total", "my_mean/count"]
        assert tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == tf.local_variables()
        assert not tf.global_variables() and not tf.trainable_variables()
        assert (value.op.name, update.op.name) == ("accuracy/value", "accuracy/update_op")
        assert (value2.op.name, named.op.name) == ("accuracy_1/value", "my_mean/value")


def test_collections_receive_value_and_update():
    with tf.Graph().as_default():
        value, update = tf.metrics.root_mean_squared_error(
            [1.0, 2.0], [1.5, 2.0], metrics_collections=["m"], updates_collections=["u"])
        assert tf.get_collection("m") == [value] and tf.get_collection("u") == [update]
        value, update = tf.metrics.mean_cosine_distance(
            [[1.0, 0.0]], [[0.0, 1.0]], 1, metrics_collections="m2", updates_collections="u2")
        assert tf.get_collection("m2") == [value] and tf.get_collection("u2") == [update]


def test_variables_initializer_resets_only_the_given_metric():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        mean_a, update_a = tf.metrics.mean(x, name="a")
        mean_b, update_b = tf.metrics.mean(x, name="b")
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run([update_a, update_b], {x: [1.0, 3.0]})
            sess.run(update_a, {x: [8.0]})
            assert sess.run([mean_a, mean_b]) == [4.0, 2.0]
            sess.run(tf.variables_initializer(tf.local_variables("a/")))
            assert sess.run([mean_a, mean_b]) == [0.0, 2.0]


def test_value_before_any_update_is_zero():
    with tf.Graph().as_default():
        value, _ = tf.metrics.mean_squared_error([1.0], [2.0])
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(value) == 0.0


# --- errors -----------------------------------------------------------------------------------
def test_weights_that_cannot_broadcast_fail_at_build_time():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="weights can not be broadcast to values. Mismatch "
                                             "at dim 1"):
            tf.metrics.mean(tf.zeros([1, 3]), tf.ones([1, 2]))
        with pytest.raises(ValueError, match="values.rank=2. weights.rank=4"):
            tf.metrics.mean(tf.zeros([1, 3]), tf.ones([1, 3, 1, 1]))
        with pytest.raises(ValueError, match="Can not squeeze dim"):
            tf.metrics.mean(tf.zeros([1, 3]), tf.ones([1, 3, 2]))


def test_weights_that_cannot_broadcast_fail_when_run():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None])
        w = tf.placeholder(tf.float32, [None, None])
        _, update = tf.metrics.mean(x, w)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(update, {x: np.ones((2, 3)), w: np.full((2, 1), 2.0)}) == 1.0
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="weights can not be broadcast to values"):
                sess.run(update, {x: np.ones((2, 3)), w: np.ones((2, 2))})


def test_mismatched_labels_and_predictions():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Shapes \(2,\) and \(3,\) are incompatible"):
            tf.metrics.accuracy(tf.constant([1, 2, 3]), tf.constant([1, 2]))
        with pytest.raises(ValueError, match="incompatible"):
            tf.metrics.mean_relative_error([1.0, 2.0], [1.0, 2.0], [1.0, 2.0, 3.0])
