"""fixed_unigram_candidate_sampler and all_candidate_sampler: expected counts against the
fixed distribution, the empirical distribution of draws, sharding and TF's errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests

LABELS = np.array([[1, 3], [2, 4], [0, 5]], np.int64)
UNIGRAMS = [1.0, 2.0, 3.0, 4.0]


def _labels(rng, dt):
    return LABELS


def _fixed_p(classes, distortion=1.0):
    """Reserved ids 0 and 1 never drawn; ids 2.. weighted UNIGRAMS ** distortion."""
    w = np.concatenate([[0.0, 0.0], np.power(UNIGRAMS, distortion)])
    return w[classes] / w.sum()


CASES = [
    # Without `unique`, expected counts are p * num_sampled.
    OpCase("fixed_unigram_sampler_true_counts",
           lambda t: tf.nn.fixed_unigram_candidate_sampler(
               t, 2, 5, False, 6, unigrams=UNIGRAMS, num_reserved_ids=2, distortion=0.5,
               seed=3)[1],
           lambda t: (5 * _fixed_p(t, 0.5)).astype(np.float32), [_labels], (tf.int64,),
           grad=False, rtol=1e-6),
    OpCase("all_candidate_sampler",
           lambda t: list(tf.nn.all_candidate_sampler(t, 2, 6, True)),
           lambda t: [np.arange(6, dtype=np.int64), np.ones(t.shape, np.float32),
                      np.ones(6, np.float32)], [_labels], (tf.int64,), grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(out, runs=1):
    with tf.Session() as sess:
        return [sess.run(list(out)) for _ in range(runs)]


def test_fixed_unigram_draws_follow_the_counts():
    with tf.Graph().as_default():
        out = tf.nn.fixed_unigram_candidate_sampler(
            tf.constant(LABELS), 2, 40000, False, 6, unigrams=UNIGRAMS, num_reserved_ids=2,
            seed=1)
        assert out.sampled_candidates.op.type == "FixedUnigramCandidateSampler"
        (sampled, _, sampled_count), = _run(out)
    freq = np.bincount(sampled, minlength=6) / sampled.size
    np.testing.assert_allclose(freq, _fixed_p(np.arange(6)), atol=0.01)
    np.testing.assert_allclose(sampled_count, 40000 * _fixed_p(sampled), rtol=1e-5)


def test_fixed_unigram_unique_and_vocab_file(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a,3\nb,x,1\nc,4\n\n")   # the last column counts; blank lines skipped
    with tf.Graph().as_default():
        out = tf.nn.fixed_unigram_candidate_sampler(
            tf.constant([[1, 2]], tf.int64), 2, 3, True, 3, vocab_file=str(vocab), seed=2)
        runs = _run(out, runs=4)
    p = np.array([3.0, 1.0, 4.0]) / 8
    for sampled, true_count, sampled_count in runs:
        assert sorted(sampled.tolist()) == [0, 1, 2]
        # one number of tries explains every expected count: -expm1(tries * log1p(-p))
        tries = np.log1p(-sampled_count) / np.log1p(-p[sampled])
        np.testing.assert_allclose(tries, tries[0], rtol=1e-4)
        np.testing.assert_allclose(true_count[0], -np.expm1(tries[0] * np.log1p(-p[[1, 2]])),
                                   rtol=1e-4)


def test_fixed_unigram_shards():
    """Shard 1 of 2 keeps the odd reserved id, then numbers the counts from 1 (the number of
    reserved ids kept, as TF does) and keeps the odd-numbered ones: 1.0 and 3.0."""
    with tf.Graph().as_default():
        out = tf.nn.fixed_unigram_candidate_sampler(
            tf.constant([[0, 1, 2]], tf.int64), 3, 2, False, 3, unigrams=[1.0, 2.0, 3.0, 4.0],
            num_reserved_ids=2, num_shards=2, shard=1)
        (_, true_count, _), = _run(out)
    np.testing.assert_allclose(true_count, [[0.0, 2 * 1 / 4, 2 * 3 / 4]], rtol=1e-6)


def test_random_aliases():
    assert tf.random.fixed_unigram_candidate_sampler is tf.nn.fixed_unigram_candidate_sampler
    assert tf.random.all_candidate_sampler is tf.nn.all_candidate_sampler


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(range_max=6, unigrams=UNIGRAMS), errors.InvalidArgumentError,
     "range is 6 must be equal to weights size  4"),
    (dict(range_max=4), errors.InvalidArgumentError, "Must provide either vocab_file or"),
    (dict(range_max=4, unigrams=UNIGRAMS, vocab_file="v.txt"), errors.InvalidArgumentError,
     "Must only provide one of vocab_file and unigrams"),
    (dict(range_max=4, vocab_file="/nonexistent/v.txt"), errors.NotFoundError,
     "No such file or directory"),
    (dict(range_max=4, unigrams=UNIGRAMS, num_sampled=5, unique=True),
     errors.InvalidArgumentError, "Sampler's range is too small."),
    (dict(range_max=4, unigrams=[1.0, 0.0, 0.0, 1.0], num_sampled=3, unique=True),
     errors.InvalidArgumentError, "only 2 classes can be drawn"),
    (dict(range_max=3, unigrams=UNIGRAMS[:3]), errors.InvalidArgumentError,
     r"`true_candidate` out of range \[0, 3\), received 3"),
])
def test_fixed_unigram_run_errors(kwargs, error, match):
    args = {"num_sampled": 2, "unique": False, **kwargs}
    with tf.Graph().as_default():
        out = tf.nn.fixed_unigram_candidate_sampler(tf.constant([[0, 3]], tf.int64), 2, **args)
        with tf.Session() as sess, pytest.raises(error, match=match):
            sess.run(list(out))


def test_all_candidate_sampler_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
            tf.nn.all_candidate_sampler(tf.zeros([2, 3], tf.int64), 2, 4, True)
        out = tf.nn.all_candidate_sampler(tf.constant([[0, 4]], tf.int64), 2, 4, False)
        with tf.Session() as sess, pytest.raises(
                errors.InvalidArgumentError, match=r"out of range \[0, 4\), received 4"):
            sess.run(list(out))
