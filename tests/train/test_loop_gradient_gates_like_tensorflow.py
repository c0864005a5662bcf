"""A while loop's gradient is gated as TF 2.21 gates it, so that TF runs our exported training
graphs deterministically.

With gate_gradients (Optimizer.minimize's GATE_OP) TF gates each op of its gradient loop's
body too. What that guarantees: a variable's in-place update waits for every read of the
variable by the gradient, the last iteration's included (the read of W by dx = dz @ W^T, of a
trainable initial state h0 by the weight gradient h^T @ dz). Without it TF 2.21 running our
export of an RNN trained with Adam or SGD gave up to 10 different results in 10 runs. The
checker below (ancestors crossing at most one NextIteration edge: the last iteration) finds no
unordered read in TF's own graphs of these programs, and found them in ours before.
"""
import collections

import numpy as np
import pytest

import tensorweave as tf

T, B, D, H = 6, 4, 5, 7
GATE_NONE, GATE_OP = tf.train.Optimizer.GATE_NONE, tf.train.Optimizer.GATE_OP

_BACK = ("NextIteration", "RefNextIteration")
_FORWARD = ("Enter", "RefEnter", "Identity", "Merge", "Switch", "RefSwitch", "Exit")
_TA_READS = ("TensorArrayConcatV3", "TensorArrayGatherV3", "TensorArrayReadV3")


def _src(name):
    return name.lstrip("^").split(":")[0]


def _root(nodes, name):
    while nodes[name].op in ("Enter", "RefEnter", "Identity"):
        name = _src(nodes[name].input[0])
    return name


def _ancestors(nodes, name, back_edges=None):
    """What `name` waits for; with `back_edges`, crossing at most that many NextIterations."""
    seen, stack = set(), [(name, 0)]
    while stack:
        node, crossed = stack.pop()
        for i in nodes[node].input:
            src = _src(i)
            c = crossed + (back_edges is not None and nodes[src].op in _BACK)
            if (back_edges is None or c <= back_edges) and (src, c) not in seen:
                seen.add((src, c))
                stack.append((src, c))
    return {n for n, _ in seen}


def _gradient_reads(nodes, value):
    """Gradient ops reading `value`'s buffer: through forwarding and control-flow ops, stack
    pushes and pops, TensorArray writes and reads (TF's keep the buffer, not a copy)."""
    aliases, reads, changed = {value}, set(), True
    while changed:
        changed = False
        for n in nodes.values():
            data = [_src(i) for i in n.input if not i.startswith("^")]
            if n.name in aliases or not any(d in aliases for d in data):
                continue
            if n.op in _FORWARD:
                aliases.add(n.name)
                changed = True
            elif n.op == "StackPushV2":
                stack = _root(nodes, data[0])
                pops = {p.name for p in nodes.values() if p.op == "StackPopV2" and
                        _root(nodes, _src(p.input[0])) == stack}
                changed |= not pops <= aliases
                aliases |= pops
            elif n.op == "TensorArrayWriteV3":
                ta = _root(nodes, data[0])
                reads |= {r.name for r in nodes.values() if r.op in _TA_READS and
                          _root(nodes, _src(r.input[0])) == ta}
            elif n.name.startswith("gradients/"):
                reads.add(n.name)
    return reads


def _late_reads(graph_def, train="train"):
    """variable -> (its gradient's reads that run, those its update may not wait for)."""
    nodes = {n.name: n for n in graph_def.node}
    runs = _ancestors(nodes, train)
    out = {}
    for n in nodes.values():
        if n.name in runs and n.op.startswith("Apply"):
            var = _src(n.input[0])
            reads = _gradient_reads(nodes, var + "/read") & runs
            out[var] = (reads, reads - _ancestors(nodes, n.name, back_edges=1))
    return out


