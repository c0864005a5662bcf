"""Dataset.reduce (one ReduceDataset node): folding a dataset into one state, with the values
TensorFlow 2.21 gives."""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset


def run(make, feed=None):
    with tf.Graph().as_default():
        fetch = make()
        with tf.Session() as sess:
            return sess.run(fetch, feed(tf.get_default_graph()) if feed else None)


def test_sum_and_count():
    assert run(lambda: D.range(5).reduce(np.int64(0), lambda s, x: s + x)) == 10
    assert run(lambda: D.range(5).reduce(np.int64(0), lambda s, _: s + 1)) == 5


def test_tuple_state_and_structured_elements():
    got = run(lambda: D.range(5).reduce((np.int64(0), 0.5), lambda s, x: (
        s[0] + 1, s[1] + tf.cast(x, tf.float32))))
    assert got == (5, 10.5) and got[1].dtype == np.float32
    zipped = lambda: D.zip((D.range(5), D.range(5).map(lambda x: x * 10)))   # noqa: E731
    assert run(lambda: zipped().reduce(np.int64(0), lambda s, e: s + e[0] + e[1])) == 110
    keyed = lambda: D.from_tensor_slices({"a": [1, 2], "b": [3, 4]})   # noqa: E731
    assert run(lambda: keyed().reduce(0, lambda s, e: s + e["a"] * e["b"])) == 11


def test_a_growing_state_relaxes_its_shape():
    def make():
        total = D.range(5).reduce(tf.zeros([0], tf.int64), lambda s, x: tf.concat([s, [x]], 0))
        assert total.shape.as_list() == [None]   # the static shape the kernel's result fits
        return total
    np.testing.assert_array_equal(run(make), [0, 1, 2, 3, 4])


def test_static_shapes_are_the_state_shapes():
    with tf.Graph().as_default():
        count, pair = D.range(3).reduce((np.int64(0), tf.zeros([2, 3])),
                                        lambda s, x: (s[0] + x, s[1] * 2.0))
        assert count.shape.as_list() == [] and pair.shape.as_list() == [2, 3]
        with tf.Session() as sess:
            got = sess.run([count, pair])
        assert got[0] == 3 and got[1].shape == (2, 3)


def test_empty_dataset_gives_the_initial_state():
    assert run(lambda: D.range(5).take(0).reduce(np.int64(7), lambda s, x: s + x)) == 7


def test_windows_reduced_by_map():
    got = run(lambda: tf.data.make_one_shot_iterator(
        D.range(7).window(3).map(lambda w: w.reduce(np.int64(0), lambda s, x: s + x))
        .batch(5)).get_next())
    np.testing.assert_array_equal(got, [3, 12, 6])


def test_fed_pipeline_and_captured_tensor_are_read_at_run_time():
    def make():
        values = tf.placeholder(tf.float32, [None], name="values")
        scale = tf.placeholder(tf.float32, [], name="scale")
        return D.from_tensor_slices(values).reduce(0.0, lambda s, x: s + x * scale)

    def feed(graph):
        return {graph.get_tensor_by_name("values:0"): [1.0, 2.0, 3.0],
                graph.get_tensor_by_name("scale:0"): 2.0}
    assert run(make, feed) == 12.0


def test_the_result_is_a_new_array_each_run():
    with tf.Graph().as_default():
        initial = tf.constant([1.0, 2.0])
        total = D.range(0).reduce(initial, lambda s, x: s)
        with tf.Session() as sess:
            first = sess.run(total)
            first[0] = 99.0
            np.testing.assert_array_equal(sess.run(total), [1.0, 2.0])


def test_state_of_another_dtype_or_structure_is_refused():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="element types for the new state must match"):
            D.range(5).reduce(np.int64(0), lambda s, x: tf.cast(s, tf.float32))
        with pytest.raises(TypeError, match="structure of the new state"):
            D.range(5).reduce(np.int64(0), lambda s, x: (s, s))
        with pytest.raises(TypeError, match="turn each into tensors"):
            D.range(5).window(2).reduce(np.int64(0), lambda s, w: s)
