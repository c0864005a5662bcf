"""tf.train.SyncReplicasOptimizer: two workers and a ps, each an in-process server on loopback,
train in lockstep (the numbers are those of TensorFlow's sync_replicas_optimizer_test); the
staleness rule, the tokens and the hook checked in one local session."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.loopback import free_port

PS = "/job:ps/task:0"
TIMEOUT = 10


@pytest.fixture
def cluster():
    """(cluster spec, ps server, [worker 0 server, worker 1 server])."""
    spec = {"ps": [f"localhost:{free_port()}"],
            "worker": [f"localhost:{free_port()}", f"localhost:{free_port()}"]}
    servers = [tf.train.Server(spec, job_name=job, task_index=i)
               for job in ("ps", "worker") for i in range(len(spec[job]))]
    yield spec, servers[0], servers[1:]
    for server in servers:
        server.stop()


def _run_concurrently(*runs):
    """Calls every `run` on its own thread; fails if one is still blocked after TIMEOUT
    seconds, re-raises the first error."""
    failures = []

    def call(run):
        try:
            run()
        except Exception as e:  # noqa: BLE001 - re-raised on the test's thread
            failures.append(e)
    threads = [threading.Thread(target=call, args=(run,), daemon=True) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a run is still blocked"
    if failures:
        raise failures[0]


def _wait_for(predicate):
    deadline = time.time() + TIMEOUT
    while not predicate():
        assert time.time() < deadline, "timed out"
        time.sleep(0.01)


def _monitored_session(graph, opt, index, server, num_tokens=-1):
    """Worker `index`'s MonitoredTrainingSession with the optimizer's hook; worker 0 is the
    chief. The worker sees the ps and itself only, as in between-graph replication."""
    with graph.as_default():
        hook = opt.make_session_run_hook(index == 0, num_tokens=num_tokens)
        config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
        return tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=index == 0, hooks=[hook], config=config,
            stop_grace_period_secs=TIMEOUT)


def _shut_down(sessions, ps_server):
    """Closes both workers' sessions.

    The chief's queue runner always waits in take_grad for the next aggregated step; as in
    TensorFlow, only an error ends that wait. So once closing the chief has asked its
    coordinator to stop, the ps is stopped: the runner's step fails and, the stop being
    already requested, the failure is not reported.
    """
    chief, worker = sessions

    def stop_the_ps_once_stopping():
        _wait_for(chief.should_stop)
        ps_server.stop()
    _run_concurrently(chief.close, stop_the_ps_once_stopping)
    worker.close()


class _Worker:
    """TensorFlow's test model on worker `index`: v0 and v1 on the ps, a sparse variable,
    constant gradients 0.1 + 0.2 * index, 0.9 + 0.2 * index and a sparse row 1 of
    0.1 + 0.2 * index, averaged over both workers and applied by GradientDescent(2.0)."""

    def __init__(self, index):
        self.graph = tf.Graph()
        with self.graph.as_default():
            with tf.device(PS):
                self.global_step = tf.Variable(0, name="global_step", trainable=False)
                self.var_0 = tf.Variable(0.0, name="v0")
                self.var_1 = tf.Variable(1.0, name="v1")
                self.var_sparse = tf.Variable([[3.0], [4.0]], name="v_sparse")
            with tf.device(f"/job:worker/task:{index}"):
                grad_0 = tf.constant(0.1 + index * 0.2)
                grad_1 = tf.constant(0.9 + index * 0.2)
                grad_sparse = tf.IndexedSlices(
                    tf.constant([0.1 + index * 0.2], shape=[1, 1]), tf.constant([1]),
                    tf.constant([2, 1]))
                self.opt = tf.train.SyncReplicasOptimizer(
                    tf.train.GradientDescentOptimizer(2.0), replicas_to_aggregate=2,
                    total_num_replicas=2)
                self.train_op = self.opt.apply_gradients(
                    zip([grad_0, grad_1, grad_sparse],
                        [self.var_0, self.var_1, self.var_sparse]),
                    global_step=self.global_step)
            self.local_step = self.graph.get_tensor_by_name("sync_rep_local_step:0")


def test_two_workers_apply_the_average_of_their_gradients(cluster):
    _, ps_server, servers = cluster
    w0, w1 = workers = [_Worker(i) for i in range(2)]
    s0, s1 = sessions = [_monitored_session(w.graph, w.opt, i, servers[i], num_tokens=2)
                         for i, w in enumerate(workers)]
    assert s0.run([w0.var_0, w0.var_1, w0.local_step]) == [0.0, 1.0, 0]
    assert s1.run([w1.global_step, w1.local_step]) == [0, 0]
    np.testing.assert_allclose(s1.run(w1.var_sparse), [[3.0], [4.0]])

    # Two initial tokens: each worker finishes its first step alone.
    _run_concurrently(lambda: s0.run(w0.train_op))
    _run_concurrently(lambda: s1.run(w1.train_op))
    _wait_for(lambda: s1.run(w1.global_step) == 1)
    np.testing.assert_allclose(s1.run(w1.var_0), 0 - (0.1 + 0.3) / 2 * 2.0)
    np.testing.assert_allclose(s1.run(w1.var_1), 1 - (0.9 + 1.1) / 2 * 2.0)
    np.testing.assert_allclose(s1.run(w1.var_sparse), [[3.0], [4.0 - (0.1 + 0.3) / 2 * 2.0]],
                               rtol=1e-6)
    # The initial tokens held global step 0, so the local steps are still 0 ...
    assert s0.run(w0.local_step) == 0 and s1.run(w1.local_step) == 0

    # ... and this step's gradients are stale and dropped; the tokens of the first
    # aggregated step bring the local steps to 1.
    _run_concurrently(lambda: s0.run(w0.train_op))
    _run_concurrently(lambda: s1.run(w1.train_op))
    assert s1.run(w1.global_step) == 1
    assert s0.run(w0.local_step) == 1 and s1.run(w1.local_step) == 1
    np.testing.assert_allclose(s1.run(w1.var_0), -0.4)
    np.testing.assert_allclose(s1.run(w1.var_1), -1.0)

    # No token is left: the step needs both workers.
    _run_concurrently(lambda: s0.run(w0.train_op), lambda: s1.run(w1.train_op))
    assert s1.run(w1.global_step) == 2
    np.testing.assert_allclose(s1.run(w1.var_0), 0 - 2 * (0.1 + 0.3) / 2 * 2.0)
    np.testing.assert_allclose(s1.run(w1.var_1), 1 - 2 * (0.9 + 1.1) / 2 * 2.0)
    np.testing.assert_allclose(s1.run(w1.var_sparse), [[3.0], [4.0 - 2 * 0.4]], rtol=1e-6)
    _shut_down(sessions, ps_server)


def _regression_data(index):
    """Worker `index`'s shard of y = x @ [1, -2] + 0.5."""
    rng = np.random.RandomState(index)
    x = rng.rand(8, 2).astype(np.float32)
    return x, x @ np.array([[1.0], [-2.0]], np.float32) + 0.5


