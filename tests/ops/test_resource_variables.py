"""Resource variables (use_resource=True): their dtypes, graph, reads and updates (VarHandleOp,
ReadVariableOp, AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp, VarIsInitializedOp,
ResourceCountUpTo), errors, gradients through conds and loops, optimizers, Saver and
MetaGraph round trips. Expected values are TensorFlow 2.21's (tf.compat.v1)."""
import numpy as np
import pytest

import tensorweave as tf


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feeds)


def _in_resource_scope(make):
    def build():
        with tf.variable_scope("s", use_resource=True):
            return make()
    return build


@pytest.mark.parametrize("make", [
    lambda: tf.get_variable("v", [2], use_resource=True),
    lambda: tf.Variable([1.0, 2.0], use_resource=True),
    _in_resource_scope(lambda: tf.get_variable("v", [2])),
    _in_resource_scope(lambda: tf.Variable([1.0, 2.0])),
], ids=["get_variable", "Variable", "scope_get_variable", "scope_Variable"])
def test_a_resource_variable_and_its_reads_are_float32_its_handle_a_resource(make):
    with tf.Graph().as_default():
        v = make()
        assert type(v).__name__ == "ResourceVariable" and isinstance(v, tf.Variable)
        assert v.dtype == tf.float32 and not v.dtype._is_ref_dtype
        reads = [v.value(), v.read_value(), tf.convert_to_tensor(v), v.initialized_value(),
                 v.initial_value, v._as_graph_element()]
        assert [r.dtype for r in reads] == [tf.float32] * 6
        assert (v.handle.dtype, v.handle.op.type, v.op.type) == \
            (tf.resource, "VarHandleOp", "VarHandleOp")
        initialized, value = _run([v.initialized_value(), v.value()])
        np.testing.assert_array_equal(initialized, value)


def test_variable_scope_use_resource_is_inherited_and_can_be_turned_off():
    with tf.Graph().as_default():
        with tf.variable_scope("a", use_resource=True) as a:
            x = tf.get_variable("x", [1])
            with tf.variable_scope("b", use_resource=False):
                y, y2 = tf.get_variable("y", [1]), tf.Variable(1.0)
            with tf.variable_scope("c"):
                z = tf.get_variable("z", [1])
            r = tf.get_variable("r", [1], use_resource=False)
            q = tf.Variable(1.0, use_resource=False)
        plain = tf.get_variable("plain", [1])
    assert a.use_resource is True
    assert [v.dtype.name for v in (x, y, y2, z, r, q, plain)] == [
        "float32", "float32_ref", "float32_ref", "float32", "float32_ref", "float32_ref",
        "float32_ref"]


def test_ops_names_and_attrs_are_tensorflows():
    with tf.Graph().as_default() as g:
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
    assert [(op.name, op.type) for op in g.get_operations()] == [
        ("w/Initializer/initial_value", "Const"), ("w", "VarHandleOp"),
        ("w/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp"),
        ("w/Assign", "AssignVariableOp"), ("w/Read/ReadVariableOp", "ReadVariableOp")]
    handle = w.op
    assert (handle.get_attr("shape"), handle.get_attr("dtype"), handle.get_attr("shared_name"),
            handle.get_attr("container")) == (tf.TensorShape([2]), tf.float32, b"w", b"")
    assert handle.get_attr("_class") == [b"loc:@w"]
    assert (w.name, w.shape, w.handle.shape) == ("w:0", tf.TensorShape([2]), tf.TensorShape([]))
    assert (w.initializer.name, w._as_graph_element().name) == ("w/Assign",
                                                                "w/Read/ReadVariableOp:0")
    assert w.initializer.get_attr("validate_shape") is False
    assert repr(w) == "<tf.Variable 'w:0' shape=(2,) dtype=float32>"
    proto = w.to_proto()
    assert (proto.variable_name, proto.snapshot_name, proto.is_resource) == (
        "w:0", "w/Read/ReadVariableOp:0", True)


