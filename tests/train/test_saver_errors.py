"""Restore errors: every problem reported at once, with the right class, and nothing restored."""
import glob
import os

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture
def checkpoint(tmp_path):
    """A checkpoint of weights [3, 2] float32, bias [2] float32, step int64."""
    with tf.Graph().as_default():
        tf.Variable(np.ones((3, 2), np.float32), name="weights")
        tf.Variable(np.ones(2, np.float32), name="bias")
        tf.Variable(np.int64(9), name="step")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, str(tmp_path / "ck"), write_meta_graph=False)


def _restore_keeps_values(path, build, exc_type, *patterns):
    """Restores into the graph `build` makes; checks the error and that no variable changed."""
    with tf.Graph().as_default():
        variables = build()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(variables)
            with pytest.raises(exc_type) as info:
                saver.restore(sess, path)
            after = sess.run(variables)
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    for pattern in patterns:
        assert pattern in str(info.value), f"{pattern!r} not in:\n{info.value}"
    return str(info.value)


def test_all_missing_keys_listed_with_suggestions(checkpoint):
    def build():
        return [tf.Variable(tf.zeros([3, 2]), name="weights"),
                tf.Variable(tf.zeros([2]), name="biass"),
                tf.Variable(tf.zeros([1]), name="extra"),
                tf.Variable(tf.zeros([1]), name="zzz")]
    message = _restore_keeps_values(
        checkpoint, build, tf.errors.NotFoundError,
        "3 of 4 tensors to restore are not in the checkpoint",
        "Key biass not found in checkpoint (did you mean 'bias'?)",
        "Key extra not found in checkpoint", "Key zzz not found in checkpoint",
        "Nothing was restored")
    assert "weights" not in message.split("Nothing")[0].replace(checkpoint, "")


def test_shape_and_dtype_mismatches_side_by_side(checkpoint):
    def build():
        return [tf.Variable(tf.zeros([4, 2]), name="weights"),
                tf.Variable(tf.zeros([2], tf.float64), name="bias"),
                tf.Variable(np.int64(0), name="step")]
    message = _restore_keeps_values(
        checkpoint, build, tf.errors.InvalidArgumentError,
        "2 tensors do not match the checkpoint", "Nothing was restored")
    assert "weights  graph: float32 [4,2]   checkpoint: float32 [3,2]" in message
    assert "bias     graph: float64 [2]   checkpoint: float32 [2]" in message
    assert "step" not in message.replace(checkpoint, "")


def test_missing_and_mismatched_together_is_not_found_naming_both(checkpoint):
    def build():
        return [tf.Variable(tf.zeros([5]), name="weights"),
                tf.Variable(tf.zeros([1]), name="other")]
    _restore_keeps_values(checkpoint, build, tf.errors.NotFoundError,
                          "Key other not found", "weights  graph: float32 [5]")


def _damage(path, how):
    (data,) = glob.glob(path + ".data-*")
    with open(data, "r+b") as f:
        content = f.read()
        if how == "flip":
            f.seek(len(content) - 10)
            f.write(bytes([content[-10] ^ 0xFF]))
        else:
            f.truncate(len(content) // 2)


@pytest.mark.parametrize("how", ["flip", "truncate"])
def test_corrupt_data_is_data_loss_and_restores_nothing(checkpoint, how):
    _damage(checkpoint, how)

    def build():
        return [tf.Variable(tf.zeros([3, 2]), name="weights"),
                tf.Variable(tf.zeros([2]), name="bias"),
                tf.Variable(np.int64(0), name="step")]
    _restore_keeps_values(checkpoint, build, tf.errors.DataLossError)


def test_bad_paths(checkpoint, tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                saver.restore(sess, str(tmp_path / "nope"))
            with pytest.raises(ValueError, match="save_path when it is None"):
                saver.restore(sess, None)
            # As in TF, a directory passes checkpoint_exists (a V1 path) but is no table.
            with pytest.raises(tf.errors.DataLossError, match="Unable to open table file"):
                saver.restore(sess, str(tmp_path))


def test_restore_op_itself_checks_keys_and_dtypes(checkpoint):
    """A Saver rebuilt from a SaverDef has no variable list: the RestoreV2 kernel checks."""
    with tf.Graph().as_default():
        tf.Variable(tf.zeros([3, 2]), name="weights")
        tf.Variable(tf.zeros([1]), name="missing_a")
        tf.Variable(tf.zeros([1], tf.float64), name="bias")
        saver_def = tf.train.Saver().as_saver_def()
        by_def = tf.train.Saver(saver_def=saver_def)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.NotFoundError) as info:
                by_def.restore(sess, checkpoint)
    message = str(info.value)
    assert "Key missing_a not found" in message and "bias" in message
    assert "save/RestoreV2" in message, "the error names the failing node"


def test_uninitialized_variable_cannot_be_saved(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="v"):
                saver.save(sess, str(tmp_path / "m"))
    assert not os.listdir(tmp_path)
