"""Importing TensorFlow's graphs as TensorFlow does: loops with their gradients, the
ConcatOffset of concat gradients, and renaming nodes that clash with the graph's.

The fixtures in tests/fixtures/tf_interop/ and the values they must give come from TF 2.21
(tests/fixtures/make_tf_interop.py).
"""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.array_join_ops import ConcatOffset

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures", "tf_interop")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)


def test_tf_while_gradient_meta_graph_trains_like_tf():
    # TF's gradient loop feeds Switch:1 to Sub / AddV2 with no Identity.
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "while_grad.meta"))
        w = g.get_tensor_by_name("w:0")
        acc = g.get_tensor_by_name("while/Exit_1:0")
        grad = tf.gradients(acc * acc, w)[0]   # acc = w^3: d(w^6)/dw = 6 w^5
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run(grad) == pytest.approx(192.0)
            s.run("train")
            assert s.run(w) == pytest.approx(EXPECTED["w_after_step"], rel=1e-6)
            assert s.run(grad) == pytest.approx(6 * EXPECTED["w_after_step"] ** 5, rel=1e-5)


def test_tf_lstm_training_graph_trains_like_tf():
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(os.path.join(FIXTURES, "lstm.meta"))
        assert any(op.type == "ConcatOffset" for op in g.get_operations())
        feed = {"x:0": np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 5, 4),
                "y:0": np.linspace(1, -1, 18, dtype=np.float32).reshape(3, 6),
                "len:0": np.array([5, 3, 4], np.int32)}
        with tf.Session() as s:
            saver.restore(s, os.path.join(FIXTURES, "lstm"))
            losses = [s.run("loss:0", feed)]
            for _ in range(3):
                s.run("train", feed)
                losses.append(s.run("loss:0", feed))
    np.testing.assert_allclose(losses, EXPECTED["lstm_losses"], rtol=2e-5)


def test_tf_concat_gradient_graph_runs():
    gd = tf.GraphDef()
    with open(os.path.join(FIXTURES, "concat_grad.pb"), "rb") as f:
        gd.ParseFromString(f.read())
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as s:
            got = s.run({k: f"{k}:0" for k in ("ga", "gb", "gp", "gq")}, {"p:0": [[7., 8.]]})
    for k, v in EXPECTED["concat_grad"].items():
        np.testing.assert_array_equal(got[k], v)


def test_concat_gradient_of_unknown_shapes_uses_concat_offset():
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [None, None])
        q = tf.constant([[5., 6.]])
        gp, gq = tf.gradients(tf.reduce_sum(tf.concat([p, q], 0) * [[1., 2.], [3., 4.]]),
                              [p, q])
        assert {"ConcatOffset", "ShapeN"} <= {op.type for op in g.get_operations()}
        with tf.Session() as s:
            got = s.run([gp, gq], {p: [[7., 8.]]})
    np.testing.assert_array_equal(got[0], [[1., 2.]])
    np.testing.assert_array_equal(got[1], [[3., 4.]])


@pytest.mark.parametrize("shapes,dim,match", [
    ([[2, 2, 5], [3, 3, 5]], 1, r"All dimensions except 1 must match. Input 1 has shape "
     r"\[3 3 5\] and doesn't match input 0 with shape \[2 2 5\]\."),
    ([[2, 2], [2, 3]], 2, "Concat dim is out of range: 2 vs. 2"),
    ([[2, 2], [2, 3]], -3, "Concat dim is out of range: -3 vs. 2"),
    ([[2, 2, 5], [2, 3]], 1, "input 1 should contain 3 elements, but got 2"),
    ([2, 3], 0, r"input 1 should be a vector, but got shape \[\]"),
    ([[], []], 0, "Concat dim is out of range: 0 vs. 0"),
])
def test_concat_offset_errors_like_tf(shapes, dim, match):
    with tf.Graph().as_default():
        feeds = [tf.placeholder(tf.int32) for _ in shapes]
        out = apply_op(ConcatOffset, [tf.constant(dim), feeds])
        with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match=match):
            s.run(out, dict(zip(feeds, [np.array(v, np.int32) for v in shapes])))


def _graph_def(build):
    with tf.Graph().as_default() as g:
        build()
    return g.as_graph_def()


def _two_consts():
    tf.add(tf.constant(1.0), tf.constant(2.0), name="out")      # Const, Const_1, out


def _a_and_a_1():
    a = tf.constant(1.0, name="a")
    tf.add(a, tf.constant(5.0, name="a_1"), name="out")
    with tf.control_dependencies([a]):
        tf.no_op(name="nop")


# (graph before, GraphDef, return_elements) -> (op names after, returned names, value of
# the first returned tensor, names of ops created next): TF 2.21's.
@pytest.mark.parametrize("before,build,returns,names,returned,value,after", [
    (["Const"], _two_consts, ["out:0", "Const"], ["Const", "Const_2", "Const_1", "out"],
     ["out:0", "Const_2"], 3.0, ["Const_3", "out_1"]),
    (["Const", "Const", "Const"], _two_consts, ["out:0", "Const_1"],
     ["Const", "Const_1", "Const_2", "Const_3", "Const_1_1", "out"],
     ["out:0", "Const_1_1"], 3.0, ["Const_4", "out_1"]),
    (["a/b"], _a_and_a_1, ["out:0", "a", "nop"], ["a/b", "a_2", "a_1", "out", "nop"],
     ["out:0", "a_2", "nop"], 6.0, ["Const", "out_1"]),
    (["A"], _a_and_a_1, ["out:0"], ["A", "a", "a_1", "out", "nop"], ["out:0"], 6.0,
     ["Const", "out_1"]),
    (["out"], _a_and_a_1, ["out:0"], ["out", "a", "a_1", "out_1", "nop"], ["out_1:0"], 6.0,
     ["Const", "out_2"]),
])
def test_import_without_prefix_renames_clashing_nodes_like_tf(before, build, returns, names,
                                                              returned, value, after):
    gd = _graph_def(build)
    with tf.Graph().as_default() as g:
        for name in before:
            tf.constant(10.0, name=name if name != "Const" else None)
        got = tf.import_graph_def(gd, return_elements=returns, name="")
        assert [op.name for op in g.get_operations()] == names
        assert [t.name for t in got] == returned
        with tf.Session() as s:
            assert s.run(got[0]) == value
        assert [tf.constant(0.0).op.name, tf.identity(1.0, name="out").op.name] == after


def test_import_renaming_keeps_input_map_and_colocation():
    gd = _graph_def(_a_and_a_1)
    with tf.Graph().as_default() as g:
        x = tf.constant(7.0, name="a")
        out, = tf.import_graph_def(gd, input_map={"a:0": x}, return_elements=["out:0"],
                                   name="")
        assert [op.name for op in g.get_operations()] == ["a", "a_2", "a_1", "out", "nop"]
        assert g.get_operation_by_name("nop").control_inputs[0].name == "a_2"
        with tf.Session() as s:
            assert s.run(out) == 12.0
    with tf.Graph().as_default() as g0:
        a = tf.constant(1.0, name="a")
        with tf.colocate_with(a):
            tf.identity(a, name="out")
    with tf.Graph().as_default() as g:
        tf.constant(10.0, name="a")
        tf.import_graph_def(g0.as_graph_def(), name="")
        assert g.get_operation_by_name("out").colocation_groups() == [b"loc:@a_1"]
