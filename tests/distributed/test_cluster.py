"""Graphs spanning the tasks of a cluster: servers on loopback, tensors between tasks over
gRPC (RecvTensor), variables on a ps task, between-graph replication, and failures that end
a step instead of hanging it."""
import inspect
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.loopback import errors_of_blocked_run, free_port


@pytest.fixture(scope="module")
def cluster():
    """A ps task and two worker tasks, each a server in this process."""
    spec = {"ps": [f"localhost:{free_port()}"],
            "worker": [f"localhost:{free_port()}", f"localhost:{free_port()}"]}
    servers = {(job, i): tf.train.Server(spec, job_name=job, task_index=i)
               for job in spec for i in range(len(spec[job]))}
    yield spec, servers
    for server in servers.values():
        server.stop()


def _linear_model(x_data, y_data, ps="/job:ps/task:0", worker="/job:worker/task:0"):
    with tf.device(ps):
        w = tf.Variable(np.zeros([3, 1], np.float32), name="w")
        b = tf.Variable(0.0, name="b")
    with tf.device(worker):
        loss = tf.reduce_mean(tf.square(tf.matmul(x_data, w) + b - y_data))
        train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
    return w, b, loss, train


def test_training_with_variables_on_the_ps_matches_a_local_session(cluster):
    _, servers = cluster
    rng = np.random.RandomState(0)
    x_data = rng.rand(32, 3).astype(np.float32)
    y_data = x_data @ np.array([[1.0], [-2.0], [3.0]], np.float32) + 0.5
    results = []
    for target in ("", servers["worker", 0].target):
        with tf.Graph().as_default():
            devices = {} if target else {"ps": None, "worker": None}
            w, b, loss, train = _linear_model(tf.constant(x_data), tf.constant(y_data),
                                              **devices)
            with tf.Session(target) as sess:
                sess.run(tf.global_variables_initializer())
                losses = [sess.run([loss, train])[0] for _ in range(60)]
                results.append((sess.run(w), sess.run(b), losses))
    (w_local, b_local, losses_local), (w_remote, b_remote, losses_remote) = results
    np.testing.assert_allclose(w_remote, w_local, rtol=1e-5)
    np.testing.assert_allclose(b_remote, b_local, rtol=1e-5)
    np.testing.assert_allclose(losses_remote, losses_local, rtol=1e-5)
    assert losses_remote[-1] < 0.05 * losses_remote[0]


def test_partition_graphs_pair_sends_and_receives_across_tasks(cluster):
    _, servers = cluster
    with tf.Graph().as_default():
        w, _, _, train = _linear_model(tf.ones([4, 3]), tf.ones([4, 1]))
        with tf.Session(servers["worker", 0].target) as sess:
            sess.run(tf.global_variables_initializer())
            metadata = tf.RunMetadata()
            sess.run(train, options=tf.RunOptions(output_partition_graphs=True),
                     run_metadata=metadata)
            ps_device = next(d for d in sess.list_devices() if d.name.startswith("/job:ps"))
    by_task = {g.node[0].device.split("/device")[0]: g for g in metadata.partition_graphs}
    assert set(by_task) == {"/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"}
    sends = [n for n in by_task["/job:ps/replica:0/task:0"].node if n.op == "_Send"]
    recvs = [n for n in by_task["/job:worker/replica:0/task:0"].node if n.op == "_Recv"]
    assert sends and recvs
    assert {s.attr["tensor_name"].s for s in sends} <= {r.attr["tensor_name"].s for r in recvs}
    assert all(s.attr["send_device_incarnation"].i == ps_device.incarnation
               for s in sends if not s.attr["client_terminated"].b)


