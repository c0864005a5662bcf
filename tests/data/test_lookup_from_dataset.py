"""tf.data.experimental.table_from_dataset, index_table_from_dataset and DatasetInitializer
(data/lookup_from_dataset.py, kernels/lookup_dataset.py).

Expected values, op names and errors are TensorFlow 2.21's on the same programs.
"""
import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


def keys():
    return D.from_tensor_slices(["a", "b", "c"])


def pairs():
    return D.zip((keys(), D.from_tensor_slices(tf.constant([10, 20, 30], tf.int64))))


QUERY = ["a", "c", "zz", "b"]


def test_tables_from_datasets():
    query = tf.constant(QUERY)
    table = E.table_from_dataset(pairs(), default_value=-7)
    index = E.index_table_from_dataset(keys())
    buckets = E.index_table_from_dataset(keys(), num_oov_buckets=3)
    hashed = tf.lookup.StaticHashTable(E.DatasetInitializer(pairs()), -1)
    assert [t.name for t in (table, index, buckets)] == ["hash_table"] * 3
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        got = sess.run([table.lookup(query), index.lookup(query), buckets.lookup(query),
                        hashed.lookup(query), table.size(), buckets.size()])
    expected = [[10, 30, -7, 20], [0, 2, -1, 1], [0, 2, 4, 1], [10, 30, -1, 20], 3, 6]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_op_names_and_collection():
    E.table_from_dataset(pairs())
    graph = tf.get_default_graph()
    names = [op.name for op in graph.get_operations()
             if op.type in ("HashTableV2", "InitializeTableFromDataset")]
    assert names == ["string_to_index/hash_table/hash_table",
                     "string_to_index/hash_table/InitializeTableFromDataset"]
    assert [op.name for op in graph.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)] == \
        ["string_to_index/hash_table/InitializeTableFromDataset"]


def test_initializer_dtypes():
    init = E.DatasetInitializer(pairs())
    assert (init.key_dtype, init.value_dtype) == (tf.string, tf.int64)


def test_vocab_size_takes_that_many_and_asserts_at_least_that_many():
    short = E.table_from_dataset(pairs(), vocab_size=2)
    long = E.table_from_dataset(pairs(), vocab_size=5)
    with tf.Session() as sess:
        sess.run(short.initializer)
        assert sess.run(short.size()) == 2
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="expected to contain 5 elements but contained only 3"):
            sess.run(long.initializer)


@pytest.mark.parametrize("dataset, error, message", [
    (lambda: D.range(3), TypeError, "object of type 'TensorSpec' has no len()"),
    (lambda: D.zip((keys(), keys(), keys())), ValueError,
     "produces 3 components instead of two"),
    (lambda: D.zip((keys().batch(2), keys())), ValueError,
     "produces non-scalar key Tensors of rank 1."),
])
def test_element_structure_errors(dataset, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        E.DatasetInitializer(dataset())


@pytest.mark.parametrize("kwargs, error, message", [
    ({"dataset": "strings"}, ValueError, "`default_value` must be specified when creating a "
     "table from a dataset that produces values of type <dtype: 'string'>."),
    ({"num_oov_buckets": -1}, ValueError,
     "`num_oov_buckets` must be greater than or equal to 0, got -1."),
    ({"vocab_size": 0}, ValueError, "`vocab_size` must be greater than 0, got 0."),
    ({"key_dtype": tf.float32}, TypeError, "`key_dtype` must be either an integer or string "
     "type, but got <dtype: 'float32'>"),
])
def test_argument_errors(kwargs, error, message):
    dataset = D.zip((keys(), keys())) if kwargs.pop("dataset", None) else pairs()
    with pytest.raises(error) as info:
        E.table_from_dataset(dataset, **kwargs)
    assert str(info.value) == message


def test_a_key_with_two_values_fails_initialization():
    dataset = D.zip((D.from_tensor_slices(["a", "a"]),
                     D.from_tensor_slices(tf.constant([1, 2], tf.int64))))
    table = E.table_from_dataset(dataset)
    with tf.Session() as sess, pytest.raises(
            tf.errors.FailedPreconditionError,
            match="HashTable has different value for same key. Key a has 1 and trying to add "
                  "value 2"):
        sess.run(table.initializer)
