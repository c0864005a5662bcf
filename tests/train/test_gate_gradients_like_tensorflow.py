"""gate_gradients builds TF 2.21's gating: per op (tf.gradients(gate_gradients=True), GATE_OP)
a `<op>_grad/tuple` scope with a NoOp `group_deps` and Identities `control_dependency[_N]`,
once over all gradients for GATE_GRAPH, none for GATE_NONE. Expected names and edges were
read from TensorFlow 2.21 building the same graphs. TF's parallel executor needs them: without
them a variable's in-place update can run before another gradient reads the variable. The
runtime's passes remove them where they order nothing, so its own steps are unchanged."""
import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.gating import gate_together
from tensorweave.runtime.passes import run_pass
from tensorweave.runtime.passes.options import PassOptions

GATE_NONE, GATE_OP, GATE_GRAPH = (tf.train.Optimizer.GATE_NONE, tf.train.Optimizer.GATE_OP,
                                  tf.train.Optimizer.GATE_GRAPH)


def _gating(graph, prefix="gradients/") -> dict:
    """name -> (op, data inputs, sorted control inputs, _class) of the gating nodes."""
    out = {}
    for n in graph.as_graph_def().node:
        if n.name.startswith(prefix) and "tuple/" in n.name:
            data = [i for i in n.input if not i.startswith("^")]
            ctrl = sorted(i for i in n.input if i.startswith("^"))
            cls = [c.decode() for c in n.attr["_class"].list.s] if "_class" in n.attr else []
            out[n.name] = (n.op, data, ctrl, cls)
    return out


def _mlp(optimizer, gate):
    x = tf.constant(np.random.RandomState(0).rand(8, 4).astype(np.float32))
    y = tf.constant(np.random.RandomState(1).rand(8, 2).astype(np.float32))
    w0 = tf.Variable(np.random.RandomState(2).randn(4, 5).astype(np.float32) * 0.5, name="w0")
    b0 = tf.Variable(np.zeros(5, np.float32), name="b0")
    w1 = tf.Variable(np.random.RandomState(3).randn(5, 2).astype(np.float32) * 0.5, name="w1")
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w0), b0))
    loss = tf.reduce_mean(tf.abs(tf.matmul(h, w1) - y))
    return loss, optimizer.minimize(loss, gate_gradients=gate)


def _tuple(scope, grads, colocated):
    """TF's `tuple` in `scope` over gradient tensor names: the NoOp and one Identity each."""
    scope = f"{scope}/tuple" if scope else "tuple"
    nodes = {f"{scope}/group_deps": ("NoOp", [], sorted(f"^{g}" for g in grads), [])}
    for k, (g, loc) in enumerate(zip(grads, colocated)):
        suffix = "" if k == 0 else f"_{k}"
        nodes[f"{scope}/control_dependency{suffix}"] = (
            "Identity", [g], [f"^{scope}/group_deps"], [f"loc:@{loc}"])
    return nodes


# What TF 2.21 builds for _mlp (the same for GradientDescent and Adam: the gates are made by
# compute_gradients, before the optimizer's own ops).
_MLP_GATES = {
    **_tuple("gradients/sub_grad", ["gradients/Abs_grad/mul", "gradients/sub_grad/Neg"],
             ["gradients/Abs_grad/mul", "gradients/sub_grad/Neg"]),
    **_tuple("gradients/MatMul_1_grad",
             ["gradients/MatMul_1_grad/MatMul", "gradients/MatMul_1_grad/MatMul_1"],
             ["gradients/MatMul_1_grad/MatMul", "gradients/MatMul_1_grad/MatMul_1"]),
    **_tuple("gradients/BiasAdd_grad",
             ["gradients/Relu_grad/ReluGrad", "gradients/BiasAdd_grad/BiasAddGrad"],
             ["gradients/Relu_grad/ReluGrad", "gradients/BiasAdd_grad/BiasAddGrad"]),
    **_tuple("gradients/MatMul_grad",
             ["gradients/MatMul_grad/MatMul", "gradients/MatMul_grad/MatMul_1"],
             ["gradients/MatMul_grad/MatMul", "gradients/MatMul_grad/MatMul_1"]),
}


