"""Recovery from a restarted ps task: the managed training loop recreates its session on the
restarted task and restores the last checkpoint; the old session gets AbortedError."""
import subprocess
import sys

import numpy as np

import tensorweave as tf
from tests.distributed.loopback import free_port


def _start_ps(cluster) -> subprocess.Popen:
    code = ("import tensorweave as tf\n"
            f"server = tf.train.Server({cluster!r}, job_name='ps', task_index=0)\n"
            "print('ready', flush=True)\n"
            "server.join()\n")
    ps = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert ps.stdout.readline().strip() == "ready"
    return ps


def _stop(ps) -> None:
    ps.kill()
    ps.wait(10)
    ps.stdout.close()


def test_training_survives_a_ps_restart(tmp_path):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps = _start_ps(cluster)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        with tf.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(cluster=cluster)):
                x = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32).reshape(-1, 1))
                w = tf.Variable([[0.0]])
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 2 * x))
                step = tf.train.get_or_create_global_step()
                train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
            hooks = [tf.train.StopAtStepHook(last_step=60)]
            steps_seen, restarted = [], False
            with tf.train.MonitoredTrainingSession(
                    master=worker.target, is_chief=True, checkpoint_dir=str(tmp_path),
                    save_checkpoint_steps=10, save_summaries_steps=None, hooks=hooks,
                    log_step_count_steps=None) as sess:
                while not sess.should_stop():
                    _, now = sess.run([train, step])
                    steps_seen.append(now)
                    if now == 25 and not restarted:   # the ps dies and comes back empty
                        _stop(ps)
                        ps, restarted = _start_ps(cluster), True
        assert steps_seen[-1] == 60
        restart = steps_seen.index(25) + 1
        assert steps_seen[restart] <= 21   # restored from the checkpoint of step 20
        with tf.Graph().as_default():
            reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(str(tmp_path)))
            assert reader.get_tensor("global_step") == 60
    finally:
        _stop(ps)
        worker.stop()


def test_the_old_session_on_a_restarted_ps_is_aborted():
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps = _start_ps(cluster)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0)
            with tf.device("/job:worker/task:0"):
                doubled = v * 2
            sess = tf.Session(worker.target)
            sess.run(v.initializer)
            assert sess.run(doubled) == 2.0
            _stop(ps)
            ps = _start_ps(cluster)
            try:
                sess.run(doubled)
                raise AssertionError("a run on the restarted ps succeeded")
            except (tf.errors.AbortedError, tf.errors.UnavailableError) as e:
                assert "restarted" in str(e) or isinstance(e, tf.errors.UnavailableError)
            sess.close()
            with tf.Session(worker.target) as fresh:   # a new session works
                fresh.run(v.initializer)
                assert fresh.run(doubled) == 2.0
    finally:
        _stop(ps)
        worker.stop()
