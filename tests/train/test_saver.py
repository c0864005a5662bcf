"""tf.train.Saver: the graph it adds, save/restore round trips, options and SaverDefs."""
import os

import numpy as np
import pytest

import tensorweave as tf


def _model(shape=(3, 2), dtype=tf.float32):
    w = tf.Variable(np.arange(np.prod(shape)).reshape(shape), dtype=dtype, name="w")
    b = tf.Variable(tf.zeros([2], dtype=dtype), name="b")
    return w, b


def _init(sess):
    sess.run(tf.global_variables_initializer())


def test_graph_has_tf1_names_and_saver_def():
    with tf.Graph().as_default() as g:
        _model()
        saver = tf.train.Saver()
    ops = {op.name: op for op in g.get_operations() if op.name.startswith("save/")}
    assert {n: op.type for n, op in ops.items()} == {
        "save/filename/input": "Const", "save/filename": "PlaceholderWithDefault",
        "save/Const": "PlaceholderWithDefault", "save/SaveV2/tensor_names": "Const",
        "save/SaveV2/shape_and_slices": "Const", "save/SaveV2": "SaveV2",
        "save/control_dependency": "Identity", "save/RestoreV2/tensor_names": "Const",
        "save/RestoreV2/shape_and_slices": "Const", "save/RestoreV2": "RestoreV2",
        "save/Assign": "Assign", "save/Assign_1": "Assign", "save/restore_all": "NoOp"}
    assert [t.name for t in ops["save/SaveV2"].inputs][3:] == ["b:0", "w:0"]
    assert [t.name for t in ops["save/Assign"].inputs] == ["b:0", "save/RestoreV2:0"]
    assert ops["save/SaveV2"].get_attr("dtypes") == [tf.float32, tf.float32]
    assert [op.name for op in ops["save/restore_all"].control_inputs] == \
        ["save/Assign", "save/Assign_1"]
    sd = saver.as_saver_def()
    assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name) == \
        ("save/Const:0", "save/control_dependency:0", "save/restore_all")
    assert sd.max_to_keep == 5 and sd.version == tf.train.SaverDef.V2 and not sd.sharded
    assert sd.keep_checkpoint_every_n_hours == 10000


def test_second_saver_gets_a_unique_scope_and_name_option():
    with tf.Graph().as_default():
        _model()
        tf.train.Saver()
        assert tf.train.Saver().as_saver_def().restore_op_name == "save_1/restore_all"
        assert tf.train.Saver(name="mine").as_saver_def().filename_tensor_name == \
            "mine/Const:0"


def test_save_restore_round_trip_and_returned_prefix(tmp_path):
    with tf.Graph().as_default():
        w, b = _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            sess.run(tf.assign(b, [5.0, 6.0]))
            path = saver.save(sess, str(tmp_path / "model"))
            assert path == str(tmp_path / "model")
            assert os.path.exists(path + ".index") and os.path.exists(path + ".meta")
            sess.run([tf.assign(w, tf.zeros([3, 2])), tf.assign(b, tf.zeros([2]))])
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(3, 2))
            np.testing.assert_array_equal(sess.run(b), [5, 6])


def test_restore_into_uninitialized_variables_of_a_fresh_session(tmp_path):
    with tf.Graph().as_default():
        w, _ = _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(3, 2))


def test_global_step_suffixes(tmp_path):
    with tf.Graph().as_default():
        _model()
        step = tf.train.get_or_create_global_step()
        saver = tf.train.Saver(pad_step_number=True)
        plain = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            sess.run(tf.assign(step, 42))
            assert saver.save(sess, str(tmp_path / "a"), global_step=step) == \
                str(tmp_path / "a-00000042")
            assert plain.save(sess, str(tmp_path / "b"), global_step=7) == str(tmp_path / "b-7")
            assert plain.save(sess, str(tmp_path / "c"), global_step=step,
                              write_meta_graph=False) == str(tmp_path / "c-42")
            assert os.path.exists(str(tmp_path / "b-7.meta"))
            assert not os.path.exists(str(tmp_path / "c-42.meta"))


