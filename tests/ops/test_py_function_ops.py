"""tf.py_function (EagerPyFunc): values with .numpy(), results converted to Tout, several and
no outputs, errors, names; TensorFlow 2.21's results and messages for the same programs."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests


def _randn(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape)).astype(dt)


CASES = [
    OpCase("py_function", lambda x: tf.py_function(lambda a: a.numpy() * 2, [x], x.dtype),
           lambda x: x * 2, [_randn(2, 3)], dtypes=(tf.float32, tf.float64, tf.int32),
           grad=False),
    OpCase("py_function_two_outputs",
           lambda x, y: tf.py_function(lambda a, b: (a + b, np.sum(a)), [x, y],
                                       [x.dtype, x.dtype]),
           lambda x, y: [x + y, np.sum(x)], [_randn(3), _randn(3)], grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_values_names_and_conversions():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = tf.py_function(lambda a: a.numpy() * 2, [x], tf.float32)
        assert (y.op.type, y.op.name, y.shape.ndims) == ("EagerPyFunc", "EagerPyFunc", None)
        assert y.op.get_attr("is_async") is False
        z = tf.py_function(lambda a, b: (a.numpy() + b.numpy(), 3), [x, x],
                           [tf.float32, tf.int64])
        w = tf.py_function(lambda: 1.5, [], tf.float64)
        listed = tf.py_function(lambda a: [1.0, 2.0], [x], tf.float32)
        seen = []
        n = tf.py_function(lambda a: seen.append(a.numpy().tolist()), [x], [])
        assert n.type == "EagerPyFunc"
        got_y, (z0, z1), got_w, _, got_list = _run([y, z, w, n, listed])
    np.testing.assert_array_equal(got_y, [2, 4])
    np.testing.assert_array_equal(z0, [2, 4])
    assert z1 == 3 and z1.dtype == np.int64
    assert got_w == 1.5 and got_w.dtype == np.float64
    assert seen == [[1.0, 2.0]]
    assert got_list.dtype == np.float32 and got_list.tolist() == [1.0, 2.0]


def test_decorator_form():
    with tf.Graph().as_default():
        x = tf.constant(3.0)
        double = tf.py_function(Tout=tf.float32, inp=[x])(lambda a: a.numpy() * 2)
        assert _run(double) == 6.0


@pytest.mark.parametrize("func,tout,error,message", [
    (lambda a: "s", tf.float32, errors.InvalidArgumentError,
     "TypeError: Cannot convert 's' to EagerTensor of dtype float"),
    (lambda a: 1.5, tf.int32, errors.InvalidArgumentError, "Cannot convert 1.5"),
    (lambda a: [1.0, 2.0], [tf.float32], errors.InvalidArgumentError,
     "returns 2 values, but expects to see 1 values"),
    (lambda a: 1 / 0, tf.float32, errors.UnknownError, "ZeroDivisionError: division by zero"),
])
def test_run_time_errors(func, tout, error, message):
    with tf.Graph().as_default():
        t = tf.py_function(func, [tf.constant([1.0])], tout)
        with pytest.raises(error, match=message):
            _run(t)


def test_build_errors_and_no_gradient():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Expected func to be callable"):
            tf.py_function(3, [], tf.float32)
        x = tf.constant([1.0])
        y = tf.py_function(lambda a: a, [x], tf.float32)
        with pytest.raises(LookupError, match="op type: EagerPyFunc"):
            tf.gradients(y, x)