def test_reads_and_updates():
    """An update returns the value read after it, or with read_value=False the op; the
    tf.assign family dispatches to the variable's methods, as in TF."""
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        put = w.assign([5.0, 6.0])
        put_op = w.assign([5.0, 6.0], read_value=False)
        add, sub = tf.assign_add(w, [1.0, 1.0], name="ignored"), w.assign_sub([2.0, 0.5])
        assert (type(put_op).__name__, put_op.type) == ("Operation", "AssignVariableOp")
        assert (put.dtype, add.op.type) == (tf.float32, "ReadVariableOp")
        assert add.op.control_inputs[0].type == "AssignAddVariableOp"
        assert add.op.control_inputs[0].name == "AssignAddVariableOp"   # TF drops the name
        assert tf.assign(w, [0.0, 0.0], name="named").op.control_inputs[0].name == "named"
        with tf.Session() as sess:
            sess.run(w.initializer)
            before = sess.run(w)
            assert sess.run(put).tolist() == [5.0, 6.0]
            assert sess.run(add).tolist() == [6.0, 7.0]
            assert sess.run(sub).tolist() == [4.0, 6.5]
            assert sess.run(put_op) is None and sess.run(w).tolist() == [5.0, 6.0]
            assert before.tolist() == [1.0, 2.0]          # a read is a copy
            assert w.eval(sess).tolist() == [5.0, 6.0]
            w.load([7.0, 8.0], sess)
            assert sess.run(w + 1).tolist() == [8.0, 9.0] and sess.run(w[1]) == 8.0


def test_reading_or_updating_before_initialization_fails_as_in_tensorflow():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        ready = [w.is_initialized(), tf.is_variable_initialized(w)]
        assert ready[1].op.type == "VarIsInitializedOp"
        with tf.Session() as sess:
            assert sess.run(ready) == [False, False]
            assert sess.run(tf.report_uninitialized_variables()).tolist() == [b"w"]
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match="^Could not find variable w. This could mean that the "
                                     "variable has been deleted. In TF1, it can also mean the "
                                     "variable is uninitialized. Debug info: container="
                                     "localhost, status error message=Resource localhost/w/"
                                     "N10tensorflow3VarE does not exist."):
                sess.run(w)
            for update in (w.assign_add([1.0, 1.0]), tf.scatter_update(w, [0], [1.0])):
                with pytest.raises(tf.errors.NotFoundError,
                                   match="^Resource localhost/w/N10tensorflow3VarE does not "
                                         "exist."):
                    sess.run(update)
            sess.run(w.initializer)
            assert sess.run(ready) == [True, True]
            assert sess.run(tf.report_uninitialized_variables()).size == 0


