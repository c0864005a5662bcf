"""tf.train.noisy_linear_cosine_decay: without noise it is linear_cosine_decay; the noise on
its linear part has variance initial_variance / (1 + step) ^ variance_decay."""
import math

import numpy as np
import pytest

import tensorweave as tf


def _linear_cosine(step, decay_steps=10, num_periods=0.5, alpha=0.0, beta=0.001):
    step = min(step, decay_steps)
    linear = (decay_steps - step) / decay_steps
    cosine = 0.5 * (1 + math.cos(math.pi * 2 * num_periods * step / decay_steps))
    return (alpha + linear) * cosine + beta


@pytest.mark.parametrize("step", [0, 3, 10, 15])
def test_without_noise_is_linear_cosine(step):
    with tf.Graph().as_default():
        lr = tf.train.noisy_linear_cosine_decay(0.5, tf.constant(step), 10,
                                                initial_variance=0.0)
        assert lr.op.name == "NoisyLinearCosineDecay" and lr.dtype == tf.float32
        with tf.Session() as sess:
            assert sess.run(lr) == pytest.approx(0.5 * _linear_cosine(step), rel=1e-5)


def test_noise_statistics():
    """The noise's mean and spread over 3000 draws; the graph seed fixes the draws (unseeded,
    the 4-sigma mean and 6% std tolerances would fail about once in 15,000 runs)."""
    step = 3
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        lr = tf.train.noisy_linear_cosine_decay(1.0, step, 10, initial_variance=2.0,
                                                variance_decay=0.5, name="noisy")
        assert lr.op.name == "noisy" and lr.dtype == tf.float32
        with tf.Session() as sess:
            values = np.array([sess.run(lr) for _ in range(3000)])
    cosine = 0.5 * (1 + math.cos(math.pi * step / 10))
    std = cosine * math.sqrt(2.0 / (1 + step) ** 0.5)
    assert values.mean() == pytest.approx(_linear_cosine(step), abs=4 * std / math.sqrt(3000))
    assert values.std() == pytest.approx(std, rel=0.06)


def test_errors():
    with pytest.raises(ValueError, match="global_step is required"):
        tf.train.noisy_linear_cosine_decay(0.1, None, 10)
    # As in TF, the noise is drawn in float32, which a float64 rate's stddev cannot feed.
    with tf.Graph().as_default(), pytest.raises(ValueError, match="requested dtype float32"):
        tf.train.noisy_linear_cosine_decay(tf.constant(1.0, tf.float64), 3, 10)
