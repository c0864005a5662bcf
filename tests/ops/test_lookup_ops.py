"""tf.lookup tables and their ops: HashTableV2, MutableHashTableV2,
MutableHashTableOfTensorsV2, InitializeTableV2, LookupTableImportV2,
InitializeTableFromTextFileV2, LookupTableFindV2, LookupTableInsertV2, LookupTableRemoveV2,
LookupTableSizeV2 and LookupTableExportV2. Values, op names and error messages were recorded
from TensorFlow 2.21 (tf.compat.v1 graph mode); out-of-vocabulary ids are TensorFlow's
Fingerprint64 buckets. Exports are in key order (TensorFlow's order is its hash order)."""
import os
import re
import tempfile

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import lookup_ops
from tensorweave.testing.op_case import OpCase, case_tests

_DIR = tempfile.mkdtemp(prefix="tw_lookup_")


def _write(name: str, data: bytes) -> str:
    path = os.path.join(_DIR, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


VOCAB = _write("vocab.tsv", b"apple\t0\t1.5\nbanana\t1\t2.5\ncherry\t2\t3.5\n")
WORDS = _write("words.txt", b"a\nb\nc\n")
CRLF = _write("crlf.txt", b"a,1\r\nb,2\nc,x\n,4\n")
INTS = _write("ints.txt", b"10\n20\n30")
EMPTY_LINE = _write("odd.txt", b"x,1\r\n\ny 2,3\nz,4")
EMPTY = _write("empty.txt", b"")


def _fixed(value, dtype=None):
    return lambda rng, dt: np.array(value, dtype=dtype or object)


def _strings(*words):
    return [w.encode() for w in words]


def _initialized(table, fetch):
    """`fetch(table)` run after the table's initializer (the row's ops in one step)."""
    with tf.control_dependencies([table.initializer]):
        return fetch(table)


def _static_lookup(keys, values, default, key_dtype=None, value_dtype=None):
    def build(query):
        init = tf.lookup.KeyValueTensorInitializer(keys, values, key_dtype, value_dtype)
        return _initialized(tf.lookup.StaticHashTable(init, default), lambda t: t.lookup(query))
    return build


def _dict_ref(keys, values, default, out_dtype):
    """NumPy reference: each key's value, else the default."""
    table = dict(zip(keys, values))

    def ref(query):
        flat = [table.get(k, default) for k in np.asarray(query).reshape(-1).tolist()]
        return np.array(flat, dtype=out_dtype).reshape(np.shape(query))
    return ref


def _text_lookup(filename, key_dtype, key_index, value_dtype, value_index, default, **kw):
    def build(query):
        init = tf.lookup.TextFileInitializer(filename, key_dtype, key_index, value_dtype,
                                             value_index, **kw)
        table = tf.lookup.StaticHashTable(init, default)
        return _initialized(table, lambda t: [t.lookup(query), t.size()])
    return build


def _sizes(ref, n):
    return lambda query: [ref(query), np.int64(n)]


def _vocab_lookup(keys, num_oov_buckets, key_dtype=tf.string, lookup_key_dtype=None):
    def build(query):
        init = None if keys is None else tf.lookup.KeyValueTensorInitializer(
            tf.constant(keys, key_dtype), tf.constant(np.arange(len(keys)), tf.int64))
        table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets,
                                                lookup_key_dtype=lookup_key_dtype)
        return _initialized(table, lambda t: [t.lookup(query), t.size()])
    return build


def _export_static(query):
    init = tf.lookup.KeyValueTensorInitializer(["b", "c", "a"], tf.constant([2, 3, 1], tf.int64))
    table = tf.lookup.StaticHashTable(init, -1)
    return _initialized(table, lambda t: list(t.export()) + [t.lookup(query)])


def _mutable(keys, values, query):
    """Inserts (keys, values) into a MutableHashTable, then looks up and exports it."""
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, 0.5)
    with tf.control_dependencies([table.insert(keys, values)]):
        return [table.lookup(query), table.size()] + list(table.export())


def _mutable_ref(keys, values, query):
    table = dict(zip(keys.reshape(-1).tolist(), values.reshape(-1).tolist()))
    found = [table.get(k, 0.5) for k in query.reshape(-1).tolist()]
    order = sorted(table)
    return [np.array(found, np.float32).reshape(query.shape), np.int64(len(table)),
            np.array(order, np.int64), np.array([table[k] for k in order], np.float32)]


def _remove(keys, removed, query):
    """Removes keys, some repeated and some never inserted, from a MutableHashTable."""
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, -1.0)
    with tf.control_dependencies([table.insert(keys, tf.cast(keys, tf.float32))]):
        remove = table.remove(removed)
    with tf.control_dependencies([remove]):
        return [table.lookup(query), table.size()] + list(table.export())


def _remove_ref(keys, removed, query):
    left = sorted(set(keys.tolist()) - set(removed.reshape(-1).tolist()))
    found = [float(k) if k in left else -1.0 for k in query.tolist()]
    return [np.array(found, np.float32), np.int64(len(left)), np.array(left, np.int64),
            np.array(left, np.float32)]