def _averaged_gradient(w, b):
    """The gradient of the mean squared error, averaged over both workers' shards."""
    grads = []
    for index in range(2):
        x, y = _regression_data(index)
        residual = x @ w + b - y
        grads.append((2 * x.T @ residual / len(x), 2 * residual.mean()))
    return [np.mean(g, axis=0) for g in zip(*grads)]


def test_the_hook_trains_a_model_across_two_workers(cluster):
    spec, ps_server, servers = cluster
    lr, rounds = 0.1, 6
    models = []
    for index in range(2):
        graph = tf.Graph()
        with graph.as_default(), tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{index}", cluster=spec)):
            global_step = tf.train.get_or_create_global_step()
            w = tf.Variable(np.zeros([2, 1], np.float32), name="w")
            b = tf.Variable(0.0, name="b")
            x, y = _regression_data(index)
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(lr),
                                                 replicas_to_aggregate=2)
            models.append((graph, opt, opt.minimize(loss, global_step=global_step),
                           global_step, w, b))
    sessions = [_monitored_session(graph, opt, i, servers[i])
                for i, (graph, opt, *_) in enumerate(models)]
    steps = []
    for round_index in range(rounds):
        _run_concurrently(*[lambda s=s, m=m: s.run(m[2]) for s, m in zip(sessions, models)])
        if round_index == 0:   # the initial tokens let the workers return before the update
            _wait_for(lambda: sessions[1].run(models[1][3]) == 1)
        steps.append(sessions[1].run(models[1][3]))
    # The second round's gradients are stale (computed at local step 0, the initial tokens),
    # every other round is one aggregated step.
    assert steps == [1, 1, 2, 3, 4, 5]
    w_ref, b_ref = np.zeros([2, 1], np.float32), 0.0
    for _ in range(rounds - 1):
        grad_w, grad_b = _averaged_gradient(w_ref, b_ref)
        w_ref, b_ref = w_ref - lr * grad_w, b_ref - lr * grad_b
    w, b = sessions[0].run(models[0][4:])
    np.testing.assert_allclose(w, w_ref, rtol=1e-5)
    np.testing.assert_allclose(b, b_ref, rtol=1e-5)
    _shut_down(sessions, ps_server)


