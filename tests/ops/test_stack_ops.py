"""StackV2 / StackPushV2 / StackPopV2 / StackCloseV2: LIFO order, per-step state, TF's names,
attrs and errors (pop of an empty stack, overflow of max_size, use after close)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.stack_ops import stack_close_v2, stack_pop_v2, stack_push_v2, stack_v2


def _chain(ops_fns):
    """Builds each op under a control dependency on the previous one (the order TF runs)."""
    out, prev = [], None
    for fn in ops_fns:
        with tf.control_dependencies([prev] if prev is not None else []):
            prev = fn()
        out.append(prev)
    return out


def test_names_attrs_and_shapes_match_tf():
    with tf.Graph().as_default():
        h = stack_v2(-1, elem_type=tf.float32, stack_name="foo")
        push = stack_push_v2(h, [1.0, 2.0], swap_memory=True)
        pop = stack_pop_v2(h, tf.float32)
        close = stack_close_v2(h)
        assert (h.op.name, h.op.type, h.dtype, h.shape.as_list()) == \
            ("StackV2", "StackV2", tf.resource, [2])
        assert h.op.get_attr("stack_name") == b"foo" and h.op.get_attr("elem_type") == tf.float32
        assert h.op.inputs[0].op.name == "StackV2/max_size"
        assert push.op.type == "StackPushV2" and push.shape.as_list() == [2]
        assert push.op.get_attr("swap_memory") is True and push.op.get_attr("T") == tf.float32
        assert pop.op.type == "StackPopV2" and pop.shape.ndims is None
        assert close.type == "StackCloseV2"


def test_push_pop_is_last_in_first_out_and_per_step():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        h = stack_v2(-1, elem_type=tf.float32)
        pushed, _, a, b = _chain([lambda: stack_push_v2(h, x),
                                  lambda: stack_push_v2(h, x * 2.0),
                                  lambda: stack_pop_v2(h, tf.float32),
                                  lambda: stack_pop_v2(h, tf.float32)])
        with tf.Session() as sess:
            for v in ([1.0, 2.0], [3.0, 4.0]):  # each run has a fresh, empty stack
                got = sess.run([pushed, a, b], {x: v})
                np.testing.assert_array_equal(got[0], v)
                np.testing.assert_array_equal(got[1], np.multiply(v, 2.0))
                np.testing.assert_array_equal(got[2], v)


@pytest.mark.parametrize("build,error,message", [
    (lambda h: [stack_pop_v2(h, tf.float32)], errors.InvalidArgumentError,
     r"Stack\[StackV2_\d+\] is empty when calling Pop\(\)."),
    (lambda h: _chain([lambda: stack_push_v2(h, 1.0), lambda: stack_push_v2(h, 2.0),
                       lambda: stack_push_v2(h, 3.0)]), errors.InvalidArgumentError,
     r"Stack\[StackV2_\d+\] overflowed its max_size \(2\)"),
    (lambda h: _chain([lambda: stack_push_v2(h, 1.0), lambda: stack_pop_v2(h, tf.int32)]),
     errors.InternalError, "expects int32"),
    (lambda h: _chain([lambda: stack_close_v2(h), lambda: stack_push_v2(h, 1.0)]),
     errors.NotFoundError, "does not exist"),
], ids=["pop_empty", "overflow", "pop_wrong_dtype", "push_after_close"])
def test_errors(build, error, message):
    with tf.Graph().as_default():
        h = stack_v2(2, elem_type=tf.float32)
        out = build(h)
        with tf.Session() as sess:
            with pytest.raises(error, match=message):
                sess.run(out)


def test_unbounded_stack_holds_many_elements():
    with tf.Graph().as_default():
        h = stack_v2(-1, elem_type=tf.int32)
        fns = [lambda i=i: stack_push_v2(h, i) for i in range(20)]
        fns += [lambda: stack_pop_v2(h, tf.int32) for _ in range(20)]
        out = _chain(fns)
        with tf.Session() as sess:
            assert sess.run(out[20:]) == list(range(19, -1, -1))
