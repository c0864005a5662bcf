"""Batches gathered by row position equal the element-wise path: same elements, same order.

`shuffle`, `repeat`, `take`, `skip` and `prefetch` over from_tensor_slices or range batch by
gathering row positions (kernels/dataset_runtime.py); without `batch` the same pipeline runs
element by element. Each case drains `make().batch(n)` and compares it with the elements of
`make()` stacked in groups of n.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.kernels import dataset_reorder, dataset_runtime
from tensorweave.kernels.philox import PhiloxWords

D = tf.data.Dataset
FEATS = np.arange(46, dtype=np.float32).reshape(23, 2)
LABELS = np.arange(100, 123)
WORDS = np.array([f"w{i}".encode() for i in range(23)], dtype=object)


def drain(dataset, initializations=1):
    """The elements of `dataset()`: one list per run of an initializable iterator's initializer."""
    with tf.Graph().as_default():
        it = dataset().make_initializable_iterator()
        nxt = it.get_next()
        passes = []
        with tf.Session() as sess:
            for _ in range(initializations):
                sess.run(it.initializer)
                passes.append([])
                while True:
                    try:
                        passes[-1].append(sess.run(nxt))
                    except tf.errors.OutOfRangeError:
                        break
    return passes


def flat(element):
    """The leaves of a nested element, in a fixed order (dict keys sorted)."""
    if isinstance(element, dict):
        return [leaf for k in sorted(element) for leaf in flat(element[k])]
    if isinstance(element, tuple):
        return [leaf for e in element for leaf in flat(e)]
    return [np.asarray(element, dtype=object if isinstance(element, bytes) else None)]


def stacked(elements, n, drop):
    """Elements grouped n at a time (the last group shorter unless `drop`), stacked per leaf."""
    groups = [elements[i:i + n] for i in range(0, len(elements), n)]
    if drop and groups and len(groups[-1]) < n:
        groups.pop()
    return [[np.stack(leaves) for leaves in zip(*(flat(e) for e in g))] for g in groups]


def assert_same_batches(make, n, drop=False, initializations=1):
    batched = [flat(b) for one in drain(lambda: make().batch(n, drop_remainder=drop),
                                        initializations) for b in one]
    expected = [b for one in drain(make, initializations) for b in stacked(one, n, drop)]
    assert len(batched) == len(expected) > 0
    for got, want in zip(batched, expected):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


CASES = {
    "seeded shuffle across repeat boundaries, partial last batch":
        lambda: D.from_tensor_slices((FEATS, LABELS)).shuffle(7, seed=3).repeat(3),
    "buffer larger than the data":
        lambda: D.from_tensor_slices(FEATS).shuffle(100, seed=1).repeat(2),
    "no reshuffle each iteration":
        lambda: D.from_tensor_slices(LABELS).shuffle(23, seed=2,
                                                     reshuffle_each_iteration=False).repeat(3),
    "nested dict structure and strings":
        lambda: D.from_tensor_slices({"x": FEATS, "pair": (LABELS, WORDS)})
        .shuffle(5, seed=9).repeat(2),
    "range with take, skip and prefetch":
        lambda: D.range(3, 72, 3).shuffle(10, seed=5).repeat(2).skip(3).take(30).prefetch(2),
    "repeat before shuffle":
        lambda: D.from_tensor_slices(LABELS).repeat(2).shuffle(8, seed=4).prefetch(1),
    "elementwise map after the reordering (map-and-batch fusion)":
        lambda: D.from_tensor_slices(FEATS).shuffle(6, seed=8).repeat(2).map(lambda x: x * 2.0),
    "buffer of one keeps the order":
        lambda: D.from_tensor_slices(LABELS).shuffle(1, seed=0),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("n, drop", [(4, False), (4, True), (23, False), (1, False)])
def test_gathered_batches_equal_stacked_elements(name, n, drop):
    assert_same_batches(CASES[name], n, drop)


def test_reinitialized_iterator_repeats_the_seeded_order():
    make = CASES["seeded shuffle across repeat boundaries, partial last batch"]
    assert_same_batches(make, 5, initializations=2)
    first, second = (np.concatenate([b[1] for b in one])
                      for one in drain(lambda: make().batch(5), initializations=2))
    np.testing.assert_array_equal(first, second)
    assert sorted(first[:23]) == list(LABELS) and list(first[:23]) != list(LABELS)


def test_shuffled_batches_are_gathered_not_stacked(monkeypatch):
    def refuse(elements):
        raise AssertionError("stacked element by element")
    monkeypatch.setattr(dataset_runtime, "stack", refuse)
    (got,) = drain(lambda: D.from_tensor_slices((FEATS, LABELS)).shuffle(7, seed=3).repeat(2)
                   .batch(8).prefetch(1))
    assert [len(b[1]) for b in got] == [8] * 5 + [6]
    assert sorted(np.concatenate([b[1] for b in got]).tolist()) == sorted(list(LABELS) * 2)


def test_empty_repeat_and_zero_take_end_at_once():
    assert drain(lambda: D.from_tensor_slices(LABELS[:0]).shuffle(4, seed=1).repeat()
                 .batch(3)) == [[]]
    assert drain(lambda: D.from_tensor_slices(LABELS).shuffle(4, seed=1).take(0)
                 .batch(3)) == [[]]


def test_zero_shuffle_buffer_fails_at_initialization_as_in_tensorflow():
    with tf.Graph().as_default():
        it = D.range(3).shuffle(tf.constant(0, tf.int64)).make_initializable_iterator()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="buffer_size must be greater than zero"):
                sess.run(it.initializer)


@pytest.mark.parametrize("n, buffer, block", [(0, 5, 7), (3, 5, 2), (5, 5, 5), (2048 + 5, 5, 1),
                                              (3000, 100, 999), (70_000, 1000, 65_536),
                                              (1029, 5, 4096)])
def test_block_shuffle_draws_and_orders_as_the_one_by_one_shuffle(n, buffer, block):
    """`_shuffled_blocks` over any split of the positions into blocks gives `_shuffled`'s
    order and leaves the word stream where `_shuffled` does (one word per output)."""
    one_words, block_words = PhiloxWords(7, 9), PhiloxWords(7, 9)
    one = list(dataset_reorder._shuffled(iter(range(n)), buffer, one_words))
    blocks = (np.arange(i, min(i + block, n), dtype=np.int64) for i in range(0, n, block))
    got = list(dataset_reorder._shuffled_blocks(blocks, buffer, block_words))
    assert all(b.dtype == np.int64 and b.size for b in got)
    assert (np.concatenate(got).tolist() if got else []) == one
    assert sorted(one) == list(range(n))
    assert one_words.take(3).tolist() == block_words.take(3).tolist() == \
        PhiloxWords(7, 9).take(n + 3)[n:].tolist()


def test_rebatched_cuts_blocks_into_batches():
    blocks = [np.arange(0, 5), np.arange(5, 6), np.arange(6, 13)]
    assert [b.tolist() for b in dataset_runtime.rebatched(iter(blocks), 4, False)] == \
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12]]
    assert [b.tolist() for b in dataset_runtime.rebatched(iter(blocks), 4, True)] == \
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