def test_rotation_state_file_and_latest(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            _init(sess)
            paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(4)]
    assert saver.last_checkpoints == paths[2:]
    for p in paths[:2]:
        assert not tf.train.checkpoint_exists(p) and not os.path.exists(p + ".meta")
        assert not [f for f in os.listdir(tmp_path) if f.startswith(os.path.basename(p) + ".")]
    for p in paths[2:]:
        assert tf.train.checkpoint_exists(p) and os.path.exists(p + ".meta")
    with open(tmp_path / "checkpoint") as f:
        assert f.read() == (f'model_checkpoint_path: "{paths[3]}"\n'
                            f'all_model_checkpoint_paths: "{paths[2]}"\n'
                            f'all_model_checkpoint_paths: "{paths[3]}"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[3]


def test_saving_the_same_prefix_again_moves_it_to_the_end(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver(max_to_keep=3)
        with tf.Session() as sess:
            _init(sess)
            a = saver.save(sess, str(tmp_path / "a"))
            saver.save(sess, str(tmp_path / "b"))
            saver.save(sess, str(tmp_path / "a"))
    assert saver.last_checkpoints == [str(tmp_path / "b"), a]


def test_max_to_keep_none_keeps_everything_and_records_nothing(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver(max_to_keep=None)
        with tf.Session() as sess:
            _init(sess)
            paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    assert all(tf.train.checkpoint_exists(p) for p in paths)
    assert saver.last_checkpoints == []
    assert tf.train.latest_checkpoint(str(tmp_path)) == paths[-1]


def test_keep_checkpoint_every_n_hours_spares_old_checkpoints(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
        with tf.Session() as sess:
            _init(sess)
            first = saver.save(sess, str(tmp_path / "m"), global_step=1)
            # Pretend the first checkpoint was written more than an hour after the Saver began.
            saver._next_checkpoint_time = saver._last_checkpoints[0][1] - 1
            second = saver.save(sess, str(tmp_path / "m"), global_step=2)
            third = saver.save(sess, str(tmp_path / "m"), global_step=3)
    assert tf.train.checkpoint_exists(first), "kept: older than the every-N-hours mark"
    assert not tf.train.checkpoint_exists(second), "deleted: within the same hour"
    assert saver.last_checkpoints == [third]


def test_recover_and_set_last_checkpoints(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            _init(sess)
            a = saver.save(sess, str(tmp_path / "a"))
            fresh = tf.train.Saver(max_to_keep=2)
            fresh.recover_last_checkpoints([str(tmp_path / "gone"), a])
            assert fresh.last_checkpoints == [a]
            fresh.set_last_checkpoints_with_time([(a, 1.0)])
            b = fresh.save(sess, str(tmp_path / "b"))
            c = fresh.save(sess, str(tmp_path / "c"))
    assert fresh.last_checkpoints == [b, c] and not tf.train.checkpoint_exists(a)


def test_write_state_false_and_latest_filename(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            saver.save(sess, str(tmp_path / "m"), write_state=False)
            assert not os.path.exists(tmp_path / "checkpoint")
            path = saver.save(sess, str(tmp_path / "n"), latest_filename="mystate")
            assert tf.train.latest_checkpoint(str(tmp_path), "mystate") == path
            with pytest.raises(ValueError, match="path components"):
                saver.save(sess, str(tmp_path / "n"), latest_filename="x/y")


def test_save_relative_paths(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver(save_relative_paths=True)
        with tf.Session() as sess:
            _init(sess)
            path = saver.save(sess, str(tmp_path / "m"), global_step=3)
    assert 'model_checkpoint_path: "m-3"' in (tmp_path / "checkpoint").read_text()
    moved = tmp_path.parent / (tmp_path.name + "_moved")
    os.rename(tmp_path, moved)
    assert tf.train.latest_checkpoint(str(moved)) == str(moved / os.path.basename(path))


def test_var_list_dict_renames_and_list_selects(tmp_path):
    with tf.Graph().as_default():
        w, b = _model()
        renamed = tf.train.Saver({"weights": w, "bias": b._ref()})
        only_w = tf.train.Saver([w])
        with tf.Session() as sess:
            _init(sess)
            p1 = renamed.save(sess, str(tmp_path / "r"), write_meta_graph=False)
            p2 = only_w.save(sess, str(tmp_path / "o"), write_meta_graph=False)
    assert tf.train.list_variables(p1) == [("bias", [2]), ("weights", [3, 2])]
    assert tf.train.list_variables(p2) == [("w", [3, 2])]
    with tf.Graph().as_default():
        other = tf.Variable(tf.zeros([3, 2]), name="other")
        loader = tf.train.Saver({"weights": other})
        with tf.Session() as sess:
            loader.restore(sess, p1)
            np.testing.assert_array_equal(sess.run(other), np.arange(6).reshape(3, 2))


def test_var_list_errors():
    with tf.Graph().as_default():
        w, b = _model()
        with tf.variable_scope("x"):
            tf.Variable(1.0, name="w")
        with pytest.raises(TypeError, match="variables"):
            tf.train.Saver([w.value()])
        with pytest.raises(ValueError, match="restored with two names: b"):
            tf.train.Saver({"a": w, "b": w})
        with pytest.raises(ValueError, match="cannot be deferred"):
            tf.train.Saver([w], defer_build=True)
    with tf.Graph().as_default():
        tf.constant(1.0)
        with pytest.raises(ValueError, match="No variables to save"):
            tf.train.Saver()
        empty = tf.train.Saver(allow_empty=True)
        with tf.Session() as sess:
            assert empty.save(sess, "/nonexistent/never") is None
            assert empty.restore(sess, "/nonexistent/never") is None


def test_defer_build(tmp_path):
    with tf.Graph().as_default() as g:
        saver = tf.train.Saver(defer_build=True)
        w, _ = _model()
        assert not any(op.name.startswith("save") for op in g.get_operations())
        with tf.Session() as sess:
            _init(sess)
            with pytest.raises(RuntimeError, match="build"):
                saver.save(sess, str(tmp_path / "m"))
            saver.build()
            path = saver.save(sess, str(tmp_path / "m"))
    assert dict(tf.train.list_variables(path)) == {"w": [3, 2], "b": [2]}


def test_saver_from_saver_def_runs_the_same_ops(tmp_path):
    with tf.Graph().as_default():
        w, _ = _model()
        original = tf.train.Saver()
        clone = tf.train.Saver(saver_def=original.as_saver_def())
        with tf.Session() as sess:
            _init(sess)
            path = clone.save(sess, str(tmp_path / "m"))
            sess.run(tf.assign(w, tf.zeros([3, 2])))
            clone.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(3, 2))
    with pytest.raises(ValueError, match="restore_op_name"):
        tf.train.Saver(saver_def=tf.train.SaverDef(filename_tensor_name="a:0",
                                                   save_tensor_name="b:0"))


def test_sharded_graph_groups_variables_by_device():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            tf.Variable([1.0, 2.0], name="a")
        with tf.device("/cpu:1"):
            tf.Variable([[3]], name="b")
        saver = tf.train.Saver(sharded=True)
    ops = {op.name: op for op in g.get_operations() if op.name.startswith("save/")}
    saves = [op for op in ops.values() if op.type == "SaveV2"]
    # As in TF 2.21, every shard is saved on its task's CPU:0 (set_cpu0).
    assert [op.device for op in saves] == ["/device:CPU:0", "/device:CPU:0"]
    assert [t.name for t in saves[1].inputs][3:] == ["b:0"]
    assert ops["save/MergeV2Checkpoints"].type == "MergeV2Checkpoints"
    assert ops["save/ShardedFilename_1"].type == "ShardedFilename"
    assert sum(op.type == "RestoreV2" for op in ops.values()) == 2
    sd = saver.as_saver_def()
    assert sd.sharded and sd.save_tensor_name == "save/Identity:0"
    assert sd.restore_op_name == "save/restore_all"


def test_sharded_save_and_restore(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable([1.0, 2.0], name="a")
        b = tf.Variable([[3]], name="b")
        saver = tf.train.Saver(sharded=True)
        with tf.Session() as sess:
            _init(sess)
            path = saver.save(sess, str(tmp_path / "m"), global_step=1)
            assert path == str(tmp_path / "m-1")
            files = sorted(os.listdir(tmp_path))
            data = [f for f in files if ".data-" in f]
            assert len(data) == 1 and data[0].endswith("-00000-of-00001")
            assert [f for f in files if f.endswith(".index")] == ["m-1.index"]
            sess.run([tf.assign(a, [0.0, 0.0]), tf.assign(b, [[0]])])
            saver.restore(sess, path)
            assert sess.run(a).tolist() == [1.0, 2.0] and sess.run(b).tolist() == [[3]]
    assert os.path.exists(tmp_path / "m-1.meta")


def test_restore_sequentially_and_reshape(tmp_path):
    with tf.Graph().as_default():
        w, b = _model()
        saver = tf.train.Saver(restore_sequentially=True)
        with tf.Session() as sess:
            _init(sess)
            path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
            sess.run(tf.assign(w, tf.zeros([3, 2])))
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), np.arange(6).reshape(3, 2))
    with tf.Graph().as_default():
        flat = tf.Variable(tf.zeros([6]), name="w")
        tf.Variable(tf.zeros([2]), name="b")
        with tf.Session() as sess:
            tf.train.Saver(reshape=True).restore(sess, path)
            np.testing.assert_array_equal(sess.run(flat), np.arange(6))


def test_variable_without_static_shape_takes_the_stored_shape(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(np.ones((2, 5), np.float32), name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
    with tf.Graph().as_default():
        loose = tf.Variable(tf.zeros([1]), validate_shape=False, name="v")
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            assert sess.run(loose).shape == (2, 5)


def test_save_errors(tmp_path):
    with tf.Graph().as_default():
        _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            with pytest.raises(TypeError, match="must be a Session"):
                saver.save(object(), str(tmp_path / "m"))
            with pytest.raises(ValueError, match="collides"):
                saver.save(sess, str(tmp_path / "checkpoint"))


def test_string_and_integer_variables(tmp_path):
    with tf.Graph().as_default():
        s = tf.Variable(tf.constant([b"x", b"yz"]), name="s")
        i = tf.Variable(np.array([1, 2], np.int64), name="i")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
            sess.run([tf.assign(s, tf.constant([b"", b""])), tf.assign(i, [0, 0])])
            saver.restore(sess, path)
            assert sess.run(s).tolist() == [b"x", b"yz"] and sess.run(i).tolist() == [1, 2]
    assert tf.train.load_variable(path, "s").tolist() == [b"x", b"yz"]


def test_large_variables_round_trip_and_fetch_together(tmp_path):
    """Large reads run on the dataflow executor; fetched variables come back as copies."""
    with tf.Graph().as_default():
        variables = [tf.Variable(tf.random_uniform([1 << 18], seed=i + 1), name=f"v{i}")
                     for i in range(3)]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            _init(sess)
            expected = sess.run(variables)
            path = saver.save(sess, str(tmp_path / "m"), write_meta_graph=False)
            sess.run([tf.assign(v, tf.zeros([1 << 18])) for v in variables])
            assert not sess.run(variables)[0].any()
            saver.restore(sess, path)
            got = sess.run(variables)
            sess.run(tf.assign_add(variables[0], tf.ones([1 << 18])))
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_save_creates_a_missing_directory(tmp_path):
    """As TensorFlow's save op, the checkpoint's directory is created, but not its parents."""
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
                saver.save(sess, str(tmp_path / "ck" / "sub" / "m"))
            path = saver.save(sess, str(tmp_path / "ck" / "m"), global_step=5)
    assert path == str(tmp_path / "ck" / "m-5")
    names = sorted(os.listdir(tmp_path / "ck"))
    assert "checkpoint" in names and "m-5.index" in names and "m-5.meta" in names
    assert tf.train.load_variable(path, "v") == 1.0
