"""The checkpoint I/O ops' pure helpers as OpCase rows; SaveV2/RestoreV2/MergeV2Checkpoints are
stateful and tested in tests/train/test_checkpoint_ops.py."""
import numpy as np

import tensorweave as tf
from tensorweave.ops import io_ops
from tensorweave.testing.op_case import OpCase, case_tests


def _strings(value):
    return np.array(value.encode(), dtype=object)


CASES = [
    OpCase("sharded_filename",
           lambda base, shard, n: io_ops.sharded_filename(base, shard, n),
           lambda base, shard, n: _strings(f"{base.item().decode()}-{int(shard):05d}-of-"
                                           f"{int(n):05d}"),
           [np.array(b"/ckpt/model", dtype=object), np.array(3), np.array(12)],
           dtypes=(tf.string,), fixed_dtypes=(tf.string, tf.int32, tf.int32), grad=False),
    OpCase("sharded_filespec",
           lambda base, n: io_ops.sharded_filespec(base, n),
           lambda base, n: _strings(f"{base.item().decode()}-?????-of-{int(n):05d}"),
           [np.array(b"model", dtype=object), np.array(2)],
           dtypes=(tf.string,), fixed_dtypes=(tf.string, tf.int32), grad=False),
]


test_forward, test_shapes = case_tests(CASES)


def test_sharded_filename_default_name_and_static_shape():
    with tf.Graph().as_default():
        name = io_ops.sharded_filename("model", 0, 2)
        assert name.op.type == "ShardedFilename" and name.op.name == "ShardedFilename"
        assert name.dtype == tf.string and name.shape.as_list() == []
        with tf.Session() as sess:
            assert sess.run(name) == b"model-00000-of-00002"
