"""tf.data.experimental.group_by_reducer and Reducer (data/grouping_reducer.py).

Expected values, key order, static shapes and errors are TensorFlow 2.21's on the same
programs (tf.compat.v1, run with /work/shared/programs/run_with_tf.py).
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


pytestmark = pytest.mark.usefixtures("graph")


def passthrough():
    """A reducer whose output is the key itself."""
    return E.Reducer(lambda k: k, lambda s, x: s, lambda s: s)


def test_sum_and_count_per_key():
    reducer = E.Reducer(lambda k: (np.int64(0), np.int64(0)),
                        lambda s, x: (s[0] + x, s[1] + 1), lambda s, n: (s, n))
    ds = D.from_tensor_slices(np.array([5, 3, 8, 3, 1, 5, 9, 13], np.int64)).apply(
        E.group_by_reducer(lambda x: x % 4, reducer))
    assert ds.output_types == (tf.int64, tf.int64)
    assert [s.as_list() for s in ds.output_shapes] == [[], []]
    assert drain(ds) == [(8, 1), (33, 5), (6, 2)]


def test_outputs_come_in_ascending_key_order():
    keys = np.array([7, 100, 3, 50, -2, 9, 1000, 11, 64], np.int64)
    got = drain(D.from_tensor_slices(keys).apply(E.group_by_reducer(lambda x: x, passthrough())))
    assert got == [-2, 3, 7, 9, 11, 50, 64, 100, 1000]
    shuffled = np.random.RandomState(0).permutation(40).astype(np.int64) * 37 % 101
    got = drain(D.from_tensor_slices(shuffled).apply(
        E.group_by_reducer(lambda x: x, passthrough())))
    assert got == sorted(shuffled.tolist())


def test_state_shape_is_relaxed_and_finalize_gets_tuple_state_as_arguments():
    reducer = E.Reducer(lambda k: tf.zeros([0], tf.int64),
                        lambda s, x: tf.concat([s, [x]], 0), lambda s: (s, tf.size(s)))
    ds = D.range(10).apply(E.group_by_reducer(lambda x: x % 3, reducer))
    assert [s.as_list() for s in ds.output_shapes] == [[None], []]
    got = drain(ds)
    assert [(v.tolist(), n) for v, n in got] == [([0, 3, 6, 9], 4), ([1, 4, 7], 3),
                                                 ([2, 5, 8], 3)]
    assert got[0][1].dtype == np.int32


def test_dict_and_tuple_elements():
    reducer = E.Reducer(lambda k: 0.0, lambda s, x: s + x["v"], lambda s: {"total": s})
    ds = D.from_tensor_slices({"k": np.array([1, 2, 1], np.int64), "v": [1., 2., 3.]}).apply(
        E.group_by_reducer(lambda x: x["k"], reducer))
    assert ds.output_types == {"total": tf.float32}
    assert drain(ds) == [{"total": 4.0}, {"total": 2.0}]
    # The element reaches reduce_func as one argument (a tuple), after the state.
    reducer = E.Reducer(lambda k: (k, 0), lambda s, x: (s[0], s[1] + x[1]),
                        lambda k, t: k * 100 + tf.cast(t, tf.int64))
    ds = D.from_tensor_slices((np.array([1, 2, 1], np.int64), [4, 5, 6])).apply(
        E.group_by_reducer(lambda a, b: a, reducer))
    assert drain(ds) == [110, 205]


def test_captures_repeat_and_empty_input():
    c = tf.constant(10, tf.int64)
    reducer = E.Reducer(lambda k: k * c, lambda s, x: s + x * c, lambda s: s - c)
    assert drain(D.range(6).apply(E.group_by_reducer(lambda x: x % 2 + c - c, reducer))) == \
        [50, 90]
    summed = E.Reducer(lambda k: np.int64(0), lambda s, x: s + x, lambda s: s)
    assert drain(D.range(6).apply(E.group_by_reducer(lambda x: x % 2, summed)).repeat(2)) == \
        [6, 9, 6, 9]
    assert drain(D.range(0).apply(E.group_by_reducer(lambda x: x, passthrough()))) == []


def test_sparse_finalize_output():
    reducer = E.Reducer(lambda k: np.int64(0), lambda s, x: s + x,
                        lambda s: tf.SparseTensor([[0]], [s], [1]))
    ds = D.range(6).apply(E.group_by_reducer(lambda x: x % 2, reducer))
    assert ds.output_classes is tf.SparseTensor
    assert [(v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist())
            for v in drain(ds)] == [([[0]], [6], [1]), ([[0]], [9], [1])]


def test_cardinality_is_unknown():
    ds = D.range(5).apply(E.group_by_reducer(lambda x: x, passthrough()))
    with tf.Session() as sess:
        assert sess.run(E.cardinality(ds)) == E.UNKNOWN_CARDINALITY


def test_key_func_must_return_an_int64_scalar():
    with pytest.raises(ValueError, match=r"Expected `key_func` to return a scalar tf.int64 "
                                         r"tensor, but instead `key_func` has output "
                                         r"types=<dtype: 'int32'> and shapes=\(\)\."):
        D.range(3).map(lambda x: tf.cast(x, tf.int32)).apply(
            E.group_by_reducer(lambda x: x, passthrough()))
    with pytest.raises(ValueError, match=r"types=<dtype: 'int64'> and shapes=\(2,\)\."):
        D.range(3).apply(E.group_by_reducer(lambda x: tf.stack([x, x]), passthrough()))


def test_reduce_func_must_keep_the_state_types():
    reducer = E.Reducer(lambda k: np.int64(0), lambda s, x: tf.cast(s, tf.float32),
                        lambda s: s)
    with pytest.raises(TypeError, match=r"Invalid `reducer`. The element types for the new "
                                        r"state <dtype: 'float32'> do not match the element "
                                        r"types of the old state <dtype: 'int64'>\."):
        D.range(3).apply(E.group_by_reducer(lambda x: x, reducer))


def test_function_errors_reach_the_iterator():
    ds = D.from_tensor_slices([1., 0.]).apply(
        E.group_by_reducer(lambda x: tf.cast(1.0 / x, tf.int64) // 0, passthrough()))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        drain(ds)
