"""Graph construction: names, scopes, devices, control dependencies, collections, finalize."""
import threading

import numpy as np
import pytest

import tensorweave as tf


def test_unique_names_are_case_insensitive_and_skip_taken_names():
    with tf.Graph().as_default():
        names = [tf.constant(1, name=n).op.name for n in ("a", "a_1", "a", "A")]
    assert names == ["a", "a_1", "a_2", "A_3"]


def test_name_scopes_nest_reenter_and_reset():
    with tf.Graph().as_default() as g:
        with tf.name_scope("outer") as s1:
            c = tf.constant(1, name="c")
            with tf.name_scope("inner"):
                d = tf.constant(2, name="d")
        with tf.name_scope("outer") as s2:
            pass
        with tf.name_scope("outer/"):
            e = tf.constant(3, name="c")
            with tf.name_scope(None):
                root = tf.constant(4, name="root")
        with g.name_scope("x") as gx:
            pass
    assert (s1, s2, gx) == ("outer/", "outer_1/", "x/")
    assert [c.op.name, d.op.name, e.op.name, root.op.name] == \
        ["outer/c", "outer/inner/d", "outer/c_1", "root"]


def test_device_scopes_merge_inner_over_outer_and_functions_apply():
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:1"):
            with tf.device("/cpu:0"):
                a = tf.constant(1)
            with tf.device(None):
                b = tf.constant(2)
            with tf.device(lambda op: "/device:CPU:3" if op.type == "Const" else ""):
                c = tf.constant(3)
    assert a.device == "/job:worker/task:1/device:CPU:0"
    assert b.device == ""
    assert c.device == "/job:worker/task:1/device:CPU:3"


def test_control_dependencies_accumulate_clear_and_skip_implied_ones():
    with tf.Graph().as_default():
        a = tf.no_op(name="a")
        b = tf.no_op(name="b")
        with tf.control_dependencies([a]):
            with tf.control_dependencies([b]):
                both = tf.constant(1)
            with tf.control_dependencies(None):
                free = tf.constant(2)
            inner = tf.constant(3)
            uses_inner = tf.identity(inner)  # depends on `a` through `inner` already
    assert set(both.op.control_inputs) == {a, b}
    assert free.op.control_inputs == []
    assert uses_inner.op.control_inputs == []


def test_colocate_with_sets_class_attr_and_device():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            v = tf.constant(1.0, name="v")
        with tf.device("/cpu:1"), tf.colocate_with(v.op):
            w = tf.identity(v)
    assert w.op.get_attr("_class") == [b"loc:@v"]
    assert w.device == v.device


def test_nested_colocate_with_accumulates_groups_and_takes_innermost_device():
    """TF 2.21: e's `_class` holds both groups (sorted); its device is b's, the innermost."""
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            a = tf.constant(1.0, name="a")
        with tf.device("/job:w/cpu:2"):
            b = tf.constant(2.0, name="b")
        with tf.colocate_with(b):
            with tf.colocate_with(a):
                e = tf.add(a, b, name="e")
            with tf.colocate_with(a, ignore_existing=True):
                f = tf.add(a, b, name="f")
    assert e.op.colocation_groups() == [b"loc:@a", b"loc:@b"]
    assert e.device == "/device:CPU:1"
    assert f.op.colocation_groups() == [b"loc:@a"]
    node = next(n for n in g.as_graph_def().node if n.name == "e")
    assert list(node.attr["_class"].list.s) == [b"loc:@a", b"loc:@b"]


def test_colocate_with_none_clears_colocation_and_devices():
    with tf.Graph().as_default():
        a = tf.constant(1.0, name="a")
        with tf.device("/cpu:4"), tf.colocate_with(a):
            with tf.colocate_with(None, ignore_existing=True):
                i = tf.identity(a, name="i")
        with tf.device("/cpu:4"):
            with tf.colocate_with(None, ignore_existing=True):
                j = tf.identity(a, name="j")
        with pytest.raises(ValueError, match="ignore_existing is not True"):
            with tf.colocate_with(None):
                pass
    assert (i.device, j.device) == ("", "")
    assert i.op.colocation_groups() == [b"loc:@i"]


def test_device_scope_inside_colocate_with_applies_when_the_target_has_no_device():
    with tf.Graph().as_default():
        n = tf.constant(0.0, name="n")
        with tf.device("/cpu:1"):
            m = tf.constant(0.0, name="m")
        with tf.colocate_with(n):
            with tf.device("/cpu:5"):
                c = tf.identity(n, name="c")
        with tf.colocate_with(m):
            with tf.device("/cpu:5"):
                d = tf.identity(m, name="d")
    assert c.device == "/device:CPU:5" and c.op.colocation_groups() == [b"loc:@n"]
    assert d.device == "/device:CPU:1"


