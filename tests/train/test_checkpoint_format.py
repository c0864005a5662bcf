"""The checkpoint format: round trips of every dtype, atomic overwrite, merge, and every way a
file can be damaged (each must be DataLossError or NotFoundError, never wrong values)."""
import glob
import json
import os
import struct

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import checkpoint_format as fmt

VALUES = {
    "f16": (np.array([1.5, -2.25], np.float16), tf.float16),
    "f32": (np.arange(12, dtype=np.float32).reshape(3, 4), tf.float32),
    "f64": (np.array([[np.pi]]), tf.float64),
    "i8": (np.array([-128, 127], np.int8), tf.int8),
    "i32": (np.array(7, np.int32), tf.int32),
    "i64": (np.array([2**40], np.int64), tf.int64),
    "u8": (np.arange(5, dtype=np.uint8), tf.uint8),
    "bool": (np.array([True, False, True]), tf.bool),
    "c64": (np.array([1 + 2j], np.complex64), tf.complex64),
    "empty": (np.zeros((0, 3), np.float32), tf.float32),
    "scalar_str": (np.array(b"hello", dtype=object), tf.string),
    "strs": (np.array([[b"a", b""], [b"\x00\xff", b"longer string"]], dtype=object),
             tf.string),
    "empty_strs": (np.zeros((0,), dtype=object), tf.string),
}


def _write(prefix, values=VALUES):
    names = list(values)
    fmt.write_checkpoint(prefix, names, [values[n][0] for n in names],
                         [values[n][1] for n in names])


def test_round_trip_of_every_dtype(tmp_path):
    prefix = str(tmp_path / "ck")
    _write(prefix)
    index = fmt.read_index(prefix)
    assert sorted(index.entries) == sorted(VALUES)
    got = fmt.read_tensors(index, list(VALUES))
    for (name, (value, dtype)), out in zip(VALUES.items(), got):
        assert index.entries[name].dtype == dtype
        assert out.shape == value.shape, name
        assert out.dtype == value.dtype, name
        np.testing.assert_array_equal(out, value, err_msg=name)


def test_files_and_alignment(tmp_path):
    prefix = str(tmp_path / "ck")
    _write(prefix)
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and files[1] == "ck.index"
    assert files[0].startswith("ck.data-") and files[0].endswith("-00000-of-00001")
    index = fmt.read_index(prefix)
    assert all(e.offset % fmt.ALIGNMENT == 0 for e in index.entries.values())
    with open(index.data_path(0), "rb") as f:
        assert f.read(8) == fmt.DATA_MAGIC


def test_bfloat16_is_stored_as_its_float32_values(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(prefix, ["x"], [np.array([1.0, 2.0], np.float32)], [tf.bfloat16])
    index = fmt.read_index(prefix)
    assert index.entries["x"].dtype == tf.bfloat16
    np.testing.assert_array_equal(fmt.read_tensors(index, ["x"])[0], [1.0, 2.0])


def test_overwrite_replaces_data_files(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(prefix, ["a"], [np.ones(3, np.float32)], [tf.float32])
    first = glob.glob(prefix + ".data-*")
    fmt.write_checkpoint(prefix, ["a"], [np.full(3, 2.0, np.float32)], [tf.float32])
    second = glob.glob(prefix + ".data-*")
    assert len(second) == 1 and second != first, "the old data file is removed"
    np.testing.assert_array_equal(fmt.read_tensors(fmt.read_index(prefix), ["a"])[0], [2, 2, 2])


def test_duplicate_names_rejected(tmp_path):
    with pytest.raises(tf.errors.InvalidArgumentError, match="unique"):
        fmt.write_checkpoint(str(tmp_path / "ck"), ["a", "a"], [np.ones(1), np.ones(1)],
                             [tf.float64, tf.float64])


def test_missing_directory_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="does not exist"):
        fmt.write_checkpoint(str(tmp_path / "nope" / "ck"), ["a"], [np.ones(1)], [tf.float64])
    assert not os.path.exists(tmp_path / "nope")


def test_merge_of_shards(tmp_path):
    a, b = str(tmp_path / "part-a"), str(tmp_path / "part-b")
    fmt.write_checkpoint(a, ["x"], [np.arange(3.0)], [tf.float64])
    fmt.write_checkpoint(b, ["y"], [np.array([b"s"], dtype=object)], [tf.string])
    dest = str(tmp_path / "merged")
    fmt.merge_checkpoints([a, b], dest)
    index = fmt.read_index(dest)
    assert {n: e.shard for n, e in index.entries.items()} == {"x": 0, "y": 1}
    x, y = fmt.read_tensors(index, ["x", "y"])
    np.testing.assert_array_equal(x, [0, 1, 2])
    assert y.tolist() == [b"s"]
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["merged.index"] + [os.path.basename(index.data_path(k)) for k in (0, 1)])


