"""Grouping ops: no_op, group and tuple (names, control edges, devices, and that they run)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


CASES = [
    OpCase("tuple", lambda x, y: tf.tuple([x, y]), lambda x, y: [x, y],
           [_randn(2, 3), _randn(4)], dtypes=(tf.float32, tf.int32, tf.float64)),
    OpCase("tuple_with_none", lambda x: tf.tuple([None, x])[1], lambda x: x, [_randn(3)],
           dtypes=(tf.float32, tf.bool)),
]


test_forward, test_shapes = case_tests(CASES)


def _failing_assert(name=None):
    return tf.Assert(False, ["ran"], name=name)


def test_no_op():
    with tf.Graph().as_default():
        op = tf.no_op()
        assert isinstance(op, tf.Operation) and op.type == "NoOp" and op.name == "NoOp"
        assert op.inputs == () and op.outputs == []
        assert tf.no_op(name="done").name == "done"
        with tf.Session() as sess:
            assert sess.run(op) is None and sess.run("done") is None


def test_group_names_and_control_inputs():
    with tf.Graph().as_default():
        a, b = tf.constant(1.0), tf.constant(2.0)
        g1 = tf.group(a, b)
        assert g1.type == "NoOp" and g1.name == "group_deps"
        assert g1.control_inputs == [a.op, b.op] and g1.inputs == ()
        assert tf.group().name == "group_deps_1" and tf.group().control_inputs == []
        nested = tf.group([a, [b]], b.op, name="x")
        assert nested.name == "x" and nested.control_inputs == [a.op, b.op]
        assert tf.group(a).control_inputs == [a.op]
        with pytest.raises(ValueError, match="Unknown keyword arguments: foo"):
            tf.group(a, foo=1)
        with pytest.raises(TypeError, match="should be zero or more"):
            tf.group(1)
        with pytest.raises(TypeError, match="should be zero or more"):
            tf.group(None)


def test_group_over_devices_builds_one_noop_per_device():
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0)
        with tf.device("/cpu:0"):
            c = tf.constant(3.0)
        grouped = tf.group(a, c, name="both")
        per_device = [g.get_operation_by_name("both/NoOp"), g.get_operation_by_name("both/NoOp_1")]
        assert grouped.control_inputs == per_device
        assert [op.device for op in per_device] == ["", "/device:CPU:0"]
        assert [op.control_inputs for op in per_device] == [[a.op], [c.op]]
        with tf.device("/cpu:0"):
            d = tf.constant(4.0)
        same_device = tf.group(c, d)
        assert same_device.device == "/device:CPU:0"
        assert same_device.control_inputs == [c.op, d.op]


def test_running_a_group_runs_its_members():
    with tf.Graph().as_default():
        ok = tf.group(tf.Assert(True, ["fine"]), tf.constant(1.0))
        bad = tf.group(tf.constant(1.0), _failing_assert())
        with tf.Session() as sess:
            assert sess.run(ok) is None
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: "
                                                                     r"\[ran\]"):
                sess.run(bad)


def test_tuple_names_and_structure():
    with tf.Graph().as_default() as g:
        a, b = tf.constant(1.0), tf.constant([2, 3])
        out = tf.tuple([a, b, None])
        assert [t.name if t is not None else None for t in out] == \
            ["tuple/control_dependency:0", "tuple/control_dependency_1:0", None]
        gate = g.get_operation_by_name("tuple/group_deps")
        assert gate.type == "NoOp" and gate.control_inputs == [a.op, b.op]
        for t, src in zip(out[:2], (a, b)):
            assert t.op.type == "Identity" and t.op.inputs == (src,)
            assert t.op.control_inputs == [gate]
            assert t.op.colocation_groups() == src.op.colocation_groups()
            assert t.dtype == src.dtype and t.shape == src.shape
        marker = tf.no_op(name="marker")
        named = tf.tuple([a], control_inputs=[marker, b], name="tt")
        assert named[0].name == "tt/control_dependency:0"
        assert g.get_operation_by_name("tt/group_deps").control_inputs == [a.op, marker, b.op]


def test_tuple_waits_for_all_inputs_and_control_inputs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        gated = tf.tuple([x], control_inputs=[_failing_assert()])[0]
        free = tf.tuple([x, tf.constant(1.0)])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(free[0], {x: [1.0, 2.0]}), [1.0, 2.0])
            with pytest.raises(tf.errors.InvalidArgumentError, match="assertion failed"):
                sess.run(gated, {x: [1.0, 2.0]})


def test_tuple_errors():
    with tf.Graph().as_default():
        a = tf.constant(1.0)
        with pytest.raises(ValueError, match="must have at least one Tensor"):
            tf.tuple([])
        with pytest.raises(ValueError, match="must have at least one Tensor"):
            tf.tuple([None])
        with pytest.raises(TypeError, match="must be a list or tuple"):
            tf.tuple(a)
        with pytest.raises(TypeError, match="'control_inputs' must only contain Operation "
                                            "or Tensor"):
            tf.tuple([a], control_inputs=[1])
