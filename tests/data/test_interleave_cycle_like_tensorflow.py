"""Dataset.interleave's default cycle length as TensorFlow 2.21 picks it (printed by TF on a
machine of 2 CPUs, which the tests pretend this one is)."""
import pytest

import tensorweave as tf
from tensorweave.data import readers
from tensorweave.testing.datasets import drain_dataset

D = tf.data.Dataset
AUTOTUNE = tf.data.experimental.AUTOTUNE
ROUND_ROBIN = [0, 10, 1, 11, 2, 12, 20, 30, 21, 31, 22, 32]     # two inputs at a time
ONE_BY_ONE = [0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32]


@pytest.fixture(autouse=True)
def two_cpus(monkeypatch):
    monkeypatch.setattr(readers, "schedulable_cpus", lambda: 2)


def _elements(dataset):
    with tf.Graph().as_default():
        return [int(v) for v in drain_dataset(dataset())]


def _inner(x):
    return D.range(x * 10, x * 10 + 3)


@pytest.mark.parametrize("calls, cycle_length, expected", [
    (None, None, ROUND_ROBIN),        # the CPUs
    (1, None, ONE_BY_ONE),            # no more than the calls
    (2, None, ROUND_ROBIN),
    (AUTOTUNE, None, ONE_BY_ONE),     # a third of the CPUs, rounded up
    (1, -1, ONE_BY_ONE),
    (2, 3, [0, 10, 20, 1, 11, 21, 2, 12, 22, 30, 31, 32]),
    (AUTOTUNE, 4, [0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32]),
])
def test_default_cycle_lengths(calls, cycle_length, expected):
    assert _elements(lambda: D.range(4).interleave(
        _inner, cycle_length=cycle_length, num_parallel_calls=calls)) == expected


@pytest.mark.parametrize("calls, cycle_length, shown", [(3, None, 2), (3, 2, 2)])
def test_more_calls_than_the_cycle_fail_when_the_iterator_starts(calls, cycle_length, shown):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=f"`num_parallel_calls` is {calls} and `cycle_length` is {shown}"):
        _elements(lambda: D.range(4).interleave(_inner, cycle_length=cycle_length,
                                                num_parallel_calls=calls))
