"""StackV2 / StackPushV2 / StackPopV2 / StackCloseV2: per-step LIFO storage."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import stack_ops


def test_push_then_pop_in_reverse_order_within_one_step():
    with tf.Graph().as_default():
        h = stack_ops.new_stack(tf.float32, stack_name="s")
        a = stack_ops.stack_push(h, tf.constant([1.0, 2.0]))
        with tf.control_dependencies([a]):
            b = stack_ops.stack_push(h, tf.constant([3.0, 4.0]))
        with tf.control_dependencies([b]):
            first = stack_ops.stack_pop(h, tf.float32)
        with tf.control_dependencies([first]):
            second = stack_ops.stack_pop(h, tf.float32)
        assert h.op.type == "StackV2" and a.op.type == "StackPushV2"
        with tf.Session() as sess:
            x, y = sess.run([first, second])
        np.testing.assert_array_equal(x, [3.0, 4.0])
        np.testing.assert_array_equal(y, [1.0, 2.0])


def test_pop_of_empty_stack_and_bounded_push_fail():
    with tf.Graph().as_default():
        h = stack_ops.new_stack(tf.int32, stack_name="empty")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
                sess.run(stack_ops.stack_pop(h, tf.int32))
        small = stack_ops.new_stack(tf.int32, max_size=1)
        p1 = stack_ops.stack_push(small, 1)
        with tf.control_dependencies([p1]):
            p2 = stack_ops.stack_push(small, 2)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="maximum size"):
                sess.run(p2)


def test_closed_stack_rejects_use_and_each_step_gets_a_new_stack():
    with tf.Graph().as_default():
        h = stack_ops.new_stack(tf.int32)
        push = stack_ops.stack_push(h, 7)
        with tf.control_dependencies([push]):
            close = stack_ops.stack_close(h)
        with tf.control_dependencies([close]):
            pop = stack_ops.stack_pop(h, tf.int32)
        assert close.type == "StackCloseV2"
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="closed"):
                sess.run(pop)
            assert sess.run(push) == 7
            assert sess.run(push) == 7  # a fresh stack per step
