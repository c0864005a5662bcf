"""Dataset.random and tf.data.experimental.RandomDataset (data/random_dataset.py).

The values are TensorFlow 2.21's for the same seeds, bit for bit (run with
/work/shared/programs/run_with_tf.py on the same programs).
"""
import warnings

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


pytestmark = pytest.mark.usefixtures("graph")


def values(ds, n):
    return [int(v) for v in drain(ds.take(n))]


def test_element_spec():
    ds = D.random(seed=42)
    assert ds.element_spec == tf.data.TensorSpec([], tf.int64)
    assert ds.output_types == tf.int64 and ds.output_shapes.as_list() == []


@pytest.mark.parametrize("graph_seed, seed, expected", [
    (None, 42, [2985944072, 4132877644, 929418493, 249609589, 146598941, 4149265688]),
    (7, 42, [652300395, 1378687557, 738232112, 95864221, 3311035179, 102565576]),
    (None, 0, [361556241, 1459367533, 3832325198, 1250307605]),
    (0, 0, [92440422, 3674269378, 538463675, 207846770]),   # seeds (0, 2**31 - 1)
    (7, None, [4099963437, 3221879260, 490388034, 367897730]),   # the graph's first op
])
def test_tensorflow_values_for_graph_and_op_seeds(graph_seed, seed, expected):
    tf.set_random_seed(graph_seed)
    assert values(D.random(seed=seed), len(expected)) == expected


def test_tf1_random_dataset():
    assert values(E.RandomDataset(seed=3), 5) == \
        [3534849767, 279844183, 888998500, 1099633400, 2034269327]


def test_epochs_repeat_the_stream_unless_rerandomized():
    first = [2870909127, 3455438759, 4052121393]
    assert values(D.random(seed=1).take(3).repeat(2), 6) == first * 2
    assert values(D.random(seed=1, rerandomize_each_iteration=False).take(3).repeat(2), 6) == \
        first * 2
    with pytest.warns(UserWarning, match="only supported for repeat-based epochs"):
        ds = D.random(seed=1, rerandomize_each_iteration=True)
    assert values(ds.take(3).repeat(3), 9) == [
        1080790120, 1034073719, 2231145331, 1220657578, 1588676012, 916930237,
        869407815, 3257648564, 1810018309]


def test_reinitializing_restarts_even_a_rerandomized_stream():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = D.random(seed=1, rerandomize_each_iteration=True).take(2)
    assert values(ds, 2) == values(ds, 2) == [1080790120, 1034073719]


def test_batches_are_the_stream_in_order():
    batched = drain(D.random(seed=42).batch(4).take(2))
    assert [b.tolist() for b in batched] == [
        [2985944072, 4132877644, 929418493, 249609589],
        [146598941, 4149265688, *values(D.random(seed=42), 8)[6:]]]
    assert batched[0].dtype == np.int64
    # Past one block of the kernel's stream (1024 words), element by element and batched.
    long = values(D.random(seed=5), 2100)
    assert np.concatenate(drain(D.random(seed=5).batch(700).take(3))).tolist() == long
    assert all(0 <= v < 2**32 for v in long) and len(set(long)) == len(long)


def test_unseeded_iterators_differ():
    ds = D.random().take(4)
    assert values(ds, 4) != values(ds, 4)


def test_cardinality_is_infinite():
    with tf.Session() as sess:
        assert sess.run(E.cardinality(D.random(seed=1))) == E.INFINITE_CARDINALITY
        assert sess.run(E.cardinality(D.random(seed=1).take(5))) == 5


def test_graph_seed_alone_counts_the_graphs_unseeded_calls():
    # TensorFlow 2.21 gives this dataset op seed 5 (the graph's sixth call without one),
    # whatever other ops the graph holds: the values are TF's for seeds (0, 5).
    tf.set_random_seed(1234)
    tf.constant(1.0)
    for _ in range(3):
        tf.get_seed(None)
    tf.random_uniform([2])
    tf.set_random_seed(0)
    assert tf.get_seed(None) == (0, 4)
    assert values(D.random(), 3) == [3421934604, 2855075034, 2078477125]