def test_the_local_step_stays_on_the_worker_under_replica_device_setter():
    spec = {"ps": ["ps0:2222"], "worker": ["w0:2222", "w1:2222"]}
    with tf.Graph().as_default() as graph, tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:1", cluster=spec)):
        global_step = tf.train.get_or_create_global_step()
        var = tf.Variable([1.0, 2.0], name="var")
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
        opt.minimize(tf.reduce_sum(var * var), global_step=global_step)
        local_step = graph.get_operation_by_name("sync_rep_local_step")
        assert local_step.device == "/job:worker/task:1"
        assert global_step.device == var.device == "/job:ps/task:0"
        assert graph.get_operation_by_name("sync_token_q").device.startswith(PS)
        accumulator = graph.get_operation_by_name("sync_replicas/conditional_accumulator")
        assert accumulator.device == "/job:ps/task:0"
        assert accumulator.get_attr("shared_name") == b"var:0/grad_accum"
        assert [v.op for v in tf.local_variables()] == [local_step]
        assert local_step not in [v.op for v in tf.global_variables()]
        assert local_step not in [v.op for v in tf.trainable_variables()]


def _local_model(replicas_to_aggregate=2, total_num_replicas=None, variable_averages=None):
    """A variable of value 10 whose gradient is fed, wrapped with lr 1 (and averaged by
    `variable_averages`)."""
    global_step = tf.Variable(0, name="global_step", trainable=False)
    var = tf.Variable(10.0, name="var")
    grad = tf.placeholder(tf.float32, [])
    opt = tf.train.SyncReplicasOptimizer(
        tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate,
        total_num_replicas=total_num_replicas, variable_averages=variable_averages,
        variables_to_average=[var])
    train_op = opt.apply_gradients([(grad, var)], global_step=global_step)
    return global_step, var, grad, opt, train_op