def _vector_remove(keys, values, removed, query):
    """Removes string keys from a table of vectors (MutableHashTableOfTensorsV2)."""
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, [-1, -2])
    with tf.control_dependencies([table.insert(keys, values)]):
        remove = table.remove(removed)
    with tf.control_dependencies([remove]):
        return [table.lookup(query), table.size()]


def _import(keys, values, query):
    """LookupTableImportV2 replaces a mutable table's contents."""
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, -1.0)
    first = table.insert(tf.constant([100, 200], tf.int64), tf.constant([1.0, 2.0]))
    with tf.control_dependencies([first]):
        imported = apply_op(lookup_ops.LookupTableImportV2, [table.resource_handle, keys, values])
    with tf.control_dependencies([imported]):
        return table.lookup(query)


def _vectors(keys, values, query):
    """A MutableHashTable of vectors (MutableHashTableOfTensorsV2): keys of any shape, of
    repeated keys the last value, lookups shaped keys + value shape."""
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [-1.0, -2.0])
    with tf.control_dependencies([table.insert(keys, values)]):
        return [table.lookup(query), table.size()] + list(table.export())


def _vectors_ref(keys, values, query):
    table = dict(zip(keys.reshape(-1).tolist(), map(tuple, values.reshape(-1, 2).tolist())))
    found = [table.get(k, (-1.0, -2.0)) for k in query.reshape(-1).tolist()]
    order = sorted(table)
    return [np.array(found, np.float32).reshape(query.shape + (2,)), np.int64(len(table)),
            np.array(order, np.int64), np.array([table[k] for k in order], np.float32)]


def _vector_import(keys, values, query, defaults):
    """An import replaces a table of vectors' contents; a lookup with one default per key."""
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, [0, 0, 0])
    first = table.insert(tf.constant(["old"]), tf.constant([[7, 7, 7]], tf.int64))
    with tf.control_dependencies([first]):
        imported = apply_op(lookup_ops.LookupTableImportV2, [table.resource_handle, keys, values])
    with tf.control_dependencies([imported]):
        return [table.lookup(query, dynamic_default_values=defaults), table.size()]


def _initialize_raw(keys, values, query):
    """InitializeTableV2 (the op older graphs use) fills a HashTableV2."""
    handle = apply_op(lookup_ops.HashTableV2, [], {"key_dtype": tf.int64,
                                                   "value_dtype": tf.float32,
                                                   "shared_name": "raw_init_table"})
    init = apply_op(lookup_ops.InitializeTableV2, [handle, keys, values])
    with tf.control_dependencies([init]):
        return apply_op(lookup_ops.LookupTableFindV2, [handle, query, tf.constant(-1.0)])


