"""Cond and while contexts survive a MetaGraphDef (ours and TensorFlow's): gradients through an
imported cond or loop, nested contexts, import scopes, and re-export."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import control_flow_pb2

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def _build():
    """y: a cond on x; z: a loop whose body holds a cond (the fixture's graph)."""
    x = tf.Variable(2.0, name="x")
    p = tf.placeholder_with_default(True, [], name="p")
    y = tf.cond(p, lambda: x * x, lambda: x * 3.0, name="c")

    def body(i, a):
        return i + 1, tf.cond(i < 1, lambda: a * x, lambda: a * x * 2.0)
    z = tf.while_loop(lambda i, a: i < 3, body, [0, tf.constant(1.0)], name="w")[1]
    tf.add_to_collection("y", y)
    tf.add_to_collection("z", z)


def _values_after_import(meta, import_scope=None):
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta, import_scope=import_scope)
        y, z = tf.get_collection("y")[0], tf.get_collection("z")[0]
        x = tf.global_variables()[0]
        fetches = {"y": y, "z": z, "dy_dx": tf.gradients(y, x)[0],
                   "dz_dx": tf.gradients(z, x)[0]}
        assert all(v is not None for v in fetches.values())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = {k: float(v) for k, v in sess.run(fetches).items()}
        return values, tf.train.export_meta_graph()


EXPECTED = {"y": 4.0, "z": 32.0, "dy_dx": 4.0, "dz_dx": 48.0}


def _our_meta():
    with tf.Graph().as_default():
        _build()
        return tf.train.export_meta_graph()


def test_outermost_contexts_are_collected():
    with tf.Graph().as_default():
        _build()
        conds = tf.get_collection(tf.GraphKeys.COND_CONTEXT)
        loops = tf.get_collection(tf.GraphKeys.WHILE_CONTEXT)
        assert [c.name for c in conds] == ["c/cond_text", "c/cond_text_1"]
        assert [c.branch for c in conds] == [1, 0]
        assert len(loops) == 1    # the cond inside the loop is nested, not collected


def test_exported_contexts_name_their_parts():
    meta = _our_meta()
    cond_defs = [control_flow_pb2.CondContextDef.FromString(b)
                 for b in meta.collection_def["cond_context"].bytes_list.value]
    assert [(d.pred_name, d.pivot_name, d.branch) for d in cond_defs] == [
        ("c/pred_id:0", "c/switch_t:0", 1), ("c/pred_id:0", "c/switch_f:0", 0)]
    assert "c/mul:0" in cond_defs[0].values_def.values
    assert dict(cond_defs[0].values_def.external_values) == {"x/read:0": "c/mul/Switch:1"}
    assert dict(cond_defs[1].values_def.external_values) == {"x/read:0": "c/mul_1/Switch:0"}
    (loop,) = [control_flow_pb2.WhileContextDef.FromString(b)
               for b in meta.collection_def["while_context"].bytes_list.value]
    assert len(loop.loop_enter_names) == len(loop.loop_exit_names) == 2
    assert loop.pivot_name.endswith("LoopCond:0")
    assert set(loop.loop_exit_names) <= set(loop.values_def.values)
    (nested,) = loop.nested_contexts[:1]
    assert nested.WhichOneof("ctxt") == "cond_ctxt"
    assert len(loop.nested_contexts) == 2


@pytest.mark.parametrize("import_scope", [None, "imported"])
def test_gradients_through_our_imported_cond_and_loop(import_scope):
    values, _ = _values_after_import(_our_meta(), import_scope)
    assert values == EXPECTED


@pytest.mark.parametrize("import_scope", [None, "imported"])
def test_tensorflow_meta_graph_imports_with_its_contexts(import_scope):
    with open(os.path.join(FIXTURES, "tf_control_flow.json")) as f:
        expected = json.load(f)["values"]
    values, _ = _values_after_import(os.path.join(FIXTURES, "tf_control_flow.meta"),
                                     import_scope)
    assert values == pytest.approx(expected)


def test_imported_contexts_export_again():
    _, reexported = _values_after_import(_our_meta())
    assert len(reexported.collection_def["cond_context"].bytes_list.value) == 2
    assert len(reexported.collection_def["while_context"].bytes_list.value) == 1
    values, _ = _values_after_import(reexported)
    assert values == EXPECTED


def test_training_an_imported_cond_model():
    """A new optimizer on an imported graph trains through the cond (it used to get no
    gradient and silently not train)."""
    with tf.Graph().as_default():
        w = tf.Variable(np.ones([3], np.float32), name="w")
        use_square = tf.placeholder_with_default(True, [], name="use_square")
        loss = tf.cond(use_square, lambda: tf.reduce_sum(w * w), lambda: tf.reduce_sum(w))
        tf.add_to_collection("loss", loss)
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        loss = tf.get_collection("loss")[0]
        train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(tf.global_variables()[0]), [0.5, 0.5, 0.5])


def test_dynamic_rnn_gradients_after_import(tmp_path):
    """An LSTM loop imported from its meta graph (its loop shapes are not all static then)
    gives the same gradients as the graph that built it."""
    inputs = np.random.RandomState(0).rand(2, 5, 3).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4), tf.constant(inputs),
                                   dtype=tf.float32)
        loss = tf.reduce_sum(out)
        tf.add_to_collection("loss", loss)
        grads = tf.gradients(loss, tf.trainable_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            expected = sess.run(grads)
            path = tf.train.Saver().save(sess, str(tmp_path / "rnn"))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        grads = tf.gradients(tf.get_collection("loss")[0], tf.trainable_variables())
        with tf.Session() as sess:
            saver.restore(sess, path)
            for want, got in zip(expected, sess.run(grads)):
                np.testing.assert_allclose(got, want, rtol=1e-5)
