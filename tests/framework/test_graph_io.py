"""GraphDef export/import: round trips through protobuf, and a GraphDef written by TensorFlow."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import graph_io

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")


def _small_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.constant([[1.0, 2.0], [3.0, 4.0]], name="w")
        y = tf.nn.relu(tf.matmul(x, w) - 5.0, name="y")
        s = tf.reduce_sum(tf.concat([y, y * 2.0], axis=1), axis=1, name="s")
        with tf.control_dependencies([s]):
            tf.no_op(name="done")
    return g


def test_node_defs_carry_ops_inputs_attrs_and_control_edges():
    gd = _small_graph().as_graph_def()
    nodes = {n.name: n for n in gd.node}
    assert nodes["y"].op == "Relu" and nodes["x"].op == "Placeholder"
    assert nodes["x"].attr["dtype"].type == tf.float32.as_datatype_enum
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 2]
    assert list(nodes["done"].input) == ["^s"]
    np.testing.assert_array_equal(tf.make_ndarray(nodes["w"].attr["value"].tensor),
                                  [[1.0, 2.0], [3.0, 4.0]])
    assert gd.versions.producer > 0


def test_round_trip_gives_the_same_results():
    gd = _small_graph().as_graph_def()
    parsed = tf.GraphDef.FromString(gd.SerializeToString())
    assert parsed == gd
    data = np.array([[1.0, 1.0], [2.0, 0.0]], np.float32)
    with tf.Graph().as_default():
        s, done = tf.import_graph_def(parsed, return_elements=["s:0", "done"], name="imp")
        assert s.name == "imp/s:0" and done.name == "imp/done"
        with tf.Session() as sess:
            got = sess.run(s, {"imp/x:0": data})
    with tf.Session(graph=_small_graph()) as sess:
        want = sess.run("s:0", {"x:0": data})
    np.testing.assert_allclose(got, want)


def test_input_map_and_errors():
    gd = _small_graph().as_graph_def()
    with tf.Graph().as_default():
        fed = tf.constant([[0.0, 3.0]])
        (y,) = tf.import_graph_def(gd, input_map={"x:0": fed}, return_elements=["y:0"])
        assert y.name == "import/y:0"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y), [[4.0, 7.0]])
        with pytest.raises(ValueError, match="nope"):
            tf.import_graph_def(gd, return_elements=["nope:0"])
        with pytest.raises(ValueError, match="nope"):
            tf.import_graph_def(gd, input_map={"nope:0": fed})


def test_tensor_protos_from_typed_fields_and_content():
    proto = tf.TensorProto(dtype=tf.float32.as_datatype_enum)
    proto.tensor_shape.dim.add(size=3)
    proto.float_val.append(2.5)
    np.testing.assert_array_equal(tf.make_ndarray(proto), [2.5, 2.5, 2.5])
    for arr in (np.arange(6, dtype=np.int64).reshape(2, 3), np.array([True, False]),
                np.array([b"a", b"bc"], dtype=object), np.float16([1.5, -2.0])):
        back = graph_io.tensor_proto_to_ndarray(graph_io.ndarray_to_tensor_proto(arr))
        np.testing.assert_array_equal(back, arr)
        assert back.dtype == arr.dtype


def test_write_graph_text_and_binary(tmp_path):
    g = _small_graph()
    text = tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    binary = tf.train.write_graph(g.as_graph_def(), str(tmp_path), "g.pb", as_text=False)
    from google.protobuf import text_format
    parsed_text = text_format.Parse(tmp_path.joinpath("g.pbtxt").read_text(), tf.GraphDef())
    parsed_bin = tf.GraphDef.FromString(tmp_path.joinpath("g.pb").read_bytes())
    assert text.endswith("g.pbtxt") and binary.endswith("g.pb")
    assert parsed_text == parsed_bin == g.as_graph_def()


def test_graph_def_written_by_tensorflow_runs_with_the_same_results():
    """tests/fixtures/make_tf_graphdef.py wrote this GraphDef with TensorFlow 2.21."""
    with open(os.path.join(FIXTURES, "tf_core_graph.pb"), "rb") as f:
        gd = tf.GraphDef.FromString(f.read())
    with open(os.path.join(FIXTURES, "tf_core_graph.json")) as f:
        meta = json.load(f)
    expected = np.load(os.path.join(FIXTURES, "tf_core_graph_expected.npz"))
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        names = list(meta["outputs"])
        fetches = [meta["outputs"][n]["tensor"] for n in names]
        with tf.Session() as sess:
            values = sess.run(fetches, {"x:0": expected["x"]})
    for name, value in zip(names, values):
        np.testing.assert_allclose(value, expected[name], rtol=1e-6, atol=1e-6, err_msg=name)
        assert np.asarray(value).dtype == expected[name].dtype, name


def _graph_with_colocation():
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="a")
        b = tf.identity(a, name="b")
        with tf.colocate_with(a):
            tf.identity(a, name="c")
        with tf.colocate_with(b):
            tf.identity(a, name="d")
        tf.identity(a, name="f")
    gd = g.as_graph_def()
    devices = {"a": "/cpu:2", "c": "/cpu:3", "d": "/gpu:1",
               "f": "/job:y/replica:1/task:0/device:CPU:7"}
    for node in gd.node:
        node.device = devices.get(node.name, "")
    return gd


@pytest.mark.parametrize("outer, expected", [
    ("/job:x/task:1", ["/job:x/task:1/device:CPU:2", "/job:x/task:1",
                       "/job:x/task:1/device:CPU:2", "/job:x/task:1",
                       "/job:y/replica:1/task:0/device:CPU:7"]),
    (None, ["/device:CPU:2", "", "/device:CPU:2", "", "/job:y/replica:1/task:0/device:CPU:7"]),
    ("/cpu:4", ["/device:CPU:2", "/device:CPU:4", "/device:CPU:2", "/device:CPU:4",
                "/job:y/replica:1/task:0/device:CPU:7"]),
])
def test_imported_devices_are_canonical_and_merged_with_the_device_scope(outer, expected):
    """TF 2.21: a node's device is the innermost device scope; a colocated node (c, d) takes
    the device of the op it is colocated with, dropping its own."""
    gd = _graph_with_colocation()
    with tf.Graph().as_default() as g:
        with tf.device(outer):
            tf.import_graph_def(gd, name="i")
    assert [op.device for op in g.get_operations()] == expected


def test_imported_devices_under_a_device_function():
    gd = _graph_with_colocation()
    with tf.Graph().as_default() as g:
        with tf.device(lambda op: "/cpu:6" if op.type == "Identity" else ""):
            tf.import_graph_def(gd, name="i")
    assert [op.device for op in g.get_operations()] == \
        ["", "/cpu:6", "", "/device:CPU:6", "/cpu:6"]


def test_import_colocation_with_a_missing_op_raises():
    gd = _graph_with_colocation()
    del gd.node[0]   # "a", which c is colocated with
    with tf.Graph().as_default():
        a = tf.constant(1.0, name="a")
        with pytest.raises(ValueError, match="expects to be colocated with unknown node .a."):
            tf.import_graph_def(gd, input_map={"a:0": a}, name="i")


def _loop_graph():
    """A while loop, a nested loop and a loop with a cond in its body, fed by "x"."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        _, a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x),
                             [tf.constant(0), tf.constant(1.0)])

        def outer(i, b):
            _, b = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, b + x), [0, b])
            return i + 1, b
        _, b = tf.while_loop(lambda i, b: i < 3, outer, [0, tf.constant(0.0)])
        _, c = tf.while_loop(
            lambda i, c: i < 4,
            lambda i, c: (i + 1, tf.cond(i < 2, lambda: c * x, lambda: c + x)),
            [0, tf.constant(1.0)])
        tf.identity(a, name="a")
        tf.identity(b, name="b")
        tf.identity(c, name="c")
    return g


