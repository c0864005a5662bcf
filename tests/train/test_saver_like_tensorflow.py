"""tf.train.Saver and checkpoint management against TensorFlow 2.21's printed behaviour.

Every expected value below was printed by the same TF1 program run under TensorFlow 2.21
(`import tensorflow.compat.v1 as tf`); the checkpoint data files themselves are tensorweave's
own format, so only names, state files, error classes and messages are compared.
"""
import os

import numpy as np
import pytest

import tensorweave as tf

_PREAMBLE = "Restoring from checkpoint failed. This is most likely due to "


def _save_a_and_b(prefix):
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="a")
        tf.Variable(3, name="b")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, prefix)


@pytest.mark.parametrize("make, error, cause, detail", [
    (lambda: tf.Variable(1.0, name="c"), tf.errors.NotFoundError,
     "a Variable name or other graph key that is missing from the checkpoint",
     "Key c not found in checkpoint"),
    (lambda: tf.Variable([1.0, 2.0, 3.0], name="a"), tf.errors.InvalidArgumentError,
     "a mismatch between the current graph and the graph from the checkpoint", "a"),
    (lambda: tf.Variable(3.0, name="b"), tf.errors.InvalidArgumentError,
     "a mismatch between the current graph and the graph from the checkpoint", "b"),
])
def test_restore_errors_carry_tensorflows_explanation(tmp_path, make, error, cause, detail):
    path = _save_a_and_b(str(tmp_path / "m"))
    with tf.Graph().as_default():
        make()
        saver = tf.train.Saver()
        with tf.Session() as sess, pytest.raises(error) as info:
            saver.restore(sess, path)
    message = info.value.message
    assert message.startswith(
        f"{_PREAMBLE}{cause}. Please ensure that you have not altered the graph expected "
        "based on the checkpoint. Original error:\n\n")
    assert detail in message


def test_restore_of_a_directory_is_data_loss(tmp_path):
    _save_a_and_b(str(tmp_path / "m"))
    with tf.Graph().as_default():
        tf.Variable(1.0, name="a")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            with pytest.raises(ValueError, match="The passed save_path is not a valid "
                                                 "checkpoint: .*nope$"):
                saver.restore(sess, str(tmp_path / "nope"))
            with pytest.raises(tf.errors.DataLossError, match="Unable to open table file"):
                saver.restore(sess, str(tmp_path))
    with pytest.raises(tf.errors.DataLossError) as info:
        tf.train.NewCheckpointReader(str(tmp_path))
    assert info.value.message == (
        f"Unable to open table file {tmp_path}: FAILED_PRECONDITION: {tmp_path}; Is a "
        "directory: perhaps your file is in a different file format and you need to use a "
        "different restore operator?")


