"""Candidate samplers, accidental hits and the sampled losses (nce_loss, sampled_softmax_loss):
NumPy references with fixed sampled values, the samplers' distributions and expected counts."""
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

LABELS = np.array([[1, 3], [2, 7], [9, 0]], np.int64)


def _log_uniform_p(c, range_max):
    return np.log((c + 2.0) / (c + 1.0)) / np.log(range_max + 1.0)


def _labels(rng, dt):
    return LABELS


CASES = [
    # Without `unique`, expected counts are p * num_sampled, a function of the classes alone.
    OpCase("log_uniform_sampler_true_counts",
           lambda t: tf.nn.log_uniform_candidate_sampler(t, 2, 5, False, 10, seed=3)[1],
           lambda t: (5 * _log_uniform_p(t, 10)).astype(np.float32), [_labels], (tf.int64,),
           grad=False, rtol=1e-6),
    OpCase("uniform_sampler_true_counts",
           lambda t: tf.nn.uniform_candidate_sampler(t, 2, 4, False, 10, seed=3)[1],
           lambda t: np.full(t.shape, 0.4, np.float32), [_labels], (tf.int64,), grad=False),
    OpCase("learned_unigram_sampler_true_counts",
           lambda t: tf.nn.learned_unigram_candidate_sampler(t, 2, 4, False, 10, seed=3)[1],
           lambda t: np.full(t.shape, 0.4, np.float32), [_labels], (tf.int64,), grad=False),
    OpCase("thread_unsafe_unigram_sampler_true_counts",
           lambda t: tf.raw_ops.ThreadUnsafeUnigramCandidateSampler(
               true_classes=t, num_true=2, num_sampled=4, unique=False, range_max=10,
               seed=3).true_expected_count,
           lambda t: np.full(t.shape, 0.4, np.float32), [_labels], (tf.int64,), grad=False),
    OpCase("compute_accidental_hits",
           lambda t, s: list(tf.nn.compute_accidental_hits(t, s, num_true=2)),
           lambda t, s: [np.array([0, 1, 2], np.int32), np.array([1, 3, 4], np.int64),
                         np.full(3, -np.finfo(np.float32).max, np.float32)],
           [_labels, lambda rng, dt: np.array([5, 3, 4, 7, 9], np.int64)], (tf.int64,),
           grad=False),
]


test_forward, test_shapes = case_tests(CASES)


def _draw(sampler, unique, num_sampled=6, range_max=10, runs=1, seed=5):
    with tf.Graph().as_default():
        out = sampler(tf.constant(LABELS), 2, num_sampled, unique, range_max, seed=seed)
        assert [t.shape.as_list() for t in out] == [[num_sampled], [3, 2], [num_sampled]]
        with tf.Session() as sess:
            return [sess.run(list(out)) for _ in range(runs)]


def test_unique_samples_are_distinct_with_consistent_expected_counts():
    for sampled, true_count, sampled_count in _draw(tf.nn.log_uniform_candidate_sampler, True,
                                                    runs=5):
        assert len(set(sampled.tolist())) == 6 and sampled.min() >= 0 and sampled.max() < 10
        p = _log_uniform_p(sampled, 10)
        # all counts are -expm1(tries * log1p(-p)) for one number of tries (or p * 6)
        tries = np.log1p(-np.minimum(sampled_count, 1 - 1e-7)) / np.log1p(-p)
        if np.allclose(sampled_count, 6 * p, rtol=1e-5):
            np.testing.assert_allclose(true_count, 6 * _log_uniform_p(LABELS, 10), rtol=1e-5)
        else:
            assert np.allclose(tries, np.round(tries[0]), rtol=1e-3)
            expected = -np.expm1(np.round(tries[0]) * np.log1p(-_log_uniform_p(LABELS, 10)))
            np.testing.assert_allclose(true_count, expected, rtol=1e-5)


def test_log_uniform_frequencies():
    (sampled, _, _), = _draw(tf.nn.log_uniform_candidate_sampler, False, num_sampled=20000)
    freq = np.bincount(sampled, minlength=10) / 20000
    np.testing.assert_allclose(freq, _log_uniform_p(np.arange(10), 10), atol=0.01)


