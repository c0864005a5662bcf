"""group_by_window, bucket_by_sequence_length, choose_from_datasets and sample_from_datasets.

Deterministic expectations are TensorFlow 2.21's outputs on the same programs; the random
choices of sample_from_datasets are checked here by their statistics and by seeding, and
element by element against TensorFlow's in test_sample_from_datasets_like_tensorflow.py.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


def lists(elements):
    return [np.asarray(e).tolist() for e in elements]


pytestmark = pytest.mark.usefixtures("graph")


def test_group_by_window_emits_full_windows_then_the_rest_by_key():
    ds = D.range(10).group_by_window(lambda x: x % 3, lambda k, w: w.batch(10), window_size=2)
    assert ds.output_shapes.as_list() == [None]
    assert lists(drain(ds)) == [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]
    flush = D.from_tensor_slices(np.array([5, 3, 9, 1, 3, 5, 7, 2], np.int64)).group_by_window(
        lambda x: x % 4, lambda k, w: w.batch(5), 3)
    assert lists(drain(flush)) == [[5, 9, 1], [3, 3, 7], [5], [2]]


def test_group_by_window_reduce_uses_key_and_window_dataset():
    ds = D.range(13).apply(E.group_by_window(
        lambda x: x % 3, lambda k, w: w.map(lambda v: v + 100 * k).batch(4), window_size=3))
    assert lists(drain(ds)) == [[0, 3, 6], [101, 104, 107], [202, 205, 208], [9, 12], [110],
                                [211]]


def test_group_by_window_size_func():
    ds = D.range(13).group_by_window(lambda x: (x * 7) % 4, lambda k, w: w.batch(9),
                                     window_size_func=lambda k: k + 1)
    assert lists(drain(ds)) == [[0], [4], [3, 7], [8], [2, 6, 10], [12], [11], [1, 5, 9]]


def test_group_by_window_tuple_elements():
    ds = D.from_tensor_slices(([1, 2, 3, 4], [5., 6, 7, 8])).group_by_window(
        lambda a, b: tf.cast(a % 2, tf.int64), lambda k, w: w.batch(2), 2)
    assert ds.output_types == (tf.int32, tf.float32)
    got = drain(ds)
    assert [(a.tolist(), b.tolist()) for a, b in got] == [([1, 3], [5., 7.]),
                                                          ([2, 4], [6., 8.])]


def test_group_by_window_errors():
    with pytest.raises(ValueError, match="Either the `window_size` argument or"):
        D.range(3).group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(ValueError, match="Either the `window_size` argument or"):
        D.range(3).group_by_window(lambda x: x, lambda k, w: w, 1, lambda k: k)
    with pytest.raises(ValueError, match="requested dtype int64 for Tensor with dtype int32"):
        D.range(3).group_by_window(lambda x: tf.cast(x, tf.int32), lambda k, w: w, 2)
    with pytest.raises(ValueError, match="`key_func` must return a single `tf.int64` scalar"):
        D.range(3).group_by_window(lambda x: tf.stack([x]), lambda k, w: w, 2)
    with pytest.raises(TypeError, match="`reduce_func` must return a single `tf.data.Dataset`"):
        D.range(3).group_by_window(lambda x: x, lambda k, w: k, 2)
    for ds in (D.range(3).group_by_window(lambda x: x, lambda k, w: w, window_size=0),
               D.range(3).group_by_window(lambda x: x, lambda k, w: w,
                                          window_size_func=lambda k: k)):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Window size must be greater than zero, but got 0."):
            drain(ds)


def ragged(lengths):
    return D.from_generator(lambda: ([1] * n for n in lengths), tf.int32, [None])


def test_bucket_by_sequence_length_pads_each_batch():
    ds = ragged([1, 5, 3, 2, 7, 4, 1, 6]).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [3, 5], [2, 2, 2])
    assert ds.output_shapes.as_list() == [None, None]
    assert lists(drain(ds)) == [[[1, 0], [1, 1]], [[1, 1, 1, 1, 1, 0, 0], [1] * 7],
                                [[1, 1, 1, 0], [1, 1, 1, 1]], [[1]], [[1] * 6]]


def test_bucket_by_sequence_length_to_boundary_with_padding_value():
    ds = ragged([1, 4, 3, 2, 4, 4, 1, 2]).apply(E.bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [3, 5], [2, 2, 3], padding_values=-1,
        pad_to_bucket_boundary=True))
    assert lists(drain(ds)) == [[[1, 1, 1, 1], [1, 1, 1, -1]], [[1, -1], [1, 1]],
                                [[1, 1, 1, 1], [1, 1, 1, 1]], [[1, -1], [1, 1]]]
    too_long = ragged([1, 7]).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [3, 5], [2, 2, 3], pad_to_bucket_boundary=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="pad_to_bucket_boundary=True"):
        drain(too_long)


def test_bucket_by_sequence_length_drop_remainder_and_dicts():
    ds = ragged([1, 5, 3, 2, 4, 1]).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [3], [2, 2], drop_remainder=True)
    assert lists(drain(ds)) == [[[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], [[1, 0], [1, 1]]]
    dicts = D.from_generator(lambda: ({"a": [1] * n, "b": n} for n in [1, 5, 3, 2]),
                             {"a": tf.int32, "b": tf.int32}, {"a": [None], "b": []})
    ds = dicts.bucket_by_sequence_length(lambda d: d["b"], [3], [2, 2],
                                         padded_shapes={"a": [6], "b": []})
    assert ds.output_shapes["a"].as_list() == [None, 6]
    got = drain(ds)
    assert lists([g["a"] for g in got]) == [[[1] * 5 + [0], [1, 1, 1, 0, 0, 0]],
                                            [[1] + [0] * 5, [1, 1] + [0] * 4]]
    assert lists([g["b"] for g in got]) == [[5, 3], [1, 2]]


def test_bucket_by_sequence_length_no_padding_and_errors():
    ds = D.from_tensor_slices(np.arange(12).reshape(6, 2)).bucket_by_sequence_length(
        lambda x: tf.cast(x[0] % 3, tf.int32), [1], [2, 3], no_padding=True)
    assert lists(drain(ds)) == [[[0, 1], [6, 7]], [[2, 3], [4, 5], [8, 9]], [[10, 11]]]
    with pytest.raises(ValueError, match=r"`len\(bucket_batch_sizes\)` must equal"):
        D.range(3).bucket_by_sequence_length(lambda x: x, [3], [2])


SELECTOR = np.array([0, 1, 1, 0, 0, 0, 1, 1, 1, 1], np.int64)


def test_choose_from_datasets_skips_exhausted_inputs():
    two = [D.range(3), D.range(10, 14)]
    got = drain(E.choose_from_datasets(two, D.from_tensor_slices(SELECTOR)))
    assert got == [0, 10, 11, 1, 2, 12, 13]


def test_choose_from_datasets_stop_on_empty():
    two = [D.range(3), D.range(10, 14)]
    got = drain(D.choose_from_datasets(two, D.from_tensor_slices(SELECTOR[:7])))
    assert got == [0, 10, 11, 1, 2]   # the method's default stops, the experimental's not


def test_choose_from_datasets_errors():
    two = [D.range(3), D.range(10, 14)]
    for index in (2, -1):
        ds = E.choose_from_datasets(two, D.from_tensor_slices(np.array([0, index], np.int64)))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=f"Selector index out of range: {index} >= 2"):
            drain(ds)
    with pytest.raises(TypeError, match="must be scalar `tf.int64` tensors"):
        E.choose_from_datasets([D.range(3)], D.from_tensor_slices([0, 0]))


def counts(elements, n):
    return np.bincount(np.asarray(elements) // 1000, minlength=n)


def test_sample_from_datasets_follows_the_weights():
    datasets = [D.range(i * 1000, i * 1000 + 1000).repeat() for i in range(3)]
    ds = E.sample_from_datasets(datasets, [0.2, 0.3, 0.5], seed=7).take(6000)
    got = drain(ds.batch(6000))[0]
    share = counts(got, 3) / 6000
    # 6000 draws: a standard error below 0.0065 per share; 5 of them is far out of luck.
    np.testing.assert_allclose(share, [0.2, 0.3, 0.5], atol=0.03)
    for i in range(3):    # each input's own order is kept
        mine = got[got // 1000 == i]
        np.testing.assert_array_equal(mine[:50], np.arange(i * 1000, i * 1000 + 50))


def test_sample_from_datasets_is_seeded_and_exhausts_every_input():
    def sample(seed):
        with tf.Graph().as_default():
            return drain(E.sample_from_datasets([D.range(3), D.range(10, 14)], seed=seed))
    first = sample(3)
    assert first == sample(3) and sorted(first) == [0, 1, 2, 10, 11, 12, 13]
    assert any(sample(s) != first for s in range(4, 10))


def test_sample_from_datasets_stop_on_empty_and_zero_weight():
    def sample(stop):
        with tf.Graph().as_default():
            return drain(E.sample_from_datasets([D.range(3), D.range(10, 14)], [0.5, 0.5],
                                                seed=3, stop_on_empty_dataset=stop))
    stopped, full = sample(True), sample(False)
    # Same draws: the stopping run is the other one up to the first draw of an exhausted input.
    assert stopped == full[:len(stopped)] and len(full) == 7
    assert [x for x in stopped if x < 10] == [0, 1, 2] or \
        [x for x in stopped if x >= 10] == [10, 11, 12, 13]
    only_second = drain(E.sample_from_datasets([D.range(3), D.range(10, 14)], [0., 1.]))
    assert only_second == [10, 11, 12, 13]


def test_sample_from_datasets_errors():
    with pytest.raises(TypeError, match="must have compatible element specs"):
        E.sample_from_datasets([D.range(3), D.from_tensor_slices([1., 2.])])
    with pytest.raises(ValueError, match=r"`len\(weights\)=1` vs. `len\(datasets\)=2`"):
        E.sample_from_datasets([D.range(3), D.range(4)], [1.0])
    with pytest.raises(ValueError, match="`datasets` should not be empty"):
        E.sample_from_datasets([])
    weights = tf.placeholder(tf.float32, [2])
    it = tf.data.make_initializable_iterator(E.sample_from_datasets([D.range(3), D.range(4)],
                                                                    weights))
    nxt = it.get_next()
    with tf.Session() as sess:
        # As in TensorFlow 2.21: a negative weight's logit is NaN, probability 0 (the iterator
        # would then draw forever once range(4) is exhausted); no positive weight draws index 2.
        sess.run(it.initializer, {weights: [-1., 2.]})
        assert [sess.run(nxt) for _ in range(4)] == [0, 1, 2, 3]
        sess.run(it.initializer, {weights: [0., 0.]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Selector index out of range: 2 >= 2"):
            sess.run(nxt)
