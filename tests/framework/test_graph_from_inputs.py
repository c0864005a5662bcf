"""An op goes into the graph of its inputs, as TensorFlow's ops._get_graph_from_inputs picks it.

Checked against TF 2.21 (tf.compat.v1, graph mode): an op on tensors of a graph `g` is built in
`g` outside `with g.as_default()`, inside another graph's block and in another thread; Python
values convert into `g`; `g`'s own name, device and control-dependency scopes of the calling
thread apply, not the default graph's; `name_scope(name, default, values)` makes the values'
graph the default for its block; tensors of two graphs are a ValueError in TF's words.
"""
import threading

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def _fresh_default_graph():
    """Each test's default graph is its own, so the names made there are known."""
    with tf.Graph().as_default() as default:
        yield default


@pytest.fixture
def g():
    return tf.Graph()


def _names(tensors):
    return [t.name for t in tensors]


def _mixed_message(item, first):
    return (f"{item} must be from the same graph as {first} (graphs are {item.graph} and "
            f"{first.graph}).")


def test_ops_on_tensors_of_another_graph_go_into_that_graph(g):
    with g.as_default():
        c = tf.constant(2, name="c")
        v = tf.Variable(1.0, name="v")
    default = tf.get_default_graph()
    before = len(default.get_operations())
    ident = tf.identity(c)
    mul = c * 3
    rmul = 3 * c
    add = tf.add(c, 1)
    read_add = v + 1.0
    assign = tf.assign(v, 2.0)
    sliced = tf.constant([1, 2], name="outside")  # the default graph's, for contrast
    assert sliced.graph is default
    assert all(t.graph is g for t in (ident, mul, rmul, add, read_add, assign))
    assert ident.op.name == "Identity"
    assert _names(mul.op.inputs) == ["c:0", "mul/y:0"]
    assert _names(rmul.op.inputs) == ["mul_1/x:0", "c:0"]
    assert _names(add.op.inputs) == ["c:0", "Add/y:0"]
    assert _names(read_add.op.inputs) == ["v/read:0", "add_1/y:0"]   # names ignore case
    assert _names(assign.op.inputs) == ["v:0", "Assign/value:0"]
    assert len(default.get_operations()) == before + 1   # only 'outside'
    with tf.Session(graph=g) as sess:
        sess.run(v.initializer)
        assert sess.run([ident, mul, rmul, add]) == [2, 6, 6, 3]
        assert sess.run(read_add) == 2.0


def test_inside_another_graphs_block(g):
    with g.as_default():
        c = tf.constant([1, 2], name="c")
    with tf.Graph().as_default() as other:
        out = tf.identity(c)
        first = c[0]
        assert tf.get_default_graph() is other
    assert out.graph is g and first.graph is g
    assert first.op.name == "strided_slice"
    assert other.get_operations() == []
    with tf.Session(graph=g) as sess:
        assert sess.run(first) == 1


def test_reduce_sum_of_a_scalar_builds_range_of_rank_like_tf(g):
    with g.as_default():
        c = tf.constant(2.0, name="c")
    total = tf.reduce_sum(c)
    assert total.graph is g
    assert [(op.name, op.type) for op in g.get_operations()][1:] == [
        ("Rank", "Const"), ("range/start", "Const"), ("range/delta", "Const"),
        ("range", "Range"), ("Sum", "Sum")]
    with tf.Session(graph=g) as sess:
        assert sess.run(total) == 2.0


def test_values_tf_converts_in_the_default_graph_still_fail(g):
    """TF converts these before it knows the graph: tf.add's x alone picks the scope's graph,
    a reduction of known rank makes its axes a constant, a queue converts the components."""
    with g.as_default():
        c = tf.constant(2, name="c")
        vec = tf.constant([1, 2], name="vec")
        q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    with pytest.raises(ValueError, match=r'must be from the same graph as Tensor\("Add/x:0"'):
        tf.add(1, c)
    with pytest.raises(ValueError, match=r'^Tensor\("Const:0", shape=\(1,\), dtype=int32\) '
                                         r'must be from the same graph as Tensor\("vec:0"'):
        tf.reduce_sum(vec)
    with pytest.raises(ValueError, match=r'^Tensor\("fifo_queue_enqueue/component_0:0".* must '
                                         r'be from the same graph as Tensor\("fifo_queue:0"'):
        q.enqueue(5)


def test_queue_ops_outside_the_block_and_in_a_thread(g):
    with g.as_default():
        q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
        init = q.enqueue_many([[1, 2, 3]])
        c = tf.constant(5, name="c")
    sess = tf.Session(graph=g)
    sess.run(init)
    assert sess.run(q.dequeue()) == 1
    result = {}

    def worker():
        thread_default = tf.get_default_graph()
        count = len(thread_default.get_operations())
        x = q.dequeue()
        y = tf.identity(c) * 2
        result["graphs"] = (x.graph is g, y.graph is g)
        result["values"] = sess.run([x, y])
        result["default untouched"] = len(thread_default.get_operations()) == count
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert result == {"graphs": (True, True), "values": [2, 10], "default untouched": True}
    assert sess.run(q.size()) == 1
    assert sess.run(q.dequeue_many(1)).tolist() == [3]
    sess.close()


