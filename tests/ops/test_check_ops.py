"""tf.assert_* (check_ops), tf.ensure_shape (EnsureShape) and tf.is_tensor, against messages
and results printed by TensorFlow 2.21 (tf.compat.v1) for the same calls."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

CASES = [
    OpCase("ensure_shape_partial", lambda x: tf.ensure_shape(x, [None, 3]), lambda x: x,
           [lambda rng, dt: rng.randn(2, 3)], dtypes=(tf.float32, tf.float64, tf.int32)),
    OpCase("ensure_shape_full", lambda x: tf.ensure_shape(x, tf.TensorShape([2, 3])) * 2.0,
           lambda x: x * 2, [lambda rng, dt: rng.randn(2, 3)]),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _c(v, dtype=None):
    return tf.constant(v, dtype)


# (builder, error type, message) — TF 2.21 raises these while the graph is built.
STATIC_FAILURES = [
    (lambda: tf.assert_equal(_c([1, 2]), _c([1, 3]), message="hi"), tf.errors.InvalidArgumentError,
     "hi\nCondition x == y did not hold element-wise:\nx (Const:0) = \n[1 2]\n"
     "y (Const_1:0) = \n[1 3]"),
    (lambda: tf.assert_none_equal(_c([1, 2]), _c([1, 3])), tf.errors.InvalidArgumentError,
     "Condition x != y did not hold element-wise:\nx (Const:0) = \n[1 2]\ny (Const_1:0) = "
     "\n[1 3]"),
    (lambda: tf.assert_less(_c([1, 2]), _c([1, 3])), tf.errors.InvalidArgumentError,
     "Condition x < y did not hold element-wise:\nx (Const:0) = \n[1 2]\ny (Const_1:0) = "
     "\n[1 3]"),
    (lambda: tf.assert_greater(_c([1, 2]), 1), tf.errors.InvalidArgumentError,
     "Condition x > y did not hold element-wise:\nx (Const:0) = \n[1 2]\n"
     "y (assert_greater/y:0) = \n1"),
    (lambda: tf.assert_greater_equal(_c([1, 2]), 2), tf.errors.InvalidArgumentError,
     "Condition x >= y did not hold element-wise:\nx (Const:0) = \n[1 2]\n"
     "y (assert_greater_equal/y:0) = \n2"),
    (lambda: tf.assert_less_equal(_c([1, 2]), 1, name="foo"), tf.errors.InvalidArgumentError,
     "Condition x <= y did not hold element-wise:\nx (Const:0) = \n[1 2]\ny (foo/y:0) = \n1"),
    (lambda: tf.assert_positive(_c([1, -2])), tf.errors.InvalidArgumentError,
     "\nCondition x > 0 did not hold element-wise:\nx (Const:0) = \n[ 1 -2]"),
    (lambda: tf.assert_negative(_c([1, -2])), tf.errors.InvalidArgumentError,
     "\nCondition x < 0 did not hold element-wise:\nx (Const:0) = \n[ 1 -2]"),
    (lambda: tf.assert_non_negative(_c([1, -2])), tf.errors.InvalidArgumentError,
     "\nCondition x >= 0 did not hold element-wise:\nx (Const:0) = \n[ 1 -2]"),
    (lambda: tf.assert_non_positive(_c([1, -2])), tf.errors.InvalidArgumentError,
     "\nCondition x <= 0 did not hold element-wise:x (Const:0) = \n[ 1 -2]"),
    (lambda: tf.assert_rank(_c([1, 2]), 2, message="hey"), ValueError,
     "hey.  Tensor Const:0 must have rank 2.  Received rank 1, shape (2,)"),
    (lambda: tf.assert_rank(_c([1, 2]), _c(2)), ValueError,
     "Tensor Const:0 must have rank 2.  Received rank 1, shape (2,)"),
    (lambda: tf.assert_rank_at_least(_c([1, 2]), 2), ValueError,
     "Tensor Const:0 must have rank at least 2.  Received rank 1, shape (2,)"),
    (lambda: tf.assert_type(_c([1, 2]), tf.float32, message="m"), TypeError,
     "m.  Const:0 must be of type tf.float32; got tf.int32"),
    (lambda: tf.assert_integer(_c([1.0, 2.0])), TypeError,
     "Expected \"x\" to be integer type.  Found: Const:0 of dtype <dtype: 'float32'>"),
    (lambda: tf.assert_scalar(_c([1, 2])), ValueError,
     "Expected scalar shape for Const:0, saw shape: (2,)."),
    (lambda: tf.assert_scalar(tf.placeholder(tf.float32)), ValueError,
     "Expected scalar shape for Placeholder:0, saw shape: <unknown>."),
    (lambda: tf.assert_less(_c(np.arange(3.0)), 5.0), TypeError,
     "Input 'y' of 'Less' Op has type float32 that does not match type float64 of argument "
     "'x'."),
    (lambda: tf.ensure_shape(_c([1, 2]), [3]), ValueError,
     "Dimension 0 in both shapes must be equal, but are 3 and 2. Shapes are [3] and [2]."),
]


@pytest.mark.parametrize("build,error,message", STATIC_FAILURES)
def test_static_failures_raise_while_building(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error) as info:
            build()
    text = info.value.message if isinstance(info.value, tf.errors.OpError) else str(info.value)
    assert message in text


# (builder, fetched op type and name) — TF 2.21's results when the check holds statically.
STATIC_PASSES = [
    (lambda: tf.assert_equal(_c([1, 2]), _c([1, 2])), "Assert", "assert_equal/Assert/Assert"),
    (lambda: tf.assert_greater_equal(_c([[1, 2]]), _c(1)), "Assert",
     "assert_greater_equal/Assert/Assert"),
    (lambda: tf.assert_positive(_c([], tf.float32)), "Assert",
     "assert_positive/assert_less/Assert/Assert"),
    (lambda: tf.assert_rank(_c([1, 2]), 1), "NoOp", "assert_rank/static_checks_determined_all_ok"),
    (lambda: tf.assert_rank_at_least(_c([1, 2]), 1), "NoOp",
     "assert_rank_at_least/static_checks_determined_all_ok"),
    (lambda: tf.assert_type(_c([1, 2]), tf.int32), "NoOp",
     "assert_type/statically_determined_correct_type"),
    (lambda: tf.assert_integer(_c([1, 2])), "NoOp",
     "assert_integer/statically_determined_was_integer"),
]


@pytest.mark.parametrize("build,op_type,name", STATIC_PASSES)
def test_static_passes_return_an_op_that_runs(build, op_type, name):
    with tf.Graph().as_default():
        op = build()
        assert isinstance(op, tf.Operation) and (op.type, op.name) == (op_type, name)
        with tf.Session() as sess:
            assert sess.run(op) is None


def test_assert_scalar_returns_its_input():
    with tf.Graph().as_default():
        x = tf.constant(1)
        assert tf.assert_scalar(x) is x


# (builder(placeholder), failing value, passing value, message of the step's InvalidArgumentError)
RUNTIME_FAILURES = [
    (lambda p: tf.assert_equal(p, [1.0, 3.0], message="msg here"), [1.0, 2.0], [1.0, 3.0],
     "assertion failed: [msg here] [Condition x == y did not hold element-wise:] "
     "[x (Placeholder:0) = ] [1 2] [y (assert_equal/y:0) = ] [1 3]"),
    (lambda p: tf.assert_equal(p, 0.0), np.arange(10.0), np.zeros(10),
     "assertion failed: [Condition x == y did not hold element-wise:] [x (Placeholder:0) = ] "
     "[0 1 2...] [y (assert_equal/y:0) = ] [0]"),
    (lambda p: tf.assert_less_equal(p, 0.0), [1.0, -1.0], [0.0, -1.0],
     "assertion failed: [Condition x <= y did not hold element-wise:] [x (Placeholder:0) = ] "
     "[1 -1] [y (assert_less_equal/y:0) = ] [0]"),
    (lambda p: tf.assert_positive(p), [1.0, -1.0], [1.0, 2.0],
     "assertion failed: [] [Condition x > 0 did not hold element-wise:] "
     "[x (Placeholder:0) = ] [1 -1]"),
    (lambda p: tf.assert_rank(p, 2), [1.0], [[1.0]],
     "assertion failed: [] [Tensor Placeholder:0 must have rank] [2] [Received shape: ] [1]"),
    (lambda p: tf.assert_rank_at_least(p, 2), [1.0], [[[1.0]]],
     "assertion failed: [] [Tensor Placeholder:0 must have rank at least] [2] "
     "[Received shape: ] [1]"),
    (lambda p: tf.assert_rank(p, 1, message="custom"), [[1.0]], [1.0],
     "assertion failed: [custom.  ] [Tensor Placeholder:0 must have rank] [1] "
     "[Received shape: ] [1 1]"),
    (lambda p: tf.assert_rank(p, 2, data=["mydata", p], summarize=3, message="unused"),
     [0.0, 1.0, 2.0, 3.0], [[1.0]], "assertion failed: [mydata] [0 1 2...]"),
    (lambda p: tf.assert_rank_at_least(p, 2, data=[p], summarize=2), [5.0, 6.0, 7.0],
     [[1.0]], "assertion failed: [5 6...]"),
    (lambda p: tf.assert_near(p, 1.0), [1.0, 1.5], [1.0, 1.0],
     'assertion failed: [] [x and y not equal to tolerance rtol = Tensor(\\"assert_near/rtol:0\\", '
     'shape=(), dtype=float32), atol = Tensor(\\"assert_near/atol:0\\", shape=(), '
     'dtype=float32)] '
     "[x (Placeholder:0) = ] [1 1.5] [y (assert_near/y:0) = ] [1]"),
    (lambda p: tf.ensure_shape(p, [3]), [1.0, 2.0], [1.0, 2.0, 3.0],
     "is not compatible with expected shape [3]."),
    (lambda p: tf.debugging.assert_all_finite(p, "bad"), [1.0, np.inf], [1.0, 2.0],
     "bad : Tensor had Inf values"),
]


@pytest.mark.parametrize("build,bad,good,message", RUNTIME_FAILURES)
def test_runtime_failures(build, bad, good, message):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32)
        check = build(p)
        with tf.Session() as sess:
            sess.run(check, {p: good})
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(check, {p: bad})
    assert message in info.value.message


def test_assert_in_control_dependencies_guards_a_value():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.int32, [None])
        with tf.control_dependencies([tf.assert_non_negative(p)]):
            total = tf.reduce_sum(p)
        with tf.Session() as sess:
            assert sess.run(total, {p: [1, 2]}) == 3
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(total, {p: [1, -2]})


def test_ensure_shape_merges_static_shape():
    with tf.Graph().as_default():
        y = tf.ensure_shape(tf.placeholder(tf.int32, [None, 2]), [3, None])
        assert y.op.type == "EnsureShape" and y.shape.as_list() == [3, 2]


def test_is_tensor_and_is_numeric_tensor():
    with tf.Graph().as_default():
        assert tf.is_tensor(tf.constant(1)) and tf.is_tensor(tf.Variable(1))
        assert tf.is_tensor(tf.SparseTensor([[0]], [1], [2]))
        assert not tf.is_tensor(1) and not tf.is_tensor(np.zeros(2))
        assert tf.debugging.is_numeric_tensor(tf.constant(1.0))
        assert not tf.debugging.is_numeric_tensor(tf.constant("a"))
