"""tf.train.replica_device_setter: devices as TensorFlow 2.21's compat.v1 assigns them."""
import pytest

import tensorweave as tf


def _devices(**kwargs) -> dict:
    """{op name: device} of a small model built under the setter."""
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(**kwargs)):
        v1 = tf.Variable(1.0, name="v1")
        v2 = tf.get_variable("v2", [2])
        tf.add(v1, v2, name="x")
        with tf.device("/cpu:0"):
            tf.Variable(4.0, name="v4")
        with tf.device("/job:other/task:7"):
            tf.Variable(5.0, name="v5")
        tf.train.get_or_create_global_step()
    return {op.name: op.device for op in g.get_operations()}


def test_variables_go_round_robin_to_ps_tasks_and_the_rest_to_the_worker():
    d = _devices(ps_tasks=2)
    assert [d["v1"], d["v2"], d["v4"], d["global_step"]] == [
        "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0/device:CPU:0", "/job:ps/task:1"]
    assert d["v1/Assign"] == d["v1/read"] == "/job:ps/task:0"   # colocated with v1
    assert d["x"] == "/job:worker"
    assert d["v5"] == "/job:other/task:7"     # another job keeps its own task


def test_worker_device_merges_with_inner_scopes():
    d = _devices(ps_tasks=3, worker_device="/job:worker/task:1/cpu:0")
    assert d["x"] == "/job:worker/task:1/device:CPU:0"
    assert [d["v1"], d["v2"], d["v4"]] == [
        "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2/device:CPU:0"]


def test_merge_devices_false_keeps_inner_scopes_as_they_are():
    d = _devices(ps_tasks=2, merge_devices=False, worker_device="/job:worker/task:0")
    assert d["v4"] == "/device:CPU:0"
    assert d["x"] == "/job:worker/task:0"


def test_cluster_sets_the_number_of_ps_tasks():
    d = _devices(cluster={"ps": ["h1:1", "h2:2"], "worker": ["w:1"]})
    assert [d["v1"], d["v2"], d["v4"]] == [
        "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0/device:CPU:0"]


def test_ps_ops_and_ps_strategy():
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(
            ps_tasks=4, ps_ops=["FIFOQueueV2"], ps_strategy=lambda op: 3)):
        q = tf.FIFOQueue(3, tf.float32, name="q")
        v = tf.Variable(1.0, name="v")
    assert q.queue_ref.op.device == "/job:ps/task:3/device:CPU:*"   # FIFOQueue pins a CPU
    assert v.op.device == "/job:worker"


def test_no_parameter_servers_gives_no_device_function():
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    with pytest.raises(TypeError):
        tf.train.replica_device_setter(ps_tasks=1, ps_strategy=3)
