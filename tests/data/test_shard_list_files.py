"""Dataset.shard and Dataset.list_files, as TF1 input pipelines use them (one worker's share of
a file list, interleaved readers). Values, orders and messages are TensorFlow 2.21's, checked
with shared/programs/run_with_tf.py."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset, file_writer


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_shard_takes_every_nth_element_from_index():
    assert drain_dataset(tf.data.Dataset.range(10).shard(3, 1)) == [1, 4, 7]
    batches = drain_dataset(tf.data.Dataset.range(10).shard(3, 0).batch(2))
    assert [b.tolist() for b in batches] == [[0, 3], [6, 9]]
    # After a shuffle (element by element) and over a tensor-slices source (by positions).
    shuffled = drain_dataset(tf.data.Dataset.range(20).shuffle(20, seed=1).shard(4, 2))
    assert len(shuffled) == 5
    rows = drain_dataset(tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(6, 2))
                         .shard(2, 1).batch(2))
    assert [r.tolist() for r in rows] == [[[2, 3], [6, 7]], [[10, 11]]]


def test_shard_keeps_the_element_structure_and_counts():
    dataset = tf.data.Dataset.range(10).shard(4, 1)
    assert (dataset.output_types, dataset.output_shapes) == (tf.int64, tf.TensorShape([]))
    with tf.Session() as sess:
        counts = sess.run([tf.data.experimental.cardinality(tf.data.Dataset.range(10)
                                                            .shard(4, i)) for i in (1, 3)])
        endless = sess.run(tf.data.experimental.cardinality(
            tf.data.Dataset.range(3).repeat().shard(2, 0)))
    assert counts == [3, 2] and endless == tf.data.experimental.INFINITE_CARDINALITY


@pytest.mark.parametrize("num_shards, index, message", [
    (0, 0, r"Number of shards must be greater than zero \(currently num_shards = 0\)\."),
    (3, 3, r"Index must be between 0 and 2 \(currently index = 3\)\."),
    (3, -1, r"Index must be between 0 and 2 \(currently index = -1\)\."),
])
def test_bad_shard_arguments_fail_when_iterated(num_shards, index, message):
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        drain_dataset(tf.data.Dataset.range(10).shard(num_shards, index))


def test_list_files_finds_sorts_and_shuffles(tmp_path):
    write = file_writer(tmp_path)
    for name in ("c", "a", "b"):
        write(f"{name}.txt", f"{name}\n")
    pattern = str(tmp_path / "*.txt")
    names = [str(tmp_path / f"{n}.txt").encode() for n in "abc"]
    assert drain_dataset(tf.data.Dataset.list_files(pattern, shuffle=False)) == names
    assert sorted(drain_dataset(tf.data.Dataset.list_files(pattern))) == names
    seeded = [drain_dataset(tf.data.Dataset.list_files(pattern, seed=3)) for _ in range(2)]
    assert seeded[0] == seeded[1]
    two = [str(tmp_path / "a*.txt"), str(tmp_path / "c*.txt")]
    assert drain_dataset(tf.data.Dataset.list_files(two, shuffle=False)) == [names[0], names[2]]
    dataset = tf.data.Dataset.list_files(pattern, shuffle=False)
    assert (dataset.output_types, dataset.output_shapes) == (tf.string, tf.TensorShape([]))
    lines = drain_dataset(dataset.interleave(tf.data.TextLineDataset, cycle_length=2))
    assert lines == [b"a", b"b", b"c"]


def test_list_files_without_a_match_is_empty(tmp_path):
    """TensorFlow 2.21's graph mode gives an empty dataset here, not an error."""
    assert drain_dataset(tf.data.Dataset.list_files(str(tmp_path / "*.none"))) == []


def test_files_found_when_the_iterator_starts(tmp_path):
    write = file_writer(tmp_path)
    write("first.txt", "1\n")
    dataset = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    write("second.txt", "2\n")            # made after the dataset, before iterating
    assert len(drain_dataset(dataset)) == 2


def test_legacy_function_forms_are_map_and_filter():
    dataset = tf.data.Dataset.range(6).map_with_legacy_function(lambda x: x * 3)
    assert drain_dataset(dataset.filter_with_legacy_function(lambda x: tf.equal(x % 2, 0))) == \
        [0, 6, 12]