@pytest.mark.parametrize("make", [lambda: tf.train.GradientDescentOptimizer(0.1),
                                  lambda: tf.train.AdamOptimizer(0.01)], ids=["sgd", "adam"])
def test_gate_op_builds_tfs_tuple_per_op(make):
    with tf.Graph().as_default() as g:
        _mlp(make(), GATE_OP)
        assert _gating(g) == _MLP_GATES
        assert not _gating(g, prefix="tuple/")
        # The updates read the gated gradients.
        for name in ("w0", "w1"):
            update = next(op for op in g.get_operations()
                          if op.name.endswith(f"update_{name}/" + op.type) and
                          op.type.startswith("Apply"))
            grad = [t for t in update.inputs if "_grad/tuple/control_dependency" in t.name]
            assert len(grad) == 1 and grad[0].op.type == "Identity"


def test_gate_none_builds_no_gate_and_gate_graph_one_tuple_over_all():
    with tf.Graph().as_default() as g:
        _mlp(tf.train.GradientDescentOptimizer(0.1), GATE_NONE)
        assert not [op for op in g.get_operations() if "tuple" in op.name]
    with tf.Graph().as_default() as g:
        _mlp(tf.train.GradientDescentOptimizer(0.1), GATE_GRAPH)
        assert not _gating(g)
        gates = _gating(g, prefix="tuple/")
        grads = ["gradients/MatMul_grad/MatMul_1", "gradients/BiasAdd_grad/BiasAddGrad",
                 "gradients/MatMul_1_grad/MatMul_1"]
        assert gates == _tuple("", grads, grads)


def test_gate_graph_without_any_gradient_fails_like_tf():
    with tf.Graph().as_default():
        a, b = tf.Variable(1.0), tf.Variable(2.0)
        opt = tf.train.GradientDescentOptimizer(0.1)
        with pytest.raises(ValueError, match=r"must have at least one Tensor. Received: \[None\]"):
            opt.compute_gradients(a * 2.0, var_list=[b], gate_gradients=GATE_GRAPH)
        assert opt.compute_gradients(a * 2.0, var_list=[b]) == [(None, b)]


def test_an_op_with_one_gradient_is_not_gated():
    with tf.Graph().as_default() as g:
        w = tf.Variable([1.0, 2.0], name="w")
        (grad,) = tf.gradients(tf.reduce_sum(w * 3.0), [w], gate_gradients=True)
        names = {op.name for op in g.get_operations()}
        # Sum's gradient flows to its input only (None for the axis): no gate, as TF.
        assert not [n for n in names if n.startswith("gradients/Sum_grad/tuple")]
        assert "gradients/mul_grad/tuple/group_deps" in names
        assert grad.op.name == "gradients/mul_grad/tuple/control_dependency"
        with tf.Session() as sess:
            sess.run(w.initializer)
            assert sess.run(grad).tolist() == [3.0, 3.0]


def test_without_gate_gradients_there_is_no_gate():
    with tf.Graph().as_default() as g:
        a = tf.Variable(np.ones((2, 2), np.float32))
        b = tf.Variable(np.ones((2, 2), np.float32))
        tf.gradients(tf.reduce_sum(tf.matmul(a, b)), [a, b])
        assert not [op for op in g.get_operations() if "tuple" in op.name]


