"""Several devices in one session: partition structure, rendezvous, abort, placement, tracing."""
import json

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import cli
from tensorweave.client import timeline
from tensorweave.kernels.registry import kernel
from tensorweave.runtime import partition, placement, prune
from tensorweave.runtime.devices import Device, DeviceMgr, register_device_factory
from tensorweave.runtime.rendezvous import LocalRendezvous, create_key, parse_key
from tensorweave.testing.bounded import run_bounded

CPU = "/job:localhost/replica:0/task:0/device:CPU:"

# A restricted device type: it runs only AddV2 and Identity, so everything else soft-places.
register_device_factory("TESTDEV", lambda name, index: Device(name, "TESTDEV", np))
kernel("AddV2", device="TESTDEV")(lambda ctx, a, b: np.add(a, b))
kernel("Identity", device="TESTDEV")(lambda ctx, x: x)


def config(n=2, soft=False, parallel=False, **counts):
    """`parallel`: partitions on threads of their own (intra-op 1, inter-op n), else together
    on the calling thread (the default)."""
    threads = {"intra_op_parallelism_threads": 1, "inter_op_parallelism_threads": n} \
        if parallel else {}
    return tf.ConfigProto(device_count={"CPU": n, **counts}, allow_soft_placement=soft,
                          **threads)


def placed(fetches, feeds=(), n=2):
    graph = prune.prune(tuple(feeds), tuple(fetches), ())
    placement.place(graph, DeviceMgr.local({"CPU": n}).devices)
    return graph


# --- partition ------------------------------------------------------------------------------
def test_one_recv_per_tensor_and_device_and_tf_attrs():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [2], name="x")
            a = tf.square(x, name="a")
        with tf.device("/cpu:1"):
            y = tf.add(a, 1.0, name="y")
            z = tf.multiply(a, a, name="z")
        graph = placed([y, z], [x])
    parts = partition.partition(graph, lambda dev: 7)
    assert sorted(parts) == [CPU + "0", CPU + "1"]
    ops0 = [n for n in parts[CPU + "0"] if n.op == "_Send"]
    ops1 = [n for n in parts[CPU + "1"] if n.op == "_Recv"]
    sends = {n.attrs["tensor_name"] for n in ops0}
    assert len(ops1) == 1 and len(ops0) == 1
    recv = ops1[0]
    assert recv.attrs["tensor_name"] in sends and recv.attrs["tensor_name"].startswith("edge_")
    assert recv.attrs["send_device"] == CPU + "0" and recv.attrs["recv_device"] == CPU + "1"
    assert recv.attrs["send_device_incarnation"] == 7
    assert recv.attrs["tensor_type"] == tf.float32 and ops0[0].attrs["T"] == tf.float32
    assert recv.attrs["client_terminated"] is False
    consumers = [n for n in parts[CPU + "1"] if (recv.name, 0) in n.inputs]
    assert {n.name for n in consumers} == {"y", "z"}
    assert parts[CPU + "0"].nodes["a"] is graph.nodes["a"]   # untouched nodes are shared
    assert graph.nodes["y"].inputs[0] == ("a", 0)            # the input graph is unchanged


def test_control_edge_is_carried_by_a_dummy_tensor():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(1.0, name="a")
        with tf.device("/cpu:1"):
            with tf.control_dependencies([a.op]):
                b = tf.constant(2.0, name="b")
        graph = placed([b])
    parts = partition.partition(graph)
    part0, part1 = parts[CPU + "0"], parts[CPU + "1"]
    dummy = next(n for n in part0 if n.op == "Const" and n.control_inputs == ["a"])
    send = next(n for n in part0 if n.op == "_Send")
    assert send.inputs == [(dummy.name, 0)]
    recv = next(n for n in part1 if n.op == "_Recv")
    assert part1.nodes["b"].control_inputs == [recv.name]
    with tf.Session(graph=a.graph, config=config()) as sess:
        assert sess.run(b) == 2.0


