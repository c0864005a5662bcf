"""bfloat16 in checkpoints: TensorFlow stores its 2 bytes; tensorweave holds bfloat16 values
as float32 and its own format stores those 4 bytes.

TensorFlow's bits come from TF 2.21 (tests/fixtures/make_tf_interop.py, and the table below
from `tf.bitcast(tf.cast(x, tf.bfloat16), tf.uint16)`).
"""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import checkpoint_format, tf_bundle
from tensorweave.train.tf_bundle_writer import rewrite_as_tensorflow

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tf_interop")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    TF_BITS = json.load(_f)["bf16_bits"]

# float32 value -> TF's bfloat16 bits: ties go to even, overflow to inf, subnormals stay.
_ROUNDING = [(1.0, 0x3f80), (1 + 2**-8, 0x3f80), (1 + 3 * 2**-8, 0x3f82),
             (1 + 2**-8 + 2**-20, 0x3f81), (-2.25, 0xc010), (3.4028235e38, 0x7f80),
             (3.3961776e38, 0x7f80), (1e-40, 0x0001), (1e-45, 0x0000), (-0.0, 0x8000),
             (np.inf, 0x7f80), (-np.inf, 0xff80), (np.nan, 0x7fc0)]


def _bits(values):
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).tolist()


def test_float32_to_bfloat16_rounds_like_tf_cast():
    values = np.array([v for v, _ in _ROUNDING], np.float32)
    assert tf_bundle.float32_to_bfloat16(values).tolist() == [b for _, b in _ROUNDING]
    back = tf_bundle.bfloat16_to_float32(np.array([b for _, b in _ROUNDING], np.uint16))
    assert _bits(back) == [b for _, b in _ROUNDING]


def test_reads_tensorflow_bfloat16_checkpoint():
    prefix = os.path.join(FIXTURES, "bf16")
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_dtype_map() == {"bf16": tf.bfloat16}
    value = reader.get_tensor("bf16")
    assert value.dtype == np.float32 and _bits(value) == TF_BITS
    with tf.Graph().as_default():
        v = tf.Variable(tf.zeros([6], tf.bfloat16), name="bf16")
        with tf.Session() as s:
            tf.train.Saver().restore(s, prefix)
            assert _bits(s.run(v)) == TF_BITS


def _save(prefix, values):
    with tf.Graph().as_default():
        v = tf.Variable(tf.cast(tf.constant(values), tf.bfloat16), name="bf16")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, prefix, write_meta_graph=False)
            return s.run(v)


def test_own_format_keeps_the_float32_values(tmp_path):
    values = np.array([v for v, _ in _ROUNDING], np.float32)
    held = _save(str(tmp_path / "m"), values)
    index = checkpoint_format.read_index(str(tmp_path / "m"))
    entry = index.entries["bf16"]
    assert entry.dtype == tf.bfloat16 and entry.length == 4 * len(values)
    got = checkpoint_format.read_tensors(index, ["bf16"])[0]
    np.testing.assert_array_equal(got.view(np.uint32), np.asarray(held).view(np.uint32))


def test_converted_checkpoint_stores_tf_bfloat16(tmp_path):
    prefix = str(tmp_path / "m")
    values = np.array([v for v, _ in _ROUNDING] * 2, np.float32).reshape(2, -1)
    _save(prefix, values)
    rewrite_as_tensorflow(prefix)
    index = checkpoint_format.read_index(prefix)
    assert index.tensorflow
    assert index.entries["bf16"].length == 2 * values.size   # TF expects 2 bytes each
    with open(prefix + ".data-00000-of-00001", "rb") as f:
        stored = np.frombuffer(f.read(), np.uint16)
    assert stored.tolist() == [b for _, b in _ROUNDING] * 2
    got = tf.train.NewCheckpointReader(prefix).get_tensor("bf16")
    assert got.shape == (2, len(_ROUNDING))
    assert _bits(got.reshape(-1)) == [b for _, b in _ROUNDING] * 2


@pytest.mark.parametrize("value", [[], 2.5])
def test_bfloat16_empty_and_scalar_round_trip_tf_format(tmp_path, value):
    prefix = str(tmp_path / "m")
    _save(prefix, np.array(value, np.float32))
    rewrite_as_tensorflow(prefix)
    got = tf.train.NewCheckpointReader(prefix).get_tensor("bf16")
    np.testing.assert_array_equal(got, np.array(value, np.float32))
