"""SparseTensors inside tf.data pipelines: a map returning one (parse_single_example of a
VarLenFeature), batch and unbatch of them, functions taking them; parse_example_dataset and
make_batched_features_dataset over TFRecord files. Values, static shapes and classes are
TensorFlow 2.21's, checked with shared/programs/run_with_tf.py."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def _example(i: int) -> bytes:
    """x = [i, 2i]; tags = i % 3 strings; label = i % 2."""
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i), 2.0 * i])),
        "tags": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[b"t%d" % k for k in range(i % 3)])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2])),
    })).SerializeToString()


FEATURES = {"x": tf.FixedLenFeature([2], tf.float32), "tags": tf.VarLenFeature(tf.string)}


def _parsed_examples():
    records = [_example(i) for i in range(5)]
    return tf.data.Dataset.from_tensor_slices(records).map(
        lambda r: tf.parse_single_example(r, FEATURES))


def _triple(sparse):
    return sparse.indices.tolist(), sparse.values.tolist(), sparse.dense_shape.tolist()


def test_map_returning_a_sparse_tensor():
    dataset = _parsed_examples()
    assert dataset.output_shapes == {"tags": tf.TensorShape([None]),
                                     "x": tf.TensorShape([2])}
    assert dataset.output_classes == {"tags": tf.SparseTensor, "x": tf.Tensor}
    elements = drain_dataset(dataset)
    assert [_triple(e["tags"]) for e in elements] == [
        ([], [], [0]), ([[0]], [b"t0"], [1]), ([[0], [1]], [b"t0", b"t1"], [2]),
        ([], [], [0]), ([[0]], [b"t0"], [1])]
    assert np.array_equal(elements[2]["x"], [2.0, 4.0])


def test_batch_and_unbatch_of_sparse_components():
    batched = _parsed_examples().batch(2)
    assert batched.output_shapes["tags"] == tf.TensorShape([None, None])
    assert [_triple(e["tags"]) for e in drain_dataset(batched)] == [
        ([[1, 0]], [b"t0"], [2, 1]),
        ([[0, 0], [0, 1]], [b"t0", b"t1"], [2, 2]),
        ([[0, 0]], [b"t0"], [1, 1])]
    unbatched = batched.unbatch()
    assert unbatched.output_shapes["tags"] == tf.TensorShape([None])
    # Each row keeps its batch's dense shape, as in TensorFlow.
    assert [_triple(e["tags"]) for e in drain_dataset(unbatched)] == [
        ([], [], [1]), ([[0]], [b"t0"], [1]), ([[0], [1]], [b"t0", b"t1"], [2]),
        ([], [], [2]), ([[0]], [b"t0"], [1])]


def test_functions_take_sparse_elements():
    dense = _parsed_examples().map(lambda d: tf.sparse.to_dense(d["tags"], default_value=b"-"))
    assert [e.tolist() for e in drain_dataset(dense)] == [[], [b"t0"], [b"t0", b"t1"], [],
                                                          [b"t0"]]
    kept = _parsed_examples().filter(lambda d: tf.size(d["tags"].values) > 0)
    assert len(drain_dataset(kept)) == 3


@pytest.fixture
def records_file(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(7):
            writer.write(_example(i))
    return path


def test_parse_example_dataset(records_file):
    features = dict(FEATURES, label=tf.FixedLenFeature([], tf.int64))
    dataset = tf.data.TFRecordDataset(records_file).batch(3).apply(
        tf.data.experimental.parse_example_dataset(features))
    assert dataset.output_classes["tags"] is tf.SparseTensor
    assert dataset.output_shapes == {"tags": tf.TensorShape([None, None]),
                                     "label": tf.TensorShape([None]),
                                     "x": tf.TensorShape([None, 2])}
    first = drain_dataset(dataset)[0]
    assert _triple(first["tags"]) == ([[1, 0], [2, 0], [2, 1]], [b"t0", b"t0", b"t1"], [3, 2])
    assert first["label"].tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="`features` is required"):
        tf.data.experimental.parse_example_dataset(None)


def test_make_batched_features_dataset(records_file):
    features = dict(FEATURES, label=tf.FixedLenFeature([], tf.int64))
    dataset = tf.data.experimental.make_batched_features_dataset(
        records_file, 4, features, label_key="label", num_epochs=1, shuffle=False)
    assert dataset.output_types == ({"tags": tf.string, "x": tf.float32}, tf.int64)
    batches = drain_dataset(dataset)
    assert [b[0]["x"][:, 0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6]]
    assert [b[1].tolist() for b in batches] == [[0, 1, 0, 1], [0, 1, 0]]
    full = tf.data.experimental.make_batched_features_dataset(
        records_file, 4, features, num_epochs=1, shuffle=False, drop_final_batch=True)
    assert full.output_shapes == {"tags": tf.TensorShape([4, None]),
                                  "label": tf.TensorShape([4]), "x": tf.TensorShape([4, 2])}
    assert len(drain_dataset(full)) == 1
    shuffled = [tf.data.experimental.make_batched_features_dataset(
        records_file, 7, features, num_epochs=1, shuffle_seed=5) for _ in range(2)]
    orders = [drain_dataset(d)[0]["x"][:, 0].tolist() for d in shuffled]
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(7))
    endless = tf.data.experimental.make_batched_features_dataset(records_file, 3, features)
    assert endless.output_shapes["x"] == tf.TensorShape([3, 2])   # num_epochs None: full
    with pytest.raises(ValueError, match=r"The `label_key` provided \(y\) must be one of"):
        tf.data.experimental.make_batched_features_dataset(records_file, 2, features,
                                                           label_key="y")


def test_string_slices_reach_kernels_as_arrays():
    """A row of a string from_tensor_slices is an array, so kernels taking one work."""
    dataset = tf.data.Dataset.from_tensor_slices([b"a,1", b"b,2"]).map(
        lambda line: tf.decode_csv(line, [[""], [0]]))
    assert [(a, int(b)) for a, b in drain_dataset(dataset)] == [(b"a", 1), (b"b", 2)]


def test_get_single_element_with_a_sparse_component():
    record = tf.train.Example(features=tf.train.Features(feature={"t": tf.train.Feature(
        int64_list=tf.train.Int64List(value=[3, 4]))})).SerializeToString()
    dataset = tf.data.Dataset.from_tensors(record).map(
        lambda r: tf.parse_single_example(r, {"t": tf.VarLenFeature(tf.int64)}))
    element = tf.data.experimental.get_single_element(dataset)
    with tf.Session() as sess:
        assert _triple(sess.run(element)["t"]) == ([[0], [1]], [3, 4], [2])


@pytest.mark.parametrize("transform", ["padded_batch", "unique", "group_by_window"])
def test_transformations_that_stack_elements_refuse_sparse_ones(transform):
    # window takes SparseTensors, as TF does (test_sparse_datasets_like_tensorflow.py).
    dataset = tf.data.Dataset.range(3).map(lambda i: tf.SparseTensor([[0]], [i], [1]))
    make = {"padded_batch": lambda: dataset.padded_batch(2),
            "unique": lambda: dataset.unique(),
            "group_by_window": lambda: dataset.apply(tf.data.experimental.group_by_window(
                lambda s: tf.constant(0, tf.int64), lambda key, w: w.batch(2), 2))}
    with pytest.raises(TypeError, match=f"`{transform}` is only supported for datasets that "
                                        "produce tensor elements"):
        make[transform]()


def test_reduce_over_sparse_elements():
    dataset = tf.data.Dataset.range(3).map(lambda i: tf.SparseTensor([[0]], [i], [1]))
    total = dataset.reduce(tf.constant(0, tf.int64),
                           lambda acc, s: acc + tf.reduce_sum(s.values))
    with tf.Session() as sess:
        assert sess.run(total) == 3


def test_slices_and_tensors_of_a_sparse_tensor():
    sparse = tf.SparseTensor([[0, 1], [2, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])
    slices = tf.data.Dataset.from_tensor_slices({"s": sparse, "d": np.arange(3)})
    assert slices.output_shapes == {"s": tf.TensorShape([4]), "d": tf.TensorShape([])}
    rows = drain_dataset(slices)
    assert [(int(r["d"]),) + _triple(r["s"]) for r in rows] == [
        (0, [[1]], [1.0], [4]), (1, [], [], [4]), (2, [[0], [3]], [2.0, 3.0], [4])]
    with tf.Session() as sess:
        assert sess.run(tf.data.experimental.cardinality(slices)) == 3
    batched = drain_dataset(tf.data.Dataset.from_tensor_slices(sparse).batch(2))
    assert [_triple(b)[0] for b in batched] == [[[0, 1]], [[0, 0], [0, 3]]]
    whole = drain_dataset(tf.data.Dataset.from_tensors(tf.SparseTensorValue(
        [[0, 1]], [5.0], [2, 2])))
    assert [_triple(w) for w in whole] == [([[0, 1]], [5.0], [2, 2])]


def test_from_sparse_tensor_slices_gives_each_rows_three_tensors():
    sparse = tf.SparseTensor([[0, 1], [2, 0], [2, 3]], [1.0, 2.0, 3.0], [3, 4])
    dataset = tf.data.Dataset.from_sparse_tensor_slices(sparse)
    assert dataset.output_shapes == (tf.TensorShape([None, 1]), tf.TensorShape([None]),
                                     tf.TensorShape([1]))
    assert dataset.output_classes == (tf.Tensor, tf.Tensor, tf.Tensor)
    rows = [tuple(c.tolist() for c in row) for row in drain_dataset(dataset)]
    assert rows == [([[1]], [1.0], [4]), ([], [], [4]), ([[0], [3]], [2.0, 3.0], [4])]
    with pytest.raises(TypeError, match="Invalid `sparse_tensor`. `sparse_tensor` must be a "
                                        "`tf.sparse.SparseTensor`. Got"):
        tf.data.Dataset.from_sparse_tensor_slices(tf.constant([1]))
