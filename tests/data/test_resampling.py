"""Dataset.rejection_resample and tf.data.experimental.rejection_resample (data/resampling.py).

Structures, the deterministic cases and the element order where every acceptance is 0 or 1
are TensorFlow 2.21's on the same programs (run with /work/shared/programs/run_with_tf.py);
otherwise the output's class distribution is tested against the target.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental
LABELS = np.random.RandomState(0).choice(3, size=6000, p=[0.6, 0.3, 0.1]).astype(np.int32)


pytestmark = pytest.mark.usefixtures("graph")


def class_counts(ds):
    """The classes' share of the output; every pair's class is its element's."""
    got = drain(ds)
    classes = np.array([c for c, _ in got])
    assert classes.tolist() == [int(x) for _, x in got]
    return len(got), np.bincount(classes, minlength=3) / len(got)


def close_to(shares, target, n):
    """Within 4.5 standard errors of a multinomial share for every class."""
    target = np.asarray(target)
    return np.all(np.abs(shares - target) <= 4.5 * np.sqrt(target * (1 - target) / n) + 1e-9)


@pytest.mark.parametrize("target, initial, seed", [
    ([1 / 3, 1 / 3, 1 / 3], [0.6, 0.3, 0.1], 3),   # mixes input and rejection-sampled
    ([1 / 3, 1 / 3, 1 / 3], None, 3),              # initial distribution estimated
    ([0.2, 0.3, 0.5], None, 3),
    ([0.5, 0.5, 0.], [0.6, 0.3, 0.1], 1),          # m = 0: rejection sampling alone
])
def test_output_follows_the_target_distribution(target, initial, seed):
    n, shares = class_counts(D.from_tensor_slices(LABELS).rejection_resample(
        lambda x: x, target, initial, seed=seed))
    assert n > 1000 and close_to(shares, target, n)


def test_tf1_function_and_tensor_distributions():
    n, shares = class_counts(D.from_tensor_slices(LABELS).apply(E.rejection_resample(
        lambda x: x, tf.constant([0.2, 0.3, 0.5]),
        tf.placeholder_with_default([0.6, 0.3, 0.1], [3]), seed=5)))
    assert n > 1000 and close_to(shares, [0.2, 0.3, 0.5], n)


def test_equal_distributions_pass_every_element_through():
    got = drain(D.from_tensor_slices(LABELS[:5]).rejection_resample(
        lambda x: x, [0.6, 0.3, 0.1], [0.6, 0.3, 0.1]))
    assert got == [(0, 0), (1, 1), (1, 1), (0, 0), (0, 0)]


@pytest.mark.parametrize("graph_seed, target, seed, expected", [
    (None, [0.25, 0.75], 11, [1, 0, 3, 5, 1, 2, 7, 9, 3, 11, 4, 13, 5, 6, 7, 15, 8, 17, 19]),
    (5, [0.4, 0.6], 3, [0, 1, 2, 3, 1, 4, 3, 5, 6, 7, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                        18, 19, 7, 9]),
])
def test_tensorflow_order_when_acceptances_are_0_or_1(graph_seed, target, seed, expected):
    tf.set_random_seed(graph_seed)
    ds = D.from_tensor_slices((np.array([0, 1] * 10, np.int32), np.arange(20))).\
        rejection_resample(lambda c, i: c, target, [0.5, 0.5], seed=seed)
    assert [int(i) for _, (_, i) in drain(ds)] == expected


def test_element_structure_is_class_then_element():
    elements = (LABELS[:4], np.arange(4.))
    for target in ([0.5, 0.5, 0.], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1]):
        ds = D.from_tensor_slices(elements).rejection_resample(lambda c, v: c, target,
                                                               [0.6, 0.3, 0.1])
        assert ds.element_spec == (tf.data.TensorSpec([], tf.int32),
                                   (tf.data.TensorSpec([], tf.int32),
                                    tf.data.TensorSpec([], tf.float64)))
    ds = D.from_tensor_slices({"c": LABELS[:4]}).rejection_resample(lambda d: d["c"],
                                                                    [0.5, 0.3, 0.2])
    assert ds.element_spec == (tf.data.TensorSpec([], tf.int32),
                               {"c": tf.data.TensorSpec([], tf.int32)})
    ds = D.range(4).rejection_resample(lambda c: c % 2, [0.5, 0.5])
    assert ds.output_types == (tf.int64, tf.int64)
    with tf.Session() as sess:
        assert sess.run(E.cardinality(ds)) == E.UNKNOWN_CARDINALITY


def test_class_func_must_return_integers():
    with pytest.raises(TypeError, match="'indices' has DataType float32"):
        D.range(4).rejection_resample(lambda c: tf.cast(c, tf.float32), [0.5, 0.5])