def test_control_edges_from_one_device_share_one_transfer():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant(1.0, name="a")
            c = tf.constant(3.0, name="c")
        with tf.device("/cpu:1"):
            local = tf.constant(0.0, name="local")
            with tf.control_dependencies([a.op, local.op, c.op]):
                b = tf.constant(2.0, name="b")
        graph = placed([b])
    parts = partition.partition(graph)
    part0, part1 = parts[CPU + "0"], parts[CPU + "1"]
    assert [n.op for n in part0].count("_Send") == 1
    dummy = next(n for n in part0 if n.op == "Const" and n.control_inputs)
    assert dummy.control_inputs == ["a", "c"]
    recv = next(n for n in part1 if n.op == "_Recv")
    assert part1.nodes["b"].control_inputs == ["local", recv.name]
    with tf.Session(graph=a.graph, config=config()) as sess:
        assert sess.run(b) == 2.0


def _loop_with_body_on_cpu1():
    with tf.Graph().as_default():
        def body(i, a):
            with tf.device("/cpu:1"):
                return i + 1, a * 2.0
        _, out = tf.while_loop(lambda i, a: i < 3, body, [0, 1.0])
        return placed([out])


def test_an_edge_inside_a_loop_frame_crosses_once_per_iteration():
    graph = _loop_with_body_on_cpu1()
    parts = partition.partition(graph)
    for device, part in parts.items():
        merge = next(n for n in part if n.op == "Merge" and "_control_loop" in n.name)
        assert merge.name.startswith("while/while_context/_control_loop/")
        recvs = [n for n in part if n.op == "_Recv" and n.attrs.get("_frame")]
        assert recvs, device
        assert all(merge.name in n.control_inputs for n in recvs)   # every iteration
        assert all(n.attrs["_frame"] == "while/while_context" for n in recvs)
    # the predicate reaches the device without the LoopCond each iteration
    recv_device = next(d for d, part in parts.items()
                       if not any(n.op == "LoopCond" for n in part))
    switch = next(n for n in parts[recv_device]
                  if n.op == "Switch" and "_control_loop" in n.name)
    pred = parts[recv_device].nodes[switch.inputs[1][0]]
    assert pred.op == "_Recv" and pred.attrs["_src"].endswith("LoopCond")


def test_a_frame_without_a_loop_cond_cannot_span_devices():
    graph = _loop_with_body_on_cpu1()
    for node in graph:
        if node.op == "LoopCond":
            node.op = "Identity"
    with pytest.raises(tf.errors.UnimplementedError, match="no LoopCond"):
        partition.partition(graph)


def test_partition_graphs_in_run_metadata():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            x = tf.placeholder(tf.float32, [2], name="x")
            a = tf.square(x, name="a")
        with tf.device("/cpu:0"):
            b = tf.reduce_sum(a, name="b")
    with tf.Session(graph=g, config=config()) as sess:
        meta = tf.RunMetadata()
        assert sess.run(b, {x: [1.0, 2.0]}, options=tf.RunOptions(output_partition_graphs=True),
                        run_metadata=meta) == 5.0
    ops = sorted(sorted(n.op for n in pg.node) for pg in meta.partition_graphs)
    assert len(ops) == 2 and any("_Send" in o for o in ops) and any("_Recv" in o for o in ops)


