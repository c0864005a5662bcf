"""tf.train.ClusterSpec: construction from dicts, ClusterDefs and ClusterSpecs, the queries,
the ClusterDef it makes, and replica_device_setter reading it; TensorFlow 2.21's values and
messages, checked with shared/programs/run_with_tf.py."""
import pytest

import tensorweave as tf

SPEC = {"worker": ["w0:2222", "w1:2222"], "ps": {0: "p0:2222", 3: "p3:2222"}}


def test_queries_and_dict_forms():
    cluster = tf.train.ClusterSpec(SPEC)
    assert repr(cluster) == ("ClusterSpec({'ps': {0: 'p0:2222', 3: 'p3:2222'}, "
                             "'worker': ['w0:2222', 'w1:2222']})")
    assert cluster.jobs == ["worker", "ps"]
    assert cluster.as_dict() == SPEC
    assert (cluster.num_tasks("ps"), cluster.task_indices("ps")) == (2, [0, 3])
    assert cluster.task_address("ps", 3) == "p3:2222"
    assert cluster.job_tasks("ps") == ["p0:2222", None, None, "p3:2222"]
    assert cluster and not tf.train.ClusterSpec({})


def test_cluster_def_round_trip():
    cluster = tf.train.ClusterSpec(SPEC)
    cluster_def = cluster.as_cluster_def()
    assert isinstance(cluster_def, tf.train.ClusterDef)
    assert [(j.name, dict(j.tasks)) for j in cluster_def.job] == [
        ("ps", {0: "p0:2222", 3: "p3:2222"}), ("worker", {0: "w0:2222", 1: "w1:2222"})]
    assert tf.train.ClusterSpec(cluster_def) == cluster
    assert tf.train.ClusterSpec(cluster) == cluster
    assert cluster != cluster.as_dict()     # compared with its {job: {index: address}} form
    assert tf.train.JobDef(name="j").name == "j"


@pytest.mark.parametrize("call, error, message", [
    (lambda c: c.num_tasks("x"), ValueError, "No such job in cluster: 'x'"),
    (lambda c: c.task_address("ps", 1), ValueError, "No task with index 1 in job 'ps'"),
    (lambda c: c.job_tasks("x"), ValueError, "No such job in cluster: 'x'"),
    (lambda c: tf.train.ClusterSpec({"a": "b"}), TypeError,
     "The tasks for job 'a' must be a list or a dictionary from integers to strings."),
    (lambda c: tf.train.ClusterSpec(3), TypeError,
     "`cluster` must be a dictionary mapping one or more job names to lists of network "
     "addresses, or a `ClusterDef` protocol buffer"),
    (lambda c: tf.train.ClusterSpec({"a": [1]}), TypeError,
     "Task address 1 must be bytes or unicode"),
])
def test_bad_requests_in_tensorflows_words(call, error, message):
    with pytest.raises(error) as info:
        call(tf.train.ClusterSpec(SPEC))
    assert str(info.value) == message


def test_replica_device_setter_reads_the_ps_job():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(cluster=tf.train.ClusterSpec(SPEC))):
            v, w = tf.Variable(1.0), tf.Variable(2.0)
            product = v * w
    assert (v.device, w.device, product.device) == ("/job:ps/task:0", "/job:ps/task:1",
                                                    "/job:worker")
