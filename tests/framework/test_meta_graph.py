"""MetaGraphs: export (graph, collections, versions, op list), import (fresh graph, fresh
process, import_scope, clear_devices, export_scope) and training that continues afterwards."""
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import meta_graph
from tensorweave.protos import saver_pb2, variable_pb2

STEPS = 10
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")


def _data():
    rng = np.random.RandomState(3)
    x = rng.randn(32, 3).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
    return x, y


def _build_model(device=None):
    """Linear regression trained by GradientDescent, with a global step and user collections."""
    tf.set_random_seed(8)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.device(device):
        w = tf.Variable(tf.random_normal([3, 1], stddev=0.1, seed=1), name="W")
    b = tf.Variable(tf.zeros([1]), name="b")
    pred = tf.add(tf.matmul(x, w), b, name="pred")
    loss = tf.reduce_mean(tf.square(pred - y), name="loss")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step,
                                                             name="train")
    tf.add_to_collection("my_train_op", train)
    tf.add_to_collection("inputs", x)
    tf.add_to_collection("inputs", y)
    return dict(x=x, y=y, w=w, b=b, pred=pred, loss=loss, step=step, train=train)


def _train(sess, train, x, y, steps=STEPS):
    data_x, data_y = _data()
    for _ in range(steps):
        sess.run(train, {x: data_x, y: data_y})


def _exported(**kwargs):
    """(graph, handles, MetaGraphDef) of a freshly built model."""
    g = tf.Graph()
    with g.as_default():
        m = _build_model(kwargs.pop("device", None))
        meta = tf.train.export_meta_graph(**kwargs)
    return g, m, meta


def _variable_defs(meta, key):
    return [variable_pb2.VariableDef.FromString(v)
            for v in meta.collection_def[key].bytes_list.value]


# --- export ------------------------------------------------------------------------------------
def test_export_serializes_each_collection_by_kind(caplog):
    g = tf.Graph()
    with g.as_default():
        m = _build_model()
        tf.add_to_collection("ints", 3)
        tf.add_to_collection("ints", 4)
        tf.add_to_collection("floats", 1.5)
        tf.add_to_collection("strs", "hello")
        tf.add_to_collection("objs", object())
        tf.add_to_collection("mixed", m["x"])
        tf.add_to_collection("mixed", 5)
        with caplog.at_level(logging.WARNING):
            meta = tf.train.export_meta_graph()
    cols = meta.collection_def
    assert [(d.variable_name, d.snapshot_name, d.initializer_name, d.trainable)
            for d in _variable_defs(meta, "variables")] == [
        ("W:0", "W/read:0", "W/Assign", True), ("b:0", "b/read:0", "b/Assign", True),
        ("global_step:0", "global_step/read:0", "global_step/Assign", False)]
    assert [d.variable_name for d in _variable_defs(meta, "trainable_variables")] == \
        ["W:0", "b:0"]
    assert [d.variable_name for d in _variable_defs(meta, "global_step")] == ["global_step:0"]
    assert _variable_defs(meta, "variables")[0].initial_value_name == \
        m["w"].initial_value.name
    assert list(cols["my_train_op"].node_list.value) == ["train"]
    assert list(cols["inputs"].node_list.value) == ["x:0", "y:0"]
    assert list(cols["ints"].int64_list.value) == [3, 4]
    assert list(cols["floats"].float_list.value) == [1.5]
    assert list(cols["strs"].bytes_list.value) == [b"hello"]
    assert "objs" not in cols and "mixed" not in cols
    warned = [r.getMessage() for r in caplog.records if "Issue encountered" in r.getMessage()]
    assert len(warned) == 2 and "serializing objs" in warned[0] and "mixed" in warned[1]
    assert {n.name for n in meta.graph_def.node} == {op.name for op in g.get_operations()}
    assert not meta.HasField("saver_def")


def test_meta_info_def_versions_and_stripped_op_list():
    _, _, meta = _exported()
    info = meta.meta_info_def
    assert info.tensorflow_git_version.startswith("tensorweave ")
    assert info.tensorflow_version.endswith("+tensorweave")
    ops = {op.name: op for op in info.stripped_op_list.op}
    assert list(ops) == sorted({n.op for n in meta.graph_def.node})
    matmul = ops["MatMul"]
    assert [a.name for a in matmul.input_arg] == ["a", "b"]
    assert [a.type_attr for a in matmul.input_arg] == ["T", "T"]
    attrs = {a.name: a for a in matmul.attr}
    assert attrs["T"].type == "type"
    assert tf.float32.as_datatype_enum in attrs["T"].allowed_values.list.type
    assert attrs["transpose_a"].type == "bool" and attrs["transpose_a"].HasField("default_value")
    assert ops["VariableV2"].is_stateful and ops["VariableV2"].output_arg[0].is_ref
    assert not ops["MatMul"].is_stateful
    # Every node carries its output shapes, as TF's export does (add_shapes=True).
    pred = next(n for n in meta.graph_def.node if n.name == "pred")
    assert [d.size for d in pred.attr["_output_shapes"].list.shape[0].dim] == [-1, 1]