def test_a_gradient_from_a_stale_local_step_is_dropped():
    # One replica aggregating two of its own gradients per step (it needs one extra token).
    with tf.Graph().as_default():
        global_step, var, grad, opt, train_op = _local_model(2, total_num_replicas=1)
        sync_op = opt.get_chief_queue_runner().enqueue_ops[0]
        local_step = tf.local_variables()[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([opt.chief_init_op, opt.get_init_tokens_op()])   # tokens [0, 0]
            sess.run(train_op, {grad: 1.0})
            sess.run(train_op, {grad: 3.0})
            sess.run(sync_op)                                         # tokens [1, 1]
            assert sess.run([global_step, var]) == [1, 10.0 - 2.0]
            assert sess.run(local_step) == 0
            sess.run(train_op, {grad: 100.0})    # computed at local step 0 < 1: dropped
            assert sess.run(local_step) == 1
            sess.run(train_op, {grad: 5.0})
            _run_concurrently(lambda: sess.run(sync_op),
                              lambda: sess.run(train_op, {grad: 7.0}))
            assert sess.run([global_step, var]) == [2, 10.0 - 2.0 - (5.0 + 7.0) / 2]


def test_variable_averages_follow_each_aggregated_step():
    with tf.Graph().as_default():
        ema = tf.train.ExponentialMovingAverage(0.5)
        global_step, var, grad, opt, train_op = _local_model(1, variable_averages=ema)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([opt.chief_init_op, opt.get_init_tokens_op()])
            sess.run(train_op, {grad: 4.0})
            sess.run(opt.get_chief_queue_runner().enqueue_ops[0])
            assert sess.run([global_step, var]) == [1, 6.0]
            assert sess.run(ema.average(var)) == 0.5 * 10.0 + 0.5 * 6.0


def test_init_tokens():
    with tf.Graph().as_default():
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), 3,
                                             total_num_replicas=1)
        with pytest.raises(ValueError, match=r"get_init_tokens_op\(\) should be called after"):
            opt.get_init_tokens_op()
        with pytest.raises(ValueError, match=r"Should be called after apply_gradients\(\)"):
            opt.get_chief_queue_runner()
        global_step = tf.Variable(7, name="global_step", trainable=False)
        opt.apply_gradients([(tf.constant(1.0), tf.Variable(0.0))], global_step=global_step)
        with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: "
                                             r"1 \(given\) vs 2 \(needed\)"):
            opt.get_init_tokens_op(1)
        default, two = opt.get_init_tokens_op(), opt.get_init_tokens_op(2)
        with tf.Session() as sess:
            sess.run(global_step.initializer)
            assert sess.run(default.inputs[1]).tolist() == [7, 7, 7]
            assert sess.run(two.inputs[1]).tolist() == [7, 7]

    with tf.Graph().as_default():
        opt = _local_model(2, total_num_replicas=3)[3]
        assert opt.get_init_tokens_op(0).type == "NoOp"   # 3 replicas need no tokens
        assert opt.get_init_tokens_op(0).name.startswith("no_init_tokens")


def test_apply_gradients_errors():
    with tf.Graph().as_default():
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), 2)
        var, global_step = tf.Variable(1.0), tf.Variable(0, trainable=False)
        with pytest.raises(ValueError, match="Must supply at least one variable"):
            opt.apply_gradients([], global_step=global_step)
        with pytest.raises(ValueError, match="Global step is required to check staleness"):
            opt.apply_gradients([(tf.constant(1.0), var)])
        with pytest.raises(ValueError, match="Unknown grad type"):
            opt.apply_gradients([("not a gradient", var)], global_step=global_step)


def test_slots_and_variables_are_the_wrapped_optimizers():
    with tf.Graph().as_default():
        opt = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(0.01), 1)
        var = tf.Variable([0.0], name="fetch_variable_test")
        global_step = tf.Variable(0, name="global_step", trainable=False)
        grads_and_vars = opt.compute_gradients(tf.reduce_sum(var * var))
        assert [v for _, v in grads_and_vars] == [var]
        opt.apply_gradients(grads_and_vars, global_step=global_step)
        assert opt.get_slot_names() == ["m", "v"]
        assert opt.get_slot(var, "m") is opt._opt.get_slot(var, "m") is not None
        beta1_power, beta2_power = opt._opt._get_beta_accumulators()
        assert beta1_power in opt.variables() and beta2_power in opt.variables()
        assert opt.variables() == opt._opt.variables()


def test_hook_requires_apply_gradients_and_an_initialized_model():
    with tf.Graph().as_default():
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), 1)
        hook = opt.make_session_run_hook(False)
        with pytest.raises(ValueError, match="apply_gradient should be called before using "
                                             "the hook"):
            hook.begin()
        var = tf.Variable([0.0])
        global_step = tf.Variable(0, name="global_step", trainable=False)
        opt.minimize(tf.reduce_sum(var), global_step=global_step)
        hook.begin()      # a hook made before minimize works once minimize has run
        with tf.Session() as sess:
            with pytest.raises(RuntimeError, match="Init operations did not make model ready "
                                                   "for SyncReplicasOptimizer local_init"):
                hook.after_create_session(sess, None)
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(global_step, 4))
            hook.after_create_session(sess, None)
            assert sess.run(tf.local_variables()[0]) == 4