def test_indexed_slices_are_gated_through_their_values():
    """As TF's tuple: the values' op joins the gate and the values pass an Identity; the
    indices and dense shape are the gradient's own (GATE_GRAPH with an embedding)."""
    with tf.Graph().as_default() as g:
        emb = tf.Variable(np.ones((5, 2), np.float32), name="emb")
        w = tf.Variable(np.ones((2, 3), np.float32), name="w")
        h = tf.nn.embedding_lookup(emb, tf.constant([1, 3]))
        loss = tf.reduce_sum(tf.matmul(h, w))
        opt = tf.train.GradientDescentOptimizer(0.1)
        (ge, _), (gw, _) = opt.compute_gradients(loss, gate_gradients=GATE_GRAPH)
        assert isinstance(ge, tf.IndexedSlices)
        assert ge.values.name == "tuple/control_dependency:0"
        assert ge.indices.name == "gradients/embedding_lookup_grad/Reshape_1:0"
        assert gw.name == "tuple/control_dependency_1:0"
        gate = g.get_operation_by_name("tuple/group_deps")
        assert sorted(op.name for op in gate.control_inputs) == [
            "gradients/MatMul_grad/MatMul_1", "gradients/embedding_lookup_grad/Reshape"]
        train = opt.apply_gradients([(ge, emb), (gw, w)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            expected = np.ones((5, 2), np.float32)
            expected[[1, 3]] -= 0.1 * 3.0
            np.testing.assert_allclose(sess.run(emb), expected)


def test_gate_together_passes_none_through_and_needs_one_gradient():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        s = tf.IndexedSlices(tf.constant([[2.0]]), tf.constant([0]), tf.constant([3, 1]))
        out = gate_together([None, x, s])
        assert out[0] is None and out[1].op.type == "Identity"
        assert out[2].indices is s.indices and out[2].dense_shape is s.dense_shape
        assert [c.name for c in out[2].values.op.control_inputs] == ["tuple/group_deps"]
        with pytest.raises(ValueError, match="must have at least one Tensor"):
            gate_together([None, None])


def test_gate_ignores_device_scope_but_not_its_gradients_devices():
    """As TF: the gate's NoOp is placed by its gradients' device (tf.group), each Identity is
    colocated with its gradient, whatever device scope encloses tf.gradients."""
    with tf.Graph().as_default() as g:
        a = tf.Variable(np.ones((2, 2), np.float32))
        b = tf.Variable(np.ones((2, 2), np.float32))
        loss = tf.reduce_sum(tf.matmul(a, b))
        with tf.device("/device:CPU:0"):
            tf.gradients(loss, [a, b], gate_gradients=True)
        nodes = {n.name: n for n in g.as_graph_def().node}
        assert nodes["gradients/MatMul_grad/tuple/group_deps"].device == "/device:CPU:0"
        ident = nodes["gradients/MatMul_grad/tuple/control_dependency_1"]
        assert ident.device == "/device:CPU:0"
        assert list(ident.attr["_class"].list.s) == [b"loc:@gradients/MatMul_grad/MatMul_1"]


@pytest.mark.parametrize("take_true", [True, False])
def test_cond_gradients_are_gated_like_tf_and_stay_right(take_true):
    with tf.Graph().as_default() as g:
        w1 = tf.Variable(np.ones((3, 2), np.float32), name="w1")
        w2 = tf.Variable(np.full((3, 2), 2.0, np.float32), name="w2")
        p = tf.placeholder_with_default(take_true, [])
        r = tf.cond(p, lambda: tf.matmul(w1, w2, transpose_b=True),
                    lambda: w1[:, :1] * w2[:, :1])
        grads = tf.gradients(tf.reduce_sum(r), [w1, w2], gate_gradients=True)
        scopes = {n.rsplit("/tuple/", 1)[0] for n in _gating(g)}
        assert scopes == {"gradients/cond/MatMul_grad", "gradients/cond/Merge_grad",
                          "gradients/cond/mul_grad"}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            g1, g2 = sess.run(grads)
        if take_true:   # d/dw1 sum(w1 @ w2^T) = column sums of w2 per row, and back
            assert g1.tolist() == [[6.0, 6.0]] * 3 and g2.tolist() == [[3.0, 3.0]] * 3
        else:
            assert g1.tolist() == [[2.0, 0.0]] * 3 and g2.tolist() == [[1.0, 0.0]] * 3


def test_each_update_waits_for_the_gradients_reading_its_variable():
    """The race TF's gate prevents: x @ w1 @ w2, the update of w2 must come after
    dx = g @ w2^T has read w2. In the exported graph the update's gradient is an Identity
    that waits for the gate, which waits for dx."""
    with tf.Graph().as_default():
        x = tf.constant(np.ones((4, 8), np.float32))
        w1 = tf.Variable(np.full((8, 8), 0.1, np.float32), name="w1")
        w2 = tf.Variable(np.full((8, 8), 0.1, np.float32), name="w2")
        tf.train.GradientDescentOptimizer(1.0).minimize(
            tf.reduce_sum(tf.matmul(tf.matmul(x, w1), w2)), name="train")
        meta = tf.train.export_meta_graph()
    nodes = {n.name: n for n in meta.graph_def.node}

    def ancestors(name):
        seen, stack = set(), [name]
        while stack:
            for i in nodes[stack.pop()].input:
                src = i.lstrip("^").split(":")[0]
                if src not in seen:
                    seen.add(src)
                    stack.append(src)
        return seen
    update = "train/update_w2/ApplyGradientDescent"
    assert nodes[update].input[2] == "gradients/MatMul_1_grad/tuple/control_dependency_1"
    assert "gradients/MatMul_1_grad/MatMul" in ancestors(update)   # dx reads w2 first


def _partition_ops(sess, fetch, feed=None) -> collections.Counter:
    md = tf.RunMetadata()
    sess.run(fetch, feed, options=tf.RunOptions(output_partition_graphs=True),
             run_metadata=md)
    return collections.Counter(n.op for pg in md.partition_graphs for n in pg.node)


@pytest.mark.parametrize("make", [lambda: tf.train.GradientDescentOptimizer(0.1),
                                  lambda: tf.train.AdamOptimizer(0.01)], ids=["sgd", "adam"])
def test_runtime_graph_and_training_are_those_without_gates(make):
    """The passes remove the gates where they order nothing: the step the session runs has
    the same kernels (MatMul updates still fused) and computes the same values."""
    runs = {}
    for gate in (GATE_NONE, GATE_OP, GATE_GRAPH):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [16, 32], name="x")
            w0 = tf.Variable(np.random.RandomState(0).randn(32, 64).astype(np.float32) * 0.1)
            w1 = tf.Variable(np.random.RandomState(1).randn(64, 4).astype(np.float32) * 0.1)
            loss = tf.reduce_mean(tf.square(tf.matmul(tf.nn.relu(tf.matmul(x, w0)), w1)))
            train = make().minimize(loss, gate_gradients=gate)
            feed = {x: np.random.RandomState(2).rand(16, 32).astype(np.float32)}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                ops = _partition_ops(sess, train, feed)
                for _ in range(3):
                    sess.run(train, feed)
                runs[gate] = (ops, sess.run([w0, w1]))
    base_ops, base_w = runs[GATE_NONE]
    for gate in (GATE_OP, GATE_GRAPH):
        ops, w = runs[gate]
        assert ops == base_ops, gate
        for a, b in zip(w, base_w):
            np.testing.assert_array_equal(a, b)


def _optimized(fetches=(), feeds=(), targets=()):
    from tensorweave.runtime import placement, prune
    from tensorweave.runtime.devices import DeviceMgr
    graph = prune.prune(tuple(feeds), tuple(fetches), tuple(targets))
    placement.place(graph, DeviceMgr.local().devices, False)
    opts = PassOptions.defaults(graph)
    graph = run_pass("model_pruning", graph, opts)
    return run_pass("dependency_optimization", graph, opts), opts


def test_unread_pure_node_kept_by_a_control_edge_becomes_a_noop():
    """Grappler's rule: nothing reads `unused`, so its dependents wait for its inputs."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3], name="x")
        unused = tf.exp(x, name="unused")
        with tf.control_dependencies([unused]):
            y = tf.multiply(x, 2.0, name="y")
        graph, opts = _optimized([y], [x])
        assert "unused" not in graph.nodes
        assert "bypass_noop" in opts.log.kinds()
        with tf.Session() as sess:
            assert sess.run(y, {x: [1.0, 2.0, 3.0]}).tolist() == [2.0, 4.0, 6.0]


def test_control_edge_to_pure_work_is_dropped_but_one_ordering_an_update_stays():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        v = tf.Variable(1.0, name="v")
        side = tf.square(x, name="side")        # pure work: waiting for it orders nothing
        inc = tf.assign_add(v, 1.0)
        after_inc = tf.add(x, 0.5, name="after_inc")
        with tf.control_dependencies([side]):
            y = tf.add(x, 1.0, name="y")
        with tf.control_dependencies([inc]):
            z = tf.multiply(after_inc, x, name="z")   # waits for an update: kept
        graph, opts = _optimized([y, z], [x])
        assert graph.nodes["y"].control_inputs == []
        assert graph.nodes["z"].control_inputs == [inc.op.name]
        assert any("without effects" in d for _, k, _, d in opts.log if k == "drop_control_edge")
