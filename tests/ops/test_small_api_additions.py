"""GuaranteeConst, tf.is_symbolic_tensor and tf.debugging's switches, against TF 2.21."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

CASES = [
    OpCase("guarantee_const", tf.guarantee_const, lambda x: x,
           [lambda rng, dt: rng.randn(3, 2).astype(dt)], dtypes=(tf.float32, tf.int64),
           grad=False),
]
test_forward, test_shapes = case_tests(CASES)


def test_guarantee_const_is_a_stateful_op_without_gradient():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        g = tf.guarantee_const(x)
        assert (g.op.type, g.name, g.dtype) == ("GuaranteeConst", "GuaranteeConst:0", tf.float32)
        assert g.op.get_attr("T") == tf.float32 and g.op.op_def.is_stateful
        assert tf.guarantee_const(tf.placeholder(tf.float32, [None, 3]), "gc").shape.as_list() \
            == [None, 3]
        with pytest.raises(LookupError, match="op type: GuaranteeConst"):
            tf.gradients(tf.reduce_sum(g * 3.0), x)
        v = tf.Variable([5.0])
        read = tf.guarantee_const(v)
        assert [t.name for t in read.op.inputs] == ["Variable/read:0"]
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(read), [5.0])


def test_is_symbolic_tensor():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        assert tf.is_symbolic_tensor(x) and tf.is_symbolic_tensor(tf.placeholder(tf.int32))
        others = [np.ones(2), 1.0, tf.Variable(1.0), tf.SparseTensor([[0]], [1.0], [2]),
                  tf.IndexedSlices(x, tf.constant([0]))]
        assert not any(tf.is_symbolic_tensor(o) for o in others)


@pytest.fixture
def restore_switches():
    yield
    tf.debugging.set_log_device_placement(False)


def test_log_device_placement_applies_to_sessions_created_while_on(restore_switches, capsys):
    with tf.Graph().as_default():
        x = tf.constant(1.0, name="x")
        before = tf.Session()
        assert tf.debugging.get_log_device_placement() is False
        assert tf.debugging.set_log_device_placement(True) is None
        assert tf.debugging.get_log_device_placement() is True
        assert before.run(tf.add(x, 1.0, name="a1")) == 2.0
        assert "a1:" not in capsys.readouterr().out
        during = tf.Session()
        tf.debugging.set_log_device_placement(False)
        assert during.run(tf.add(x, 2.0, name="b1")) == 3.0
        assert "b1: (AddV2): /job:localhost/replica:0/task:0/device:CPU:0" in \
            capsys.readouterr().out
        after = tf.Session()
        assert after.run(tf.add(x, 3.0, name="c1")) == 4.0
        assert "c1:" not in capsys.readouterr().out

