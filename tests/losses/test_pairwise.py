"""tf.losses.mean_pairwise_squared_error against a pairwise NumPy reference (values checked
against TF 2.21), its weights, gradient and errors."""
import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.RandomState(0)
LABELS = RNG.rand(3, 4, 2).astype(np.float32)
PREDICTIONS = RNG.rand(3, 4, 2).astype(np.float32)


def _reference(labels, predictions, weights):
    """Mean over ordered pairs i != j of present elements of (d_i - d_j)^2, weighted, summed."""
    weights = np.broadcast_to(np.asarray(weights, np.float64), labels.shape)
    total = 0.0
    for d, w in zip((predictions - labels).reshape(len(labels), -1).astype(np.float64),
                    weights.reshape(len(labels), -1)):
        present = d[w != 0]
        n = present.size
        if n > 1:
            pairs = (present[:, None] - present[None, :]) ** 2
            total += pairs.sum() / (n * (n - 1)) * w[w != 0][0]
    return total


@pytest.mark.parametrize("weights", [1.0, [[[1.0]], [[0.0]], [[2.0]]], 0.0])
def test_value(weights):
    with tf.Graph().as_default():
        loss = tf.losses.mean_pairwise_squared_error(LABELS, PREDICTIONS, weights=weights)
        assert loss.op.name == "mean_pairwise_squared_error/value_2"
        assert loss.dtype == tf.float32 and loss.shape.as_list() == []
        assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
        with tf.Session() as sess:
            got = sess.run(loss)
    assert got == pytest.approx(_reference(LABELS, PREDICTIONS, weights), rel=1e-5)


def test_matches_tensorflow_with_elementwise_weights():
    """TF 2.21 gives 7.848979 (elements of weight 0 are not present; the per-element weights
    then multiply the per-example term, which broadcasts over the example's elements)."""
    weights = np.array([[1, 0], [1, 1], [0, 1], [1, 1]] * 3, np.float32).reshape(3, 4, 2)
    with tf.Graph().as_default(), tf.Session() as sess:
        loss = tf.losses.mean_pairwise_squared_error(LABELS, PREDICTIONS, weights=weights,
                                                     loss_collection=None)
        assert sess.run(loss) == pytest.approx(7.848979, rel=1e-6)
        assert tf.get_collection(tf.GraphKeys.LOSSES) == []


def test_shift_invariance_and_gradient():
    with tf.Graph().as_default():
        p = tf.constant(PREDICTIONS.astype(np.float64))
        loss = tf.losses.mean_pairwise_squared_error(LABELS, p, scope="s")
        shifted = tf.losses.mean_pairwise_squared_error(LABELS + 3.0, p + 3.0)
        grad = tf.gradients(loss, p)[0]
        with tf.Session() as sess:
            value, value_shifted, g = sess.run([loss, shifted, grad])
    assert value == pytest.approx(value_shifted, rel=1e-5)
    eps = 1e-3
    bumped = PREDICTIONS.astype(np.float64).copy()
    bumped[0, 1, 0] += eps
    numeric = (_reference(LABELS, bumped, 1.0) - _reference(LABELS, PREDICTIONS, 1.0)) / eps
    assert g[0, 1, 0] == pytest.approx(numeric, rel=1e-2)


def test_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Argument `labels` must not be None"):
            tf.losses.mean_pairwise_squared_error(None, PREDICTIONS)
        with pytest.raises(ValueError, match="Argument `predictions` must not be None"):
            tf.losses.mean_pairwise_squared_error(LABELS, None)
        with pytest.raises(ValueError, match="are incompatible"):
            tf.losses.mean_pairwise_squared_error(LABELS, PREDICTIONS[:2])
        with pytest.raises(ValueError, match="weights can not be broadcast to values"):
            tf.losses.mean_pairwise_squared_error(LABELS, PREDICTIONS, weights=np.ones([3]))