def test_merge_rejects_a_name_in_two_shards(tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    for p in (a, b):
        fmt.write_checkpoint(p, ["x"], [np.ones(1)], [tf.float64])
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one shard"):
        fmt.merge_checkpoints([a, b], str(tmp_path / "m"))


# --- damage ----------------------------------------------------------------------------------
@pytest.fixture
def saved(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(prefix, ["w", "s"], [np.arange(1000, dtype=np.float32),
                                              np.array([b"abc", b"de"], dtype=object)],
                         [tf.float32, tf.string])
    return prefix


def _data_file(prefix):
    (path,) = glob.glob(prefix + ".data-*")
    return path


def _flip(path, pos):
    with open(path, "r+b") as f:
        f.seek(pos)
        byte = f.read(1)
        f.seek(pos)
        f.write(bytes([byte[0] ^ 0x01]))


def test_flipped_tensor_byte_fails_the_checksum(saved):
    index = fmt.read_index(saved)
    _flip(_data_file(saved), index.entries["w"].offset + 123)
    with pytest.raises(tf.errors.DataLossError, match="Checksum does not match for tensor 'w'"):
        fmt.read_tensors(fmt.read_index(saved), ["w"])
    # The undamaged tensor still reads.
    assert fmt.read_tensors(fmt.read_index(saved), ["s"])[0].tolist() == [b"abc", b"de"]


def test_truncated_data_file(saved):
    path = _data_file(saved)
    os.truncate(path, os.path.getsize(path) // 2)
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        fmt.read_tensors(fmt.read_index(saved), ["w", "s"])


def test_data_file_of_another_format(saved):
    with open(_data_file(saved), "r+b") as f:
        f.write(b"NOTOURS!")
    with pytest.raises(tf.errors.DataLossError, match="not a tensorweave checkpoint data"):
        fmt.read_tensors(fmt.read_index(saved), ["w"])


def test_missing_data_file(saved):
    os.remove(_data_file(saved))
    with pytest.raises(tf.errors.NotFoundError, match="missing"):
        fmt.read_tensors(fmt.read_index(saved), ["w"])


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "empty", "trailing"])
def test_damaged_index(saved, damage):
    path = fmt.index_path(saved)
    size = os.path.getsize(path)
    if damage == "flip":
        _flip(path, size // 2)
    elif damage == "truncate":
        os.truncate(path, size - 5)
    elif damage == "magic":
        _flip(path, 0)
    elif damage == "empty":
        os.truncate(path, 0)
    else:
        with open(path, "ab") as f:
            f.write(b"x")
    with pytest.raises(tf.errors.DataLossError):
        fmt.read_index(saved)


def test_future_version_is_refused(saved):
    path = fmt.index_path(saved)
    with open(path, "rb") as f:
        blob = f.read()
    magic, _, length = fmt.INDEX_HEADER.unpack_from(blob)
    body = blob[fmt.INDEX_HEADER.size:-4]
    new = fmt.INDEX_HEADER.pack(magic, fmt.FORMAT_VERSION + 1, length) + body
    import google_crc32c
    with open(path, "wb") as f:
        f.write(new + struct.pack("<I", google_crc32c.value(new)))
    with pytest.raises(tf.errors.DataLossError, match=f"format version {fmt.FORMAT_VERSION + 1}"):
        fmt.read_index(saved)


def test_missing_index_is_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        fmt.read_index(str(tmp_path / "nothing"))


def test_unknown_key_is_not_found(saved):
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        fmt.read_tensors(fmt.read_index(saved), ["nope"])


def test_index_is_json_as_documented(saved):
    with open(fmt.index_path(saved), "rb") as f:
        blob = f.read()
    table = json.loads(blob[fmt.INDEX_HEADER.size:-4])
    assert table["format"] == "tensorweave-checkpoint" and table["version"] == 1
    assert set(table["tensors"]["w"]) == {"dtype", "shape", "shard", "offset", "length",
                                          "crc32c"}
    assert table["tensors"]["w"]["dtype"] == "float32"
    assert table["tensors"]["w"]["length"] == 4000


def test_documented_example_checksums(tmp_path):
    """docs/checkpoint-format.md's example index shows these exact values."""
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(prefix, ["W", "global_step"],
                         [np.array([[1], [2], [3]], np.float32), np.int64(1000)],
                         [tf.float32, tf.int64])
    entries = fmt.read_index(prefix).entries
    assert (entries["W"].offset, entries["W"].length, entries["W"].crc32c) == (64, 12, 944629635)
    assert (entries["global_step"].offset, entries["global_step"].crc32c) == (128, 1427635143)
