"""The graph a mutable table builds (lookup/tables.py: MutableTable, the base of MutableHashTable
and DenseHashTable): remove's op, names and build-time errors, and which ops are colocated with
the table op. Names, messages, colocation groups and devices were recorded from TensorFlow 2.21
(tf.compat.v1 graph mode). Values after a remove are checked by the OpCase rows of
tests/ops/test_lookup_ops.py and tests/ops/test_dense_hash_table.py."""
import re

import pytest

import tensorweave as tf

MutableHashTable = tf.lookup.experimental.MutableHashTable
DenseHashTable = tf.lookup.experimental.DenseHashTable


def _dense(name="d"):
    return DenseHashTable(tf.int64, tf.int64, -1, empty_key=0, deleted_key=-1,
                          initial_num_buckets=8, name=name)


def test_remove_op_and_names_match_tensorflow():
    with tf.Graph().as_default():
        table = MutableHashTable(tf.int64, tf.float32, -1.0, name="t")
        keys = tf.constant([2, 7], tf.int64)
        removed = table.remove(keys)
        named = table.remove(keys, name="my_remove")
        with tf.name_scope("outer"):
            scoped = table.remove(keys)
        strings = MutableHashTable(tf.string, tf.int64, [-1, -1], name="s")
        vector_removed = strings.remove(tf.constant(["b"]))
        dense = _dense()
        dense_removed, erased = dense.remove(keys), dense.erase(keys)
    assert isinstance(removed, tf.Operation)
    assert (removed.type, removed.name, list(removed.inputs), removed.outputs) == (
        "LookupTableRemoveV2", "t_lookup_table_remove/LookupTableRemoveV2",
        [table.resource_handle, keys], [])
    assert removed.get_attr("Tin") == tf.int64
    assert named.name == "my_remove/LookupTableRemoveV2"
    assert scoped.name == "outer/t_lookup_table_remove/LookupTableRemoveV2"
    assert (vector_removed.name, vector_removed.get_attr("Tin")) == (
        "s_lookup_table_remove/LookupTableRemoveV2", tf.string)
    assert [dense_removed.name, erased.name] == [
        "d_lookup_table_remove/LookupTableRemoveV2", "d_lookup_table_remove_1/LookupTableRemoveV2"]


@pytest.mark.parametrize("build,keys,message", [
    (lambda: MutableHashTable(tf.int64, tf.float32, -1.0), lambda: tf.constant([1, 2]),
     "Dtype of argument `keys` must be <dtype: 'int64'>, received: <dtype: 'int32'>"),
    (lambda: MutableHashTable(tf.int64, tf.float32, -1.0), lambda: tf.constant(["x"]),
     "Dtype of argument `keys` must be <dtype: 'int64'>, received: <dtype: 'string'>"),
    (lambda: MutableHashTable(tf.string, tf.int64, [-1, -1]),
     lambda: tf.constant([1], tf.int64),
     "Dtype of argument `keys` must be <dtype: 'string'>, received: <dtype: 'int64'>"),
    # As in TensorFlow the check is on the dtype itself: a reference tensor does not match.
    (lambda: MutableHashTable(tf.int64, tf.float32, -1.0),
     lambda: tf.Variable([1, 2], dtype=tf.int64, use_resource=False)._ref(),
     "Dtype of argument `keys` must be <dtype: 'int64'>, received: <dtype: 'int64_ref'>"),
    (_dense, lambda: tf.constant([1]),
     "Signature mismatch. Keys must be dtype <dtype: 'int64'>, got <dtype: 'int32'>."),
], ids=["int32_for_int64", "string_for_int64", "int64_for_string", "ref_dtype", "dense"])
def test_remove_key_dtype_mismatch_is_a_type_error(build, keys, message):
    with tf.Graph().as_default() as g:
        table, keys = build(), keys()
        count = len(g.get_operations())
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            table.remove(keys)
        assert len(g.get_operations()) == count   # checked before any op is made


@pytest.mark.parametrize("build", [lambda: MutableHashTable(tf.int64, tf.float32, -1.0),
                                   _dense], ids=["mutable", "dense"])
def test_remove_needs_keys_of_rank_one_or_more(build):
    with tf.Graph().as_default():
        table = build()
        with pytest.raises(ValueError, match=re.escape(
                f"Shape must be at least rank 1 but is rank 0 for '{{{{node {table.name}_"
                f"lookup_table_remove/LookupTableRemoveV2}}}}")):
            table.remove(tf.constant(5, tf.int64))
        # Keys of unknown rank or shape may still be fed.
        assert table.remove(tf.placeholder(tf.int64, None)).type == "LookupTableRemoveV2"
        assert table.remove(tf.placeholder(tf.int64, [None, 2])).type == "LookupTableRemoveV2"