def test_shapes_are_checked_when_built_and_when_run():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        with pytest.raises(ValueError, match=r"^Cannot assign value to variable ' w:0': Shape "
                                             r"mismatch.The variable shape \(2,\), and the "
                                             r"assigned value shape \(3,\) are incompatible.$"):
            w.assign([1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match=r"^Dimension 0 in both shapes must be equal, but "
                                             r"are 3 and 2. Shapes are \[3\] and \[2\]. for "
                                             r"'\{\{node ResourceScatterUpdate\}\}"):
            tf.scatter_update(w, [0, 1], [1.0, 2.0, 3.0])
        grow = w.assign(tf.placeholder_with_default([1.0, 2.0, 3.0], [None]))
        with tf.Session() as sess:
            sess.run(w.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"^Trying to assign to variable with tensor with wrong "
                                     r"shape. Expected \[2\] got \[3\]"):
                sess.run(grow)


def test_count_up_to():
    with tf.Graph().as_default():
        c = tf.Variable(1, use_resource=True, name="c")
        up = c.count_up_to(2)
        assert (up.op.name, up.op.type, up.dtype, up.shape) == (
            "ResourceCountUpTo", "ResourceCountUpTo", tf.int32, tf.TensorShape([]))
        assert tf.count_up_to(c, 3).op.type == "ResourceCountUpTo"
        with tf.Session() as sess:
            sess.run(c.initializer)
            assert sess.run(up) == 1
            with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
                sess.run(up)


def test_gradients_reach_the_variable_through_its_reads():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        grad = tf.gradients(tf.reduce_sum(w * w), w)[0]
        assert (grad.dtype, grad.shape) == (tf.float32, tf.TensorShape([2]))
        sparse = tf.gradients(tf.nn.embedding_lookup(w, [0, 0]), w)[0]
        assert isinstance(sparse, tf.IndexedSlices)
        assert _run(grad).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("optimizer,update,expected", [
    (lambda: tf.train.GradientDescentOptimizer(0.1), "ResourceApplyGradientDescent", [0.8, 1.6]),
    (lambda: tf.train.AdamOptimizer(0.1), "ResourceApplyAdam", [0.9, 1.9]),
    (lambda: tf.train.MomentumOptimizer(0.1, 0.9), "ResourceApplyMomentum", [0.8, 1.6]),
], ids=["sgd", "adam", "momentum"])
def test_optimizers_update_through_the_handles(optimizer, update, expected):
    """Slots and Adam's beta powers are resource variables too, as in TF."""
    with tf.Graph().as_default() as g:
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        train = optimizer().minimize(tf.reduce_sum(w * w))
        assert [op.type for op in g.get_operations() if "update_w" in op.name][-1] == update
        assert {type(v).__name__ for v in tf.global_variables()} == {"ResourceVariable"}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), expected, rtol=1e-6)


def test_sparse_gradients_update_the_rows():
    with tf.Graph().as_default() as g:
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        train = tf.train.GradientDescentOptimizer(0.5).minimize(
            tf.reduce_sum(tf.nn.embedding_lookup(w, [0, 0])))
        assert "ResourceScatterSub" in {op.type for op in g.get_operations()}
        with tf.Session() as sess:
            sess.run(w.initializer)
            sess.run(train)
            assert sess.run(w).tolist() == [0.0, 2.0]


def test_gradients_through_cond_and_while_loop():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        x = tf.placeholder(tf.float32, [2])
        p = tf.placeholder(tf.bool, [])
        one_branch = tf.gradients(tf.reduce_sum(tf.cond(p, lambda: w * x, lambda: x * 5.0)),
                                  w)[0]
        both = tf.gradients(tf.reduce_sum(tf.cond(p, lambda: w * x, lambda: w * w)), w)[0]
        _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * w),
                               [0, tf.ones([2])])
        loop = tf.gradients(tf.reduce_sum(acc), w)[0]
        with tf.Session() as sess:
            sess.run(w.initializer)
            feeds = [{p: True, x: [3.0, 4.0]}, {p: False, x: [3.0, 4.0]}]
            assert [sess.run(one_branch, f).tolist() for f in feeds] == [[3, 4], [0, 0]]
            assert [sess.run(both, f).tolist() for f in feeds] == [[3, 4], [2, 4]]
            assert [t.tolist() for t in sess.run([acc, loop])] == [[1, 8], [3, 12]]


