"""Dataset.window: windows as datasets, consumed through flat_map / interleave.

Expected values come from TensorFlow 2.21 (tf.compat.v1, graph mode) where quoted, and from a
reference that follows its rule: a window starts every `shift` input elements while input is
left, holds up to `size` elements taken every `stride`-th, and partial windows are dropped
with `drop_remainder`.
"""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset


def drain(make):
    with tf.Graph().as_default():
        nxt = tf.data.make_one_shot_iterator(make()).get_next()
        out = []
        with tf.Session() as sess:
            while True:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return out


def reference(n, size, shift, stride, drop):
    windows = []
    for start in range(0, n, shift):
        window = list(range(start, min(n, start + (size - 1) * stride + 1), stride))
        if len(window) < size and drop:
            break
        windows.append(window)
    return windows


@pytest.mark.parametrize("size,shift,stride,drop", [
    (3, None, 1, False), (3, 2, 1, False), (3, 2, 1, True), (2, 1, 2, False), (2, 5, 1, False),
    (4, 1, 1, True), (1, 1, 3, False), (7, 7, 1, False), (8, 3, 1, True), (3, 4, 2, False)])
def test_windows_match_the_reference(size, shift, stride, drop):
    got = drain(lambda: D.range(7).window(size, shift, stride, drop).flat_map(
        lambda w: w.batch(size)))
    want = reference(7, size, size if shift is None else shift, stride, drop)
    assert [g.tolist() for g in got] == want


def test_values_tensorflow_gives():
    got = drain(lambda: D.range(7).window(3, shift=2).flat_map(lambda w: w.batch(3)))
    assert [g.tolist() for g in got] == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    got = drain(lambda: D.range(7).window(2, shift=1, stride=2).flat_map(lambda w: w.batch(5)))
    assert [g.tolist() for g in got] == [[0, 2], [1, 3], [2, 4], [3, 5], [4, 6], [5], [6]]
    got = drain(lambda: D.range(7).window(3).interleave(lambda w: w, cycle_length=2))
    assert [int(g) for g in got] == [0, 3, 1, 4, 2, 5, 6]


def test_tuple_and_dict_elements_become_structures_of_datasets():
    def zipped():
        r = D.range(7)
        return D.zip((r, r.map(lambda x: x * 10))).window(2).flat_map(
            lambda a, b: D.zip((a, b)).batch(2)).map(lambda a, b: a + b)
    assert [g.tolist() for g in drain(zipped)] == [[0, 11], [22, 33], [44, 55], [66]]

    def keyed():
        d = D.from_tensor_slices({"a": [1, 2, 3], "b": [4., 5., 6.]})
        return d.window(2).flat_map(lambda w: D.zip((w["a"].batch(2), w["b"].batch(2)))).map(
            lambda a, b: tf.cast(a, tf.float32) + b)
    assert [g.tolist() for g in drain(keyed)] == [[5.0, 7.0], [9.0]]


def test_window_elements_keep_their_shape_and_dtype():
    images = np.arange(5 * 2 * 3, dtype=np.float32).reshape(5, 2, 3)
    got = drain(lambda: D.from_tensor_slices(images).window(2, 1, drop_remainder=True)
                .flat_map(lambda w: w.batch(2)))
    assert len(got) == 4
    for i, g in enumerate(got):
        assert g.dtype == np.float32 and g.shape == (2, 2, 3)
        np.testing.assert_array_equal(g, images[i:i + 2])


def test_repeat_and_take_pass_windows_through():
    got = drain(lambda: D.range(4).window(2).repeat(2).take(3).flat_map(lambda w: w.batch(2)))
    assert [g.tolist() for g in got] == [[0, 1], [2, 3], [0, 1]]


def test_concatenated_windows():
    got = drain(lambda: D.range(3).window(2).concatenate(D.range(10, 12).window(2))
                .flat_map(lambda w: w.batch(2)))
    assert [g.tolist() for g in got] == [[0, 1], [2], [10, 11]]


@pytest.mark.parametrize("what,args", [("size", (0,)), ("shift", (2, 0)), ("stride", (2, 1, 0)),
                                       ("size", (-1,))])
def test_nonpositive_arguments_fail_like_tensorflow(what, args):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=f"Window {what} must be greater than zero"):
        drain(lambda: D.range(7).window(*args).flat_map(lambda w: w.batch(2)))


def test_elements_of_different_shapes_cannot_share_a_window():
    def ragged():
        return D.range(1, 4).map(lambda n: tf.range(n)).window(2).flat_map(lambda w: w.batch(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        drain(ragged)


def test_structure_reports_dataset_specs_as_tensorflow_does():
    with tf.Graph().as_default():
        w = D.range(7).window(2)
        for reported in (w.output_types, w.output_shapes, w.output_classes, w.element_spec):
            assert repr(reported) == ("DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, "
                                      "name=None), TensorShape([]))")


@pytest.mark.parametrize("use", [
    lambda w: tf.data.make_one_shot_iterator(w), lambda w: w.make_initializable_iterator(),
    lambda w: w.batch(2), lambda w: w.unbatch(), lambda w: w.padded_batch(2),
    lambda w: w.window(2)])
def test_uses_that_need_tensors_say_to_flat_map_first(use):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="are datasets .from window...: turn each into "
                                            "tensors with flat_map"):
            use(D.range(7).window(2))


def test_map_returning_a_window_is_refused():
    with tf.Graph().as_default(), pytest.raises(TypeError, match="use flat_map"):
        D.range(7).window(2).map(lambda w: w)
