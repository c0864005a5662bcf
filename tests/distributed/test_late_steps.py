"""A call for a step that has already ended fails at once instead of waiting for it.

The race: another task fails the step while this task's RunGraph is still queued; the master
aborts and cleans the step up everywhere, and the late RunGraph used to make a new rendezvous
and wait for the failed task for ever (or until the step's deadline)."""
import time

import pytest

import tensorweave as tf
from tensorweave.distributed import worker as worker_module
from tensorweave.distributed.remote_rendezvous import StepTable
from tests.distributed.loopback import free_port


def _waits_in(rendezvous) -> Exception:
    """The error a receive on `rendezvous` fails with (at once, or the test fails)."""
    with pytest.raises(tf.errors.OpError) as info:
        rendezvous.recv("/job:a/replica:0/task:0/device:CPU:0;1;"
                        "/job:a/replica:0/task:0/device:CPU:0;x;0:0", timeout=5)
    return info.value


def test_an_aborted_or_cleaned_up_step_stays_ended():
    table = StepTable("/job:a/replica:0/task:0", peers=None)
    table.abort(7, tf.errors.InvalidArgumentError(None, None, "index 7 out of range"))
    assert "index 7 out of range" in _waits_in(table.find_or_create(7)).message
    table.find_or_create(8)
    table.cleanup(8)
    assert isinstance(_waits_in(table.find_or_create(8)), tf.errors.AbortedError)


def test_only_the_most_recent_ended_steps_are_remembered(monkeypatch):
    monkeypatch.setattr(StepTable, "ENDED_KEPT", 2)
    table = StepTable("/job:a/replica:0/task:0", peers=None)
    for step in (1, 2, 3):
        table.cleanup(step)
    assert sorted(table._ended) == [2, 3]


def test_a_late_part_of_a_failed_step_does_not_wait(monkeypatch):
    spec = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    servers = [tf.train.Server(spec, job_name=job, task_index=0) for job in spec]
    run_graph = worker_module.Worker.run_graph

    def late_on_worker(self, request, timeout_ms=0):
        if "worker" in str(self.task):
            time.sleep(0.3)   # the ps fails and the step is cleaned up meanwhile
        return run_graph(self, request, timeout_ms)
    monkeypatch.setattr(worker_module.Worker, "run_graph", late_on_worker)
    try:
        with tf.Graph().as_default():
            index = tf.placeholder(tf.int32, [])
            with tf.device("/job:ps/task:0"):
                picked = tf.gather(tf.constant([1.0, 2.0]), index)
            with tf.device("/job:worker/task:0"):
                doubled = picked * 2
            with tf.Session(servers[1].target) as sess:
                started = time.monotonic()
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(doubled, {index: 7}, options=tf.RunOptions(timeout_in_ms=20000))
                assert time.monotonic() - started < 10
                assert sess.run(doubled, {index: 1}) == 4.0   # later steps are not affected
    finally:
        for server in servers:
            server.stop()