def test_updates_in_cond_and_while_loop():
    with tf.Graph().as_default():
        v = tf.Variable(0.0, use_resource=True, name="v")
        p = tf.placeholder(tf.bool, [])
        c = tf.cond(p, lambda: v.assign_add(1.0), lambda: v.read_value() * 10)

        def body(i, acc):
            with tf.control_dependencies([v.assign_add(2.0)]):
                return i + 1, acc + v.read_value()
        n, acc = tf.while_loop(lambda i, a: i < 3, body, [0, 0.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert [sess.run(c, {p: k}) for k in (True, False, True)] == [1.0, 10.0, 2.0]
            assert sess.run([n, acc]) == [3, 18.0] and sess.run(v) == 8.0


def test_saver_saves_the_read_and_restores_with_assign_variable_op(tmp_path):
    with tf.Graph().as_default() as g:
        w = tf.Variable([1.0, 2.0], use_resource=True, name="w")
        r = tf.Variable([3.0], name="r")
        count = len(g.get_operations())
        saver = tf.train.Saver()
        ops = {op.name: (op.type, [t.name for t in op.inputs])
               for op in g.get_operations()[count:]}
        assert ops["save/SaveV2"][1][3:] == ["r:0", "w/Read/ReadVariableOp:0"]
        assert ops["save/Identity"] == ("Identity", ["save/RestoreV2:1"])
        assert ops["save/AssignVariableOp"] == ("AssignVariableOp", ["w:0", "save/Identity:0"])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
            sess.run([w.assign([5.0, 6.0]), r.assign([0.0])])
            saver.restore(sess, path)
            assert [t.tolist() for t in sess.run([w, r])] == [[1.0, 2.0], [3.0]]
    assert sorted(tf.train.list_variables(path)) == [("r", [1]), ("w", [2])]


def test_meta_graph_round_trip_makes_a_resource_variable():
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], use_resource=True, name="w")
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        (w,) = tf.global_variables()
        assert (type(w).__name__, w.name, w.dtype, w.shape) == (
            "ResourceVariable", "w:0", tf.float32, tf.TensorShape([2]))
        assert (w._as_graph_element().name, w.initializer.name) == ("w/Read/ReadVariableOp:0",
                                                                    "w/Assign")
        with tf.Session() as sess:
            sess.run(w.initializer)
            assert sess.run(w.assign_add([1.0, 1.0])).tolist() == [2.0, 3.0]


def test_a_caching_device_gets_an_identity_of_the_read():
    with tf.Graph().as_default():
        v = tf.Variable([1.0], use_resource=True, caching_device="/cpu:0", name="cached")
        assert (v.value().name, v.value().device, v._as_graph_element().name) == (
            "cached/Read/Identity:0", "/device:CPU:0", "cached/Read/ReadVariableOp:0")
        assert v.to_proto().snapshot_name == "cached/Read/Identity:0"
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        (v,) = tf.global_variables()
        assert (v.value().name, v._as_graph_element().name) == ("cached/Read/Identity:0",
                                                                "cached/Read/ReadVariableOp:0")
        assert _run(v).tolist() == [1.0]


def test_gather_nd_reads_elements_and_slices_as_tensorflow_does():
    with tf.Graph().as_default():
        r = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4), name="r",
                        use_resource=True)
        a = r.gather_nd([[1, 0]])
        rows = r.gather_nd([[2], [0]], name="rows")
        pairs = r.gather_nd(tf.constant([[0, 1], [2, 3]], tf.int64))
        # TensorFlow 2.21 builds the same names and shapes.
        assert (a.op.type, a.op.name, a.op.inputs[0].name) == ("Identity", "Identity",
                                                                "GatherNd:0")
        assert a.op.inputs[0].op.type == "ResourceGatherNd"
        assert (rows.shape.as_list(), pairs.shape.as_list()) == ([2, 4], [2])
        row_grad = tf.gradients(tf.reduce_sum(rows * 2.0), r)[0]
        pair_grad = tf.gradients(tf.reduce_sum(pairs * 3.0), r)[0]
        assert isinstance(row_grad, tf.IndexedSlices) and isinstance(pair_grad, tf.Tensor)
        with tf.Session() as sess:
            sess.run(r.initializer)
            got = sess.run([a, rows, pairs])
            assert got[0].tolist() == [4.0] and got[2].tolist() == [1.0, 11.0]
            assert got[1].tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
            assert sess.run(tf.convert_to_tensor(row_grad)).tolist() == \
                [[2.0] * 4, [0.0] * 4, [2.0] * 4]
            assert sess.run(pair_grad).tolist() == [[0, 3, 0, 0], [0] * 4, [0, 0, 0, 3]]
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"indices\[0\] = \[5, 0\] does not index into param "
                                     r"shape \[3,4\]"):
                sess.run(r.gather_nd([[5, 0]]))