def test_gradients_of_another_graph(g):
    with g.as_default():
        x = tf.constant([1.0, 2.0], name="x")
        y = x * x
    (grad,) = tf.gradients(y, x)
    assert grad.graph is g
    assert grad.op.name.startswith("gradients/")
    assert "gradients/grad_ys_0" in [op.name for op in g.get_operations()]
    with tf.Session(graph=g) as sess:
        np.testing.assert_allclose(sess.run(grad), [2.0, 4.0])


def test_the_inputs_graph_scopes_apply_not_the_default_graphs(g):
    with g.as_default():
        c = tf.constant(2, name="c")
    with tf.name_scope("outer"), tf.device("/cpu:0"):
        d = tf.constant(1, name="d")
        with tf.control_dependencies([d]):
            out = tf.identity(c)
    assert (out.op.name, out.op.device, out.op.control_inputs) == ("Identity", "", [])
    with g.as_default(), tf.name_scope("gs"), tf.device("/cpu:1"):
        e = tf.constant(7, name="e")
        with tf.control_dependencies([e]):
            with tf.Graph().as_default():
                ident = tf.identity(c)
                mul = c * 3
                with tf.name_scope("bar", values=[c]) as scope:
                    assert scope == "gs/bar/"
    assert (ident.op.name, ident.op.device) == ("gs/Identity", "/device:CPU:1")
    assert ident.op.control_inputs == [e.op]
    # mul's converted 3 was made in the block, so mul itself needs no control input
    assert (mul.op.name, mul.op.device, mul.op.control_inputs) == ("gs/mul", "/device:CPU:1", [])
    assert [op.name for op in mul.op.inputs[1].op.control_inputs] == ["gs/e"]


def test_name_scope_with_values_makes_their_graph_the_default(g):
    with g.as_default():
        c = tf.constant(2, name="c")
    with tf.Graph().as_default() as default, tf.name_scope("outer"):
        with tf.name_scope(None, "foo", [c]) as scope:
            assert scope == "foo/"          # g's name stack, not the default graph's
            assert tf.get_default_graph() is g
            assert tf.constant(3).name == "foo/Const:0"
        assert tf.get_default_graph() is default
        with tf.name_scope("own", values=[1, "text"]) as scope:
            assert scope == "outer/own/"   # no tensor: the default graph
    with pytest.raises(ValueError, match=r"At least one of name \(None\) and default_name "
                                         r"\(None\) must be provided."):
        tf.name_scope(None, None, [c]).__enter__()
    with pytest.raises(TypeError, match=r"`default_name` type \(<class 'int'>\) is not a string"):
        tf.name_scope("a", 3)


def test_tensors_of_two_graphs_are_a_value_error_in_tf_words(g):
    with g.as_default():
        c = tf.constant(2, name="c")
    with tf.Graph().as_default() as g2:
        c2 = tf.constant(3, name="c2")
    d = tf.constant(4, name="d")
    for build, (item, first) in [
            (lambda: tf.add(c, c2), (c2, c)), (lambda: tf.add(d, c), (c, d)),
            (lambda: c * c2, (c2, c)), (lambda: tf.identity_n([c, c2]), (c2, c)),
            (lambda: tf.add_n([c, d]), (d, c)), (lambda: tf.gradients(c, c2), (c2, c))]:
        with pytest.raises(ValueError) as info:
            build()
        assert str(info.value) == _mixed_message(item, first)
    with g2.as_default():
        with pytest.raises(ValueError, match="must be from the same graph"):
            tf.add(c, c2)
    assert [op.name for op in g.get_operations()] == ["c"]


def test_control_inputs_must_be_of_the_graph_colocation_need_not(g):
    with g.as_default():
        c = tf.constant(2, name="c")
    with pytest.raises(ValueError) as info:
        with tf.control_dependencies([c]):
            pass
    assert str(info.value) == f"Tensor {c} is not an element of this graph."
    with tf.Graph().as_default():
        with tf.colocate_with(c):
            assert tf.constant(1).op.get_attr("_class") == [b"loc:@c"]


def test_a_finalized_inputs_graph_refuses_the_op(g):
    with g.as_default():
        c = tf.constant(2, name="c")
    g.finalize()
    with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified."):
        tf.identity(c)


def test_list_arguments_convert_as_values_i_like_tf(g):
    """TF's convert_n_to_tensor names a list argument's converted values 'values_<i>'."""
    c = tf.constant([1], name="c")
    joined = tf.concat([[1], c], 0)
    assert _names(joined.op.inputs) == ["concat/values_0:0", "c:0", "concat/axis:0"]
    with g.as_default():
        k = tf.constant(2, name="k")
    stacked = tf.stack([k, 1])    # TF: the autopack fails across graphs, Pack converts in g
    assert _names(stacked.op.inputs) == ["k:0", "stack/values_1:0"]
    assert stacked.graph is g
