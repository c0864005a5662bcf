"""Placement against TF 2.21's placer: what soft placement may relax, colocation conflicts."""
import pytest

import tensorweave as tf

CPU = "/job:localhost/replica:0/task:0/device:CPU:"


def _devices_of(sess, fetch, feeds=None):
    """{node name: device} of one traced run."""
    meta = tf.RunMetadata()
    value = sess.run(fetch, feeds, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=meta)
    where = {n.node_name: d.device for d in meta.step_stats.dev_stats for n in d.node_stats}
    return value, where


@pytest.mark.parametrize("spec", ["/job:ps/cpu:0", "/task:3", "/replica:2"])
def test_soft_placement_never_relaxes_job_replica_or_task(spec):
    with tf.Graph().as_default() as g:
        with tf.device(spec):
            b = tf.multiply(tf.constant([1.0, 2.0]), 3.0, name="b")
    soft = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(graph=g, config=soft) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="not the job, replica or task"):
            sess.run(b)


@pytest.mark.parametrize("spec", ["/gpu:0", "/job:localhost/gpu:1", "/cpu:5",
                                  "/job:localhost/replica:0/task:0/device:CPU:7"])
def test_soft_placement_relaxes_device_type_and_index(spec):
    with tf.Graph().as_default() as g:
        with tf.device(spec):
            b = tf.multiply(tf.constant([1.0, 2.0]), 3.0, name="b")
    soft = tf.ConfigProto(allow_soft_placement=True, device_count={"CPU": 2})
    with tf.Session(graph=g, config=soft) as sess:
        value, where = _devices_of(sess, b)
    assert value.tolist() == [3.0, 6.0] and where["b"] == CPU + "0"


@pytest.mark.parametrize("soft", [False, True])
def test_colocation_group_with_conflicting_indices(soft):
    """TF: an error without soft placement; with it the group drops the index (CPU:0)."""
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, [2], name="p")
        with tf.device("/cpu:1"):
            a = tf.identity(p, name="a")
        with tf.colocate_with(a):
            b = tf.negative(a, name="b")
        b.op._set_device("/cpu:2")
    config = tf.ConfigProto(device_count={"CPU": 3}, allow_soft_placement=soft)
    with tf.Session(graph=g, config=config) as sess:
        if not soft:
            with pytest.raises(tf.errors.InvalidArgumentError, match="conflicting devices"):
                sess.run(b, {p: [1.0, 2.0]})
            return
        value, where = _devices_of(sess, b, {p: [1.0, 2.0]})
    assert value.tolist() == [-1.0, -2.0] and where["b"] == CPU + "0"


def test_colocation_group_with_conflicting_jobs_fails_even_when_soft():
    with tf.Graph().as_default() as g:
        with tf.device("/job:localhost/cpu:0"):
            a = tf.constant(1.0, name="a")
        with tf.colocate_with(a):
            b = tf.negative(a, name="b")
        b.op._set_device("/job:ps/cpu:0")
    soft = tf.ConfigProto(allow_soft_placement=True)
    with tf.Session(graph=g, config=soft) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="conflicting devices"):
            sess.run(b)


def _class_of(op):
    return [c if isinstance(c, bytes) else c.encode() for c in op.attrs.get("_class", ())]


def test_variable_ops_devices_and_colocation_as_in_tensorflow():
    """TF 2.21: a callable initial value (get_variable's initializer) is made with no device
    and `_class` loc:@v, as is the VariableV2; a given value is 'u/initial_value' under the
    device scope; the read goes on the caching device."""
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            v = tf.get_variable("v", shape=[2], initializer=tf.zeros_initializer())
            u = tf.Variable([1.0, 2.0], name="u", caching_device="/cpu:2")
    ops = {op.name: (op.type, op.device, _class_of(op)) for op in g.get_operations()}
    assert ops == {
        "v/Initializer/zeros": ("Const", "", [b"loc:@v"]),
        "v": ("VariableV2", "/device:CPU:1", [b"loc:@v"]),
        "v/Assign": ("Assign", "/device:CPU:1", [b"loc:@v"]),
        "v/read": ("Identity", "/device:CPU:1", [b"loc:@v"]),
        "u/initial_value": ("Const", "/device:CPU:1", []),
        "u": ("VariableV2", "/device:CPU:1", []),
        "u/Assign": ("Assign", "/device:CPU:1", [b"loc:@u"]),
        "u/read": ("Identity", "/device:CPU:2", []),
    }
    assert u.value().device == "/device:CPU:2"
    with tf.Session(graph=g, config=tf.ConfigProto(device_count={"CPU": 3})) as sess:
        meta = tf.RunMetadata()
        sess.run(v.initializer, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=meta)
        where = {n.node_name: d.device for d in meta.step_stats.dev_stats for n in d.node_stats}
        assert where["v/Initializer/zeros"] == CPU + "1"   # the group follows the variable
        sess.run(u.initializer)
        assert sess.run(u.value()).tolist() == [1.0, 2.0]


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
def test_a_variable_update_or_read_requested_elsewhere_runs_with_the_variable(use_resource):
    """TF's placer: across a ref or DT_RESOURCE edge the consumer's requested device yields to
    the variable's, without soft placement; a plain read (through the ref's snapshot) keeps
    its own. Devices recorded from TF 2.21."""
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:1"):
            v = tf.Variable([1.0, 2.0], use_resource=use_resource, name="v")
        with tf.device("/cpu:0"):
            bump = tf.assign_add(v, [1.0, 1.0], name="bump")
            r = tf.identity(v, name="r")
        with tf.device("/cpu:2"):
            r2 = v.read_value()
    config = tf.ConfigProto(device_count={"CPU": 3}, allow_soft_placement=False)
    with tf.Session(graph=g, config=config) as sess:
        sess.run(v.initializer)
        _, where = _devices_of(sess, [bump, r, r2])
    update = bump.op.control_inputs[0] if use_resource else bump.op
    assert (where["v"], where[update.name], where["r"], where[r2.op.name]) == (
        CPU + "1", CPU + "1", CPU + "0", CPU + "2")
    if use_resource:   # the reads of the handle run with it
        assert {where[t.op.name] for t in (bump, r.op.inputs[0], r2.op.inputs[0])} == {CPU + "1"}