def test_uniform_frequencies_and_seeds():
    runs = _draw(tf.nn.uniform_candidate_sampler, False, num_sampled=20000, runs=2)
    freq = np.bincount(runs[0][0], minlength=10) / 20000
    np.testing.assert_allclose(freq, 0.1, atol=0.01)
    assert not np.array_equal(runs[0][0], runs[1][0])  # the stream continues across runs
    again = _draw(tf.nn.uniform_candidate_sampler, False, num_sampled=20000)
    np.testing.assert_array_equal(again[0][0], runs[0][0])  # same seed, same first draw


def test_learned_unigram_learns_the_true_classes():
    with tf.Graph().as_default():
        labels = tf.constant([[3], [3]], tf.int64)
        out = tf.nn.learned_unigram_candidate_sampler(labels, 1, 2, False, 4, seed=1)
        with tf.Session() as sess:
            counts = [sess.run(out[1])[0, 0] for _ in range(3)]
    # class 3 starts with weight 1 of 4, then gains 2 per run: p = 1/4, 3/6, 5/8 (times 2)
    np.testing.assert_allclose(counts, [0.5, 1.0, 1.25], rtol=1e-6)


def test_sampler_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
            tf.nn.uniform_candidate_sampler(tf.constant(LABELS), 3, 2, False, 10)
        bad = tf.nn.uniform_candidate_sampler(tf.constant(LABELS), 2, 11, True, 10)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="Sampler's range is too small"):
                sess.run(bad)


# --- sampled losses ----------------------------------------------------------------------------
RNG = np.random.RandomState(0)
W = RNG.randn(10, 4).astype(np.float32)
B = RNG.randn(10).astype(np.float32)
X = RNG.randn(3, 4).astype(np.float32)
SAMPLED = np.array([3, 5, 0, 8], np.int64)
TRUE_EC = RNG.uniform(0.1, 1, (3, 2)).astype(np.float32)
SAMPLED_EC = RNG.uniform(0.1, 1, 4).astype(np.float32)


def _logits(remove_hits):
    true = np.einsum("bd,btd->bt", X, W[LABELS]) + B[LABELS] - np.log(TRUE_EC)
    sampled = X @ W[SAMPLED].T + B[SAMPLED] - np.log(SAMPLED_EC)
    if remove_hits:
        for i, row in enumerate(LABELS):
            for j, c in enumerate(SAMPLED):
                if c in row:
                    sampled[i, j] += -np.finfo(np.float32).max
    labels = np.concatenate([np.full((3, 2), 0.5), np.zeros((3, 4))], 1)
    return np.concatenate([true, sampled], 1).astype(np.float64), labels


def _sampled_values():
    return (tf.constant(SAMPLED), tf.constant(TRUE_EC), tf.constant(SAMPLED_EC))


@pytest.mark.parametrize("remove_hits", [False, True])
def test_nce_loss(remove_hits):
    logits, labels = _logits(remove_hits)
    logistic = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    with tf.Graph().as_default():
        loss = tf.nn.nce_loss(tf.constant(W), tf.constant(B), tf.constant(LABELS),
                              tf.constant(X), 4, 10, num_true=2,
                              sampled_values=_sampled_values(),
                              remove_accidental_hits=remove_hits)
        assert loss.shape.as_list() == [3]
        with tf.Session() as sess:
            got = sess.run(loss)
    np.testing.assert_allclose(got, logistic.sum(1), rtol=1e-5)