_LETTERS = _strings("a", "b", "c")
_QUERY = _fixed([_strings("a", "z"), _strings("c", "b")])
_I64 = (tf.int64, tf.float32, tf.int64)
CASES = [
    OpCase("static_string_to_int64", _static_lookup(["a", "b", "c"], [1, 2, 3], -1, None,
                                                    tf.int64),
           _dict_ref(_LETTERS, [1, 2, 3], -1, np.int64), [_QUERY], dtypes=(tf.string,),
           grad=False),
    OpCase("static_string_to_float", _static_lookup(["a", "b", "c"], [0.5, 1.5, 2.5], 9.0),
           _dict_ref(_LETTERS, [0.5, 1.5, 2.5], 9.0, np.float32), [_QUERY],
           dtypes=(tf.string,), grad=False),
    OpCase("static_string_to_bool", _static_lookup(["a", "b"], [True, False], True),
           _dict_ref(_strings("a", "b"), [True, False], True, bool),
           [_fixed(_strings("b", "a", "q"))], dtypes=(tf.string,), grad=False),
    OpCase("static_int64_to_string", _static_lookup(np.array([5, 7], np.int64), ["x", "y"],
                                                    "UNK"),
           _dict_ref([5, 7], _strings("x", "y"), b"UNK", object),
           [_fixed([5, 6, 7], np.int64)], dtypes=(tf.int64,), grad=False),
    OpCase("static_int32_to_float64", _static_lookup([3, -1, 8], [0.25, 0.5, 0.75], -2.0,
                                                     tf.int32, tf.float64),
           _dict_ref([3, -1, 8], [0.25, 0.5, 0.75], -2.0, np.float64),
           [_fixed([[8, 3, 0], [-1, 2, 3]], np.int32)], dtypes=(tf.int32,), grad=False),
    OpCase("static_empty_query", _static_lookup(["a"], [1.5], 0.0, None, tf.float64),
           lambda q: np.zeros((0, 3)), [_fixed(np.zeros((0, 3), object))],
           dtypes=(tf.string,), grad=False),
    OpCase("static_export", _export_static,
           lambda q: [np.array(_strings("a", "b", "c"), object), np.array([1, 2, 3]),
                      np.array([3, -1])],
           [_fixed(_strings("c", "d"))], dtypes=(tf.string,), grad=False),
    OpCase("text_columns", _text_lookup(VOCAB, tf.string, 0, tf.int64, 1, -1),
           _sizes(_dict_ref(_strings("apple", "banana", "cherry"), [0, 1, 2], -1, np.int64),
                  3),
           [_fixed(_strings("banana", "x", "cherry"))], dtypes=(tf.string,), grad=False),
    OpCase("text_whole_line_to_line_number",
           _text_lookup(VOCAB, tf.string, -2, tf.int64, -1, -1),
           _sizes(lambda q: np.array([1, -1]), 3), [_fixed([b"banana\t1\t2.5", b"x"])],
           dtypes=(tf.string,), grad=False),
    OpCase("text_int_to_float_vocab_size",
           _text_lookup(VOCAB, tf.int64, 1, tf.float32, 2, -1.0, vocab_size=2),
           _sizes(lambda q: np.array([1.5, 2.5, -1.0], np.float32), 2),
           [_fixed([0, 1, 2], np.int64)], dtypes=(tf.int64,), grad=False),
    OpCase("text_words", _text_lookup(WORDS, tf.string, -2, tf.int64, -1, -1),
           _sizes(lambda q: np.array([0, 2, -1]), 3), [_fixed(_strings("a", "c", "q"))],
           dtypes=(tf.string,), grad=False),
    OpCase("text_crlf_offset",
           _text_lookup(CRLF, tf.string, -2, tf.int64, -1, -1, delimiter=",",
                        value_index_offset=5),
           _sizes(lambda q: np.array([5, 8, -1]), 4), [_fixed([b"a,1", b",4", b"a,1\r"])],
           dtypes=(tf.string,), grad=False),
    OpCase("text_int_keys_string_values", _text_lookup(INTS, tf.int32, -2, tf.string, -2, ""),
           _sizes(lambda q: np.array([b"20", b"", b"10"], object), 3),
           [_fixed([20, 0, 10], np.int32)], dtypes=(tf.int32,), grad=False),
    # StaticVocabularyTable ids recorded from TensorFlow 2.21.
    OpCase("vocab_strings", _vocab_lookup(["a", "b"], 3),
           lambda q: [np.array([0, 1, 3, 3, 3, 4]), np.int64(5)],
           [_fixed(_strings("a", "b", "c", "hello", "world", ""))], dtypes=(tf.string,),
           grad=False),
    OpCase("vocab_int64", _vocab_lookup([10, 20], 4, tf.int64),
           lambda q: [np.array([[0, 1], [4, 2]]), np.int64(6)],
           [_fixed([[10, 20], [30, -5]], np.int64)], dtypes=(tf.int64,), grad=False),
    OpCase("vocab_int32_lookup", _vocab_lookup([10, 20], 4, tf.int64, tf.int32),
           lambda q: [np.array([0, 4, 2]), np.int64(6)], [_fixed([10, 30, 7], np.int32)],
           dtypes=(tf.int32,), grad=False),
    OpCase("vocab_only_buckets", _vocab_lookup(None, 5),
           lambda q: [np.array([4, 2, 0]), np.int64(5)], [_fixed(_strings("a", "b", "zzz"))],
           dtypes=(tf.string,), grad=False),
    OpCase("mutable_insert_find_export", _mutable, _mutable_ref,
           [_fixed([[3, 1], [3, 2]], np.int64), _fixed([[1.0, 2.0], [3.0, 4.0]], np.float32),
            _fixed([[1, 2], [3, 4]], np.int64)], dtypes=_I64[1:2], fixed_dtypes=_I64,
           grad=False),
    OpCase("mutable_remove", _remove, _remove_ref,
           [_fixed([1, 2, 3, 4], np.int64), _fixed([[2, 7], [4, 2]], np.int64),
            _fixed([1, 2, 3, 4, 7], np.int64)], dtypes=(tf.int64,),
           fixed_dtypes=(tf.int64,) * 3, grad=False),
    OpCase("mutable_vectors_remove", _vector_remove,
           lambda k, v, r, q: [np.array([[1, 2], [-1, -2], [5, 6], [-1, -2]]), np.int64(2)],
           [_fixed(_strings("a", "b", "c")), _fixed([[1, 2], [3, 4], [5, 6]], np.int64),
            _fixed(_strings("b", "zz")), _fixed(_strings("a", "b", "c", "zz"))],
           dtypes=(tf.int64,), fixed_dtypes=(tf.string, tf.int64, tf.string, tf.string),
           grad=False),
    OpCase("mutable_import", _import, lambda k, v, q: np.array([-1.0, 7.0, -1.0], np.float32),
           [_fixed([9, 4], np.int64), _fixed([6.0, 7.0], np.float32),
            _fixed([100, 4, 5], np.int64)], dtypes=_I64[1:2], fixed_dtypes=_I64, grad=False),
    OpCase("mutable_vectors_insert_find_export", _vectors, _vectors_ref,
           [_fixed([[3, 1], [3, 2]], np.int64),
            _fixed([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32),
            _fixed([[1, 2], [3, 4]], np.int64)], dtypes=_I64[1:2], fixed_dtypes=_I64,
           grad=False),
    OpCase("mutable_vectors_import",
           _vector_import,
           lambda k, v, q, d: [np.array([[1, 2, 3], [-4, -5, -6], [7, 8, 9]]), np.int64(2)],
           [_fixed(_strings("a", "b")), _fixed([[1, 2, 3], [7, 8, 9]], np.int64),
            _fixed(_strings("a", "old", "b")),
            _fixed([[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]], np.int64)],
           dtypes=(tf.int64,), fixed_dtypes=(tf.string, tf.int64, tf.string, tf.int64),
           grad=False),
    OpCase("initialize_table_v2", _initialize_raw,
           lambda k, v, q: np.array([[2.5, -1.0], [0.5, 2.5]], np.float32),
           [_fixed([4, 8], np.int64), _fixed([0.5, 2.5], np.float32),
            _fixed([[8, 1], [4, 8]], np.int64)], dtypes=_I64[1:2], fixed_dtypes=_I64,
           grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_graph_names_and_collection_match_tensorflow():
    with tf.Graph().as_default() as g:
        init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2], tf.string, tf.int64)
        table = tf.lookup.StaticHashTable(init, -1)
        looked = table.lookup(tf.constant([["a", "z"]]))
        size = table.size()
        mutable = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
        insert = mutable.insert(tf.constant(["p"]), tf.constant([7], tf.int64))
        everything = tf.tables_initializer()
        text = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(WORDS, tf.string, -2, tf.int64, -1), -1)
        vocab = tf.lookup.StaticVocabularyTable(init, 3)
        vocab_size = vocab.size()
    assert (table.name, table.resource_handle.op.type) == ("hash_table", "HashTableV2")
    assert (table.initializer.type, table.initializer.name) == (
        "LookupTableImportV2", "key_value_init/LookupTableImportV2")
    assert looked.op.name == "hash_table_Lookup/LookupTableFindV2"
    assert looked.shape.as_list() == [1, 2] and looked.dtype == tf.int64
    assert size.op.name == "hash_table_Size/LookupTableSizeV2" and size.dtype == tf.int64
    assert (mutable.name, mutable.resource_handle.op.type) == ("MutableHashTable",
                                                               "MutableHashTableV2")
    assert insert.name == "MutableHashTable_lookup_table_insert/LookupTableInsertV2"
    assert (everything.type, everything.name) == ("NoOp", "init_all_tables")
    assert {op.name for op in everything.control_inputs} == {table.initializer.name}
    assert text.initializer.name == "text_file_init/InitializeTableFromTextFileV2"
    assert g.get_collection(tf.GraphKeys.TABLE_INITIALIZERS) == [
        table.initializer, text.initializer, vocab.initializer]
    assert (vocab.name, vocab_size.op.name) == ("hash_table_2", "hash_table_2_Size/add")
    assert tf.initializers.tables_initializer is tf.tables_initializer
    assert (tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER) == (-2, -1)