def test_between_graph_replication_updates_one_variable(cluster):
    spec, servers = cluster
    counts = []

    def worker(index):
        with tf.Graph().as_default():
            setter = tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{index}", cluster=spec)
            with tf.device(setter):
                counter = tf.get_variable("counter", [], tf.int32,
                                          initializer=tf.zeros_initializer())
                add = tf.assign_add(counter, 1, use_locking=True)
            config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
            with tf.Session(servers["worker", index].target, config=config) as sess:
                if index == 0:
                    sess.run(counter.initializer)
                    ready.set()
                ready.wait(10)
                for _ in range(40):
                    sess.run(add)
                done.wait(20) if index == 0 else done.set()
                counts.append(sess.run(counter))

    ready, done = threading.Event(), threading.Event()
    threads = [threading.Thread(target=worker, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(t.is_alive() for t in threads)
    assert 80 in counts
    tf.Session.reset(servers["worker", 0].target)


def test_an_error_on_another_task_names_the_users_op(cluster):
    _, servers = cluster
    with tf.Graph().as_default():
        index = tf.placeholder(tf.int32, [])
        with tf.device("/job:ps/task:0"):
            line = inspect.currentframe().f_lineno + 1
            picked = tf.gather(tf.constant([1.0, 2.0]), index, name="pick_on_ps")
        with tf.device("/job:worker/task:0"):
            doubled = picked * 2
        with tf.Session(servers["worker", 0].target) as sess:
            assert sess.run(doubled, {index: 1}) == 4.0
            started = time.monotonic()
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(doubled, {index: 7}, options=tf.RunOptions(timeout_in_ms=30000))
            # The error ends the step at once, even when this task's part starts after the
            # step's cleanup (tests/distributed/test_late_steps.py); bounded all the same.
            assert time.monotonic() - started < 15, "the step waited out its deadline"
            assert sess.run(doubled, {index: 0}) == 2.0   # the session still works
    assert info.value.op is picked.op
    assert "[[node pick_on_ps (op GatherV2) on device /job:ps/replica:0/task:0" in str(info.value)
    assert f"{__file__}:{line}" in str(info.value)


def test_a_step_blocked_on_another_task_times_out(cluster):
    _, servers = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(2, tf.float32, shared_name="timeout_queue")
            take = queue.dequeue()
            put = queue.enqueue(5.0)
        with tf.device("/job:worker/task:0"):
            result = take + 1
        with tf.Session(servers["worker", 0].target) as sess:
            started = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(result, options=tf.RunOptions(timeout_in_ms=400))
            assert time.monotonic() - started < 5
            sess.run(put)
            assert sess.run(result) == 6.0


def test_a_killed_ps_ends_the_step_instead_of_hanging():
    ps_port, worker_port = free_port(), free_port()
    spec = {"ps": [f"localhost:{ps_port}"], "worker": [f"localhost:{worker_port}"]}
    code = ("import sys, tensorweave as tf\n"
            f"server = tf.train.Server({spec!r}, job_name='ps', task_index=0)\n"
            "print('ready', flush=True)\n"
            "server.join()\n")
    ps = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    try:
        assert ps.stdout.readline().strip() == "ready"
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0)
                queue = tf.FIFOQueue(1, tf.float32)
                take = queue.dequeue()
            with tf.device("/job:worker/task:0"):
                total = v * 3 + take
            with tf.Session(server.target) as sess:
                sess.run(v.initializer)
                assert sess.run(v * 3) == 3.0
                failures = errors_of_blocked_run(lambda: sess.run(total), ps.kill)
                assert failures and isinstance(failures[0], (tf.errors.UnavailableError,
                                                             tf.errors.AbortedError))
    finally:
        ps.kill()
        ps.wait(10)
        ps.stdout.close()
        server.stop()


def test_closing_the_session_cancels_a_step_blocked_on_another_task(cluster):
    _, servers = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            take = tf.FIFOQueue(1, tf.float32).dequeue()
        with tf.device("/job:worker/task:0"):
            result = take * 2
        sess = tf.Session(servers["worker", 0].target)
        failures = errors_of_blocked_run(lambda: sess.run(result), sess.close)
    assert [type(e) for e in failures] == [tf.errors.CancelledError]


def test_partial_runs_spanning_tasks_are_refused_clearly(cluster):
    _, servers = cluster
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        with tf.device("/job:ps/task:0"):
            y = x + 1
        with tf.Session(servers["worker", 0].target) as sess:
            with pytest.raises(tf.errors.UnimplementedError, match="Partial runs of a graph"):
                sess.partial_run_setup([y], [x])



def test_concurrent_steps_of_one_session_across_tasks(cluster):
    _, servers = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            total = tf.Variable(0.0, name="concurrent_total")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [])
            doubled = x * 2
        with tf.device("/job:ps/task:0"):
            add = tf.assign_add(total, doubled, use_locking=True)
        with tf.Session(servers["worker", 0].target) as sess:
            sess.run(total.initializer)
            results = []

            def steps(offset):
                results.extend(sess.run([add, doubled], {x: float(offset + i)})[1]
                               for i in range(20))
            threads = [threading.Thread(target=steps, args=(k * 100,)) for k in range(3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert not any(t.is_alive() for t in threads)
            expected = [2.0 * (k * 100 + i) for k in range(3) for i in range(20)]
            assert sorted(results) == sorted(expected)
            assert sess.run(total) == sum(expected)


def test_a_traced_step_returns_every_tasks_node_stats(cluster):
    _, servers = cluster
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="traced_v")
        with tf.device("/job:worker/task:0"):
            doubled = tf.multiply(v, 2.0, name="traced_doubled")
        with tf.Session(servers["worker", 0].target) as sess:
            sess.run(v.initializer)
            metadata = tf.RunMetadata()
            assert sess.run(doubled, options=tf.RunOptions(
                trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata) == 6.0
    nodes = {d.device.split("/device")[0]: {n.node_name for n in d.node_stats}
             for d in metadata.step_stats.dev_stats}
    assert "traced_doubled" in nodes["/job:worker/replica:0/task:0"]
    assert "traced_v" in nodes["/job:ps/replica:0/task:0"]


def test_loops_spanning_tasks_train_as_a_local_session(cluster):
    """A dynamic_rnn reading resource variables inside its loop and an embedding lookup inside
    a while loop, their variables on the ps: values cross tasks every iteration (the ps's
    `_Send`s inside the frames push them to the worker) and training matches one device."""
    spec, servers = cluster

    def losses(target, setter):
        with tf.Graph().as_default():
            tf.set_random_seed(1)
            tf.get_variable_scope().set_use_resource(True)
            with tf.device(setter):
                x = tf.placeholder(tf.float32, [4, 6, 3])
                ids = tf.placeholder(tf.int32, [4, 6])
                table = tf.get_variable("table", [10, 3])
                out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(8), x, dtype=tf.float32)

                def body(i, acc):
                    rows = tf.nn.embedding_lookup(table, ids[:, i])
                    return i + 1, acc + tf.reduce_sum(tf.square(rows))
                _, extra = tf.while_loop(lambda i, a: i < 6, body, [0, 0.0])
                loss = tf.reduce_sum(tf.square(out)) + extra
                train = tf.train.AdamOptimizer(0.05).minimize(loss)
            rng = np.random.RandomState(0)
            feeds = {x: rng.rand(4, 6, 3), ids: rng.randint(0, 10, (4, 6))}
            with tf.Session(target) as sess:
                sess.run(tf.global_variables_initializer())
                values = [sess.run([loss, train], feeds)[0] for _ in range(8)]
                meta = tf.RunMetadata()
                sess.run(train, feeds, options=tf.RunOptions(output_partition_graphs=True),
                         run_metadata=meta)
        pushed = {n.device.split("/device")[0] for g in meta.partition_graphs
                  for n in g.node if n.op == "_Send" and n.attr["_frame"].s}
        return values, pushed
    remote, pushed_from = losses(servers["worker", 0].target,
                                 tf.train.replica_device_setter(
                                     cluster=tf.train.ClusterSpec(spec)))
    local, _ = losses("", "/cpu:0")
    assert "/job:ps/replica:0/task:0" in pushed_from
    np.testing.assert_allclose(remote, local, rtol=1e-5)
    assert remote[-1] < remote[0]
