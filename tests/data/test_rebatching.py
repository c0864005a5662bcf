"""Dataset.rebatch (data/rebatching.py, kernels/dataset_rebatch.py).

Expected batches, static shapes and errors are TensorFlow 2.21's on the same programs (run
with /work/shared/programs/run_with_tf.py).
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


pytestmark = pytest.mark.usefixtures("graph")


def lists(ds):
    return [np.asarray(x).tolist() for x in drain(ds)]


def test_scalar_batch_size_is_unbatch_then_batch():
    ds = D.range(10).batch(4).rebatch(3)
    assert ds.output_shapes.as_list() == [None]
    assert lists(ds) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert lists(ds) == lists(D.range(10).batch(4).unbatch().batch(3))
    dropped = D.range(10).batch(4).rebatch(3, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [3]
    assert lists(dropped) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_static_batch_dimension_only_when_batches_are_sure_to_be_full():
    full = D.range(10).batch(4, drop_remainder=True)
    assert full.rebatch(2).output_shapes.as_list() == [2]
    assert full.rebatch(3).output_shapes.as_list() == [None]
    assert D.range(12).batch(4, drop_remainder=True).rebatch([2, 2]).output_shapes.as_list() \
        == [2]
    assert D.range(10).batch(4).rebatch(tf.constant(3, tf.int64)).output_shapes.as_list() == \
        [None]
    unknown = D.range(8).batch(4, drop_remainder=True).rebatch(
        tf.placeholder_with_default(np.int64(2), []))
    assert unknown.output_shapes.as_list() == [None]


def test_batch_size_vector_cycles():
    ds = D.range(10).batch(4).rebatch([1, 2, 3])
    assert ds.output_shapes.as_list() == [None]
    assert lists(ds) == [[0], [1, 2], [3, 4, 5], [6], [7, 8], [9]]
    assert lists(D.range(10).batch(4).rebatch([1, 2, 3], drop_remainder=True)) == \
        [[0], [1, 2], [3, 4, 5], [6], [7, 8]]
    assert lists(D.range(5).batch(2).rebatch(np.array([2], np.int32))) == [[0, 1], [2, 3], [4]]


def test_zero_sizes_give_empty_batches_without_reading_input():
    assert lists(D.range(6).batch(3).rebatch([0, 2])) == \
        [[], [0, 1], [], [2, 3], [], [4, 5], []]
    assert lists(D.range(4).batch(2).rebatch([2, 0], drop_remainder=True)) == \
        [[0, 1], [], [2, 3], []]
    assert lists(D.range(6).batch(3).rebatch(0).take(3)) == [[], [], []]
    shapes = [np.shape(x) for x in drain(
        D.from_tensor_slices(np.zeros([4, 3, 2])).batch(2).rebatch([0, 3]))]
    assert shapes == [(0, 3, 2), (3, 3, 2), (0, 3, 2), (1, 3, 2)]
    shapes = [np.shape(x) for x in drain(
        D.range(1, 4).map(lambda x: tf.zeros([x, 2])).batch(1).rebatch([0, 1]))]
    assert shapes == [(0, 0, 2), (1, 1, 2), (0, 0, 2), (1, 2, 2), (0, 0, 2), (1, 3, 2),
                      (0, 0, 2)]
    strings = drain(D.from_tensor_slices(["a", "b", "c"]).batch(2).rebatch([0, 2]))
    assert [s.tolist() for s in strings] == [[], [b"a", b"b"], [], [b"c"]]
    assert strings[0].dtype == object


def test_tuple_components_are_sliced_together():
    ds = D.from_tensor_slices((np.arange(12).reshape(6, 2), np.arange(6.))).batch(4).rebatch(3)
    assert [s.as_list() for s in ds.output_shapes] == [[None, 2], [None]]
    got = drain(ds)
    assert [(a.tolist(), b.tolist()) for a, b in got] == [
        ([[0, 1], [2, 3], [4, 5]], [0., 1., 2.]), ([[6, 7], [8, 9], [10, 11]], [3., 4., 5.])]


def test_sparse_components():
    sparse = tf.SparseTensor([[0, 0], [2, 1]], [1, 2], [4, 3])
    got = drain(D.from_tensor_slices(sparse).batch(2).rebatch(1))
    assert [(v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist()) for v in got] == [
        ([[0, 0]], [1], [1, 3]), ([], [], [1, 3]), ([[0, 1]], [2], [1, 3]), ([], [], [1, 3])]
    joined = drain(D.from_tensor_slices(sparse).batch(1).rebatch(3))
    assert [(v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist())
            for v in joined] == [([[0, 0], [2, 1]], [1, 2], [3, 3]), ([], [], [1, 3])]


def test_rows_of_different_shapes_join_only_in_separate_batches():
    ds = D.from_tensor_slices([[1, 2], [3, 4]]).batch(1).concatenate(
        D.from_tensor_slices([[1, 2, 3]]).batch(1))
    assert lists(ds.rebatch(2)) == [[[1, 2], [3, 4]], [[1, 2, 3]]]
    mixed = D.range(1, 4).map(lambda x: tf.zeros([x])).batch(1).rebatch(2)
    out = []
    with pytest.raises(tf.errors.FailedPreconditionError,
                       match="Cannot rebatch component 0: its slices have shapes"):
        drain(mixed, out)
    assert out == []


def test_cardinality_is_unknown():
    with tf.Session() as sess:
        for ds in (D.range(10).batch(4).rebatch(3), D.range(12).batch(4).rebatch(3, True),
                   D.range(10).batch(4).repeat().rebatch(3)):
            assert sess.run(E.cardinality(ds)) == E.UNKNOWN_CARDINALITY


def test_graph_construction_errors():
    with pytest.raises(ValueError, match="Expected `batch_sizes` to be a scalar or a vector. "
                                         "Received `batch_sizes` of rank 2."):
        D.range(6).batch(3).rebatch([[1]])
    with pytest.raises(ValueError, match="Expected dataset with rank of >= 1 but found a "
                                         "dataset with scalar elements."):
        D.range(6).rebatch(2)
    with pytest.raises(ValueError, match="Unbatching a tensor is only supported for rank >= 1"):
        D.range(6).rebatch(2, drop_remainder=True)
    with pytest.raises(ValueError, match=r"The batch dimension of component 0 is 3, while the "
                                         r"batch dimension of component i is \[3 2\]\."):
        D.zip((D.range(6).batch(3, drop_remainder=True),
               D.range(6).batch(2, drop_remainder=True))).rebatch(2)
    with pytest.raises(ValueError, match="Tensor conversion requested dtype int64"):
        D.range(5).batch(2).rebatch(tf.constant([1, 3]))


def test_run_time_errors():
    mismatched = D.zip((D.range(4).batch(2), D.range(6).batch(3))).rebatch(2)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Input element must have the same batch size in each component. "
                             "Component 0 had size 2 but component 1 had size, 3."):
        drain(mismatched)
    # TensorFlow 2.21 crashes on these; tensorweave refuses them when the iterator starts.
    for sizes in (-1, np.zeros([0], np.int64)):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid `batch_sizes`"):
            drain(D.range(6).batch(3).rebatch(sizes))
