"""SaveV2, RestoreV2 and MergeV2Checkpoints as graph ops run by a Session."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import io_ops


def test_op_definitions_are_stateful_with_tf_attrs():
    with tf.Graph().as_default():
        save = io_ops.save_v2("p", ["a"], [""], [tf.constant([1.0])])
        restored = io_ops.restore_v2("p", ["a", "b"], ["", ""], [tf.float32, tf.int64])
        merge = io_ops.merge_v2_checkpoints(["p-0"], "p")
    assert save.type == "SaveV2" and save.name == "SaveV2"
    assert save.get_attr("dtypes") == [tf.float32]
    assert [t.name for t in save.inputs][:3] == ["SaveV2/prefix:0", "SaveV2/tensor_names:0",
                                                 "SaveV2/shape_and_slices:0"]
    assert [t.dtype for t in restored] == [tf.float32, tf.int64]
    assert all(t.shape.ndims is None for t in restored)
    assert merge.get_attr("delete_old_dirs") is True
    for op_type in ("SaveV2", "RestoreV2", "MergeV2Checkpoints"):
        from tensorweave.framework.op_def import get_op_def
        assert get_op_def(op_type).is_stateful and get_op_def(op_type).not_differentiable


def test_save_then_restore_through_sess_run(tmp_path):
    prefix = str(tmp_path / "raw")
    values = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([b"x"], dtype=object),
              np.int32(4)]
    with tf.Graph().as_default():
        path = tf.placeholder(tf.string, [])
        save = io_ops.save_v2(path, ["f", "s", "i"], ["", "", ""],
                              [tf.constant(v) for v in values])
        restore = io_ops.restore_v2(path, ["i", "f"], ["", ""], [tf.int32, tf.float32])
        with tf.Session() as sess:
            sess.run(save, {path: prefix})
            i, f = sess.run(restore, {path: prefix})
    assert i == 4 and i.dtype == np.int32
    np.testing.assert_array_equal(f, values[0])


def test_restore_errors_from_the_kernel(tmp_path):
    prefix = str(tmp_path / "raw")
    with tf.Graph().as_default():
        save = io_ops.save_v2(prefix, ["a"], [""], [tf.constant([1.0])])
        missing = io_ops.restore_v2(prefix, ["a", "b", "c"], ["", "", ""], [tf.float32] * 3)
        wrong = io_ops.restore_v2(prefix, ["a"], [""], [tf.int32])
        sliced = io_ops.restore_v2(prefix, ["a"], ["2 0,1"], [tf.float32])
        nowhere = io_ops.restore_v2(str(tmp_path / "none"), ["a"], [""], [tf.float32])
        with tf.Session() as sess:
            sess.run(save)
            with pytest.raises(tf.errors.NotFoundError,
                               match="(?s)Key b not found.*Key c not found"):
                sess.run(missing)
            with pytest.raises(tf.errors.InvalidArgumentError, match="graph: int32"):
                sess.run(wrong)
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"shape in shape_and_slice spec \[2\] does not match"):
                sess.run(sliced)
            with pytest.raises(tf.errors.NotFoundError, match="Failed to find"):
                sess.run(nowhere)


def test_save_errors_from_the_kernel(tmp_path):
    with tf.Graph().as_default():
        bad_count = io_ops.save_v2(str(tmp_path / "x"), ["a", "b"], ["", ""],
                                   [tf.constant(1.0)])
        new_dir = io_ops.save_v2(str(tmp_path / "no" / "x"), ["a"], [""], [tf.constant(1.0)])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="2 tensor names for 1"):
                sess.run(bad_count)
            sess.run(new_dir)   # a missing directory is created, as TensorFlow's kernel does
    assert (tmp_path / "no" / "x.index").exists()


def test_merge_v2_checkpoints_op(tmp_path):
    base = str(tmp_path / "m")
    with tf.Graph().as_default():
        shards = [io_ops.sharded_filename(base, k, 2) for k in range(2)]
        saves = [io_ops.save_v2(shards[0], ["a"], [""], [tf.constant([1.0])]),
                 io_ops.save_v2(shards[1], ["b"], [""], [tf.constant([2.0])])]
        with tf.control_dependencies(saves):
            merge = io_ops.merge_v2_checkpoints(tf.stack(shards), base)
        with tf.Session() as sess:
            sess.run(merge)
    assert tf.train.list_variables(base) == [("a", [1]), ("b", [1])]
    assert tf.train.load_variable(base, "b").tolist() == [2.0]
    assert not tf.train.checkpoint_exists(base + "-00000-of-00002")
