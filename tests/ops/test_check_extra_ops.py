"""tf.assert_rank_in, tf.assert_same_float_dtype, tf.assert_proper_iterable and
tf.add_check_numerics_ops: static and run-time outcomes and TensorFlow 2.21's messages."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors


def test_assert_rank_in_static():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        ok = tf.debugging.assert_rank_in(x, [1, 2])
        assert (ok.name, ok.type) == ("assert_rank_in/static_checks_determined_all_ok", "NoOp")
        with pytest.raises(ValueError, match=r"^Tensor zeros:0 must have rank in \(1, 3\).  "
                                             r"Received rank 2, shape \(2, 3\)$"):
            tf.assert_rank_in(x, [1, 3])
        with pytest.raises(ValueError, match=r"^oops.  Tensor zeros:0 must have rank in"):
            tf.assert_rank_in(x, (0, 1), message="oops")
        with pytest.raises(ValueError, match="Rank must be a scalar."):
            tf.assert_rank_in(x, [[2]])
        with pytest.raises(TypeError, match="must be of type tf.int32; got tf.float32"):
            tf.assert_rank_in(x, [2.0])


def test_assert_rank_in_at_run_time():
    with tf.Graph().as_default():
        p, r = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
        check = tf.debugging.assert_rank_in(p, [1, r])
        assert check.type == "Assert"
        with tf.Session() as sess:
            sess.run(check, {p: [1.0], r: 2})
            sess.run(check, {p: [[1.0]], r: 2})
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"must have rank in\] \[1\] \[2\] \[Received shape: \] \[\]"):
                sess.run(check, {p: 1.0, r: 2})
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"\[Rank must be a scalar. Received rank: \] \[2\]"):
                sess.run(check, {p: 1.0, r: [2]})


def test_assert_same_float_dtype():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3])
        assert tf.assert_same_float_dtype([x, tf.zeros([1]), None]) == tf.float32
        assert tf.assert_same_float_dtype() == tf.float32
        assert tf.assert_same_float_dtype(None, tf.float16) == tf.float16
        with pytest.raises(ValueError, match="Expected floating point type, got <dtype: 'int32'>"):
            tf.assert_same_float_dtype([tf.zeros([1], tf.int32)])
        with pytest.raises(ValueError, match=r"zeros_3:0, type=<dtype: 'float64'>, must be of "
                                             r"the same type \(<dtype: 'float32'>\) as zeros:0"):
            tf.assert_same_float_dtype([x, tf.zeros([1], tf.float64)])
        with pytest.raises(ValueError, match=r"zeros:0, type=<dtype: 'float32'>, must be of the "
                                             r"same type \(<dtype: 'float64'>\)\.$"):
            tf.debugging.assert_same_float_dtype([x], tf.float64)


@pytest.mark.parametrize("values,message", [
    ("abc", '"proper" iterable.  Found: <class \'str\'>'),
    (b"abc", '"proper" iterable'),
    (np.zeros(2), '"proper" iterable.  Found: <class \'numpy.ndarray\'>'),
    (3, 'to be iterable.  Found: <class \'int\'>'),
])
def test_assert_proper_iterable_rejects(values, message):
    with pytest.raises(TypeError, match=message):
        tf.assert_proper_iterable(values)


def test_assert_proper_iterable_accepts_lists_and_rejects_tensors():
    tf.assert_proper_iterable([1, 2])
    tf.debugging.assert_proper_iterable(x for x in ())
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match='"proper" iterable'):
            tf.assert_proper_iterable(tf.zeros([2]))


def test_add_check_numerics_ops():
    with tf.Graph().as_default() as g:
        assert tf.add_check_numerics_ops().type == "NoOp"
    with tf.Graph().as_default() as g:
        y = tf.log(tf.placeholder(tf.float32, name="inp")) * 2.0
        tf.cast(tf.constant(1), tf.int32)  # non-float outputs are not checked
        check = tf.add_check_numerics_ops()
        assert (check.name, check.type) == ("group_deps", "NoOp")
        checks = [o for o in g.get_operations() if o.type == "CheckNumerics"]
        assert [o.get_attr("message") for o in checks] == [b"inp:0", b"Log:0", b"mul/y:0",
                                                           b"mul:0"]
        # Each check runs after the previous one.
        assert all(checks[i - 1] in checks[i].control_inputs for i in range(1, len(checks)))
        with tf.Session() as sess:
            assert sess.run([y, check], {"inp:0": 1.0})[0] == 0.0
            with pytest.raises(errors.InvalidArgumentError,
                               match="Log:0 : Tensor had NaN values"):
                sess.run([y, check], {"inp:0": -1.0})
        tf.cond(tf.constant(True), lambda: tf.constant(1.0), lambda: tf.constant(2.0))
        with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
            tf.add_check_numerics_ops()