# --- rendezvous -----------------------------------------------------------------------------
def test_rendezvous_key_format():
    key = create_key(CPU + "0", 1, CPU + "1", "edge_5_x")
    assert key == f"{CPU}0;0000000000000001;{CPU}1;edge_5_x;0:0"
    assert parse_key(key) == (CPU + "0", 1, CPU + "1", "edge_5_x", 0, 0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        parse_key("nonsense")


def test_rendezvous_send_recv_in_either_order_and_abort():
    r = LocalRendezvous()
    r.send("k1", 1.0)
    assert r.recv("k1", timeout=1) == (1.0, False)
    got = []
    r.recv_async("k2", lambda v, dead: got.append((v, dead)))
    assert got == []
    r.send("k2", 2.0, True)
    assert got == [(2.0, True)]
    r.recv_async("k3", lambda v, dead: got.append((v, dead)))
    error = tf.errors.CancelledError(None, None, "step failed")
    r.start_abort(error)
    assert got[-1] == (error, None)
    with pytest.raises(tf.errors.CancelledError):
        r.recv("k4", timeout=1)
    with pytest.raises(tf.errors.CancelledError):
        r.send("k5", 5.0)


def test_rendezvous_recv_times_out():
    with pytest.raises(tf.errors.DeadlineExceededError):
        LocalRendezvous().recv("never", timeout=0.05)


@pytest.mark.parametrize("parallel", [False, True])
def test_failure_on_one_device_aborts_the_waiting_one(parallel):
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            x = tf.placeholder(tf.float32, None, name="x")
            bad = tf.reshape(x, [5], name="bad")
        with tf.device("/cpu:0"):
            out = tf.reduce_sum(bad, name="out")
    with tf.Session(graph=g, config=config(parallel=parallel)) as sess:
        assert (sess._core.plan((x,), (out,), ()).cooperative is None) is parallel
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad"):
            run_bounded(lambda: sess.run(out, {x: np.ones(3)}))
        assert run_bounded(lambda: sess.run(out, {x: np.ones(5)})) == 5.0


@pytest.mark.parametrize("mode", ["line", "traced", "parallel"])
def test_fetched_remote_variable_value_is_a_copy(mode):
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            v = tf.Variable(np.zeros(3, np.float32), name="v")
            bump = tf.assign_add(v, np.ones(3, np.float32))
        with tf.device("/cpu:1"):
            seen = tf.identity(v, name="seen")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE if mode == "traced" else 0)
    with tf.Session(graph=g, config=config(parallel=mode == "parallel")) as sess:
        sess.run(v.initializer)
        plan = sess._core.plan((), (seen,), ())
        assert (plan.cooperative is not None and plan.cooperative.line is not None) is \
            (mode != "parallel")
        before = sess.run(seen, options=options, run_metadata=tf.RunMetadata())
        sess.run(bump)
        assert before.tolist() == [0.0, 0.0, 0.0]
        assert sess.run(seen).tolist() == [1.0, 1.0, 1.0]


# --- devices and placement ------------------------------------------------------------------
def test_devices_have_their_own_resources_and_attributes():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            v = tf.Variable(3.0, name="v")
    with tf.Session(graph=g, config=config(3)) as sess:
        sess.run(v.initializer)
        devices = sess.list_devices()
        assert [d.name for d in devices] == [CPU + str(k) for k in range(3)]
        assert all(d.device_type == "CPU" and d.memory_limit_bytes == 268435456 and
                   d.incarnation != 0 for d in devices)
        assert len({d.incarnation for d in devices}) == 3
        mgr = sess._core.device_mgr
        assert mgr.lookup(CPU + "1").resource_mgr.lookup("", "v").value == 3.0
        with pytest.raises(tf.errors.NotFoundError):
            mgr.lookup(CPU + "0").resource_mgr.lookup("", "v")


def test_colocated_group_follows_the_variable():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            v = tf.Variable([1.0, 2.0], name="v")
        with tf.colocate_with(v):
            doubled = tf.multiply(v, 2.0, name="doubled")
        update = tf.assign_add(v, [1.0, 1.0], name="update")
    with tf.Session(graph=g, config=config()) as sess:
        sess.run(v.initializer)
        sess.run(update)
        assert sess.run(doubled).tolist() == [4.0, 6.0]
        for name in ("doubled", "update", "v"):
            assert placement.explain(sess, name).split(" -> ")[1].startswith(CPU + "1:")
        assert "colocation group" in placement.explain(sess, "update")


def test_conflicting_devices_in_a_group_name_the_ops():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            v = tf.constant(1.0, name="v")
        with tf.colocate_with(v):
            upd = tf.identity(v, name="upd")
        upd.op._set_device("/cpu:0")
    with tf.Session(graph=g, config=config()) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="upd.*conflicting|conflicting"):
            sess.run(upd)


