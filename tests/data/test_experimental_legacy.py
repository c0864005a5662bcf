"""tf.data.experimental's map_and_batch_with_legacy_function and SHARD_HINT (data/experimental.py).

Expected values are TensorFlow 2.21's on the same programs (run with
/work/shared/programs/run_with_tf.py).
"""
import inspect

import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


pytestmark = pytest.mark.usefixtures("graph")


def test_map_and_batch_with_legacy_function():
    assert inspect.signature(E.map_and_batch_with_legacy_function) == \
        inspect.signature(E.map_and_batch)
    ds = D.range(7).apply(E.map_and_batch_with_legacy_function(lambda x: x * 2, 3))
    assert ds.output_shapes.as_list() == [None]
    assert [b.tolist() for b in drain(ds)] == [[0, 2, 4], [6, 8, 10], [12]]
    dropped = D.range(7).apply(E.map_and_batch_with_legacy_function(
        lambda x: x * 2, 3, drop_remainder=True))
    assert [b.tolist() for b in drain(dropped)] == [[0, 2, 4], [6, 8, 10]]


def test_shard_hint():
    assert E.SHARD_HINT == -1 and type(E.SHARD_HINT) is int
