"""The pass framework: registry, configuration, rewrite log, partition graphs, error isolation."""
import inspect
import logging

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import passes
from tensorweave.runtime.passes import options as opt

EXPECTED_ORDER = ["fed_shapes", "model_pruning", "canonical_inputs",
                  "common_subgraph_elimination", "iterator_shapes", "constant_folding",
                  "constant_push_down", "arithmetic_optimization", "dependency_optimization",
                  "layout_optimizer", "remapping", "pool_grad_fusion", "update_fusion",
                  "sum_update_fusion", "bias_grad_fusion", "elementwise_fusion",
                  "memory_optimization"]


def test_registry_orders_passes_by_phase_and_order():
    infos = passes.registered_passes()
    assert [p.name for p in infos] == EXPECTED_ORDER
    assert {p.phase for p in infos} <= set(passes.PHASES)
    assert [p.name for p in passes.registered_passes(passes.POST_PARTITION)] == \
        ["memory_optimization"]
    for info in infos:   # one public function (graph, options) -> graph, documented
        params = list(inspect.signature(info.fn).parameters)
        assert params[:2] == ["graph", "options"] and info.fn.__doc__
        assert info.toggle in opt.SWITCHES + (opt.ANY,)


def test_a_pass_runs_alone_by_name(pt):
    x = tf.placeholder(tf.int32, [2])
    y = x * 1
    graph = passes.run_pass("arithmetic_optimization", pt.rgraph(y, [x]))
    assert "Mul" not in pt.ops(graph)
    with pytest.raises(KeyError, match="no_such_pass"):
        passes.run_pass("no_such_pass", graph)


def _switches(**kwargs):
    return opt.PassOptions.from_config(opt_config(**kwargs)).switches


def opt_config(level_off=False, fold=False, cse=False, **rewrite):
    from tensorweave.protos import config_pb2, rewriter_config_pb2
    oo = config_pb2.OptimizerOptions(
        opt_level=config_pb2.OptimizerOptions.L0 if level_off else config_pb2.OptimizerOptions.L1,
        do_constant_folding=fold, do_common_subexpression_elimination=cse)
    return config_pb2.ConfigProto(graph_options=config_pb2.GraphOptions(
        optimizer_options=oo, rewrite_options=rewriter_config_pb2.RewriterConfig(**rewrite)))


def test_configuration_follows_tensorflow_semantics():
    """RewriterConfig switches Grappler (nearly every pass), OptimizerOptions the older
    optimizer (folding and CSE only): L0 alone changes nothing, as in TF 2.21."""
    from tensorweave.protos.rewriter_config_pb2 import RewriterConfig as RC
    everything, old_optimizer = set(opt.SWITCHES), {opt.CONSTANT_FOLDING, opt.CSE}
    assert opt.PassOptions.from_config(None).switches == everything
    assert _switches() == everything
    assert _switches(level_off=True) == everything
    assert _switches(disable_meta_optimizer=True) == old_optimizer
    assert _switches(level_off=True, disable_meta_optimizer=True) == set()
    assert _switches(level_off=True, fold=True, cse=True, disable_meta_optimizer=True) == \
        old_optimizer
    folding_off = _switches(constant_folding=RC.OFF)
    assert opt.CONSTANT_FOLDING in folding_off and opt.CONSTANT_PUSH_DOWN not in folding_off
    assert not {opt.CONSTANT_FOLDING, opt.CONSTANT_PUSH_DOWN} & \
        _switches(level_off=True, constant_folding=RC.OFF)
    assert opt.ARITHMETIC not in _switches(arithmetic_optimization=RC.OFF)
    assert opt.MODEL_PRUNING not in _switches(disable_model_pruning=True)
    assert opt.MEMORY not in _switches(memory_optimization=RC.NO_MEM_OPT)
    small = opt.PassOptions.from_config(opt_config(), graph_nodes=3).switches
    assert small == old_optimizer and \
        opt.PassOptions.from_config(None, graph_nodes=3).switches == old_optimizer
    assert opt.PassOptions.from_config(opt_config(min_graph_nodes=-1),
                                       graph_nodes=3).switches == everything
    options = opt.PassOptions.from_config(opt_config(meta_optimizer_iterations=RC.ONE,
                                                     fail_on_optimizer_errors=True))
    assert options.meta_iterations == 1 and options.fail_on_errors
    cfg = opt_config()
    cfg.graph_options.optimizer_options.max_folded_constant_in_bytes = 123
    assert opt.PassOptions.from_config(cfg).max_folded_bytes == 123


def test_environment_overrides_for_benchmarks(monkeypatch):
    monkeypatch.setenv("TW_OPT_LEVEL", "0")
    assert opt.PassOptions.from_config(None).switches == set()
    monkeypatch.setenv("TW_OPT_LEVEL", "1")
    monkeypatch.setenv("TW_PASSES_OFF", "remapping, constant_folding")
    switches = opt.PassOptions.from_config(None).switches
    assert opt.REMAPPING not in switches and opt.CONSTANT_FOLDING not in switches
    assert opt.ARITHMETIC in switches


