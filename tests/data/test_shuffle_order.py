"""A seeded Dataset.shuffle gives TensorFlow's order.

The expected orders are TensorFlow 2.21's (compat.v1, one-shot iterators; graph seed 3 for the
first group, 11 for the second) for the same pipelines, element by element and through the
batched row-position path.
"""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset


def _run(make, n, graph_seed):
    with tf.Graph().as_default():
        tf.set_random_seed(graph_seed)
        nxt = tf.data.make_one_shot_iterator(make()).get_next()
        with tf.Session() as sess:
            return [np.asarray(sess.run(nxt)).tolist() for _ in range(n)]


CASES = {
    "reshuffled": (lambda: D.range(10).shuffle(4, seed=5), 10, 3,
                   [0, 3, 1, 6, 5, 8, 7, 9, 4, 2]),
    "same_seeds_each_pass": (
        lambda: D.range(10).shuffle(4, seed=5, reshuffle_each_iteration=False), 10, 3,
        [3, 0, 2, 4, 1, 8, 7, 6, 5, 9]),
    "repeat": (lambda: D.range(5).shuffle(3, seed=5).repeat(3), 15, 3,
               [0, 2, 1, 4, 3, 2, 0, 4, 1, 3, 1, 3, 2, 0, 4]),
    "repeat_not_fused": (lambda: D.range(5).shuffle(3, seed=5).map(lambda x: x).repeat(3), 15,
                         3, [0, 2, 1, 4, 3, 2, 0, 4, 1, 3, 1, 3, 2, 0, 4]),
    "repeat_same_order": (
        lambda: D.range(5).shuffle(3, seed=5, reshuffle_each_iteration=False).repeat(3), 15, 3,
        [0, 2, 1, 4, 3, 0, 2, 1, 4, 3, 0, 2, 1, 4, 3]),
    "buffer_larger_than_data": (lambda: D.range(5).shuffle(10, seed=5).repeat(2), 10, 3,
                                [0, 3, 2, 4, 1, 1, 3, 4, 2, 0]),
    "batched": (lambda: D.range(10).shuffle(4, seed=5).batch(3), 4, 11,
                [[2, 1, 3], [0, 4, 7], [9, 8, 5], [6]]),
    "tuples_batched": (
        lambda: D.from_tensor_slices((np.arange(50), np.arange(50) * 2)).shuffle(7, seed=1)
        .repeat(2).batch(5), 20, 11, None),
    "skip_take_across_passes": (
        lambda: D.range(3000).shuffle(1000, seed=2, reshuffle_each_iteration=False).repeat(2)
        .skip(2990).take(20), 20, 11,
        [2651, 444, 1289, 1566, 1917, 332, 296, 665, 1552, 433, 673, 83, 207, 222, 161, 399,
         148, 146, 39, 380]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_shuffle_gives_tensorflows_order(name):
    make, n, graph_seed, expected = CASES[name]
    got = _run(make, n, graph_seed)
    if expected is None:   # long output: its last two batches
        got, expected = got[-2:], [[[40, 34, 48, 47, 49], [80, 68, 96, 94, 98]],
                                   [[45, 37, 36, 46, 39], [90, 74, 72, 92, 78]]]
    assert got == expected


def test_graph_seed_only_batches_of_a_long_pipeline():
    """The bench pipeline's shape (slices, shuffle, endless repeat, batch), graph seed only:
    batches 78-80 as TensorFlow gives them."""
    got = _run(lambda: D.from_tensor_slices(np.arange(600)).shuffle(100).repeat().batch(16), 80,
               11)[-3:]
    assert got == [
        [126, 58, 23, 75, 32, 129, 80, 72, 12, 127, 121, 120, 63, 137, 86, 69],
        [64, 51, 112, 87, 150, 149, 22, 18, 11, 118, 61, 100, 104, 14, 73, 132],
        [159, 94, 146, 133, 166, 114, 29, 164, 110, 56, 151, 68, 34, 147, 53, 109]]


def test_each_initialization_starts_the_same_order_again():
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        it = tf.data.make_initializable_iterator(D.range(6).shuffle(3, seed=5))
        nxt = it.get_next()
        with tf.Session() as sess:
            orders = []
            for _ in range(2):
                sess.run(it.initializer)
                orders.append([int(sess.run(nxt)) for _ in range(6)])
    assert orders == [[0, 2, 1, 3, 5, 4]] * 2
