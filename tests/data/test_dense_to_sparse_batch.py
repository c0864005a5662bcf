"""tf.data.experimental.dense_to_sparse_batch: batches of dense elements as SparseTensors.

Expected values are TensorFlow 2.21's on the same programs (tf.compat.v1, run with
/work/shared/programs/run_with_tf.py): indices, values, dense shapes, static types and shapes,
and the errors, or a NumPy reference built position by position.

The batches themselves are read from the pipeline's runtime nodes (the DatasetPipeline
variant's value); the iterator tests need the iterator to carry a SparseTensor component as
its three tensors (dataset_ops.flat_specs / from_flat) and are expected failures without it.
"""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data.dataset_ops import pipeline_tensor

D = tf.data.Dataset
d2s = tf.data.experimental.dense_to_sparse_batch

pytestmark = pytest.mark.usefixtures("graph")


def batches(dataset, out=None):
    """The (indices, values, dense_shape) elements of `dataset`'s runtime pipeline; with `out`
    given, appended there as they come (to see those before an error)."""
    variant, _ = pipeline_tensor(dataset)
    with tf.Session() as sess:
        value = sess.run(variant)
    out = out if out is not None else []
    for element in value.make_node():
        out.append(element)
    return out


def check(got, expected, dtype):
    assert len(got) == len(expected)
    for (indices, values, shape), (want_i, want_v, want_s) in zip(got, expected):
        assert indices.dtype == np.int64 and shape.dtype == np.int64
        assert values.dtype == dtype
        assert indices.shape == (len(want_v), len(want_s))
        assert indices.tolist() == want_i
        assert values.tolist() == want_v
        assert shape.tolist() == want_s


def filled(n):
    """Elements 0..n-1, element x being [x] * x (int64)."""
    return D.range(n).map(lambda x: tf.fill([x], x))


FILLED_5_BY_2 = [([[1, 0]], [1]), ([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]], [2, 2, 3, 3, 3]),
                 ([[0, 0], [0, 1], [0, 2], [0, 3]], [4, 4, 4, 4])]


def test_batches_every_position_and_keeps_the_last_partial_batch():
    got = batches(filled(5).apply(d2s(2, [4])))
    check(got, [(i, v, s) for (i, v), s in zip(FILLED_5_BY_2, ([2, 4], [2, 4], [1, 4]))],
          np.int64)


@pytest.mark.parametrize("row_shape", [[None], tf.TensorShape([None])])
def test_an_unknown_dim_is_the_batch_largest(row_shape):
    got = batches(filled(5).apply(d2s(2, row_shape)))
    check(got, [(i, v, s) for (i, v), s in zip(FILLED_5_BY_2, ([2, 1], [2, 3], [1, 4]))],
          np.int64)


def test_zeros_are_positions_too():
    rows = np.array([[0., 1.5, 0.], [2., 0., 0.]], np.float32)
    got = batches(D.from_tensor_slices(rows).apply(d2s(5, [3])))
    check(got, [([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]],
                 [0.0, 1.5, 0.0, 2.0, 0.0, 0.0], [2, 3])], np.float32)


def test_empty_elements_with_unknown_dims():
    got = batches(D.range(3).map(lambda x: tf.zeros([0, x])).apply(d2s(2, [None, None])))
    check(got, [([], [], [2, 0, 1]), ([], [], [1, 0, 2])], np.float32)


def test_matrices_of_different_shapes_against_numpy():
    rng = np.random.RandomState(0)
    shapes = [(2, 3), (1, 1), (3, 0), (3, 2), (1, 3), (2, 2), (3, 3)]
    rows = [rng.randint(-9, 9, size=s).astype(np.int32) for s in shapes]
    ds = D.from_generator(lambda: iter(rows), tf.int32, tf.TensorShape([None, None]))
    got = batches(ds.apply(d2s(3, [None, 4])))
    expected = []
    for start in range(0, len(rows), 3):
        batch = rows[start:start + 3]
        indices = [[b, *pos] for b, r in enumerate(batch) for pos in np.ndindex(r.shape)]
        values = [int(r[pos]) for r in batch for pos in np.ndindex(r.shape)]
        expected.append((indices, values, [len(batch), max(r.shape[0] for r in batch), 4]))
    check(got, expected, np.int32)