def test_tables_initializer_without_tables_is_a_no_op():
    with tf.Graph().as_default():
        op = tf.tables_initializer(name="none")
        assert (op.type, op.name, op.control_inputs) == ("NoOp", "none", [])
        _run(op)


def test_uninitialized_table():
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1)
        with tf.Session() as sess:
            assert sess.run(table.size()) == 0
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match=r"^Table not initialized\.\n"):
                sess.run(table.lookup(tf.constant(["a"])))
            with pytest.raises(tf.errors.AbortedError, match="HashTable is not initialized."):
                sess.run(table.export())
            sess.run(tf.tables_initializer())
            assert sess.run(table.lookup(tf.constant("a"))) == 1
            sess.run(table.initializer)   # the same entries again: a no-op


@pytest.mark.parametrize("keys,values,error,message", [
    (["a", "a"], [1, 2], tf.errors.FailedPreconditionError,
     "HashTable has different value for same key. Key a has 1 and trying to add value 2"),
    (["a", "b"], [1, 2, 3], tf.errors.InvalidArgumentError,
     r"Expected shape \[2\] for value, got \[3\]"),
])
def test_bad_initializer_entries(keys, values, error, message):
    with tf.Graph().as_default():
        vals = tf.placeholder(tf.int32, None)
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, vals), -1)
        with pytest.raises(error, match=message):
            _run(table.initializer, {vals: values})


def _key_value_table(keys, values):
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1)


@pytest.mark.parametrize("inputs,message,shapes", [
    (lambda: (1, [2]), "Shape must be rank 1 but is rank 0", "[], [], [1]"),
    (lambda: ([1], 2), "Shape must be at least rank 1 but is rank 0", "[], [1], []"),
    (lambda: (1, 2), "Shape must be rank 1 but is rank 0", "[], [], []"),
    (lambda: ([[1, 2]], [2, 3]), "Shape must be rank 1 but is rank 2", "[], [1,2], [2]"),
    (lambda: ([[1, 2]], [[2, 3]]), "Shape must be rank 1 but is rank 2", "[], [1,2], [1,2]"),
    (lambda: ([1, 2, 3], [2, 3]), "Dimensions must be equal, but are 3 and 2", "[], [3], [2]"),
    (lambda: (["a", "b"], [1]), "Dimensions must be equal, but are 2 and 1", "[], [2], [1]"),
    (lambda: (tf.placeholder(tf.int64, [2]), tf.placeholder(tf.int64, [3])),
     "Dimensions must be equal, but are 2 and 3", "[], [2], [3]"),
    (lambda: (tf.placeholder(tf.int64, [None, None]), tf.placeholder(tf.int64, [None])),
     "Shape must be rank 1 but is rank 2", "[], [?,?], [?]"),
], ids=["scalar_keys", "scalar_values", "scalars", "matrix_keys", "matrices", "lengths",
        "string_keys_lengths", "placeholder_lengths", "placeholder_matrix_keys"])