def test_meta_info_def_argument_is_kept_and_not_mutated():
    info = tf.MetaGraphDef.MetaInfoDef(tags=["serve"], meta_graph_version="v7")
    _, _, meta = _exported(meta_info_def=info)
    assert list(meta.meta_info_def.tags) == ["serve"]
    assert meta.meta_info_def.meta_graph_version == "v7"
    assert info.tensorflow_version == ""


def test_export_argument_types_are_checked():
    with tf.Graph().as_default():
        tf.constant(1.0)
        with pytest.raises(TypeError, match="graph_def must be of type GraphDef"):
            tf.train.export_meta_graph(graph_def="not a graph")
        with pytest.raises(TypeError, match="saver_def must be of type SaverDef"):
            tf.train.export_meta_graph(saver_def=tf.GraphDef())
        with pytest.raises(TypeError, match="meta_info_def must be of type MetaInfoDef"):
            tf.train.export_meta_graph(meta_info_def=tf.GraphDef())


def test_collection_list_and_saver_def_are_exported_as_given():
    saver_def = saver_pb2.SaverDef(filename_tensor_name="save/Const:0",
                                   restore_op_name="save/restore_all", max_to_keep=3)
    _, _, meta = _exported(collection_list=["inputs"], saver_def=saver_def)
    assert list(meta.collection_def) == ["inputs"]
    assert meta.saver_def == saver_def


def test_files_written_binary_and_text_and_read_back(tmp_path):
    binary = str(tmp_path / "sub" / "model.meta")
    text = str(tmp_path / "model.meta.txt")
    _, _, meta = _exported(filename=binary)
    _, _, meta_text = _exported(filename=text, as_text=True)
    assert meta_graph.read_meta_graph_file(binary) == meta
    assert (tmp_path / "model.meta.txt").read_text().startswith("meta_info_def {")
    assert meta_graph.read_meta_graph_file(text) == meta_text
    # Atomic writes leave no temporary files behind.
    assert sorted(os.listdir(tmp_path)) == ["model.meta.txt", "sub"]
    assert os.listdir(tmp_path / "sub") == ["model.meta"]


def test_read_meta_graph_file_errors(tmp_path):
    with pytest.raises(OSError, match="File does not exist"):
        meta_graph.read_meta_graph_file(str(tmp_path / "missing.meta"))
    bad = tmp_path / "bad.meta"
    bad.write_bytes(b"\xff\xfe not a proto {{{")
    with pytest.raises(OSError, match="Cannot parse file"):
        tf.train.import_meta_graph(str(bad))


def test_variable_to_proto_and_from_proto():
    with tf.Graph().as_default() as g:
        with tf.name_scope("tower"):
            v = tf.Variable([1.0, 2.0], name="v", trainable=False)
        proto = v.to_proto(export_scope="tower")
        assert (proto.variable_name, proto.snapshot_name, proto.initializer_name) == \
            ("v:0", "v/read:0", "v/Assign")
        assert not proto.trainable
        assert v.to_proto(export_scope="other") is None
        again = tf.Variable.from_proto(v.to_proto())
        assert again is not v and again.name == v.name and again.initializer is v.initializer
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(g.as_graph_def(), name="copy")
        imported = tf.Variable.from_proto(v.to_proto(), import_scope="copy")
        assert imported.name == "copy/tower/v:0" and imported.value().name == "copy/tower/v/read:0"
        assert not imported.trainable
        with tf.Session(graph=g2) as sess:
            sess.run(imported.initializer)
            np.testing.assert_array_equal(sess.run(imported), [1.0, 2.0])


# --- import ------------------------------------------------------------------------------------
def test_import_restores_collections_in_a_fresh_graph():
    _, _, meta = _exported()
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        variables = tf.global_variables()
        assert [v.name for v in variables] == ["W:0", "b:0", "global_step:0"]
        assert all(isinstance(v, tf.Variable) for v in variables)
        # One Variable object per variable, shared by the collections it is in.
        assert tf.trainable_variables() == variables[:2]
        assert tf.trainable_variables()[0] is variables[0]
        assert [v.trainable for v in variables] == [True, True, False]
        assert tf.train.get_global_step() is variables[2]
        train, = tf.get_collection("my_train_op")
        assert isinstance(train, tf.Operation) and train is g.get_operation_by_name("train")
        x, y = tf.get_collection("inputs")
        assert (x.name, y.name) == ("x:0", "y:0") and x.shape.as_list() == [None, 3]