@pytest.mark.parametrize("remove_hits", [False, True])
def test_sampled_softmax_loss(remove_hits):
    logits, labels = _logits(remove_hits)
    shifted = logits - logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    expected = -(labels * log_softmax).sum(1)
    with tf.Graph().as_default():
        loss = tf.nn.sampled_softmax_loss(tf.constant(W), tf.constant(B), tf.constant(LABELS),
                                          tf.constant(X), 4, 10, num_true=2,
                                          sampled_values=_sampled_values(),
                                          remove_accidental_hits=remove_hits)
        with tf.Session() as sess:
            got = sess.run(loss)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_sampled_losses_train_sparse_rows_of_sharded_weights():
    """Gradients w.r.t. the weights are IndexedSlices over the true and sampled rows only."""
    with tf.Graph().as_default():
        shards = [tf.Variable(W[:5], name="w0"), tf.Variable(W[5:], name="w1")]
        biases = tf.Variable(B, name="b")
        loss = tf.reduce_mean(tf.nn.nce_loss(shards, biases, tf.constant(LABELS),
                                             tf.constant(X), 4, 10, num_true=2,
                                             sampled_values=_sampled_values(),
                                             partition_strategy="div"))
        grads = tf.gradients(loss, shards + [biases])
        assert all(isinstance(g, tf.IndexedSlices) for g in grads)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(loss)
            sess.run(train)
            after, w0 = sess.run([loss, shards[0]])
    assert after < before
    touched = set(LABELS.reshape(-1).tolist()) | set(SAMPLED.tolist())
    for row in range(5):
        changed = not np.array_equal(w0[row], W[row])
        assert changed == (row in touched)


def test_default_sampler_is_log_uniform_with_unique_draws():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        loss = tf.nn.sampled_softmax_loss(tf.constant(W), tf.constant(B), tf.constant(LABELS),
                                          tf.constant(X), 4, 10, num_true=2)
        ops = [op.type for op in tf.get_default_graph().get_operations()]
        assert "LogUniformCandidateSampler" in ops and "ComputeAccidentalHits" in ops
        with tf.Session() as sess:
            got = sess.run(loss)
    assert got.shape == (3,) and np.all(np.isfinite(got)) and np.all(got > 0)
    assert math.isfinite(float(got.sum()))


def test_repeated_labels_hit_once_and_arrays_are_accepted_as_weights():
    """A label repeated in a row is one accidental hit (TF's sparse_to_dense, last write wins;
    summing both gave -inf and a NaN loss), and NumPy weights convert as in TF. The values are
    TensorFlow 2.21's for the same seeded sampler."""
    rng = np.random.RandomState(0)
    w = rng.normal(size=(20, 4)).astype(np.float32)
    b = rng.normal(size=20).astype(np.float32)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    labels = np.array([[0, 0], [1, 2], [3, 3]], np.int64)
    with tf.Graph().as_default():
        sampled = tf.random.uniform_candidate_sampler(labels, 2, 6, True, 20, seed=4)
        kwargs = dict(num_sampled=6, num_classes=20, num_true=2, sampled_values=sampled,
                      remove_accidental_hits=True)
        nce = tf.nn.nce_loss(w, b, labels, x, **kwargs)
        softmax = tf.nn.sampled_softmax_loss(w, b, labels, x, **kwargs)
        with tf.Session() as sess:
            got = sess.run([nce, softmax])
    np.testing.assert_allclose(got[0], [25.735819, 9.669652, 25.420458], rtol=2e-6)
    np.testing.assert_allclose(got[1], [4.712808, 4.31564, 4.920291], rtol=2e-6)


def test_thread_unsafe_unigram_sampler_draws_tensorflows_candidates():
    """The raw op (the learned unigram sampler's algorithm, unsynchronized in TF): TF 2.21's
    candidates and expected counts over three runs."""
    with tf.Graph().as_default():
        sample = tf.raw_ops.ThreadUnsafeUnigramCandidateSampler
        plain = sample(true_classes=tf.constant(LABELS), num_true=2, num_sampled=4,
                       unique=False, range_max=10, seed=3)
        unique = sample(true_classes=tf.constant(LABELS), num_true=2, num_sampled=6,
                        unique=True, range_max=10, seed=5, seed2=2)
        with tf.Session() as sess:   # per round: plain, then unique twice (each run draws)
            runs = [(sess.run(plain).sampled_candidates.tolist(),
                     sess.run(unique).sampled_candidates.tolist(),
                     sess.run(unique).sampled_expected_count) for _ in range(3)]
    assert [r[0] for r in runs] == [[1, 8, 0, 3], [9, 3, 6, 0], [2, 4, 3, 7]]
    assert [r[1] for r in runs] == [[1, 9, 6, 7, 4, 3], [9, 4, 2, 7, 3, 1], [1, 8, 9, 3, 0, 2]]
    np.testing.assert_array_equal(runs[1][2], np.array(
        [0.8571429252624512] * 3 + [0.2142857313156128] * 2 + [0.8571429252624512],
        np.float32))