def _program(kind, optimizer, gate=GATE_OP):
    """An RNN on a trainable input layer, trained; returns the train op."""
    rs = np.random.RandomState(0)
    x = tf.constant(rs.randn(T * B, D).astype(np.float32))
    win = tf.Variable(rs.randn(D, D).astype(np.float32) * 0.3, name="Win")
    x = tf.reshape(tf.matmul(x, win), [T, B, D])
    if kind == "while":
        w = tf.Variable(rs.randn(D, H).astype(np.float32) * 0.3, name="W")
        u = tf.Variable(rs.randn(H, H).astype(np.float32) * 0.3, name="U")
        h0 = tf.Variable(rs.randn(B, H).astype(np.float32) * 0.3, name="h0")
        _, out = tf.while_loop(
            lambda t, h: t < T,
            lambda t, h: (t + 1, tf.tanh(tf.matmul(x[t], w) + tf.matmul(h, u))),
            [tf.constant(0), h0])
    else:
        cell = tf.nn.rnn_cell.BasicRNNCell(H) if kind == "basic" else tf.nn.rnn_cell.LSTMCell(H)
        outs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, time_major=True)
        out = outs[-1]
    loss = tf.reduce_mean(tf.square(out - rs.randn(B, H).astype(np.float32)))
    opt = tf.train.GradientDescentOptimizer(0.5) if optimizer == "sgd" else \
        tf.train.AdamOptimizer(0.05)
    return opt.minimize(loss, gate_gradients=gate, name="train")


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("kind", ["while", "basic", "lstm"])
def test_each_update_waits_for_the_last_iterations_reads_of_its_variable(kind, optimizer):
    with tf.Graph().as_default():
        _program(kind, optimizer)
        late = _late_reads(tf.train.export_meta_graph().graph_def)
    looped = ["W", "U", "h0"] if kind == "while" else \
        [f"rnn/{'basic_rnn_cell' if kind == 'basic' else 'lstm_cell'}/kernel"]
    for var in looped:
        reads, unordered = late[var]
        assert reads and not unordered, (var, unordered)
    assert not late["Win"][1]


def test_without_gates_the_reads_are_not_ordered():
    """The check can fail: GATE_NONE gates nothing (TF's graph neither)."""
    with tf.Graph().as_default():
        _program("while", "sgd", gate=GATE_NONE)
        late = _late_reads(tf.train.export_meta_graph().graph_def)
    assert late["W"][1] == {"gradients/while/MatMul_grad/MatMul"}
    assert late["U"][1] == {"gradients/while/MatMul_1_grad/MatMul"}
    assert late["h0"][1] and all(n.startswith("gradients/TensorArrayConcat")
                                 for n in late["h0"][1])


def test_the_gradient_loop_gates_each_op_as_tf():
    """TF 2.21 gates these ops of the while program's gradient body under the same names (and
    its Merge's, which this gradient loop has no counterpart of)."""
    with tf.Graph().as_default() as g:
        _program("while", "adam")
        gates = {op.name for op in g.get_operations()
                 if op.name.startswith("gradients/while/") and op.type == "NoOp"}
        assert gates == {f"gradients/while/{name}_grad/tuple/group_deps"
                         for name in ("add_2", "MatMul", "MatMul_1")}
        # The weight gradients h^T @ dz, x^T @ dz are summed after the loop (one GEMM): their
        # gates do not wait for a per-iteration product nobody reads.
        for name in ("MatMul", "MatMul_1"):
            gate = g.get_operation_by_name(f"gradients/while/{name}_grad/tuple/group_deps")
            assert [op.name for op in gate.control_inputs] == [
                f"gradients/while/{name}_grad/MatMul"]


def _train(gate, steps=3):
    with tf.Graph().as_default():
        train = _program("while", "adam", gate)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            sess.run(train, options=tf.RunOptions(output_partition_graphs=True),
                     run_metadata=md)
            kernels = collections.Counter(n.op for pg in md.partition_graphs for n in pg.node
                                          if n.op not in ("NoOp", "Identity"))
            for _ in range(steps):
                sess.run(train)
            return kernels, sess.run(tf.trainable_variables())


def test_gated_loop_gradient_trains_as_the_ungated_one():
    """The gates change no value, and no kernel the runtime runs besides NoOps and
    Identities."""
    kernels, values = _train(GATE_OP)
    base_kernels, base_values = _train(GATE_NONE)
    assert kernels == base_kernels
    for a, b in zip(values, base_values):
        np.testing.assert_array_equal(a, b)