def test_training_continues_after_import_with_identical_values():
    """Uninterrupted: 2*STEPS steps. Resumed: STEPS steps, values moved into the imported
    graph, STEPS more steps through the imported train op."""
    g, m, meta = _exported()
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer(g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)))
        _train(sess, m["train"], m["x"], m["y"])
        halfway = sess.run([m["w"], m["b"], m["step"]])
        _train(sess, m["train"], m["x"], m["y"])
        expected = sess.run([m["w"], m["b"], m["step"]])
    with tf.Graph().as_default() as g2:
        tf.train.import_meta_graph(meta)
        with tf.Session(graph=g2) as sess:
            sess.run(tf.global_variables_initializer())
            for var, value in zip(tf.global_variables(), halfway):
                var.load(value, sess)
            x, y = tf.get_collection("inputs")
            _train(sess, tf.get_collection("my_train_op")[0], x, y)
            resumed = sess.run(tf.global_variables())
    assert resumed[2] == expected[2] == 2 * STEPS
    np.testing.assert_array_equal(resumed[0], expected[0])
    np.testing.assert_array_equal(resumed[1], expected[1])


_RESUME_SCRIPT = """
import sys
import numpy as np
import tensorweave as tf

meta_path, values_path, out_path = sys.argv[1:]
values = np.load(values_path)
tf.train.import_meta_graph(meta_path)
x, y = tf.get_collection("inputs")
train = tf.get_collection("my_train_op")[0]
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for var in tf.global_variables():
        var.load(values[var.op.name], sess)
    for _ in range({steps}):
        sess.run(train, {{x: values["data_x"], y: values["data_y"]}})
    np.savez(out_path, **{{v.op.name: sess.run(v) for v in tf.global_variables()}},
             loss=sess.run("loss:0", {{x: values["data_x"], y: values["data_y"]}}))
"""


def test_training_continues_in_a_fresh_process(tmp_path):
    """The resuming process has none of the code that built the model: only the .meta."""
    meta_path = str(tmp_path / "model.meta")
    g, m, _ = _exported(filename=meta_path)
    data_x, data_y = _data()
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer(g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)))
        _train(sess, m["train"], m["x"], m["y"])
        names = ["W", "b", "global_step"]
        np.savez(tmp_path / "values.npz", data_x=data_x, data_y=data_y,
                 **dict(zip(names, sess.run([m["w"], m["b"], m["step"]]))))
        _train(sess, m["train"], m["x"], m["y"])
        expected = dict(zip(names + ["loss"], sess.run(
            [m["w"], m["b"], m["step"], m["loss"]], {m["x"]: data_x, m["y"]: data_y})))
    script = tmp_path / "resume.py"
    script.write_text(textwrap.dedent(_RESUME_SCRIPT.format(steps=STEPS)))
    out = str(tmp_path / "out.npz")
    subprocess.run([sys.executable, str(script), meta_path, str(tmp_path / "values.npz"), out],
                   check=True, cwd=str(tmp_path), timeout=300)
    resumed = np.load(out)
    for name, value in expected.items():
        np.testing.assert_array_equal(resumed[name], value, err_msg=name)
    assert resumed["global_step"] == 2 * STEPS


def test_import_scope_prefixes_names_and_collections():
    _, _, meta = _exported()
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta, import_scope="imported")
        tf.train.import_meta_graph(meta, import_scope="imported")
        assert g.get_tensor_by_name("imported/pred:0").shape.as_list() == [None, 1]
        assert g.get_tensor_by_name("imported_1/pred:0").shape.as_list() == [None, 1]
        assert [v.name for v in tf.trainable_variables()] == [
            "imported/W:0", "imported/b:0", "imported_1/W:0", "imported_1/b:0"]
        assert [op.name for op in tf.get_collection("my_train_op")] == \
            ["imported/train", "imported_1/train"]
        assert [t.name for t in tf.get_collection("inputs")] == [
            "imported/x:0", "imported/y:0", "imported_1/x:0", "imported_1/y:0"]
        read = g.get_operation_by_name("imported_1/W/read")
        assert read.colocation_groups() == [b"loc:@imported_1/W"]
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            x, y = tf.get_collection("inputs")[2:]
            _train(sess, tf.get_collection("my_train_op")[1], x, y, steps=3)
            steps = sess.run(tf.get_collection(tf.GraphKeys.GLOBAL_STEP))
    assert steps == [0, 3]