def test_an_op_taking_a_variables_ref_is_colocated_with_it_as_in_tensorflow():
    """TF's op_def_library makes ops with reference arguments inside colocate_with blocks for
    those refs: their `_class` joins the variable's group and device scopes do not apply
    (TF 2.21's graph for the same program)."""
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            v = tf.Variable(np.zeros((4, 2), np.float32), name="v")
        w = tf.Variable(np.zeros(2, np.float32), name="w")
        with tf.device("/cpu:1"):
            assign_v = tf.assign(v, np.ones((4, 2), np.float32))
            assign_w = tf.assign(w, [1.0, 2.0])
            read = tf.identity(v)                    # a value input: the device scope holds
        with tf.colocate_with(v):
            scatter = tf.scatter_add(w, [0], [5.0])
        counter = tf.Variable(0, name="cnt")
        count = tf.count_up_to(counter, 3)
    assert (assign_v.device, assign_v.op.colocation_groups()) == ("/device:CPU:0", [b"loc:@v"])
    assert (assign_w.device, assign_w.op.colocation_groups()) == ("", [b"loc:@w"])
    assert read.device == "/device:CPU:1" and "_class" not in read.op.node_def.attr
    assert scatter.device == "/device:CPU:0"
    assert scatter.op.colocation_groups() == [b"loc:@v", b"loc:@w"]
    assert count.op.colocation_groups() == [b"loc:@cnt"]


def test_finalize_blocks_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1)
    g.finalize()
    with g.as_default(), pytest.raises(RuntimeError, match="finalized"):
        tf.constant(2)


def test_version_changes_when_ops_are_added():
    g = tf.Graph()
    v0 = g.version
    with g.as_default():
        tf.constant(1)
    assert g.version == v0 + 1


def test_lookups_and_their_errors():
    with tf.Graph().as_default() as g:
        c = tf.constant([1, 2], name="c")
    assert g.get_tensor_by_name("c:0") is c and g.get_operation_by_name("c") is c.op
    with pytest.raises(KeyError):
        g.get_tensor_by_name("c:1")
    with pytest.raises(ValueError):
        g.get_tensor_by_name("c")
    with pytest.raises(ValueError):
        g.get_operation_by_name("c:0")
    with pytest.raises(TypeError):
        g.as_graph_element(3.0)


def test_default_graph_is_per_thread():
    g = tf.Graph()
    seen = []
    with g.as_default():
        t = threading.Thread(target=lambda: seen.append(tf.get_default_graph()))
        t.start()
        t.join()
        assert tf.get_default_graph() is g
    assert seen[0] is not g


def test_reset_default_graph_inside_nested_graph_raises():
    with tf.Graph().as_default(), pytest.raises(AssertionError):
        tf.reset_default_graph()


def test_collections_copy_ref_and_scope_filter():
    with tf.Graph().as_default() as g:
        with tf.name_scope("s"):
            a = tf.constant(1, name="a")
        b = tf.constant(2, name="b")
        tf.add_to_collection("k", a)
        tf.add_to_collections(["k", "j"], b)
        assert tf.get_collection("k") == [a, b]
        assert tf.get_collection("k", scope="s") == [a]
        tf.get_collection_ref("j").append(a)
        assert g.get_collection("j") == [b, a]
        copy = tf.get_collection("k")
        copy.append(None)
        assert len(g.get_collection("k")) == 2


def test_tensor_protocols():
    with tf.Graph().as_default():
        c = tf.constant([1.0, 2.0])
    assert (c == c) is True and hash(c) == hash(c)
    with pytest.raises(TypeError):
        bool(c)
    with pytest.raises(TypeError):
        iter(c)
    with pytest.raises(ValueError):
        c.set_shape([3])
    assert repr(c).startswith("<tf.Tensor 'Const:0'")


def test_dtype_and_shape_errors_at_construction_name_both_sides():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="int32"):
            tf.constant(1) + tf.constant(1.0)
        with pytest.raises(ValueError, match=r"\[3\].*\[2\]"):
            tf.constant([1, 2, 3]) + tf.constant([1, 2])


def test_creation_site_is_the_user_line():
    with tf.Graph().as_default():
        c = tf.constant(1.0) + 2.0
    file, line = c.op.creation_site
    assert file.endswith("test_graph.py") and line > 0


def test_str_and_repr_of_tensors_and_operations_as_in_tf1():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 3], name="p")
    assert str(p) == 'Tensor("p:0", shape=(?, 3), dtype=float32)'
    assert repr(p) == "<tf.Tensor 'p:0' shape=(?, 3) dtype=float32>"
    assert str(p.op).startswith('name: "p"\nop: "Placeholder"')
    assert repr(p.op) == "<tf.Operation 'p' type=Placeholder>"


def test_tensor_ndim_and_references_as_tensorflow_gives_them():
    with tf.Graph().as_default():
        t = tf.constant([[1, 2]], name="t")
        assert t.ndim == 2 and tf.placeholder(tf.float32).ndim == -1
        ref = t.ref()
        assert ref.deref() is t and ref == t.ref() and ref == t.experimental_ref()
        assert {ref: 1}[t.ref()] == 1 and ref != tf.constant(1).ref()
        assert repr(ref).startswith("<Reference wrapping <tf.Tensor 't:0'")
        v = tf.Variable([1.0], name="v")
        assert v.ref().deref() is v and v.experimental_ref() == v.ref() and v.ref() != ref
