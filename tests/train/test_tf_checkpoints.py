"""Reading TensorFlow's checkpoints (train/tf_bundle.py): the files TensorFlow 2.21 wrote
(tests/fixtures/make_tf_checkpoint.py) read back with TensorFlow's values through
NewCheckpointReader, Saver.restore (into whole and re-partitioned variables) and
init_from_checkpoint; corruption is caught by TensorFlow's checksums."""
import json
import os
import shutil

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import tf_bundle, tf_bundle_writer
from tensorweave.train.tf_bundle_writer import rewrite_as_tensorflow

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
MODEL = os.path.join(FIXTURES, "tf_checkpoint", "model.ckpt")
PARTITIONED = os.path.join(FIXTURES, "tf_checkpoint", "partitioned.ckpt")
with open(os.path.join(FIXTURES, "tf_checkpoint.json")) as _f:
    EXPECTED = json.load(_f)


def _expected(name):
    e = EXPECTED[name]
    if e["dtype"] == "string":
        values = np.array([v.encode("latin-1") for v in e["value"]], dtype=object)
        return values.reshape(e["shape"])
    return np.array(e["value"], dtype=e["dtype"]).reshape(e["shape"])


def _assert_value(got, name):
    want = _expected(name)
    got = np.asarray(got)
    if want.dtype == object:
        assert [bytes(v) for v in got.reshape(-1)] == list(want.reshape(-1))
    else:
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_checkpoint_reader_reads_every_tensor_as_tensorflow_does():
    reader = tf.train.NewCheckpointReader(MODEL)
    names = sorted(n for n in EXPECTED if n != "parts")
    assert sorted(reader.get_variable_to_shape_map()) == names
    assert reader.get_variable_to_shape_map()["dense/kernel"] == [4, 3]
    assert reader.get_variable_to_dtype_map()["half"] == tf.float16
    for name in names:
        _assert_value(reader.get_tensor(name), name)
    assert tf.train.list_variables(PARTITIONED) == [("parts", [7, 2])]
    _assert_value(tf.train.load_variable(PARTITIONED, "parts"), "parts")


def test_saver_restores_a_tensorflow_checkpoint():
    with tf.Graph().as_default():
        variables = [tf.Variable(np.zeros_like(_expected(n)) if _expected(n).dtype != object
                                 else np.full(_expected(n).shape, b"", object), name=n)
                     for n in EXPECTED if n != "parts"]
        saver = tf.train.Saver(variables)
        with tf.Session() as sess:
            saver.restore(sess, MODEL)
            for v, value in zip(variables, sess.run(variables)):
                _assert_value(value, v.op.name)


@pytest.mark.parametrize("partitions", [1, 2, 3])
def test_partitioned_variable_restores_from_tensorflow_slices(partitions):
    with tf.Graph().as_default():
        partitioner = tf.fixed_size_partitioner(partitions) if partitions > 1 else None
        parts = tf.get_variable("parts", [7, 2], partitioner=partitioner)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, PARTITIONED)
            _assert_value(sess.run(tf.convert_to_tensor(parts)), "parts")


def test_init_from_a_tensorflow_checkpoint():
    with tf.Graph().as_default():
        kernel = tf.get_variable("my/kernel", [4, 3])
        tf.train.init_from_checkpoint(MODEL, {"dense/kernel": "my/kernel"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            _assert_value(sess.run(kernel), "dense/kernel")


def _copy(tmp_path, prefix):
    for name in os.listdir(os.path.dirname(prefix)):
        if name.startswith(os.path.basename(prefix) + "."):
            shutil.copy(os.path.join(os.path.dirname(prefix), name), tmp_path / name)
    return str(tmp_path / os.path.basename(prefix))


def _flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x01]))