def test_clear_devices_on_export_and_on_import():
    _, _, meta = _exported(device="/cpu:0")
    pinned = {n.name for n in meta.graph_def.node if n.device}
    assert {"W", "W/read", "W/Assign"} <= pinned
    assert next(n for n in meta.graph_def.node if n.name == "W").device == "/device:CPU:0"
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        assert g.get_operation_by_name("W").device == "/device:CPU:0"
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta, clear_devices=True)
        # The Saver built after the import puts its RestoreV2 on CPU:0, as TF 2.21 does.
        assert all(op.device == "" for op in g.get_operations()
                   if not op.name.startswith("save/RestoreV2"))
    assert next(n for n in meta.graph_def.node if n.name == "W").device, "input left unchanged"
    _, _, cleared = _exported(device="/cpu:0", clear_devices=True)
    assert not any(n.device for n in cleared.graph_def.node)
    assert len(cleared.graph_def.node) == len(meta.graph_def.node)


def test_user_collections_of_tensors_and_ops_round_trip():
    with tf.Graph().as_default():
        a = tf.constant(2.0, name="a")
        b = tf.multiply(a, 3.0, name="b")
        init = tf.no_op(name="my_init")
        tf.add_to_collection("tensors", b)
        tf.add_to_collection("tensors", a)
        tf.add_to_collection("ops", init)
        tf.add_to_collection("ops", b.op)
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(meta, import_scope="s")
        assert saver is None  # no variables, no SaverDef
        assert [t.name for t in tf.get_collection("tensors")] == ["s/b:0", "s/a:0"]
        assert [op.name for op in tf.get_collection("ops")] == ["s/my_init", "s/b"]
        with tf.Session(graph=g) as sess:
            assert sess.run(tf.get_collection("tensors")) == [6.0, 2.0]


def test_restore_collections_predicate_and_missing_kinds(caplog):
    _, _, meta = _exported()
    meta.collection_def["empty"].SetInParent()
    with tf.Graph().as_default() as g:
        with caplog.at_level(logging.ERROR):
            tf.train.import_meta_graph(
                meta, restore_collections_predicate=lambda key: key != "inputs")
        assert tf.get_collection("inputs") == [] and len(tf.global_variables()) == 3
        assert "empty" not in g.get_all_collection_keys()
    assert any("Cannot identify data type for collection empty" in r.getMessage()
               for r in caplog.records)


def test_export_scope_strips_the_scope_and_marks_unbound_inputs():
    with tf.Graph().as_default() as g:
        outside = tf.placeholder(tf.float32, [None, 2], name="outside")
        with tf.name_scope("tower"):
            v = tf.Variable([[1.0], [2.0]], name="v")
            out = tf.matmul(outside, v, name="out")
        tf.add_to_collection("outs", out)
        meta = tf.train.export_meta_graph(export_scope="tower")
    names = {n.name for n in meta.graph_def.node}
    assert "out" in names and "v" in names and "outside" not in names
    matmul = next(n for n in meta.graph_def.node if n.name == "out")
    assert list(matmul.input) == ["$unbound_inputs_outside", "v/read"]
    assert list(meta.collection_def["unbound_inputs"].bytes_list.value) == \
        [b"$unbound_inputs_outside"]
    assert list(meta.collection_def["outs"].node_list.value) == ["out:0"]
    assert [d.variable_name for d in _variable_defs(meta, "variables")] == ["v:0"]
    assert g.get_collection("unbound_inputs") == ["$unbound_inputs_outside"]
    with tf.Graph().as_default() as g2:
        with pytest.raises(ValueError, match="Graph contains unbound inputs"):
            tf.train.import_meta_graph(meta, import_scope="copy")
        feed = tf.constant([[1.0, 1.0]], name="feed")
        tf.train.import_meta_graph(meta, import_scope="copy",
                                   input_map={"$unbound_inputs_outside": feed})
        assert [v.name for v in tf.global_variables()] == ["copy/v:0"]
        assert g2.get_collection("unbound_inputs") == []
        with tf.Session(graph=g2) as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(tf.get_collection("outs")[0]), [[3.0]])