def test_rank_three_rows():
    rows = np.arange(12).reshape(3, 2, 2).astype(np.int32)
    got = batches(D.from_tensor_slices(rows).apply(d2s(2, [3, 2])))
    check(got, [([[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1],
                  [1, 1, 0], [1, 1, 1]], list(range(8)), [2, 3, 2]),
                ([[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1]], [8, 9, 10, 11], [1, 3, 2])],
          np.int32)


def test_scalar_rows():
    got = batches(D.range(3).apply(d2s(2, [])))
    check(got, [([[0], [1]], [0, 1], [2]), ([[0]], [2], [1])], np.int64)


@pytest.mark.parametrize("rows, dtype", [
    (np.array([[1.5, 2.5]], np.float64), np.float64),
    (np.array([[True, False]]), np.bool_),
    (np.array([[b"a", b"b"]], dtype=object), object),
])
def test_value_dtypes(rows, dtype):
    got = batches(D.from_tensor_slices(rows).apply(d2s(2, [3])))
    check(got, [([[0, 0], [0, 1]], rows[0].tolist(), [1, 3])], dtype)


def test_strings():
    ds = D.from_tensor_slices(np.array([["a", "b"], ["c", "d"]])).apply(d2s(2, [2]))
    assert ds.output_types == tf.string
    check(batches(ds), [([[0, 0], [0, 1], [1, 0], [1, 1]], [b"a", b"b", b"c", b"d"], [2, 2])],
          object)


def test_static_types_and_shapes():
    ds = filled(3).apply(d2s(2, [4]))
    assert ds.output_types == tf.int64
    assert ds.output_shapes.as_list() == [None, 4]
    assert repr(ds.element_spec) == \
        "SparseTensorSpec(TensorShape([Dimension(None), Dimension(4)]), tf.int64)"
    ds = D.from_tensor_slices(np.zeros((3, 2), np.float32)).apply(d2s(2, [None, 5]))
    assert ds.output_types == tf.float32
    assert ds.output_shapes.as_list() == [None, None, 5]
    element = tf.data.make_one_shot_iterator(ds).get_next()
    assert isinstance(element, tf.SparseTensor)
    assert element.shape.as_list() == [None, None, 5]   # as TF's get_next reports it