def test_corrupt_tensorflow_checkpoints_raise_data_loss(tmp_path):
    prefix = _copy(tmp_path, MODEL)
    reader = tf.train.NewCheckpointReader(prefix)
    entry = reader._index.entries["dense/kernel"]
    _flip(f"{prefix}.data-{entry.shard:05d}-of-00002", entry.offset + 3)
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match for tensor "
                                                      "'dense/kernel'"):
        tf.train.NewCheckpointReader(prefix).get_tensor("dense/kernel")
    words = reader._index.entries["words"]
    _flip(f"{prefix}.data-{words.shard:05d}-of-00002", words.offset + words.length - 1)
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match for tensor "
                                                      "'words'"):
        tf.train.NewCheckpointReader(prefix).get_tensor("words")
    _flip(f"{prefix}.data-{words.shard:05d}-of-00002", words.offset)   # a length
    with pytest.raises(tf.errors.DataLossError, match="words"):
        tf.train.NewCheckpointReader(prefix).get_tensor("words")
    _flip(f"{prefix}.index", 10)
    with pytest.raises(tf.errors.DataLossError, match="Checksum mismatch in a block"):
        tf.train.NewCheckpointReader(prefix)


def test_masked_checksums_and_ordered_code():
    assert tf_bundle.unmask(0xa282ead8) == 0   # TensorFlow's Mask(0)
    assert tf_bundle._ordered_signed(b"\x85", 0) == (5, 1)
    assert tf_bundle._ordered_signed(b"\x7f", 0) == (-1, 1)
    assert tf_bundle._ordered_signed(b"\xc0\x64", 0) == (100, 2)
    assert tf_bundle._ordered_signed(b"\x3f\x9c", 0) == (-100, 2)
    assert tf_bundle._ordered_string(b"a\x00\xffb\x00\x01", 0) == ("a\x00b", 6)


def _entries(prefix):
    return {name: (e.dtype, e.shape, [(p.start, p.shape, p.length, p.crc32c) for p in e.pieces()])
            for name, e in tf.train.NewCheckpointReader(prefix)._index.entries.items()}


def test_rewritten_checkpoints_have_tensorflows_bytes_and_checksums(tmp_path):
    """A tensorweave checkpoint rewritten in TensorFlow's format holds, per tensor, the bytes
    and checksum TensorFlow wrote for the same values (strings included); a partitioned
    variable's data file is TensorFlow's byte for byte."""
    names = [n for n in EXPECTED if n != "parts"]
    with tf.Graph().as_default():
        variables = [tf.Variable(_expected(n), name=n) for n in names]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver(variables).save(sess, str(tmp_path / "model.ckpt"))
    rewrite_as_tensorflow(prefix)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt.data-00000-of-00001",
                                            "model.ckpt.index", "model.ckpt.meta"]
    ours, theirs = _entries(prefix), _entries(MODEL)
    for name in names:
        assert ours[name][:2] == theirs[name][:2]
        assert [p[2:] for p in ours[name][2]] == [p[2:] for p in theirs[name][2]], name
        _assert_value(tf.train.load_variable(prefix, name), name)
    with tf.Graph().as_default():
        tf.get_variable("parts", initializer=tf.constant(_expected("parts")),
                        partitioner=tf.fixed_size_partitioner(3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "partitioned.ckpt"))
    rewrite_as_tensorflow(prefix)
    assert _entries(prefix) == _entries(PARTITIONED)
    with open(f"{prefix}.data-00000-of-00001", "rb") as mine, \
            open(f"{PARTITIONED}.data-00000-of-00001", "rb") as tensorflows:
        assert mine.read() == tensorflows.read()
    with tf.Graph().as_default():
        whole = tf.get_variable("parts", [7, 2])
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, prefix)
            _assert_value(sess.run(whole), "parts")


def test_slice_keys_round_trip_through_ordered_code():
    for start, shape in (((0, 0), (3, 2)), ((5, 0), (2, 2)), ((70, 1 << 20), (1 << 40, 9))):
        key = tf_bundle_writer._slice_key("a/b\x00c", start, shape)
        assert tf_bundle._decode_slice_key(key, "p") == ("a/b\x00c", list(start), list(shape))
    for value in (0, 63, 64, -1, -65, 1000, -1000, 1 << 40, -(1 << 62), (1 << 63) - 1,
                  -(1 << 63)):
        encoded = tf_bundle_writer._ordered_signed(value)
        assert tf_bundle._ordered_signed(encoded + b"\x05", 0) == (value, len(encoded))