def test_strip_default_attrs_drops_defaults_and_import_restores_them():
    _, _, meta = _exported(strip_default_attrs=True)
    assert meta.meta_info_def.stripped_default_attrs
    matmul = next(n for n in meta.graph_def.node if n.name == "MatMul")
    assert "transpose_a" not in matmul.attr and "T" in matmul.attr
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        assert g.get_operation_by_name("MatMul").get_attr("transpose_a") is False
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            x, y = tf.get_collection("inputs")
            assert sess.run("pred:0", {x: np.ones((2, 3))}).shape == (2, 1)


# --- with the Saver ------------------------------------------------------------------------------
def test_import_meta_graph_returns_a_saver_and_training_resumes_from_a_checkpoint(tmp_path):
    g = tf.Graph()
    with g.as_default():
        m = _build_model()
        saver = tf.train.Saver()
    with tf.Session(graph=g) as sess:
        sess.run(tf.variables_initializer(g.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)))
        _train(sess, m["train"], m["x"], m["y"])
        ckpt = saver.save(sess, str(tmp_path / "model"), global_step=m["step"])
        _train(sess, m["train"], m["x"], m["y"])
        expected = sess.run([m["w"], m["b"], m["step"]])
    with tf.Graph().as_default() as g2:
        restorer = tf.train.import_meta_graph(ckpt + ".meta", import_scope="resumed")
        assert isinstance(restorer, tf.train.Saver)
        assert restorer.saver_def.restore_op_name.startswith("resumed/")
        with tf.Session(graph=g2) as sess:
            restorer.restore(sess, ckpt)
            assert sess.run(tf.train.get_global_step()) == STEPS
            x, y = tf.get_collection("inputs")
            _train(sess, tf.get_collection("my_train_op")[0], x, y)
            resumed = sess.run(tf.global_variables())
    for got, want in zip(resumed, expected):
        np.testing.assert_array_equal(got, want)


def test_without_a_saver_def_import_builds_a_saver_of_all_variables(tmp_path):
    _, _, meta = _exported()
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(meta)
        assert isinstance(saver, tf.train.Saver)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "all"), write_meta_graph=False)
    assert dict(tf.train.list_variables(path)) == {"W": [3, 1], "b": [1], "global_step": []}


def test_clear_extraneous_savers_keeps_only_the_given_savers_nodes():
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        first = tf.train.Saver()
        second = tf.train.Saver()
        tf.add_to_collection(tf.GraphKeys.SAVERS, first)
        tf.add_to_collection(tf.GraphKeys.SAVERS, second)
        both = tf.train.export_meta_graph()
        meta = second.export_meta_graph(clear_extraneous_savers=True)
    names = {n.name for n in meta.graph_def.node}
    assert "save_1/SaveV2" in names and not any(n.startswith("save/") for n in names)
    assert any(n.name.startswith("save/") for n in both.graph_def.node)
    saver_defs = [saver_pb2.SaverDef.FromString(v)
                  for v in meta.collection_def[tf.GraphKeys.SAVERS].bytes_list.value]
    assert saver_defs == [second.saver_def]
    assert len(both.collection_def[tf.GraphKeys.SAVERS].bytes_list.value) == 2
    with tf.Graph().as_default():
        tf.train.import_meta_graph(both, import_scope="copy")
        restored = tf.get_collection(tf.GraphKeys.SAVERS)
        assert [s.saver_def.restore_op_name for s in restored] == \
            ["copy/save/restore_all", "copy/save_1/restore_all"]


# --- a MetaGraphDef written by TensorFlow --------------------------------------------------------
def test_tf_written_meta_graph_imports_and_trains_like_tf():
    """tests/fixtures/make_tf_frozen_graphs.py: TF 2.21's Saver.export_meta_graph of a linear
    model, and TF's values after training from the recorded initial values."""
    expected = np.load(os.path.join(FIXTURES, "tf_linear.npz"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "tf_linear.meta"))
        assert saver.saver_def.restore_op_name == "save/restore_all"
        assert [v.name for v in tf.trainable_variables()] == ["W:0", "b:0"]
        step = tf.train.get_global_step()
        assert step.name == "global_step:0" and not step.trainable
        train, = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        assert train.name == "train"
        x, y = tf.get_collection("inputs")
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            w, b = tf.trainable_variables()
            w.load(expected["W0"], sess)
            b.load(expected["b0"], sess)
            feed = {x: expected["x"], y: expected["y"]}
            for _ in range(int(expected["global_step"])):
                sess.run(train, feed)
            values = sess.run([w, b, step, "loss:0"], feed)
    for name, value in zip(("W", "b", "global_step", "loss"), values):
        np.testing.assert_allclose(value, expected[name], rtol=1e-6, atol=1e-7, err_msg=name)