def test_checkpoint_exists_and_mtimes_take_globs(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in (7, 9):
                saver.save(sess, os.path.join(d, "m"), global_step=step)
    exists = [tf.train.checkpoint_exists(os.path.join(d, p)) for p in ("m-7", "zz", "m-*")]
    assert exists == [True, False, True]
    assert tf.train.checkpoint_exists(d)    # a V1 path: anything that exists
    times = tf.train.get_checkpoint_mtimes([os.path.join(d, p) for p in ("m-7", "zz", "m-9")])
    assert len(times) == 2 and all(isinstance(t, float) for t in times)


def test_var_list_duplicates_are_errors():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with pytest.raises(ValueError, match="^At least two variables have the same name: v$"):
            tf.train.Saver([v, v])
        with pytest.raises(ValueError,
                           match="^The same saveable will be restored with two names: b$"):
            tf.train.Saver({"a": v, "b": v})
        # Importing a graph into itself duplicates its variables' collection entries.
        meta = tf.train.export_meta_graph()
        with pytest.raises(ValueError, match="At least two variables have the same name: v"):
            tf.train.import_meta_graph(meta)


def test_save_creates_one_missing_directory_level_only(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        plain, sharded = tf.train.Saver(), tf.train.Saver(sharded=True)
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert plain.save(sess, str(tmp_path / "one" / "m")) == str(tmp_path / "one" / "m")
            # A sharded save writes <prefix>_temp/part-*: two missing levels, as in TF.
            for saver, where in ((plain, tmp_path / "no" / "sub" / "m"),
                                 (sharded, tmp_path / "sh" / "m")):
                with pytest.raises(ValueError) as info:
                    saver.save(sess, str(where))
                assert str(info.value) == f"Parent directory of {where} doesn't exist, can't save."
    names = sorted(os.listdir(tmp_path / "one"))
    assert [n for n in names if ".data-" not in n] == ["checkpoint", "m.index", "m.meta"]


def test_sharded_saver_graph_and_devices():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            tf.Variable([1.0, 2.0], name="v")
        with tf.device("/cpu:1"):
            tf.Variable(3, name="w")
        saver = tf.train.Saver(sharded=True)
    got = {n.name: n.device for n in g.as_graph_def().node if n.name.startswith("save/")}
    cpu0 = "/device:CPU:0"
    expected = {
        "save/filename/input": "", "save/filename": "", "save/Const": "",
        "save/StaticRegexFullMatch": "/device:CPU:*", "save/Const_1": "/device:CPU:*",
        "save/Const_2": "/device:CPU:*", "save/Select": "/device:CPU:*",
        "save/StringJoin": "/device:CPU:*", "save/num_shards": "",
        "save/ShardedFilename/shard": cpu0, "save/ShardedFilename": cpu0,
        "save/SaveV2/tensor_names": cpu0, "save/SaveV2/shape_and_slices": cpu0,
        "save/SaveV2": cpu0, "save/control_dependency": cpu0,
        "save/ShardedFilename_1/shard": cpu0, "save/ShardedFilename_1": cpu0,
        "save/SaveV2_1/tensor_names": cpu0, "save/SaveV2_1/shape_and_slices": cpu0,
        "save/SaveV2_1": cpu0, "save/control_dependency_1": cpu0,
        "save/MergeV2Checkpoints/checkpoint_prefixes": cpu0, "save/MergeV2Checkpoints": cpu0,
        "save/Identity": cpu0, "save/RestoreV2/tensor_names": cpu0,
        "save/RestoreV2/shape_and_slices": cpu0, "save/RestoreV2": cpu0, "save/Assign": cpu0,
        "save/restore_shard": cpu0, "save/RestoreV2_1/tensor_names": cpu0,
        "save/RestoreV2_1/shape_and_slices": cpu0, "save/RestoreV2_1": cpu0,
        "save/Assign_1": "/device:CPU:1", "save/restore_shard_1": "/device:CPU:1",
        "save/restore_all/NoOp": cpu0, "save/restore_all/NoOp_1": "/device:CPU:1",
        "save/restore_all": "",
    }
    assert got == expected
    sd = saver.saver_def
    assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name, sd.sharded) == \
        ("save/Const:0", "save/Identity:0", "save/restore_all", True)


def test_sharded_save_files_and_restore(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.device("/cpu:1"):
            w = tf.Variable(3, name="w")
        saver = tf.train.Saver(sharded=True)
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            assert saver.save(sess, os.path.join(d, "ck")) == os.path.join(d, "ck")
            sess.run([v.assign([0.0, 0.0]), w.assign(0)])
            saver.restore(sess, os.path.join(d, "ck"))
            assert sess.run(v).tolist() == [1.0, 2.0] and sess.run(w) == 3
    names = sorted(os.listdir(d))
    assert [n for n in names if ".data-" not in n] == ["checkpoint", "ck.index", "ck.meta"]
    assert sorted(n[-14:] for n in names if ".data-" in n) == \
        ["00000-of-00002", "00001-of-00002"]
    assert tf.train.list_variables(d) == [("v", [2]), ("w", [])]


def test_max_to_keep_state_file(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        keep_two, keep_all = tf.train.Saver(max_to_keep=2), tf.train.Saver(max_to_keep=None)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(4):
                keep_two.save(sess, os.path.join(d, "model"), global_step=i)
            assert keep_two.last_checkpoints == [os.path.join(d, "model-2"),
                                                 os.path.join(d, "model-3")]
            keep_all.save(sess, os.path.join(d, "all"), global_step=1)
            assert keep_all.last_checkpoints == []
            assert keep_all.saver_def.max_to_keep == 0
    indexes = sorted(n for n in os.listdir(d) if n.endswith(".index"))
    assert indexes == ["all-1.index", "model-2.index", "model-3.index"]
    with open(os.path.join(d, "checkpoint")) as f:
        assert f.read() == (f'model_checkpoint_path: "{d}/all-1"\n'
                            f'all_model_checkpoint_paths: "{d}/all-1"\n')


def test_last_checkpoint_setters(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=3)
        with pytest.raises(AssertionError) as info:
            saver.set_last_checkpoints_with_time("x")
        assert str(info.value) == ""
        saver.set_last_checkpoints_with_time([("a", 1.0), ("b", 2.0)])
        assert saver.last_checkpoints == ["a", "b"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            kept = saver.save(sess, str(tmp_path / "k"), global_step=4)
        saver.recover_last_checkpoints([kept, str(tmp_path / "nope")])
        assert saver.last_checkpoints == [kept]


def test_keep_checkpoint_every_n_hours_keeps_spaced_checkpoints(tmp_path, monkeypatch):
    """TF 2.21 kept k-2, k-4, k-5 saving every 0.3 s with max_to_keep=2 and one kept per
    0.5 s; the clock is faked here so the test does not depend on the machine's speed."""
    from tensorweave.train import saver as saver_module
    clock = {"now": 1000.0}
    monkeypatch.setattr(saver_module, "time", type("Clock", (), {
        "time": staticmethod(lambda: clock["now"])}))
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=2, keep_checkpoint_every_n_hours=0.5 / 3600)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(6):
                saver.save(sess, str(tmp_path / "k"), global_step=i)
                clock["now"] += 0.3
    indexes = sorted(n for n in os.listdir(tmp_path) if n.endswith(".index"))
    assert indexes == ["k-2.index", "k-4.index", "k-5.index"]
    assert saver.last_checkpoints == [str(tmp_path / "k-4"), str(tmp_path / "k-5")]


def test_relative_state_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("rel")
    with tf.Graph().as_default():
        tf.Variable(np.float32(1.0), name="v")
        saver = tf.train.Saver(save_relative_paths=True, max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert saver.save(sess, "rel/r", global_step=1) == "rel/r-1"
            saver.save(sess, str(tmp_path / "rel" / "r"), global_step=2)
    # TF keeps the first, already relative, path as given (relative to the working
    # directory), so reading it back joins it to the directory once more.
    with open("rel/checkpoint") as f:
        assert f.read() == ('model_checkpoint_path: "r-2"\n'
                            'all_model_checkpoint_paths: "rel/r-1"\n'
                            'all_model_checkpoint_paths: "r-2"\n')
    assert tf.train.latest_checkpoint("rel") == "rel/r-2"
    assert tf.train.latest_checkpoint(str(tmp_path / "rel")) == str(tmp_path / "rel" / "r-2")
    state = tf.train.get_checkpoint_state("rel")
    assert list(state.all_model_checkpoint_paths) == ["rel/rel/r-1", "rel/r-2"]
