"""The primitives under the frames executor: Switch, Merge, Enter, Exit, NextIteration,
LoopCond, ControlTrigger, and their Ref forms, built by hand as TensorFlow's tests do."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import control_flow_primitives as prim

pytestmark = pytest.mark.usefixtures("executor_kind")


def _run(fetches, feeds=None):
    with tf.Session() as sess:
        return sess.run(fetches, feeds)


def test_switch_routes_data_and_merge_takes_the_live_side():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])
        x = tf.constant([1.0, 2.0])
        false_side, true_side = prim.switch(x, pred)
        out, index = prim.merge([false_side * 10.0, true_side + 1.0])
        assert out.shape.as_list() == [2] and index.dtype == tf.int32
        got, idx = _run([out, index], {pred: True})
        np.testing.assert_array_equal(got, [2.0, 3.0])
        assert idx == 1
        got, idx = _run([out, index], {pred: False})
        np.testing.assert_array_equal(got, [10.0, 20.0])
        assert idx == 0


def test_dead_tensors_skip_kernels_and_side_effects():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])
        v = tf.Variable(0)
        _, true_ref = prim.switch(v._variable, pred)
        assert true_ref.op.type == "RefSwitch"
        bump = tf.assign_add(true_ref, 5)
        otherwise, _ = prim.switch(tf.constant(-1), pred)
        after = prim.merge([otherwise, tf.identity(bump)])[0]
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(after, {pred: False}) == -1
            assert sess.run(v) == 0
            assert sess.run(after, {pred: True}) == 5
            assert sess.run(v) == 5


def test_merge_of_all_dead_inputs_is_dead_and_fetching_it_is_an_error():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])
        f, t = prim.switch(tf.constant(1.0), pred)
        both_dead_when_false = prim.merge([t, t * 2.0])[0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have value"):
            _run(both_dead_when_false, {pred: False})   # as TensorFlow: a dead fetch fails
        assert _run(both_dead_when_false, {pred: True}) == 1.0


def test_control_trigger_runs_even_when_its_control_input_is_dead():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])
        v = tf.Variable(0)
        _, t = prim.switch(tf.constant(1), pred)
        with tf.control_dependencies([t.op]):
            trigger = apply_op(prim.ControlTrigger, [])
        with tf.control_dependencies([trigger]):
            bump = tf.assign_add(v, 1)
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(bump, {pred: False})
            assert sess.run(v) == 1


def test_hand_built_loop_counts_to_ten():
    with tf.Graph().as_default():
        attrs = {"frame_name": "loop", "is_constant": False, "parallel_iterations": 10}
        enter = apply_op(prim.Enter, [tf.constant(0)], attrs)
        limit = apply_op(prim.Enter, [tf.constant(10)], {**attrs, "is_constant": True})
        one = apply_op(prim.Enter, [tf.constant(1)], {**attrs, "is_constant": True})
        merge = prim.merge([enter, enter])[0]
        cond = apply_op(prim.LoopCond, [tf.less(merge, limit)])
        exit_side, body_side = prim.switch(merge, cond)
        nxt = apply_op(prim.NextIteration, [body_side + one])
        merge.op._update_input(1, nxt)
        out = apply_op(prim.Exit, [exit_side])
        assert _run(out) == 10


def test_shape_functions():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [2, 3])
        b = tf.placeholder(tf.float32, [2, 5])
        assert prim.merge([a, b])[0].shape.as_list() == [2, None]
        c = tf.placeholder(tf.float32, [2])
        assert prim.merge([a, c])[0].shape.ndims is None
        f, t = prim.switch(a, tf.placeholder(tf.bool))
        assert f.shape.as_list() == t.shape.as_list() == [2, 3]
        with pytest.raises(ValueError, match="^Shape must be rank 0 but is rank 1 for"):
            prim.switch(a, tf.placeholder(tf.bool, [2]))
        with pytest.raises(TypeError, match="same dtype"):
            prim.merge([a, tf.placeholder(tf.int32, [2, 3])])


def test_exit_outside_a_frame_is_rejected_when_the_step_is_built():
    with tf.Graph().as_default():
        out = apply_op(prim.Exit, [tf.constant(1)])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not inside a loop frame"):
            _run(out)


def test_value_from_another_frame_without_enter_is_rejected():
    with tf.Graph().as_default():
        outside = tf.constant(3)
        attrs = {"frame_name": "f", "is_constant": False, "parallel_iterations": 1}
        inside = apply_op(prim.Enter, [tf.constant(1)], attrs)
        bad = inside + outside
        exit_ = apply_op(prim.Exit, [bad])
        with pytest.raises(tf.errors.InvalidArgumentError, match="different frames"):
            _run(exit_)


def test_ref_loop_variable_flows_through_the_ref_forms():
    """RefEnter → RefMerge → RefSwitch → RefNextIteration / RefExit carry the variable itself:
    the body increments it in place until it reaches 5."""
    with tf.Graph().as_default():
        v = tf.Variable(0)
        attrs = {"frame_name": "ref_loop", "is_constant": False, "parallel_iterations": 1}
        enter = apply_op(prim.RefEnter, [v._variable], attrs)
        five = apply_op(prim.Enter, [tf.constant(5)], {**attrs, "is_constant": True})
        one = apply_op(prim.Enter, [tf.constant(1)], {**attrs, "is_constant": True})
        merge = prim.merge([enter, enter])[0]
        assert merge.op.type == "RefMerge" and merge.dtype._is_ref_dtype
        cond = apply_op(prim.LoopCond, [tf.less(merge, five)])
        exit_side, body_side = prim.switch(merge, cond)
        bumped = tf.assign_add(body_side, one)
        nxt = apply_op(prim.RefNextIteration, [bumped])
        merge.op._update_input(1, nxt)
        out = apply_op(prim.RefExit, [exit_side])
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(out) == 5
            assert sess.run(v) == 5