@pytest.mark.parametrize("rows, row_shape, message", [
    (np.zeros((3, 2, 2), np.float32), [None],
     "Input element had shape ([2,2]) that is incompatible with the row shape ([?])."),
    (np.zeros((3, 2), np.float32), [None, 5],
     "Input element had shape ([2]) that is incompatible with the row shape ([?,5])."),
    (np.zeros(3, np.int64), [2],
     "Input element had shape ([]) that is incompatible with the row shape ([2])."),
])
def test_rank_mismatch_is_invalid_argument(rows, row_shape, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
        batches(D.from_tensor_slices(rows).apply(d2s(2, row_shape)))


@pytest.mark.parametrize("rows, row_shape, message", [
    (np.zeros((3, 2, 2), np.float32), [None, 1],
     "Input element had shape ([2,2]) that is larger than the row shape ([?,1])."),
    (np.zeros((3, 2, 2, 3), np.float32), [2, 2, 2],
     "Input element had shape ([2,2,3]) that is larger than the row shape ([2,2,2])."),
])
def test_larger_element_is_data_loss(rows, row_shape, message):
    with pytest.raises(tf.errors.DataLossError, match=re.escape(message)):
        batches(D.from_tensor_slices(rows).apply(d2s(2, row_shape)))


def test_batches_before_a_larger_element_come_through():
    got = []
    with pytest.raises(tf.errors.DataLossError, match=re.escape(
            "Input element had shape ([4]) that is larger than the row shape ([3]).")):
        batches(filled(5).apply(d2s(3, [3])), got)
    check(got, [([[1, 0], [2, 0], [2, 1]], [1, 2, 2], [3, 3])], np.int64)


@pytest.mark.parametrize("size", [0, -1])
def test_batch_size_must_be_positive(size):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Batch size must be greater than zero."):
        batches(filled(3).apply(d2s(size, [4])))


@pytest.mark.parametrize("make, types", [
    (lambda: D.zip((filled(3), filled(3))), "(tf.int64, tf.int64)"),
    (lambda: D.from_tensor_slices({"a": np.zeros((3, 4), np.float32)}), "{'a': tf.float32}"),
])
def test_elements_must_have_one_component(make, types):
    with pytest.raises(TypeError, match=re.escape(
            "`dense_to_sparse_batch` requires an input dataset whose elements have a single "
            f"component, but the given dataset has the following component types: {types}.")):
        make().apply(d2s(2, [4]))


def test_row_shape_errors():
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        filled(3).apply(d2s(2, [-1]))
    with pytest.raises(TypeError, match="Dimension value must be integer or None"):
        filled(3).apply(d2s(2, tf.constant([4], tf.int64)))
    with pytest.raises(ValueError, match=re.escape(
            "Cannot convert a partially known TensorShape <unknown> to a Tensor.")):
        filled(3).apply(d2s(2, tf.TensorShape(None)))


def fetch_all(sess, nxt):
    out = []
    while True:
        try:
            out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            return out


def as_triples(values):
    return [(v.indices, v.values, v.dense_shape) for v in values]


def test_one_shot_iterator_gives_sparse_tensors():
    ds = filled(5).apply(d2s(2, [4]))
    assert ds.output_classes is tf.SparseTensor
    it = ds.make_one_shot_iterator()
    assert (it.output_classes, it.output_types) == (tf.SparseTensor, tf.int64)
    assert it.output_shapes.as_list() == [None, 4]
    nxt = it.get_next()
    assert isinstance(nxt, tf.SparseTensor) and nxt.dtype == tf.int64
    with tf.Session() as sess:
        got = fetch_all(sess, nxt)
    assert all(isinstance(v, tf.SparseTensorValue) for v in got)
    check(as_triples(got), [(i, v, s) for (i, v), s in
                            zip(FILLED_5_BY_2, ([2, 4], [2, 4], [1, 4]))], np.int64)


def test_initializable_iterator_with_a_fed_batch_size_and_more_transformations():
    size = tf.placeholder(tf.int64, [])
    ds = filled(5).apply(d2s(size, [None])).repeat(2).prefetch(1)
    assert ds.output_classes is tf.SparseTensor
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {size: 5})
        got = fetch_all(sess, nxt)
        sess.run(it.initializer, {size: 2})
        again = fetch_all(sess, nxt)
    whole = ([[1, 0], [2, 0], [2, 1], [3, 0], [3, 1], [3, 2], [4, 0], [4, 1], [4, 2], [4, 3]],
             [1, 2, 2, 3, 3, 3, 4, 4, 4, 4], [5, 4])
    check(as_triples(got), [whole, whole], np.int64)
    by_2 = [(i, v, s) for (i, v), s in zip(FILLED_5_BY_2, ([2, 1], [2, 3], [1, 4]))]
    check(as_triples(again), by_2 * 2, np.int64)


def test_the_dataset_method_is_the_transformation():
    """TF 2.x's `Dataset.sparse_batch` (which TF1's Dataset inherits) is the same batching."""
    rows = D.from_generator(lambda: iter([[1, 2], [3], [4, 5, 6]]), tf.int32, [None])
    via_method = tf.data.make_one_shot_iterator(rows.sparse_batch(2, [4])).get_next()
    via_apply = tf.data.make_one_shot_iterator(rows.apply(d2s(2, [4]))).get_next()
    with tf.Session() as sess:
        for _ in range(2):
            got, want = sess.run([via_method, via_apply])
            np.testing.assert_array_equal(got.indices, want.indices)
            np.testing.assert_array_equal(got.values, want.values)
            np.testing.assert_array_equal(got.dense_shape, want.dense_shape)
    assert got.dense_shape.tolist() == [1, 4] and got.values.tolist() == [4, 5, 6]