@pytest.fixture(scope="module")
def graph_of_tables():
    """Three tables made on the CPU, the ops on their handles made outside any device scope,
    and a Saver."""
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            tables = [(MutableHashTable(tf.int64, tf.float32, -1.0, name="t"), [1], [2.0]),
                      (MutableHashTable(tf.string, tf.int64, [-1, -1], name="s"), ["a"],
                       [[1, 2]]),
                      (_dense(), [1], [2])]
        for table, keys, values in tables:
            keys = tf.constant(keys, table.key_dtype)
            table.insert(keys, values)
            table.lookup(keys)
            table.size()
            table.export()
            table.remove(keys)
        tf.train.Saver()
    return g


# (op type, name, colocation group or None for its own, device): TensorFlow colocates a mutable
# table's find, insert, size, export and (checkpoint) import with the table op, so they take
# its device; not remove, nor the tensors fed to the ops.
_COLOCATION = [
    ("MutableHashTableV2", "t", "t", "/device:CPU:0"),
    ("LookupTableExportV2", "t_lookup_table_export_values/LookupTableExportV2", "t",
     "/device:CPU:0"),
    ("LookupTableInsertV2", "t_lookup_table_insert/LookupTableInsertV2", "t", "/device:CPU:0"),
    ("LookupTableFindV2", "t_lookup_table_find/LookupTableFindV2", "t", "/device:CPU:0"),
    ("LookupTableSizeV2", "t_Size/LookupTableSizeV2", "t", "/device:CPU:0"),
    ("LookupTableExportV2", "t_lookup_table_export_values_1/LookupTableExportV2", "t",
     "/device:CPU:0"),
    ("LookupTableRemoveV2", "t_lookup_table_remove/LookupTableRemoveV2", None, ""),
    ("Const", "t_lookup_table_insert/values", None, ""),
    ("MutableHashTableOfTensorsV2", "s", "s", "/device:CPU:0"),
    ("LookupTableFindV2", "s_lookup_table_find/LookupTableFindV2", "s", "/device:CPU:0"),
    ("LookupTableRemoveV2", "s_lookup_table_remove/LookupTableRemoveV2", None, ""),
    ("MutableDenseHashTableV2", "d", "d", "/device:CPU:0"),
    ("LookupTableInsertV2", "d_lookup_table_insert/LookupTableInsertV2", "d", "/device:CPU:0"),
    ("LookupTableFindV2", "d_lookup_table_find/LookupTableFindV2", "d", "/device:CPU:0"),
    ("LookupTableSizeV2", "d_Size/LookupTableSizeV2", "d", "/device:CPU:0"),
    ("LookupTableExportV2", "d_lookup_table_export_values_1/LookupTableExportV2", "d",
     "/device:CPU:0"),
    ("LookupTableRemoveV2", "d_lookup_table_remove/LookupTableRemoveV2", None, ""),
    ("LookupTableImportV2", "save/t_table_restore/LookupTableImportV2", "t", "/device:CPU:0"),
    ("LookupTableImportV2", "save/d_table_restore/LookupTableImportV2", "d", "/device:CPU:0"),
]


@pytest.mark.parametrize("op_type,name,group,device", _COLOCATION, ids=[r[1] for r in _COLOCATION])
def test_mutable_table_ops_are_colocated_as_in_tensorflow(graph_of_tables, op_type, name, group,
                                                          device):
    op = graph_of_tables.get_operation_by_name(name)
    assert (op.type, op.colocation_groups(), op.device) == (
        op_type, [f"loc:@{group or name}".encode()], device)


def test_static_table_ops_are_not_colocated():
    """TensorFlow colocates none of a static table's ops with its table op."""
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
                tf.constant([1], tf.int64), tf.constant([2], tf.int64)), -1, name="h")
        ops = [table.lookup(tf.constant([1], tf.int64)).op, table.size().op,
               table.export()[0].op]
    assert [(op.name, op.colocation_groups(), op.device) for op in ops] == [
        (name, [f"loc:@{name}".encode()], "") for name in [
            "h_Lookup/LookupTableFindV2", "h_Size/LookupTableSizeV2",
            "h_Export/LookupTableExportV2"]]
