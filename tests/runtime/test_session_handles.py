"""Tensors kept in a session between runs (tf.get_session_handle and friends), against
TensorFlow 2.21's behaviour: handle strings, ids in run order, reading back, feeding a handle
for a tensor, deleting, and the errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.tensor_handle import TensorHandle

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def test_a_kept_value_is_read_back_fed_and_deleted():
    with tf.Graph().as_default():
        c = tf.multiply(tf.constant(10.0), 5.0, name="c")
        h = tf.get_session_handle(c)
        assert h.dtype == tf.string and h.op.type == "GetSessionHandle"
        with tf.Session() as sess:
            handle = sess.run(h)
            assert isinstance(handle, TensorHandle)
            assert handle.handle == f"GetSessionHandle;0;{CPU0}" == str(handle)
            holder, value = tf.get_session_tensor(handle.handle, tf.float32)
            assert holder.dtype == tf.string and value.op.device == CPU0
            assert value.op.type == "GetSessionTensor"
            assert sess.run(value * 10, {holder: handle.handle}) == 500.0
            assert sess.run(value * 10, {holder: handle}) == 500.0   # the handle itself
            assert handle.eval() == 50.0
            assert sess.run(c * 2, {c: handle}) == 100.0   # fed for a tensor: its value
            deleter_holder, deleter = tf.delete_session_tensor(handle.handle)
            assert deleter.type == "DeleteSessionTensor"
            sess.run(deleter, {deleter_holder: handle.handle})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="is not in the session store"):
                sess.run(value, {holder: handle.handle})


def test_ids_follow_run_order_and_values_are_copies():
    with tf.Graph().as_default():
        v = tf.Variable([1, 2])
        first, second = tf.get_session_handle(v.read_value()), \
            tf.get_session_handle(tf.constant(3))
        with tf.Session() as sess:
            sess.run(v.initializer)
            kept = sess.run(first)
            sess.run(v.assign([7, 8]))
            both = sess.run([first, second])
            np.testing.assert_array_equal(kept.eval(), [1, 2])   # not the updated variable
            assert kept.handle.split(";")[1] == "0"
            assert sorted(h.handle.split(";")[1] for h in both) == ["1", "2"]
            kept.delete()
            with pytest.raises(tf.errors.InvalidArgumentError):
                kept.delete()


def test_wrong_dtype_and_bad_handles():
    with tf.Graph().as_default():
        h = tf.get_session_handle(tf.constant(1.5))
        with tf.Session() as sess:
            handle = sess.run(h)
            holder, as_int = tf.get_session_tensor(handle.handle, tf.int32)
            with pytest.raises(tf.errors.InternalError, match="does not match declared "
                                                              "output type int32"):
                sess.run(as_int, {holder: handle.handle})
        with pytest.raises(ValueError, match="device spec"):
            tf.get_session_tensor("bogus", tf.float32)


def test_each_session_keeps_its_own_values():
    with tf.Graph().as_default():
        h = tf.get_session_handle(tf.constant(4.0))
        with tf.Session() as one, tf.Session() as two:
            handle = one.run(h)
            holder, value = tf.get_session_tensor(handle.handle, tf.float32)
            with pytest.raises(tf.errors.InvalidArgumentError, match="session store"):
                two.run(value, {holder: handle.handle})
            assert one.run(value, {holder: handle.handle}) == 4.0


def test_garbage_collected_handles_are_freed_in_a_batch():
    with tf.Graph().as_default():
        h = tf.get_session_handle(tf.constant(2.0))
        with tf.Session() as sess:
            kept = sess.run(h)
            # Each TensorHandle dies at once; the 11th run frees the first ten dead ones.
            strings = [sess.run(h).handle for _ in range(12)]
            holder, value = tf.get_session_tensor(kept.handle, tf.float32)
            with pytest.raises(tf.errors.InvalidArgumentError, match="session store"):
                sess.run(value, {holder: strings[0]})
            assert sess.run(value, {holder: strings[-1]}) == 2.0   # dead, not yet freed
            assert sess.run(value, {holder: kept.handle}) == 2.0   # alive