def test_soft_placement_with_the_restricted_device():
    with tf.Graph().as_default() as g:
        a = tf.placeholder(tf.float32, [2], name="a")
        with tf.device("/device:TESTDEV:0"):
            runs_there = tf.add(a, a, name="runs_there")
            cannot = tf.square(runs_there, name="cannot")
    with tf.Session(graph=g, config=config(1, soft=True, TESTDEV=1)) as sess:
        meta = tf.RunMetadata()
        out = sess.run(cannot, {a: [1.0, 2.0]}, run_metadata=meta,
                       options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        assert out.tolist() == [4.0, 16.0]
        where = {n.node_name: d.device for d in meta.step_stats.dev_stats for n in d.node_stats}
        assert where["runs_there"].endswith("TESTDEV:0") and where["cannot"] == CPU + "0"
        why = placement.explain(sess, "cannot")
        assert "no kernel for op 'Square'" in why and "allow_soft_placement" in why
    with tf.Session(graph=g, config=config(1, soft=False, TESTDEV=1)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="cannot.*Square"):
            sess.run(cannot, {a: [1.0, 2.0]})


def test_log_device_placement_prints_like_tensorflow(capsys):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.device("/cpu:1"):
            a = tf.square(x, name="a")
    log = tf.ConfigProto(device_count={"CPU": 2}, log_device_placement=True)
    with tf.Session(graph=g, config=log) as sess:
        sess.run(a, {x: [1.0, 2.0]})
    assert f"a: (Square): {CPU}1\n" in capsys.readouterr().out


def test_cost_model_keeps_unconstrained_nodes_with_their_inputs():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            big = tf.ones([100, 100], name="big")
        with tf.device("/cpu:0"):
            small = tf.ones([2, 2], name="small")
        free = tf.reduce_sum(big, name="free") + tf.reduce_sum(small)
    with tf.Session(graph=g, config=config()) as sess:
        assert sess.run(free) == 10004.0
        why = placement.explain(sess, "free")
        assert why.startswith(f"free (Sum) -> {CPU}1:") and "cost model" in why


def test_explain_placement_command(tmp_path, capsys):
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            tf.constant(1.0, name="c")
    tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    assert cli.main(["explain-placement", str(tmp_path / "g.pbtxt"), "c", "--cpus", "2"]) == 0
    assert capsys.readouterr().out.startswith(f"c (Const) -> {CPU}1: requested")
    assert cli.main(["explain-placement", str(tmp_path / "g.pbtxt"), "nope"]) == 1


# --- tracing --------------------------------------------------------------------------------
def test_trace_per_device_and_timeline_json():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [3, 3], name="x")
            a = tf.square(x, name="a")
        with tf.device("/cpu:1"):
            b = tf.matmul(a, a, name="b")
    with tf.Session(graph=g, config=config()) as sess:
        meta = tf.RunMetadata()
        sess.run(b, {x: np.eye(3)}, options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    devices = sorted(d.device for d in meta.step_stats.dev_stats)
    assert devices == [CPU + "0", CPU + "1"]
    b_stats = [n for d in meta.step_stats.dev_stats for n in d.node_stats if n.node_name == "b"]
    assert [d.size for d in b_stats[0].output[0].tensor_description.shape.dim] == [3, 3]
    trace = json.loads(timeline.Timeline(meta.step_stats).generate_chrome_trace_format(
        show_memory=True))
    events = trace["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and
             e["name"] == "process_name"}
    assert names == {CPU + "0 Compute", CPU + "1 Compute"}
    ops = [e for e in events if e["ph"] == "X"]
    assert {e["args"]["name"] for e in ops} >= {"a", "b"}
    assert all(e["dur"] >= 1 and isinstance(e["ts"], int) for e in ops)
    start, finish = ([e for e in events if e["ph"] == ph] for ph in "sf")
    assert len(start) == len(finish) == 1 and start[0]["id"] == finish[0]["id"]
    assert start[0]["name"] == "a"   # the arrow runs from a's producer to b, across devices
    assert start[0]["pid"] != finish[0]["pid"] and finish[0]["ts"] >= start[0]["ts"]
    assert any(e["ph"] == "C" for e in events)
    summary = timeline.OpSummary()
    summary.add(meta.step_stats)
    summary.add(meta.step_stats)
    rows = {op: (n, total, mean) for op, n, total, mean in summary.rows()}
    assert rows["MatMul"][0] == 2 and rows["Square"][0] == 2 and "_Recv" not in rows
    assert "MatMul" in summary.table()
