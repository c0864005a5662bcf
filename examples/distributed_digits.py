"""Parameter-server training: a ps task and two worker tasks, each a process on loopback,
training one classifier of scikit-learn's 8x8 digits by between-graph replication.

    python examples/distributed_digits.py            # starts the three tasks, prints accuracy
    python examples/distributed_digits.py --cluster '{"ps": [...], "worker": [...]}' \\
        --job worker --task 1                        # one task, as on a real cluster

Every worker builds the same graph under `tf.train.replica_device_setter`, so the variables
live on the ps task and each worker computes on its own half of the training set; the workers
update the shared weights asynchronously until the global step reaches `--steps`. The chief
(worker 0) initializes the variables, and at the end measures held-out accuracy through a
session on its server.
"""
import argparse
import json
import socket
import subprocess
import sys

import numpy as np
from sklearn.datasets import load_digits

import tensorweave as tf

HELD_OUT = 297


def _model():
    """The graph a worker builds: inputs, loss, train op, accuracy and the global step."""
    pixels = tf.placeholder(tf.float32, [None, 64])
    labels = tf.placeholder(tf.int64, [None])
    hidden = tf.layers.dense(pixels, 64, tf.nn.relu)
    logits = tf.layers.dense(hidden, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    global_step = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
    return pixels, labels, train, accuracy


def run_worker(cluster: dict, index: int, steps: int) -> None:
    """Trains on this worker's half of the data until the global step reaches `steps`."""
    server = tf.train.Server(cluster, job_name="worker", task_index=index)
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    shard = slice(index, len(images) - HELD_OUT, len(cluster["worker"]))
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(
                cluster=cluster, worker_device=f"/job:worker/task:{index}")):
            pixels, labels, train, accuracy = _model()
        config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
        hooks = [tf.train.StopAtStepHook(last_step=steps)]
        rng = np.random.RandomState(index)
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=index == 0,
                                               hooks=hooks, config=config) as sess:
            print("training", flush=True)
            x, y = images[shard], digits.target[shard]
            while not sess.should_stop():
                batch = rng.randint(0, len(x), 64)
                sess.run(train, {pixels: x[batch], labels: y[batch]})
        if index == 0:
            with tf.Session(server.target, config=config) as sess:
                held_out = sess.run(accuracy, {pixels: images[-HELD_OUT:],
                                               labels: digits.target[-HELD_OUT:]})
            print(f"accuracy {held_out:.3f}", flush=True)
    server.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(cluster: dict, job: str, index: int, steps: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--cluster", json.dumps(cluster),
                             "--job", job, "--task", str(index), "--steps", str(steps)],
                            stdout=subprocess.PIPE, text=True)


def train_on_local_cluster(steps: int = 600) -> float:
    """Starts a ps and two workers as processes on loopback; returns the chief's held-out
    accuracy. Worker 1 starts once the chief has initialized the variables."""
    cluster = {"ps": [f"localhost:{_free_port()}"],
               "worker": [f"localhost:{_free_port()}", f"localhost:{_free_port()}"]}
    ps = _start(cluster, "ps", 0, steps)
    tasks = [ps]
    try:
        chief = _start(cluster, "worker", 0, steps)
        tasks.append(chief)
        if chief.stdout.readline().strip() != "training":
            raise RuntimeError("the chief worker did not start training")
        other = _start(cluster, "worker", 1, steps)
        tasks.append(other)
        lines = chief.stdout.read().split()
        if chief.wait(300) or other.wait(300):
            raise RuntimeError("a worker failed")
        return float(lines[lines.index("accuracy") + 1])
    finally:
        for task in tasks:
            task.kill()
            task.wait(30)
            task.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", help="JSON {job: [host:port, ...]}; none: start a cluster")
    parser.add_argument("--job", choices=("ps", "worker"))
    parser.add_argument("--task", type=int, default=0)
    parser.add_argument("--steps", type=int, default=600)
    args = parser.parse_args()
    if args.cluster is None:
        print(f"held-out accuracy {train_on_local_cluster(args.steps):.3f}")
    elif args.job == "ps":
        tf.train.Server(json.loads(args.cluster), job_name="ps", task_index=args.task).join()
    else:
        run_worker(json.loads(args.cluster), args.task, args.steps)


if __name__ == "__main__":
    main()