def test_key_value_initializer_shapes_are_checked_when_the_table_is_made(inputs, message,
                                                                         shapes):
    """KeyValueTensorInitializer takes any shapes, but its LookupTableImportV2 wants a vector
    of keys and as many values (rank 1 or more): a ValueError from the shape function."""
    with tf.Graph().as_default():
        keys, values = inputs()
        tf.lookup.KeyValueTensorInitializer(keys, values)
        with pytest.raises(ValueError, match=(
                f"^{re.escape(message)} for '{{{{node key_value_init/LookupTableImportV2}}}}"
                f".* with input shapes: {re.escape(shapes)}\\.$")):
            _key_value_table(keys, values)


@pytest.mark.parametrize("key_shape,value_shape,message", [
    ([3], [2], "Expected shape [3] for value, got [2]"),
    ([], [1], "Expected shape [] for value, got [1]"),
    ([1], [], "Expected shape [1] for value, got []"),
    ([1, 2], [2], "Expected shape [1,2] for value, got [2]"),
    ([2], [2, 1], "Expected shape [2] for value, got [2,1]"),
    ([0], [2], "Expected shape [0] for value, got [2]"),
    ([2], [0], "Expected shape [2] for value, got [0]"),
    ([0], [0, 2], "Expected shape [0] for value, got [0,2]"),
], ids=["lengths", "scalar_keys", "scalar_values", "matrix_keys", "matrix_values",
        "no_keys", "no_values", "no_keys_matrix_values"])
def test_key_value_shapes_known_only_at_run_time(key_shape, value_shape, message):
    """Keys and values of unknown shape pass the shape function; the kernel checks them."""
    with tf.Graph().as_default():
        keys, values = tf.placeholder(tf.int64, None), tf.placeholder(tf.int64, None)
        table = _key_value_table(keys, values)
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"^{re.escape(message)}\n"):
            _run(table.initializer, {keys: np.zeros(key_shape, np.int64),
                                     values: np.zeros(value_shape, np.int64)})


_EMPTY = r"^keys and values cannot be empty tensors\.\n"


@pytest.mark.parametrize("keys,values", [
    (np.zeros([0], np.int64), np.zeros([0], np.int64)),
    (np.zeros([0, 3], np.int64), np.zeros([0, 3], np.int64)),
    (np.zeros([2, 0], np.int64), np.zeros([2, 0], np.int64)),
], ids=["vectors", "no_rows", "no_columns"])
def test_empty_keys_and_values_are_refused_at_run_time(keys, values):
    """TensorFlow's KeyValueTensorIterator refuses empty tensors (any shape with no elements):
    the table stays uninitialized, and can be initialized afterwards."""
    with tf.Graph().as_default():
        k, v = tf.placeholder(tf.int64, None), tf.placeholder(tf.int64, None)
        table = _key_value_table(k, v)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=_EMPTY):
                sess.run(table.initializer, {k: keys, v: values})
            assert sess.run(table.size()) == 0
            with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
                sess.run(table.lookup(tf.constant([1], tf.int64)))
            sess.run(table.initializer, {k: [1], v: [2]})
            assert sess.run(table.lookup(tf.constant([1, 3], tf.int64))).tolist() == [2, -1]


@pytest.mark.parametrize("key_dtype,value_dtype", [
    (tf.int64, tf.int64), (tf.string, tf.float32), (tf.int32, tf.string),
])
def test_empty_constant_initializer_fails_in_tables_initializer(key_dtype, value_dtype):
    with tf.Graph().as_default():
        init = tf.lookup.KeyValueTensorInitializer(tf.constant([], key_dtype),
                                                   tf.constant([], value_dtype))
        table = tf.lookup.StaticHashTable(init, "?" if value_dtype == tf.string else -1)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=_EMPTY + r"\t \[\[node key_value_init/LookupTableImportV2 "):
                sess.run(tf.tables_initializer())
            assert sess.run(table.size()) == 0


def test_empty_entries_do_not_count_as_a_second_initialization():
    """The empty check comes before the already-initialized one; the entries stay."""
    with tf.Graph().as_default():
        k, v = tf.placeholder(tf.int64, None), tf.placeholder(tf.int64, None)
        table = _key_value_table(k, v)
        with tf.Session() as sess:
            sess.run(table.initializer, {k: [1], v: [2]})
            with pytest.raises(tf.errors.InvalidArgumentError, match=_EMPTY):
                sess.run(table.initializer, {k: np.zeros([0], np.int64),
                                             v: np.zeros([0], np.int64)})
            assert sess.run(table.size()) == 1
            assert sess.run(table.lookup(tf.constant([1], tf.int64))).tolist() == [2]


