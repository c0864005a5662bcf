"""tf.lookup.experimental.DenseHashTable and its ops: MutableDenseHashTableV2 and
LookupTableRemoveV2 (with LookupTableFindV2 / InsertV2 / SizeV2 / ExportV2 / ImportV2 on its
handle). Exports, op names, shapes and error messages were recorded from TensorFlow 2.21
(tf.compat.v1 graph mode); the bucket layout is TensorFlow's, so exports are compared bucket
for bucket."""
import os
import tempfile

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

DenseHashTable = tf.lookup.experimental.DenseHashTable


def _fixed(value, dtype=None):
    return lambda rng, dt: np.array(value, dtype=dtype or object)


def _int_table(**kw):
    return DenseHashTable(tf.int64, tf.float32, -1.0, empty_key=0, deleted_key=-1,
                          initial_num_buckets=4, **kw)


def _dict_find(keys, values, query, default):
    table = dict(zip(keys.tolist(), values.tolist()))
    return np.array([table.get(k, default) for k in query.tolist()], np.float32)


def _grow(keys, values, query):
    """Eight keys into four buckets: the table doubles twice (to 16) before inserting."""
    table = _int_table()
    with tf.control_dependencies([table.insert(keys, values)]):
        return [table.lookup(query), table.size()] + list(table.export())


def _grow_ref(keys, values, query):
    # TensorFlow's buckets: integer keys hash to themselves, so key k sits in bucket k.
    bucket_keys = np.zeros((16, 1), np.int64)
    bucket_values = np.zeros((16, 1), np.float32)
    bucket_keys[keys, 0], bucket_values[keys, 0] = keys, values
    return [_dict_find(keys, values, query, -1.0), np.int64(len(keys)), bucket_keys,
            bucket_values]


def _strings(keys, values, query):
    table = DenseHashTable(tf.string, tf.float32, -1.0, empty_key="", deleted_key="$",
                           initial_num_buckets=8)
    with tf.control_dependencies([table.insert(keys, values)]):
        return [table.lookup(query)] + list(table.export())


def _strings_ref(keys, values, query):
    # Bucket order recorded from TensorFlow (legacy Hash64 of each string).
    return [_dict_find(keys, values, query, -1.0),
            np.array([[b"x"], [b""], [b"b"], [b"hello"], [b"a"], [b""], [b""], [b""]], object),
            np.array([[4.0], [0], [2.0], [3.0], [1.0], [0], [0], [0]], np.float32)]


def _vectors(keys, values, query):
    """Vector values (shape of default_value); negative keys probe past taken buckets."""
    table = DenseHashTable(tf.int64, tf.int64, [-1, -2], empty_key=-100, deleted_key=-200,
                           initial_num_buckets=4)
    with tf.control_dependencies([table.insert(keys, values)]):
        return [table.lookup(query), table.size()] + list(table.export())


def _vectors_ref(keys, values, query):
    found = dict(zip(keys.tolist(), map(tuple, values.tolist())))
    return [np.array([found.get(k, (-1, -2)) for k in query.tolist()], np.int64), np.int64(4),
            np.array([[-100], [1], [2], [3], [-5], [-100], [-100], [-100]], np.int64),
            np.array([[0, 0], [1, 1], [2, 2], [3, 3], [5, 5], [0, 0], [0, 0], [0, 0]],
                     np.int64)]


def _remove(keys, removed, query):
    """Removed keys read as the default; their buckets hold deleted_key (-1)."""
    table = _int_table()
    with tf.control_dependencies([table.insert(keys, tf.cast(keys, tf.float32))]):
        remove = table.remove(removed)
    with tf.control_dependencies([remove]):
        return [table.lookup(query), table.size(), table.export()[0]]


def _remove_ref(keys, removed, query):
    left = [k for k in keys.tolist() if k not in removed.tolist()]
    return [_dict_find(np.array(left), np.array(left, np.float32), query, -1.0),
            np.int64(len(left)), np.array([[0], [1], [-1], [3]])]