def test_while_loops_survive_graph_def_and_meta_graph_round_trips():
    want = [8.0, 12.0, 8.0]    # 2**3; 3 * 2 * 2; (1 * 2 * 2) + 2 + 2
    with tf.Session(graph=_loop_graph()) as sess:
        assert sess.run(["a:0", "b:0", "c:0"], {"x:0": 2.0}) == want
    gd = _loop_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(gd, name="imp")
        merge = g.get_tensor_by_name("imp/while/Merge_1:0")
        assert merge.op.inputs[1].op.type == "NextIteration"   # the back edge is rewired
        with tf.Session() as sess:
            assert sess.run(["imp/a:0", "imp/b:0", "imp/c:0"], {"imp/x:0": 2.0}) == want
    meta = tf.train.export_meta_graph(graph=_loop_graph())
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            assert sess.run(["a:0", "b:0", "c:0"], {"x:0": 2.0}) == want


def test_import_rejects_unknown_inputs_and_cycles_other_than_loops():
    gd = tf.GraphDef()
    gd.node.add(name="a", op="Identity", input=["b"]).attr["T"].type = \
        tf.float32.as_datatype_enum
    gd.node.add(name="b", op="Identity", input=["a"]).attr["T"].type = \
        tf.float32.as_datatype_enum
    with tf.Graph().as_default(), pytest.raises(ValueError, match="cycle"):
        tf.import_graph_def(gd)
    gd.node[1].input[0] = "nowhere"
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Unknown input"):
        tf.import_graph_def(gd)


def test_import_without_prefix_into_a_graph_that_has_the_names_uniquifies_them():
    """As TF: name="" gives taken names the next free suffix, colocations follow the rename."""
    with tf.Graph().as_default():
        a = tf.constant(1.0, name="a")
        tf.add(a, 1.0, name="b")
        graph_def = tf.get_default_graph().as_graph_def()
        (b,) = tf.import_graph_def(graph_def, return_elements=["b:0"], name="")
        names = [op.name for op in tf.get_default_graph().get_operations()]
        with tf.Session() as sess:
            assert sess.run(b) == 2.0
    assert b.name == "b_1:0" and names == ["a", "b/y", "b", "a_1", "b/y_1", "b_1"]
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        variable_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        tf.constant(0.0, name="v")
        tf.import_graph_def(variable_def, name="")
        assert g.get_operation_by_name("v/read").colocation_groups() == [b"loc:@v_1"]