def test_initialize_and_import_ops_refuse_empty_entries():
    with tf.Graph().as_default():
        empty = tf.constant([], tf.int64)
        fills = []
        for op_def in (lookup_ops.InitializeTableV2, lookup_ops.LookupTableImportV2):
            handle = apply_op(lookup_ops.HashTableV2, [],
                              {"key_dtype": tf.int64, "value_dtype": tf.int64})
            fills.append((apply_op(op_def, [handle, empty, empty]), handle))
        with tf.Session() as sess:
            for fill, handle in fills:
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=_EMPTY + f"\t \\[\\[node {fill.name} "):
                    sess.run(fill)
                assert sess.run(_raw(lookup_ops.LookupTableSizeV2, handle)) == 0


@pytest.mark.parametrize("default,rows", [(0.5, [2]), ([0.5, 0.5], [2, 2])],
                         ids=["scalars", "vectors"])
def test_mutable_tables_take_empty_inserts_and_imports(default, rows):
    """Only an initializable table refuses empty entries: a mutable one inserts nothing, and an
    empty import empties it, as in TensorFlow."""
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default,
                                                        checkpoint=False)
        empty_values = tf.zeros([0] + rows[1:])
        insert = table.insert(tf.constant([1, 2], tf.int64), tf.ones(rows))
        insert_none = table.insert(tf.constant([], tf.int64), empty_values)
        import_none = _raw(lookup_ops.LookupTableImportV2, table.resource_handle,
                           tf.constant([], tf.int64), empty_values)
        with tf.Session() as sess:
            sess.run(insert)
            sess.run(insert_none)
            assert sess.run(table.size()) == 2
            sess.run(import_none)
            assert sess.run(table.size()) == 0


def test_dense_table_takes_an_empty_insert():
    with tf.Graph().as_default():
        table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=-5,
                                                      deleted_key=-6, checkpoint=False)
        insert = table.insert(tf.constant([1, 2], tf.int64), tf.constant([1, 2], tf.int64))
        insert_none = table.insert(tf.constant([], tf.int64), tf.constant([], tf.int64))
        with tf.Session() as sess:
            sess.run(insert)
            sess.run(insert_none)
            assert sess.run(table.size()) == 2


def test_repeated_key_with_equal_values_is_one_entry():
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 1]), -1)
        with tf.Session() as sess:
            sess.run(table.initializer)
            assert sess.run(table.size()) == 1


def _raw(op_def, *inputs):
    return apply_op(op_def, list(inputs))


def test_run_time_errors_of_table_ops():
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), -1)
        handle = table.resource_handle
        mutable = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, 0.5)
        cases = [
            (_raw(lookup_ops.LookupTableImportV2, handle, tf.constant(["a"]), tf.constant([5])),
             tf.errors.FailedPreconditionError,
             "Table was already initialized with different data."),
            (_raw(lookup_ops.LookupTableFindV2, handle, tf.constant([1, 2]), tf.constant(0)),
             tf.errors.InvalidArgumentError, r"Signature mismatch, have: resource, int32, "
             r"int32->int32 expected: resource, string, int32->int32"),
            (_raw(lookup_ops.LookupTableFindV2, handle, tf.constant(["a"]), tf.constant(0.5)),
             tf.errors.InvalidArgumentError, r"have: resource, string, float->float"),
            (_raw(lookup_ops.LookupTableFindV2, handle, tf.constant(["a"]),
                  tf.constant([0, 1])),
             tf.errors.InvalidArgumentError,
             r"Expected shape \[\] or \[1\] for default value, got \[2\]"),
            (_raw(lookup_ops.LookupTableInsertV2, handle, tf.constant(["c"]), tf.constant([3])),
             tf.errors.UnimplementedError,
             "Insert not supported by InitializableLookupTable implementations"),
            (mutable.insert(tf.constant([3, 1], tf.int64), tf.constant([1.0, 2.0, 3.0])),
             tf.errors.InvalidArgumentError, r"Expected shape \[2\] for value, got \[3\]"),
            (_raw(lookup_ops.InitializeTableV2, mutable.resource_handle,
                  tf.constant([9], tf.int64), tf.constant([9.0])),
             tf.errors.InvalidArgumentError,
             "Table localhost MutableHashTable is not initializable"),
        ]
        with tf.Session() as sess:
            sess.run(table.initializer)
            for fetch, error, message in cases:
                with pytest.raises(error, match=message):
                    sess.run(fetch)
            assert sess.run(table.lookup(tf.constant(["a", "b"]))).tolist() == [1, 2]


def _vector_table(default=(0.0, 0.0, 0.0)):
    return tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, list(default),
                                                   checkpoint=False)


_KEYS = [1, 2]