def test_level_zero_leaves_the_graph_as_built(pt):
    x = tf.placeholder(tf.int32, [2])
    y = (x * 1 + tf.constant(2) * 3, )
    with tf.Session(config=pt.OFF) as sess:
        _, (gd,) = pt.partition_graphs(sess, y, {x: [1, 2]})
    assert sorted(n.op for n in gd.node).count("Mul") == 2
    with tf.Session() as sess:
        out, (gd,) = pt.partition_graphs(sess, y, {x: [1, 2]})
    assert [n.op for n in gd.node].count("Mul") == 0 and out[0].tolist() == [7, 8]


def test_partition_graphs_show_the_optimized_graph(pt):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.nn.relu(tf.matmul(x, tf.ones([3, 2])) + tf.ones([2]), name="y")
    with tf.Session() as sess:
        out, graphs = pt.partition_graphs(sess, y, {x: np.ones((1, 3), np.float32)})
        plain = sess.run(y, {x: np.ones((1, 3), np.float32)})
    assert len(graphs) == 1
    nodes = {n.name: n for n in graphs[0].node}
    assert nodes["y"].op == "_FusedMatMul"
    assert list(nodes["y"].attr["fused_ops"].list.s) == [b"BiasAdd", b"Relu"]
    assert nodes["y"].device.endswith("CPU:0")
    assert any(n.op == "_Arg" for n in graphs[0].node) and any(n.op == "_Retval" for n in
                                                              graphs[0].node)
    np.testing.assert_array_equal(out, plain)
    md = tf.RunMetadata()
    with tf.Session() as sess:       # without output_partition_graphs nothing is added
        sess.run(y, {x: np.ones((1, 3), np.float32)}, options=tf.RunOptions(),
                 run_metadata=md)
    assert len(md.partition_graphs) == 0


def test_passes_run_once_per_signature(pt, monkeypatch):
    calls = []
    real = passes.run_passes

    def counting(graph, config, phase=passes.POST_PLACEMENT, options=None):
        calls.append(phase)
        return real(graph, config, phase, options)
    monkeypatch.setattr(passes, "run_passes", counting)
    x = tf.placeholder(tf.float32, [3])
    y = tf.exp(x) * 2.0 + 1.0
    with tf.Session() as sess:
        for _ in range(5):
            sess.run(y, {x: np.ones(3, np.float32)})
        assert calls == list(passes.PHASES)
        sess.run([y, x], {x: np.ones(3, np.float32)})  # a new signature: once more
    assert len(calls) == 2 * len(passes.PHASES)


def test_rewrite_log_environment_variable(pt, monkeypatch, caplog):
    monkeypatch.setenv("TW_LOG_REWRITES", "1")
    x = tf.placeholder(tf.int32, [2])
    y = x * 1
    with caplog.at_level(logging.INFO, logger="tensorweave.passes"):
        pt.run(y, {x: [1, 2]}, pt.config(min_graph_nodes=-1))   # Grappler skips 3 nodes
    assert any("[arithmetic_optimization] mul_by_one" in r.getMessage() for r in caplog.records)


def test_a_failing_pass_is_skipped_unless_told_otherwise(pt, monkeypatch, caplog):
    def broken(graph, options):
        """Breaks the graph, then raises."""
        for node in graph:
            node.inputs = []
        raise RuntimeError("optimizer bug")
    info = passes.PassInfo("broken", broken, passes.POST_PLACEMENT, 15, opt.ARITHMETIC)
    monkeypatch.setattr(passes, "_PASSES", passes.registered_passes() + [info])
    monkeypatch.setattr(passes, "registered_passes", lambda phase=None: sorted(
        [p for p in passes._PASSES if phase is None or p.phase == phase],
        key=lambda p: (passes.PHASES.index(p.phase), p.order)))
    x = tf.placeholder(tf.float32, [2])
    y = x + 1.0
    tf.identity(y)                       # a fourth node: Grappler looks at the graph
    with caplog.at_level(logging.WARNING, logger="tensorweave.passes"):
        assert pt.run(y, {x: [1.0, 2.0]}).tolist() == [2.0, 3.0]
    assert any("broken failed" in r.getMessage() for r in caplog.records)
    with pytest.raises(RuntimeError, match="optimizer bug"):
        pt.run(y, {x: [1.0, 2.0]}, cfg=pt.config(fail_on_optimizer_errors=True))


def test_min_graph_nodes_leaves_small_graphs_alone(pt):
    x = tf.placeholder(tf.float32, [2])
    y = x * 1.0
    with tf.Session(config=pt.config(min_graph_nodes=100)) as sess:
        _, (gd,) = pt.partition_graphs(sess, y, {x: [1.0, 2.0]})
    assert "Mul" in [n.op for n in gd.node]