_KVQ = (tf.int64, tf.float32, tf.int64)
CASES = [
    OpCase("grow_past_initial_buckets", _grow, _grow_ref,
           [_fixed([3, 1, 8, 4, 2, 6, 5, 7], np.int64),
            _fixed([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], np.float32),
            _fixed([8, 9, 1, 16], np.int64)], dtypes=(tf.float32,), fixed_dtypes=_KVQ,
           grad=False),
    OpCase("remove", _remove, _remove_ref,
           [_fixed([1, 2, 3], np.int64), _fixed([2, 7], np.int64), _fixed([1, 2, 3], np.int64)],
           dtypes=(tf.int64,), fixed_dtypes=(tf.int64,) * 3, grad=False),
    OpCase("string_keys", _strings, _strings_ref,
           [_fixed([b"a", b"b", b"hello", b"x"]), _fixed([1.0, 2.0, 3.0, 4.0], np.float32),
            _fixed([b"hello", b"q", b"a"])], dtypes=(tf.float32,),
           fixed_dtypes=(tf.string, tf.float32, tf.string), grad=False),
    OpCase("vector_values", _vectors, _vectors_ref,
           [_fixed([1, 2, 3, -5], np.int64), _fixed([[1, 1], [2, 2], [3, 3], [5, 5]], np.int64),
            _fixed([2, 9, -5], np.int64)], dtypes=(tf.int64,),
           fixed_dtypes=(tf.int64, tf.int64, tf.int64), grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def test_graph_names_attrs_and_static_shapes_match_tensorflow():
    with tf.Graph().as_default() as g:
        table = _int_table()
        op = table.resource_handle.op
        insert = table.insert(tf.constant([1, 2], tf.int64), tf.constant([1.0, 2.0]))
        found = table.lookup(tf.constant([1, 5, 3], tf.int64))
        scalar = table.lookup(tf.constant(1, tf.int64))
        unknown = table.lookup(tf.placeholder(tf.int64, None))
        size = table.size()
        keys, values = table.export()
        removed = table.remove(tf.constant([2], tf.int64))
        vectors = DenseHashTable(tf.string, tf.int64, tf.constant([-1, -2], tf.int64),
                                 empty_key="", deleted_key="$", checkpoint=False)
        vector_found = vectors.lookup(tf.constant(["a", "b", "c"]))
    assert (op.type, op.name, table.name) == ("MutableDenseHashTableV2",
                                              "MutableDenseHashTable", "MutableDenseHashTable")
    assert [t.op.name for t in op.inputs] == ["empty_key", "deleted_key"]
    assert (op.get_attr("initial_num_buckets"), op.get_attr("use_node_name_sharing"),
            op.get_attr("shared_name"), op.get_attr("key_dtype"),
            op.get_attr("value_dtype")) == (4, True, b"", tf.int64, tf.float32)
    assert np.isclose(op.get_attr("max_load_factor"), 0.8)
    assert vectors.resource_handle.op.get_attr("initial_num_buckets") == 131072
    assert vectors.resource_handle.op.get_attr("use_node_name_sharing") is False
    assert (insert.type, insert.name) == (
        "LookupTableInsertV2", "MutableDenseHashTable_lookup_table_insert/LookupTableInsertV2")
    assert found.op.name == "MutableDenseHashTable_lookup_table_find/LookupTableFindV2"
    assert size.op.name == "MutableDenseHashTable_Size/LookupTableSizeV2"
    # The saveable's export (made at construction) took the unsuffixed name.
    assert keys.op.name == "MutableDenseHashTable_lookup_table_export_values_1/" \
        "LookupTableExportV2"
    assert (removed.type, removed.name) == (
        "LookupTableRemoveV2", "MutableDenseHashTable_lookup_table_remove/LookupTableRemoveV2")
    assert (found.shape.as_list(), scalar.shape.as_list(), unknown.shape.ndims) == ([3], [], None)
    assert (keys.shape.ndims, values.shape.ndims) == (None, None)
    assert vector_found.shape.as_list() == [3, 2]
    assert (table.key_dtype, table.value_dtype, vectors.value_dtype) == (tf.int64, tf.float32,
                                                                          tf.int64)
    assert len(g.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)) == 1


def test_remove_reinsert_and_tensorflows_duplicate_quirk():
    """Removed entries keep their bucket as deleted_key; an insert takes the first empty or
    deleted bucket on its path, so 9 (bucket 1 -> 2) re-inserted after 1 is removed lands in
    bucket 1 as a second entry, as in TensorFlow."""
    with tf.Graph().as_default():
        table = _int_table()
        keys = tf.placeholder(tf.int64, [None])
        values = tf.placeholder(tf.float32, [None])
        insert, remove = table.insert(keys, values), table.remove(keys)
        found, size, exported = table.lookup(keys), table.size(), table.export()
        with tf.Session() as sess:
            sess.run(insert, {keys: [5, 7, 1, 9], values: [1.0, 7.5, 1.0, 9.0]})
            assert [a.ravel().tolist() for a in sess.run(exported)] == [
                [0, 1, 9, 0, 0, 5, 0, 7], [0, 1, 9, 0, 0, 1, 0, 7.5]]
            sess.run(remove, {keys: [1, 42]})
            assert sess.run(exported)[0].ravel().tolist() == [0, -1, 9, 0, 0, 5, 0, 7]
            assert sess.run(size) == 3
            sess.run(insert, {keys: [9], values: [99.0]})
            assert sess.run(exported)[0].ravel().tolist() == [0, 9, 9, 0, 0, 5, 0, 7]
            assert sess.run(size) == 4
            assert sess.run(found, {keys: [9, 5, 7, 1]}).tolist() == [99.0, 1.0, 7.5, -1.0]


@pytest.mark.parametrize("fetch,feed,message", [
    ("insert", [0], "Using the empty_key as a table key is not allowed"),
    ("insert", [5, -1], "Using the deleted_key as a table key is not allowed"),
    ("lookup", [0], "Using the empty_key as a table key is not allowed"),
    ("lookup", [-1], "Using the deleted_key as a table key is not allowed"),
    ("remove", [0], "Using the empty_key as a table key is not allowed"),
    ("remove", [-1], "Using the deleted_key as a table key is not allowed"),
    ("lookup", [[1, 2], [3, 4]], r"Expected key shape \[2\] got \[2,2\]"),
    ("insert_short", [1, 2], r"Expected shape \[2\] for value, got \[1\]"),
])
def test_run_time_errors(fetch, feed, message):
    with tf.Graph().as_default():
        table = _int_table()
        keys = tf.placeholder(tf.int64, None)
        fetches = {"insert": table.insert(keys, tf.ones_like(keys, tf.float32)),
                   "insert_short": table.insert(keys, tf.constant([1.0])),
                   "lookup": table.lookup(keys), "remove": table.remove(keys)}
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(fetches[fetch], {keys: feed})
            # A failing batch keeps the keys before the bad one, as in TensorFlow.
            assert sess.run(table.size()) == (1 if feed == [5, -1] else 0)


@pytest.mark.parametrize("args,kwargs,message", [
    ((tf.int64, tf.int64, -1, 3, 3), {}, "Empty and deleted keys cannot be equal"),
    ((tf.int64, tf.int64, 0, 0, -1), {"initial_num_buckets": 3},
     "Number of buckets must be at least 4 and a power of 2, got: 3"),
    ((tf.int64, tf.int64, [[0]], 0, -1), {},
     r"Empty value must be a scalar or a vector, got shape \[1,1\]"),
])
def test_construction_errors(args, kwargs, message):
    with tf.Graph().as_default():
        table = DenseHashTable(*args, **kwargs)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(table.size())


@pytest.mark.parametrize("key_dtype,value_dtype,registered", [
    (tf.int64, tf.float32, True), (tf.int64, tf.bool, True), (tf.int32, tf.float64, True),
    (tf.string, tf.int32, True), (tf.string, tf.bool, True),
    (tf.int32, tf.int64, False), (tf.int64, tf.string, False), (tf.string, tf.string, False),
    (tf.float32, tf.int64, False), (tf.int64, tf.float16, False),
])
def test_kernels_for_tensorflows_key_value_pairs(key_dtype, value_dtype, registered):
    empty, deleted = ("", "$") if key_dtype == tf.string else (0, -1)
    default = {tf.string: "", tf.bool: False}.get(value_dtype, 0)
    with tf.Graph().as_default():
        table = DenseHashTable(key_dtype, value_dtype, default, empty, deleted)
        with tf.Session() as sess:
            if registered:
                assert sess.run(table.size()) == 0
            else:
                with pytest.raises(tf.errors.OpError, match="MutableDenseHashTableV2"):
                    sess.run(table.size())


def test_build_time_dtype_errors():
    with tf.Graph().as_default():
        table = DenseHashTable(tf.string, tf.int64, -1, empty_key="", deleted_key="$")
        with pytest.raises(ValueError, match="requested dtype string for Tensor with dtype "
                                             "int32"):
            table.lookup(tf.constant([1]))
        with pytest.raises(ValueError, match="requested dtype string"):
            table.insert(tf.constant([1]), tf.constant([1], tf.int64))
        with pytest.raises(TypeError, match="Signature mismatch. Keys must be dtype "):
            table.remove(tf.constant([1]))


def test_save_and_restore_with_saver():
    prefix = os.path.join(tempfile.mkdtemp(prefix="tw_dense_"), "model")
    with tf.Graph().as_default() as g:
        v = tf.Variable(3.0, name="v")
        table = _int_table()
        insert = table.insert(tf.constant([1, 2, 3, 4, 5], tf.int64),
                              tf.constant([1.0, 2.0, 3.0, 4.0, 5.0]))
        remove = table.remove(tf.constant([3], tf.int64))
        found, size = table.lookup(tf.constant([1, 3, 5, 7], tf.int64)), table.size()
        saver = tf.train.Saver()
        assert "save/MutableDenseHashTable_table_restore/LookupTableImportV2" in \
            {op.name for op in g.get_operations()}
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(insert)
            sess.run(remove)
            saver.save(sess, prefix)
        reader = tf.train.NewCheckpointReader(prefix)
        assert sorted(reader.get_variable_to_shape_map().items()) == [
            ("MutableDenseHashTable-keys", [8, 1]), ("MutableDenseHashTable-values", [8, 1]),
            ("v", [])]
        assert reader.get_tensor("MutableDenseHashTable-keys").ravel().tolist() == [
            0, 1, 2, -1, 4, 5, 0, 0]
        with tf.Session() as sess:
            assert sess.run(size) == 0
            saver.restore(sess, prefix)
            assert sess.run(found).tolist() == [1.0, -1.0, 5.0, -1.0]
            assert (sess.run(size), sess.run(v)) == (4, 3.0)
            keys, values = sess.run(table.export())
            assert values.ravel().tolist() == [0, 1, 2, 3, 4, 5, 0, 0]


def test_restore_sequentially_restores_the_table():
    prefix = os.path.join(tempfile.mkdtemp(prefix="tw_dense_"), "model")
    with tf.Graph().as_default():
        table = DenseHashTable(tf.string, tf.int64, tf.constant([0, 0], tf.int64),
                               empty_key="", deleted_key="$", name="words")
        insert = table.insert(tf.constant(["a", "b"]), tf.constant([[1, 2], [3, 4]], tf.int64))
        found = table.lookup(tf.constant(["b", "z", "a"]))
        saver = tf.train.Saver(restore_sequentially=True)
        with tf.Session() as sess:
            sess.run(insert)
            saver.save(sess, prefix)
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            assert sess.run(found).tolist() == [[3, 4], [0, 0], [1, 2]]


def test_checkpoint_false_adds_no_saveable():
    with tf.Graph().as_default() as g:
        DenseHashTable(tf.int64, tf.int64, 0, empty_key=0, deleted_key=-1, checkpoint=False)
        assert g.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS) == []