@pytest.mark.parametrize("build,message", [
    (lambda t: t.insert(tf.constant(_KEYS, tf.int64), tf.zeros([2, 4])),
     r"Expected shape \[2,3\] for value, got \[2,4\]"),
    (lambda t: t.insert(tf.constant(_KEYS, tf.int64), tf.zeros([2])),
     r"Expected shape \[2,3\] for value, got \[2\]"),
    (lambda t: t.lookup(tf.constant(_KEYS, tf.int64), dynamic_default_values=tf.zeros([2])),
     r"Expected shape \[3\] or \[2,3\] for default value, got \[2\]"),
    (lambda t: t.lookup(tf.constant([_KEYS], tf.int64),
                        dynamic_default_values=tf.zeros([2, 3])),
     r"Expected shape \[3\] or \[1,2,3\] for default value, got \[2,3\]"),
    (lambda t: _raw(lookup_ops.LookupTableImportV2, t.resource_handle,
                    tf.constant([1], tf.int64), tf.zeros([1, 2])),
     r"Expected shape \[1,3\] for value, got \[1,2\]"),
    (lambda t: tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, 0.0).lookup(
        tf.constant(_KEYS, tf.int64), dynamic_default_values=tf.zeros([3])),
     r"Expected shape \[\] or \[2\] for default value, got \[3\]"),
    (lambda t: _vector_table([[0.0, 0.0], [0.0, 0.0]]).size(),
     r"Default value must be a vector, got shape \[2,2\]"),
])
def test_run_time_errors_of_tables_of_vectors(build, message):
    """Messages as TensorFlow's MutableHashTableOfTensors (and MutableHashTable) give them."""
    with tf.Graph().as_default():
        fetch = build(_vector_table())
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            _run(fetch)


def test_table_of_vectors_graph_and_static_shapes():
    with tf.Graph().as_default():
        table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, [0.0, 0.0, 0.0])
        op = table.resource_handle.op
        found = table.lookup(tf.placeholder(tf.int64, [None, 2]))
        per_key = table.lookup(tf.constant(_KEYS, tf.int64),
                               dynamic_default_values=tf.zeros([2, 3]))
        keys, values = table.export()
        scalar_keys = table.lookup(tf.constant(1, tf.int64))
    assert (op.type, op.name, op.get_attr("value_shape").as_list()) == (
        "MutableHashTableOfTensorsV2", "MutableHashTable", [3])
    assert (op.get_attr("use_node_name_sharing"), op.get_attr("shared_name")) == (True, b"")
    assert (found.shape.as_list(), per_key.shape.as_list(), scalar_keys.shape.as_list()) == (
        [None, 2, 3], [2, 3], [3])
    assert (keys.shape.ndims, values.shape.ndims) == (None, None)


@pytest.mark.parametrize("key_dtype,value_dtype,registered", [
    (tf.int64, tf.string, True), (tf.string, tf.bool, True), (tf.int32, tf.float64, True),
    (tf.int32, tf.string, False), (tf.string, tf.string, False), (tf.int64, tf.bool, False),
    (tf.int32, tf.int64, False),
])
def test_kernels_of_tables_of_vectors_for_tensorflows_pairs(key_dtype, value_dtype,
                                                            registered):
    with tf.Graph().as_default():
        default = tf.zeros([2], value_dtype) if value_dtype != tf.string else ["", ""]
        table = tf.lookup.experimental.MutableHashTable(key_dtype, value_dtype, default)
        if registered:
            assert _run(table.size()) == 0
        else:
            with pytest.raises(tf.errors.OpError, match="MutableHashTableOfTensorsV2"):
                _run(table.size())


def test_no_kernel_for_key_value_pairs_tensorflow_lacks():
    """HashTableV2 has no int32 -> int64 kernel in TensorFlow."""
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            INTS, tf.int32, -2, tf.int64, -1), -1)
        with pytest.raises(tf.errors.OpError, match="HashTableV2"):
            _run(table.initializer)


@pytest.mark.parametrize("path,args,kwargs,message", [
    (EMPTY_LINE, (0, tf.int64, 1), {"delimiter": ","},
     rf"Invalid content in {EMPTY_LINE}: empty line found at position 6\."),
    (EMPTY_LINE, (0, tf.int64, 2), {"delimiter": ","},
     rf"Invalid number of columns in {EMPTY_LINE} line 0 \(x,1\) : expected at least 3 got 2"),
    (EMPTY_LINE, (0, tf.int64, 1), {"delimiter": ", "}, "delimiter should be only 1 char"),
    (WORDS, (-2, tf.int64, -1), {"vocab_size": 5},
     rf"Invalid vocab_size in {WORDS}: expected 5 but got 3"),
    (EMPTY, (-2, tf.int64, -1), {"vocab_size": 3},
     rf"Invalid vocab_size in {EMPTY}: expected 3 but got 0"),
    (VOCAB, (0, tf.int64, 2), {}, r"Field 1.5 in line 0 is not a valid int64\."),
    (CRLF, (0, tf.int64, 1), {"delimiter": ",", "vocab_size": 3},
     r"Field x in line 2 is not a valid int64\."),
])
def test_text_file_errors(path, args, kwargs, message):
    with tf.Graph().as_default():
        key_index, value_dtype, value_index = args
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            path, tf.string, key_index, value_dtype, value_index, **kwargs), -1)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(table.initializer)
            assert sess.run(table.size()) == 0


