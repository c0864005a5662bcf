"""Distributed runtime: mlp_train's SGD step through a server's master and across two tasks.

Three sessions of one process train mlp_train's model (784-512-512-10, batch 128, SGD):
`direct`, an in-process session; `local_server`, a session on a one-task
`tf.train.Server.create_local_server()` (the graph runs on the server's master); and
`ps_worker`, a session on a worker task whose variables live on a ps task (two servers in
this process): each step moves the 2.7 MB of weights to the worker and the gradients back
over gRPC (RecvTensor), as between-graph parameter-server training does. Their timed batches
alternate (bench.timing.batch_means_each); a metric is the median over rounds.
"""
import contextlib
import socket

import numpy as np

from bench.metrics import Metric
from bench.timing import batch_means_each
from bench.workloads import mlp_train

METRICS = {
    "direct_ms_per_step": Metric("ms", "SGD step in an in-process session"),
    "local_server_ms_per_step": Metric("ms", "the same step on a local server's master"),
    "ps_worker_ms_per_step": Metric("ms", "the same step with the variables on a ps task and "
                                          "the compute on a worker task (gRPC between them)"),
    "local_server_over_direct": Metric("x", "local-server step / in-process step"),
    "ps_worker_over_direct": Metric("x", "ps-worker step / in-process step"),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _step(tf, target: str, ps: str | None, worker: str | None):
    """The SGD step in a session on `target`, variables under device `ps`, compute under
    `worker` (None: no device scope)."""
    inputs, labels, _ = mlp_train._batch()
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        with tf.device(worker):
            x = tf.placeholder(tf.float32, [mlp_train.BATCH, mlp_train.SIZES[0]])
            y = tf.placeholder(tf.float32, [mlp_train.BATCH, mlp_train.SIZES[-1]])
        with tf.device(_variables_on(tf, ps, worker)):
            loss = mlp_train.mlp_loss(tf, x, y)
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        feed = {x: inputs, y: labels}
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            mlp_train._check_learns([sess.run([loss, train], feed)[0] for _ in range(5)])
            yield lambda: sess.run(train, feed)


def _variables_on(tf, ps, worker):
    """A device function: variables on `ps`, other ops on `worker`."""
    if ps is None:
        return None
    return lambda op: ps if op.type in ("VariableV2", "Variable", "VarHandleOp") else worker


def run_tf1(tf):
    """Time the three sessions' steps in alternating batches."""
    cluster = {"ps": [f"localhost:{_free_port()}"], "worker": [f"localhost:{_free_port()}"]}
    local = tf.train.Server.create_local_server()
    servers = [tf.train.Server(cluster, job_name=job, task_index=0) for job in ("ps", "worker")]
    with contextlib.ExitStack() as stack:
        steps = {
            "direct_ms_per_step": stack.enter_context(_step(tf, "", None, None)),
            "local_server_ms_per_step": stack.enter_context(
                _step(tf, local.target, None, None)),
            "ps_worker_ms_per_step": stack.enter_context(
                _step(tf, servers[1].target, "/job:ps/task:0", "/job:worker/task:0")),
        }
        means = batch_means_each(steps, batches=15, batch_seconds=0.1, warmup_seconds=0.5,
                                 min_calls=20)
    for server in [local, *servers]:
        stop = getattr(server, "stop", None)   # TensorFlow's servers cannot stop
        if stop is not None:
            stop()
    out = {metric: float(np.median(m)) * 1e3 for metric, m in means.items()}
    direct = np.array(means["direct_ms_per_step"])
    for name in ("local_server", "ps_worker"):
        out[f"{name}_over_direct"] = float(np.median(np.array(means[f"{name}_ms_per_step"])
                                                     / direct))
    return out
