"""tf.train.Saver checkpoints mutable lookup tables (lookup/checkpointing.py): MutableHashTable
of scalars and of vectors, and DenseHashTable in an explicit var_list. Checkpoint names, shapes,
dtypes, op names and restored values were recorded from TensorFlow 2.21 (tf.compat.v1 graph
mode) running the same programs."""
import logging
import os
import tempfile

import numpy as np
import pytest

import tensorweave as tf

MutableHashTable = tf.lookup.experimental.MutableHashTable


def _prefix():
    return os.path.join(tempfile.mkdtemp(prefix="tw_table_ckpt_"), "model")


def _tables():
    """Three checkpointed tables (string keys, int64 keys, vector values) and one that is not;
    their inserts and a fetch of lookups and sizes."""
    words = MutableHashTable(tf.string, tf.int64, -1, name="words")
    ids = MutableHashTable(tf.int64, tf.float32, -0.5, name="ids")
    vecs = MutableHashTable(tf.int64, tf.float32, [0.0, 0.0, 0.0], name="vecs")
    unsaved = MutableHashTable(tf.int64, tf.int64, 0, name="unsaved", checkpoint=False)
    inserts = [words.insert(tf.constant(["b", "a", "c"]), tf.constant([2, 1, 3], tf.int64)),
               ids.insert(tf.constant([10, 5], tf.int64), tf.constant([1.5, 2.5])),
               vecs.insert(tf.constant([7, 3], tf.int64),
                           tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])),
               unsaved.insert(tf.constant([1], tf.int64), tf.constant([9], tf.int64))]
    late = [words.insert(tf.constant(["z"]), tf.constant([26], tf.int64)),
            vecs.insert(tf.constant([99], tf.int64), tf.constant([[9.0, 9.0, 9.0]]))]
    fetch = [words.lookup(tf.constant(["a", "b", "c", "z", "q"])),
             ids.lookup(tf.constant([5, 10, 11], tf.int64)),
             vecs.lookup(tf.constant([3, 7, 99, 1], tf.int64)),
             unsaved.lookup(tf.constant([1], tf.int64)),
             words.size(), vecs.size(), unsaved.size()]
    return inserts, late, fetch


def _values(sess, fetch):
    return [np.asarray(x).tolist() for x in sess.run(fetch)]


SAVED = [[1, 2, 3, -1, -1], [2.5, 1.5, -0.5],
         [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [9], 3, 2, 1]


def test_saver_saves_tables_under_their_names_and_restores_them():
    prefix = _prefix()
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0, name="v")
        inserts, _, fetch = _tables()
        saver = tf.train.Saver()
        assert sorted(op.name for op in g.get_operations()
                      if op.type == "LookupTableImportV2") == [
            "save/ids_table_restore/LookupTableImportV2",
            "save/vecs_table_restore/LookupTableImportV2",
            "save/words_table_restore/LookupTableImportV2"]
        with tf.Session() as sess:
            sess.run([v.initializer] + inserts)
            assert _values(sess, fetch) == SAVED
            saver.save(sess, prefix)
        with tf.Session() as sess:
            assert _values(sess, fetch)[4:] == [0, 0, 0]
            saver.restore(sess, prefix)
            # Every table but the one made with checkpoint=False is back.
            assert _values(sess, fetch) == SAVED[:3] + [[0], 3, 2, 0]
    assert tf.train.list_variables(prefix) == [
        ("ids-keys", [2]), ("ids-values", [2]), ("v", []), ("vecs-keys", [2]),
        ("vecs-values", [2, 3]), ("words-keys", [3]), ("words-values", [3])]
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_dtype_map() == {
        "ids-keys": tf.int64, "ids-values": tf.float32, "v": tf.float32,
        "vecs-keys": tf.int64, "vecs-values": tf.float32, "words-keys": tf.string,
        "words-values": tf.int64}
    assert reader.get_tensor("words-keys").tolist() == [b"a", b"b", b"c"]
    assert reader.get_tensor("vecs-values").tolist() == [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]


def test_restore_replaces_the_contents():
    """Keys inserted after the save are gone after a restore, as in TensorFlow."""
    prefix = _prefix()
    with tf.Graph().as_default():
        inserts, late, fetch = _tables()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(inserts)
            saver.save(sess, prefix)
            sess.run(late)
            assert _values(sess, fetch) == [
                [1, 2, 3, 26, -1], SAVED[1],
                [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0], [9.0, 9.0, 9.0], [0.0, 0.0, 0.0]],
                [9], 4, 3, 1]
            saver.restore(sess, prefix)
            assert _values(sess, fetch) == SAVED


def test_saveables_and_graph_names_match_tensorflow():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            _tables()
        saveables = g.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)
        tf.train.Saver()
        restore = g.get_operation_by_name("save/vecs_table_restore/LookupTableImportV2")
    assert [(s.name, [spec.name for spec in s.specs]) for s in saveables] == [
        ("words", ["words-keys", "words-values"]), ("ids", ["ids-keys", "ids-values"]),
        ("vecs", ["vecs-keys", "vecs-values"])]
    # The export each saveable saves is built with it and has TF's unknown static shapes.
    spec = saveables[2].specs[1]
    assert spec.ref.op.name == "vecs_lookup_table_export_values/LookupTableExportV2"
    assert (spec.shape.ndims, spec.dtype) == (None, tf.float32)
    assert (restore.device, restore.colocation_groups()) == ("/device:CPU:0", [b"loc:@vecs"])


