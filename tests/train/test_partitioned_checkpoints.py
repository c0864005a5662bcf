"""Partitioned variables in checkpoints: slices saved under the full name, restored into any
partitioning or none; SaveV2/RestoreV2 slice specs with TensorFlow 2.21's errors; the format's
sliced entries (version 2), their merge across shards, and damage to them."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import io_ops
from tensorweave.train import checkpoint_format as fmt

FULL = np.arange(50, dtype=np.float32).reshape(10, 5)


def _variable(parts, axis=0, name="v", shape=(10, 5)):
    """`name` of `shape`, zero-initialized, in `parts` parts along `axis` (None: whole)."""
    partitioner = None if parts is None else tf.fixed_size_partitioner(parts, axis)
    return tf.get_variable(name, list(shape), initializer=tf.zeros_initializer(),
                           partitioner=partitioner)


def _value(sess, v):
    return sess.run(v.as_tensor() if hasattr(v, "as_tensor") else v)


def _save(prefix, parts, axis=0, value=FULL, **saver_args):
    with tf.Graph().as_default():
        v = _variable(parts, axis)
        step = tf.get_variable("step", [], initializer=tf.constant_initializer(7.0))
        saver = tf.train.Saver(**saver_args)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(v.assign(value))
            return saver.save(sess, prefix), v, step


@pytest.fixture
def sliced(tmp_path):
    return _save(str(tmp_path / "m"), 3)[0]


def test_saver_writes_slices_under_the_full_name():
    with tf.Graph().as_default() as g:
        _variable(3)
        tf.get_variable("s", [], initializer=tf.zeros_initializer())
        tf.train.Saver()
        save = g.get_operation_by_name("save/SaveV2")
        restore = g.get_operation_by_name("save/RestoreV2")
        with tf.Session() as sess:
            names, specs = sess.run(save.inputs[1:3])
            assert sess.run(restore.inputs[2]).tolist() == specs.tolist()
    assert names.tolist() == [b"s", b"v", b"v", b"v"]
    assert specs.tolist() == [b"", b"10 5 0,4:0,5", b"10 5 4,3:0,5", b"10 5 7,3:0,5"]
    assert [op.name for op in g.get_operations() if op.type == "Assign" and
            op.name.startswith("save/")] == ["save/Assign", "save/Assign_1", "save/Assign_2",
                                             "save/Assign_3"]


def test_readers_show_the_full_tensor(sliced):
    assert tf.train.list_variables(sliced) == [("step", []), ("v", [10, 5])]
    reader = tf.train.NewCheckpointReader(sliced)
    assert reader.get_variable_to_shape_map() == {"step": [], "v": [10, 5]}
    assert reader.has_tensor("v") and not reader.has_tensor("v/part_0")
    np.testing.assert_array_equal(reader.get_tensor("v"), FULL)
    np.testing.assert_array_equal(tf.train.load_variable(sliced, "v:0"), FULL)
    assert reader.debug_string() == b"step (DT_FLOAT) []\nv (DT_FLOAT) [10,5]\n"


@pytest.mark.parametrize("parts,axis", [(3, 0), (2, 0), (10, 0), (4, 1), (None, 0)])
def test_restore_into_any_partitioning(sliced, parts, axis):
    with tf.Graph().as_default():
        v = _variable(parts, axis)
        step = tf.get_variable("step", [])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, sliced)
            np.testing.assert_array_equal(_value(sess, v), FULL)
            assert sess.run(step) == 7.0


@pytest.mark.parametrize("sequential,sharded", [(True, False), (False, True)])
def test_unpartitioned_checkpoint_into_parts(tmp_path, sequential, sharded):
    prefix = _save(str(tmp_path / "u"), None)[0]
    with tf.Graph().as_default():
        v = _variable(4, axis=1)
        saver = tf.train.Saver(restore_sequentially=sequential, sharded=sharded)
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(_value(sess, v), FULL)


def test_var_list_forms(tmp_path):
    prefix = str(tmp_path / "k")
    with tf.Graph().as_default():
        v = _variable(2)
        other = _variable(None, name="w", shape=[3])
        by_key = tf.train.Saver({"renamed": v})
        parts = tf.train.Saver({"by_parts": list(v)[::-1]})
        listed = tf.train.Saver([v, other])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(v.assign(FULL))
            for saver, names in [(by_key, ["renamed"]), (parts, ["by_parts"]),
                                 (listed, ["v", "w"])]:
                saver.save(sess, prefix)
                assert [n for n, _ in tf.train.list_variables(prefix)] == names
                np.testing.assert_array_equal(tf.train.load_variable(prefix, names[0]), FULL)
        with pytest.raises(ValueError, match="Slices must all be slices: .*w:0"):
            tf.train.Saver({"x": list(v) + [other]})
        with pytest.raises(ValueError, match="Slices must all be from the same tensor: v != u"):
            tf.train.Saver({"x": list(v) + list(_variable(2, name="u"))})
        with pytest.raises(ValueError, match="At least two variables have the same name: v"):
            tf.train.Saver([v, v])


def test_restore_errors(tmp_path, sliced):
    partial = str(tmp_path / "partial")
    with tf.Graph().as_default():
        v = _variable(2)
        saver = tf.train.Saver([list(v)[0]])     # saves only the first half of v
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, partial)
    assert tf.train.list_variables(partial) == [("v", [10, 5])]
    with pytest.raises(ValueError, match="Does not have sufficient slices for partitioned "
                                         "tensor v to restore in slice_spec: -:-"):
        tf.train.NewCheckpointReader(partial).get_tensor("v")
    with tf.Graph().as_default():
        v = _variable(3)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Does not have sufficient slices for partitioned tensor "
                                     "v to restore in slice_spec: 4,3:0,5"):
                saver.restore(sess, partial)
    with tf.Graph().as_default():
        v = _variable(2, shape=(10, 6))
        tf.get_variable("step", [])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"v +graph: float32 \[10,6\] +checkpoint: float32 "
                                     r"\[10,5\]"):
                saver.restore(sess, sliced)


def test_sharded_save_merges_slices_from_several_devices(tmp_path):
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Graph().as_default():
        with tf.device(lambda op: "/cpu:0" if "part_0" in op.name or "part_2" in op.name
                       else "/cpu:1"):
            v = _variable(4, shape=(8, 5))
        assert [p.device for p in v] == ["/cpu:0", "/cpu:1", "/cpu:0", "/cpu:1"]
        saver = tf.train.Saver(sharded=True)
        with tf.Session(config=config) as sess:
            sess.run(v.assign(FULL[:8]))
            prefix = saver.save(sess, str(tmp_path / "m"))
    index = fmt.read_index(prefix)
    assert len(index.data_suffixes) == 2
    assert [(p.start, p.shard) for p in index.entries["v"].slices] == \
        [((0, 0), 0), ((2, 0), 1), ((4, 0), 0), ((6, 0), 1)]
    with tf.Graph().as_default():
        v = _variable(3, shape=(8, 5))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(_value(sess, v), FULL[:8])


# --- SaveV2 / RestoreV2 with slice specs --------------------------------------------------------
def _run(op, feed_spec=None, spec=None):
    with tf.Session() as sess:
        return sess.run(op, None if feed_spec is None else {feed_spec: spec})


def test_raw_slices_and_restoring_any_slice(tmp_path):
    prefix = str(tmp_path / "raw")
    strings = np.array([b"a", b"bb", b"", b"dddd"], dtype=object)
    with tf.Graph().as_default():
        _run(io_ops.save_v2(prefix, ["v", "v", "s", "s", "w"],
                            ["10 5 0,4:-", "10 5 4,6:0,5", "6 0,2", "6 2,4", ""],
                            [FULL[:4], FULL[4:], strings[:2], strings, np.float32(3)]))
        spec = tf.placeholder(tf.string, [3])
        restore = io_ops.restore_v2(prefix, ["v", "s", "w"], spec,
                                    [tf.float32, tf.string, tf.float32])
        whole = _run(restore, spec, ["", "", ""])
        assert whole[1].tolist() == [b"a", b"bb", b"a", b"bb", b"", b"dddd"]
        np.testing.assert_array_equal(whole[0], FULL)
        part = _run(restore, spec, ["10 5 2,5:1,3", "6 1,3", ""])
        np.testing.assert_array_equal(part[0], FULL[2:7, 1:4])
        assert part[1].tolist() == [b"bb", b"a", b"bb"] and part[2] == 3
        np.testing.assert_array_equal(_run(restore, spec, ["10 5 -:1,1", "6 -", ""])[0],
                                      FULL[:, 1:2])
    assert fmt.read_index(prefix).entries["w"].slices == ()


@pytest.mark.parametrize("spec,error,match", [
    ("10 6 0,4:0,5", tf.errors.InvalidArgumentError,
     r"tensor_name = v; shape in shape_and_slice spec \[10,6\] does not match the shape "
     r"stored in checkpoint: \[10,5\]"),
    ("10 5 8,4:0,5", tf.errors.InternalError,
     r"Extent in dimension 0 out of bounds: shape = \[10,5\], slice = 8,4:0,5"),
    ("10 5 0,4", tf.errors.InternalError,
     r"Mismatching ranks: shape = \[10,5\], slice = 0,4"),
    ("garbage", tf.errors.InvalidArgumentError,
     "Need least two elements in shape_and_slice specification: garbage"),
    ("10 5 a,4:0,5", tf.errors.InvalidArgumentError,
     "Expected a pair of numbers or '-' but got 'a,4': string = a,4:0,5"),
    ("10,5 0,4:0,5", tf.errors.InvalidArgumentError,
     "Non numerical dimension in shape_and_slice: 10,5 0,4:0,5"),
    ("10 5 2,-1:-", tf.errors.InvalidArgumentError,
     "Expected non-negative start and positive length but got start = 2, length = -1"),
    ("10 5 0,0:0,5", tf.errors.InvalidArgumentError,
     "Expected non-negative start and positive length but got start = 0, length = 0"),
    ("10 5 2,4:0,5", tf.errors.InvalidArgumentError,
     "Does not have sufficient slices for partitioned tensor v to restore in slice_spec: "
     "2,4:0,5"),
    ("", tf.errors.InvalidArgumentError,
     "Does not have sufficient slices for partitioned tensor v to restore in slice_spec: -:-"),
])
def test_restore_spec_errors(tmp_path, spec, error, match):
    prefix = str(tmp_path / "raw")
    with tf.Graph().as_default():
        _run(io_ops.save_v2(prefix, ["v"], ["10 5 0,4:0,5"], [FULL[:4]]))
        fed = tf.placeholder(tf.string, [1])
        with pytest.raises(error, match=match):
            _run(io_ops.restore_v2(prefix, ["v"], fed, [tf.float32]), fed, [spec])


@pytest.mark.parametrize("names,specs,values,error,match", [
    (["v"], ["10 5 0,4:0,5"], [FULL[:3]], tf.errors.InvalidArgumentError,
     r"does not match the shape of the tensor to  save: 10 5 0,4:0,5, tensor: \[3,5\]"),
    (["v", "v"], ["10 5 0,4:0,5", "10 5 0,4:0,5"], [FULL[:4]] * 2,
     tf.errors.InvalidArgumentError, "Adding duplicate key: v"),
    (["v", "v"], ["10 5 0,4:0,5", ""], [FULL[:4], FULL], tf.errors.InvalidArgumentError,
     "Adding duplicate key: v"),
    (["v", "v"], ["10 5 0,4:0,5", "10 6 4,6:0,5"], [FULL[:4], FULL[4:]],
     tf.errors.InvalidArgumentError, r"Slices of tensor 'v' disagree: float32 \[10,5\] and "
                                     r"float32 \[10,6\]"),
    (["v", "v"], ["10 5 0,4:0,5", "10 5 2,4:0,5"], [FULL[:4], FULL[2:6]],
     tf.errors.InvalidArgumentError, "Slices 0,4:0,5 and 2,4:0,5 of tensor 'v' overlap"),
    (["v"], ["10 5 8,4:0,5"], [FULL[:4]], tf.errors.InternalError,
     r"Extent in dimension 0 out of bounds: shape = \[10,5\], slice = 8,4:0,5"),
    (["v"], ["10 5 0,4:0,5 x"], [FULL[:4]], tf.errors.InvalidArgumentError,
     "Expected a pair of numbers or '-' but got 'x': string = x"),
    (["s"], [" "], [np.float32(3)], tf.errors.InvalidArgumentError,
     "Non numerical dimension in shape_and_slice:  "),
])
def test_save_spec_errors_write_nothing(tmp_path, names, specs, values, error, match):
    prefix = str(tmp_path / "bad")
    with tf.Graph().as_default():
        with pytest.raises(error, match=match):
            _run(io_ops.save_v2(prefix, names, specs, values))
    assert os.listdir(tmp_path) == []


# --- the format ----------------------------------------------------------------------------------
def _index_json(prefix):
    with open(fmt.index_path(prefix), "rb") as f:
        blob = f.read()
    return fmt.INDEX_HEADER.unpack_from(blob)[1], json.loads(blob[fmt.INDEX_HEADER.size:-4])


def test_sliced_index_is_version_two_as_documented(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(prefix, ["v", "v", "w"], [FULL[4:], FULL[:4], np.int64(1)],
                         [tf.float32, tf.float32, tf.int64],
                         [((10, 5), (4, 0)), ((10, 5), (0, 0)), None])
    version, table = _index_json(prefix)
    assert version == table["version"] == 2
    entry = table["tensors"]["v"]
    assert set(entry) == {"dtype", "shape", "slices"} and entry["shape"] == [10, 5]
    assert [(s["start"], s["shape"]) for s in entry["slices"]] == [([0, 0], [4, 5]),
                                                                  ([4, 0], [6, 5])]
    assert set(entry["slices"][0]) == {"start", "shape", "shard", "offset", "length", "crc32c"}
    assert entry["slices"][0]["length"] == 4 * 5 * 4
    assert set(table["tensors"]["w"]) == {"dtype", "shape", "shard", "offset", "length",
                                          "crc32c"}
    index = fmt.read_index(prefix)
    np.testing.assert_array_equal(fmt.read_tensors(index, ["v"])[0], FULL)
    # Without slices a checkpoint stays version 1, readable by older tensorweave.
    fmt.write_checkpoint(prefix, ["w"], [np.int64(1)], [tf.int64])
    assert _index_json(prefix)[0] == 1


def test_damaged_slice_fails_its_checksum(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(prefix, ["v", "v"], [FULL[:4], FULL[4:]], [tf.float32] * 2,
                         [((10, 5), (0, 0)), ((10, 5), (4, 0))])
    index = fmt.read_index(prefix)
    second = index.entries["v"].slices[1]
    with open(index.data_path(0), "r+b") as f:
        f.seek(second.offset + 3)
        byte = f.read(1)
        f.seek(second.offset + 3)
        f.write(bytes([byte[0] ^ 1]))
    np.testing.assert_array_equal(fmt.read_tensors(index, ["v"], [((0, 0), (4, 5))])[0],
                                  FULL[:4])
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match for tensor 'v'"):
        fmt.read_tensors(index, ["v"], [((2, 0), (4, 5))])


def test_merge_joins_slices_and_rejects_overlaps(tmp_path):
    a, b, c = (str(tmp_path / n) for n in "abc")
    fmt.write_checkpoint(a, ["v"], [FULL[:4]], [tf.float32], [((10, 5), (0, 0))])
    fmt.write_checkpoint(b, ["v"], [FULL[4:]], [tf.float32], [((10, 5), (4, 0))])
    fmt.write_checkpoint(c, ["v"], [FULL[3:]], [tf.float32], [((10, 5), (3, 0))])
    with pytest.raises(tf.errors.InvalidArgumentError, match="overlap"):
        fmt.merge_checkpoints([a, c], str(tmp_path / "bad"))
    assert fmt.read_index(a) and fmt.read_index(c), "a failed merge moves no file"
    fmt.merge_checkpoints([a, b], str(tmp_path / "m"))
    index = fmt.read_index(str(tmp_path / "m"))
    # docs/checkpoint-format.md's example of a sliced entry shows these exact values.
    assert [(p.shard, p.offset, p.length, p.crc32c) for p in index.entries["v"].slices] == \
        [(0, 64, 80, 3548560204), (1, 64, 120, 3327187445)]
    np.testing.assert_array_equal(fmt.read_tensors(index, ["v"])[0], FULL)


def test_empty_tensor_as_slices(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(prefix, ["e", "e"], [np.zeros((0, 2), np.float32),
                                              np.zeros((0, 3), np.float32)],
                         [tf.float32] * 2, [((0, 5), (0, 0)), ((0, 5), (0, 2))])
    got = fmt.read_tensors(fmt.read_index(prefix), ["e"])[0]
    assert got.shape == (0, 5) and got.dtype == np.float32