@pytest.mark.parametrize("make_table", [
    lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        EMPTY, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), -1),
    lambda: tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        EMPTY, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string,
        tf.lookup.TextFileIndex.WHOLE_LINE), "?"),
    lambda: tf.lookup.StaticVocabularyTable(tf.lookup.TextFileInitializer(
        EMPTY, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
        tf.lookup.TextFileIndex.LINE_NUMBER), 1),
], ids=["static", "line_number_keys", "vocabulary"])
def test_empty_text_file_is_out_of_range(make_table):
    # TF 2.21: OutOfRangeError 'Read less bytes than requested' (with a vocab_size given, the
    # vocab_size check's InvalidArgumentError instead: see test_text_file_errors).
    with tf.Graph().as_default():
        make_table()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.OutOfRangeError,
                               match="^Read less bytes than requested") as info:
                sess.run(tf.tables_initializer())
            assert info.value.op.name == "text_file_init/InitializeTableFromTextFileV2"


def test_missing_text_file():
    missing = os.path.join(_DIR, "missing.txt")
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(missing, tf.string, 0, tf.int64, 1), -1)
        with pytest.raises(tf.errors.NotFoundError, match=f"{missing}; No such file"):
            _run(table.initializer)


def test_tables_of_one_file_share_a_resource():
    """TextFileInitializer names the table after the file, so both tables are one."""
    with tf.Graph().as_default():
        tables = [tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(WORDS, tf.string, -2, tf.int64, -1), -1)
            for _ in range(2)]
        with tf.Session() as sess:
            sess.run(tables[0].initializer)
            assert sess.run(tables[1].lookup(tf.constant(["c"]))).tolist() == [2]


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.lookup.TextFileInitializer("", tf.string, 0, tf.int64, 1), ValueError,
     "`filename` argument required for tf.lookup.TextFileInitializer"),
    (lambda: tf.lookup.TextFileInitializer("f", tf.string, -3, tf.int64, 1), ValueError,
     r"`key_index` should be >= -2, received: -3\."),
    (lambda: tf.lookup.TextFileInitializer("f", tf.string, -1, tf.int64, 1), ValueError,
     "`key_dtype` must be int64 if `key_index` is -1"),
    (lambda: tf.lookup.TextFileInitializer("f", tf.string, 0, tf.float32, -2), ValueError,
     "`value_dtype` should be either integer or string for `value_index` -2"),
    (lambda: tf.lookup.TextFileInitializer("f", tf.string, 0, tf.int64, 1, vocab_size=0),
     ValueError, "`vocab_size` should be > 0, received: 0"),
    (lambda: tf.lookup.StaticVocabularyTable(None, 0), ValueError,
     "`num_oov_buckets` must be > 0; use StaticHashTable."),
    (lambda: tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(["a"], [1]), 2), TypeError,
     "Invalid `value_dtype`, expected <dtype: 'int64'> but got <dtype: 'int32'>."),
    (lambda: tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer([1.0], tf.constant([1], tf.int64)), 2), TypeError,
     r"Invalid `key_dtype`, expected one of \(tf.int64, tf.string\), but got "
     "<dtype: 'float32'>."),
    (lambda: tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1).lookup(tf.constant([1.0])),
     TypeError, "Dtype of argument `keys` must be <dtype: 'string'>, received: "
     "<dtype: 'float32'>"),
    (lambda: tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([1], tf.int64)), "x"),
     TypeError, "Expected int64"),
    (lambda: tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, 0.5).lookup(
        tf.constant([1], tf.int32)), ValueError,
     "Tensor conversion requested dtype int64 for Tensor with dtype int32"),
    # An op without outputs runs its shape function too (here InitializeTableV2's).
    (lambda: _initialize_raw(tf.constant(4, tf.int64), tf.constant(0.5),
                             tf.constant([4], tf.int64)), ValueError,
     r"^Shape must be rank 1 but is rank 0 for '\{\{node InitializeTableV2\}\}"),
    (lambda: _initialize_raw(tf.constant([4, 8], tf.int64), tf.constant([0.5]),
                             tf.constant([4], tf.int64)), ValueError,
     r"^Dimension 0 in both shapes must be equal, but are 2 and 1\. Shapes are \[2\] and "
     r"\[1\]\."),
])
def test_build_time_errors(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            build()


def test_lookup_in_dataset_map():
    """A table captured by a Dataset.map function is looked up per element."""
    with tf.Graph().as_default():
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            ["a", "b"], tf.constant([1, 2], tf.int64)), -1)
        vocab = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            ["a", "b"], tf.constant([0, 1], tf.int64)), 3)
        words = tf.data.Dataset.from_tensor_slices(tf.constant(["a", "b", "c"]))
        it = tf.data.make_initializable_iterator(words.map(table.lookup))
        ids = tf.data.Dataset.from_tensor_slices(tf.constant([["a", "zz"], ["b", "q"]]))
        it2 = tf.data.make_initializable_iterator(ids.map(vocab.lookup))
        nxt, nxt2 = it.get_next(), it2.get_next()
        with tf.Session() as sess:
            sess.run(it.initializer)
            with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
                sess.run(nxt)
        with tf.Session() as sess:
            sess.run([tf.tables_initializer(), it.initializer, it2.initializer])
            assert [sess.run(nxt) for _ in range(3)] == [1, 2, -1]
            assert [sess.run(nxt2).tolist() for _ in range(2)] == [[0, 3], [1, 4]]