def test_checkpoint_names_come_from_the_name_argument():
    """A table made in a name scope is saved under its `name`, and of two tables of one name
    only the later is saved (TensorFlow does so silently; tensorweave warns)."""
    prefix = _prefix()
    with tf.Graph().as_default():
        with tf.name_scope("outer"):
            first = MutableHashTable(tf.int64, tf.int64, -1)
        second = MutableHashTable(tf.int64, tf.int64, -1)
        inserts = [first.insert(tf.constant([1], tf.int64), tf.constant([11], tf.int64)),
                   second.insert(tf.constant([2], tf.int64), tf.constant([22], tf.int64))]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(inserts)
            saver.save(sess, prefix)
    assert (first.resource_handle.op.name, second.name) == ("outer/MutableHashTable",
                                                            "MutableHashTable")
    assert tf.train.list_variables(prefix) == [("MutableHashTable-keys", [1]),
                                               ("MutableHashTable-values", [1])]
    assert tf.train.load_variable(prefix, "MutableHashTable-keys").tolist() == [2]


def test_two_saveables_of_one_name_log_a_warning(caplog):
    with tf.Graph().as_default():
        MutableHashTable(tf.int64, tf.int64, -1, name="t")
        MutableHashTable(tf.int64, tf.int64, -1, name="t")
        with caplog.at_level(logging.WARNING):
            tf.train.Saver()
    assert "Two saveable objects are named 't'; only the last one is saved" in caplog.text


@pytest.mark.parametrize("var_list,expected", [
    (lambda v, t, d, saveables: [v], [("v", [])]),
    (lambda v, t, d, saveables: [v] + saveables, [("tbl-keys", [2]), ("tbl-values", [2]),
                                                  ("v", [])]),
    # A table itself in a list is saved without a prefix, as TensorFlow does.
    (lambda v, t, d, saveables: [v, t], [("-keys", [2]), ("-values", [2]), ("v", [])]),
    (lambda v, t, d, saveables: {"v": v, "mytable": t, "dd": d},
     [("dd-keys", [8, 1]), ("dd-values", [8, 1]), ("mytable-keys", [2]),
      ("mytable-values", [2]), ("v", [])]),
])
def test_explicit_var_list_saves_only_the_tables_it_holds(var_list, expected):
    prefix = _prefix()
    with tf.Graph().as_default() as g:
        v = tf.Variable(1.0, name="v")
        table = MutableHashTable(tf.int64, tf.int64, -1, name="tbl")
        saveables = g.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)
        dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=0,
                                                      deleted_key=-1, initial_num_buckets=8,
                                                      checkpoint=False)
        insert = table.insert(tf.constant([1, 2], tf.int64), tf.constant([10, 20], tf.int64))
        saver = tf.train.Saver(var_list=var_list(v, table, dense, saveables))
        with tf.Session() as sess:
            sess.run([v.initializer, insert])
            saver.save(sess, prefix)
    assert tf.train.list_variables(prefix) == expected


def test_saver_of_the_table_alone_restores_it():
    prefix = _prefix()
    with tf.Graph().as_default():
        table = MutableHashTable(tf.int64, tf.int64, -1, name="tbl")
        insert = table.insert(tf.constant([1, 2], tf.int64), tf.constant([10, 20], tf.int64))
        later = table.insert(tf.constant([5], tf.int64), tf.constant([50], tf.int64))
        found = table.lookup(tf.constant([1, 2, 5], tf.int64))
        saver = tf.train.Saver(var_list=[table])
        with tf.Session() as sess:
            sess.run(insert)
            saver.save(sess, prefix)
            sess.run(later)
            saver.restore(sess, prefix)
            assert (sess.run(found).tolist(), sess.run(table.size())) == ([10, 20, -1], 2)


def test_sharded_save_and_meta_graph_import_restore_a_table_of_vectors():
    prefix = _prefix()
    with tf.Graph().as_default():
        table = MutableHashTable(tf.string, tf.float32, [0.0, 0.0], name="emb")
        insert = table.insert(tf.constant(["x", "y"]), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        table.lookup(tf.constant(["y", "q", "x"]), name="found")
        saver = tf.train.Saver(sharded=True)
        with tf.Session() as sess:
            sess.run(insert)
            saver.save(sess, prefix)
    assert tf.train.list_variables(prefix) == [("emb-keys", [2]), ("emb-values", [2, 2])]
    with tf.Graph().as_default() as g:
        restorer = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            restorer.restore(sess, prefix)
            assert sess.run(g.get_tensor_by_name("found/LookupTableFindV2:0")).tolist() == [
                [3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]


def test_restoring_vectors_of_another_length_fails():
    prefix = _prefix()
    with tf.Graph().as_default():
        table = MutableHashTable(tf.string, tf.float32, [0.0, 0.0], name="emb")
        insert = table.insert(tf.constant(["x", "y"]), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        with tf.Session() as sess:
            sess.run(insert)
            tf.train.Saver().save(sess, prefix)
    with tf.Graph().as_default():
        MutableHashTable(tf.string, tf.float32, [0.0, 0.0, 0.0], name="emb")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Expected shape \[2,3\] for value, got \[2,2\]"):
                saver.restore(sess, prefix)
