"""Roll, BroadcastTo, BroadcastArgs and tf.broadcast_static_shape: forward against NumPy, shape
functions against the kernels, gradients against central differences, TensorFlow 2.21's
construction-time and run-time errors (messages checked with run_with_tf), op types and names."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

ALL = (tf.float32, tf.float64, tf.int32, tf.int64, tf.bool)
INDEX = (tf.int32, tf.int64)


def _normal(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape) * 4).astype(dt)


def _const(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


_WORDS = np.array([[b"a", b"bc"], [b"", b"d"]], dtype=object)


def _broadcast_ref(shape):
    return lambda x: np.broadcast_to(x, shape)


CASES = [
    # --- Roll
    OpCase("roll", lambda x: tf.roll(x, 1, 0), lambda x: np.roll(x, 1, 0), [_normal(3, 4)],
           dtypes=ALL),
    OpCase("roll_axes", lambda x: tf.roll(x, [2, -1], [0, 1]),
           lambda x: np.roll(x, (2, -1), (0, 1)), [_normal(3, 4)]),
    OpCase("roll_negative_axis_big_shift", lambda x: tf.roll(x, 7, -1),
           lambda x: np.roll(x, 7, -1), [_normal(2, 3, 4)]),
    OpCase("roll_repeated_axis", lambda x: tf.roll(x, [1, 1, -3], [0, 0, 0]),
           lambda x: np.roll(x, -1, 0), [_normal(5)]),
    OpCase("roll_fed_shift_axis", lambda x, s, a: tf.roll(x, s, a),
           lambda x, s, a: np.roll(x, tuple(s), tuple(a)),
           [_normal(2, 3), _const([-4, 1]), _const([1, 0])], fixed_dtypes=(None,) + INDEX),
    OpCase("roll_empty", lambda x: tf.roll(x, 1, 0), lambda x: x, [_normal(0, 3)]),
    OpCase("roll_nothing", lambda x: tf.roll(x, np.zeros(0, np.int32), np.zeros(0, np.int32)),
           lambda x: x, [_normal(2, 3)]),
    OpCase("roll_strings", lambda x: tf.roll(x, 1, 1), lambda x: np.roll(x, 1, 1), [_WORDS],
           dtypes=(tf.string,), grad=False),
    # --- BroadcastTo
    OpCase("broadcast_to", lambda x: tf.broadcast_to(x, [2, 3, 4]), _broadcast_ref((2, 3, 4)),
           [_normal(3, 1)], dtypes=ALL),
    OpCase("broadcast_to_same_shape", lambda x: tf.broadcast_to(x, [3, 4]),
           _broadcast_ref((3, 4)), [_normal(3, 4)]),
    OpCase("broadcast_to_scalar", lambda x: tf.broadcast_to(x, [2, 2]), _broadcast_ref((2, 2)),
           [_normal()]),
    OpCase("broadcast_to_zero", lambda x: tf.broadcast_to(x, [0, 2]), _broadcast_ref((0, 2)),
           [_normal(1, 2)]),
    OpCase("broadcast_to_fed_shape", lambda x, s: tf.broadcast_to(x, s),
           lambda x, s: np.broadcast_to(x, s), [_normal(2, 1), _const([4, 2, 3])],
           fixed_dtypes=(None, tf.int64)),
    OpCase("broadcast_to_strings", lambda x: tf.broadcast_to(x, [3, 2, 2]),
           _broadcast_ref((3, 2, 2)), [_WORDS], dtypes=(tf.string,), grad=False),
    # --- BroadcastArgs
    OpCase("broadcast_dynamic_shape", tf.broadcast_dynamic_shape,
           lambda a, b: np.array(np.broadcast_shapes(tuple(a), tuple(b)), a.dtype),
           [_const([1, 2, 3]), _const([5, 1, 3])], dtypes=INDEX, grad=False),
    OpCase("broadcast_dynamic_shape_ranks", tf.broadcast_dynamic_shape,
           lambda a, b: np.array([4, 0, 3], a.dtype), [_const([4, 1, 1]), _const([0, 3])],
           dtypes=INDEX, grad=False),
    OpCase("broadcast_dynamic_shape_empty", tf.broadcast_dynamic_shape,
           lambda a, b: b, [np.zeros(0), _const([3])], dtypes=INDEX, grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_op_types_names_and_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        made = [
            (tf.roll(x, 1, 0), "Roll", "Roll", [None, 4]),
            (tf.broadcast_to(x, [3, 5, 4]), "BroadcastTo", "BroadcastTo", [3, 5, 4]),
            (tf.broadcast_to(tf.placeholder(tf.float32, [None, 1]), [3, 5]), "BroadcastTo_1",
             "BroadcastTo", [3, 5]),
            (tf.broadcast_to(tf.placeholder(tf.float32, [3, None]),
                             tf.stack([tf.placeholder(tf.int32, []), 4])),
             "BroadcastTo_2", "BroadcastTo", [3, 4]),
            (tf.broadcast_to(x, tf.placeholder(tf.int32, [3])), "BroadcastTo_3", "BroadcastTo",
             [None, None, 4]),
            (tf.broadcast_dynamic_shape(tf.placeholder(tf.int32, [3]),
                                        tf.placeholder(tf.int32, [5])),
             "BroadcastArgs", "BroadcastArgs", [5]),
            (tf.broadcast_dynamic_shape(tf.placeholder(tf.int64, [3]),
                                        tf.placeholder(tf.int64, [None])),
             "BroadcastArgs_1", "BroadcastArgs", [None]),
        ]
        for tensor, name, op_type, shape in made:
            assert (tensor.op.name, tensor.op.type, tensor.shape.as_list()) == \
                (name, op_type, shape)
        assert tf.broadcast_to(x, tf.placeholder(tf.int32)).shape.ndims is None
        assert tf.roll(x, np.int64(1), 0).op.get_attr("Tshift") == tf.int64
        # A BroadcastTo whose target is BroadcastArgs of constants has a static shape.
        y = tf.broadcast_to(1.0, tf.broadcast_dynamic_shape([2, 1], [1, 3]))
        assert y.shape.as_list() == [2, 3]


@pytest.mark.parametrize("x,y,expected", [
    ([1, 2, 3], [5, 1, 3], [5, 2, 3]),
    ([None, 2, 3], [5, 1, 1], [5, 2, 3]),
    ([None], [1], [None]),
    ([None], [3], [3]),
    ([0, None], [None], [0, None]),
    ([2, 1], [], [2, 1]),
    (None, [5, 1, 1], None),
])
def test_broadcast_static_shape(x, y, expected):
    got = tf.broadcast_static_shape(tf.TensorShape(x), tf.TensorShape(y))
    assert got.as_list() == expected if expected is not None else got.ndims is None


def test_broadcast_static_shape_rejects_incompatible_shapes():
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting\. .* "
                                         r"Received: \(2,\) and \(3,\)\."):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))


def test_gradients_are_built_as_tensorflow_builds_them():
    with tf.Graph().as_default():
        x = tf.constant(np.array([[1.0], [2.0]], np.float32))
        bx = tf.broadcast_to(x, [3, 2, 5])
        rx = tf.roll(x, 1, 0)
        gb, gr = tf.gradients(bx, x)[0], tf.gradients(rx, x)[0]
        types = {op.type for op in tf.get_default_graph().get_operations()
                 if op.name.startswith("gradients")}
        assert {"BroadcastGradientArgs", "Sum", "Reshape", "Neg", "Roll"} <= types
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(gb), [[15.0], [15.0]])
            np.testing.assert_array_equal(sess.run(gr), [[1.0], [1.0]])
        assert tf.gradients(tf.broadcast_dynamic_shape(tf.shape(x), [3, 1]), x) == [None]


def test_broadcast_to_gradient_with_a_fed_target_shape():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 1])
        target = tf.placeholder(tf.int32, [3])
        grad = tf.gradients(tf.broadcast_to(x, target) * 2.0, x)[0]
        with tf.Session() as sess:
            got = sess.run(grad, {x: np.ones((2, 1), np.float32), target: [4, 2, 3]})
        np.testing.assert_array_equal(got, np.full((2, 1), 24.0, np.float32))


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.roll(np.float32(3), 1, 0), ValueError, "at least rank 1 but is rank 0"),
    (lambda: tf.roll(np.zeros((3, 4)), [1, 2], [0]), ValueError,
     r"Dimension 0 in both shapes must be equal, but are 2 and 1\. Shapes are \[2\] and \[1\]"),
    (lambda: tf.roll(np.zeros((3, 4)), [[1]], [0]), ValueError,
     "at most rank 1 but is rank 2"),
    (lambda: tf.roll(np.zeros((3, 4)), 1, [[0]]), ValueError, "at most rank 1 but is rank 2"),
    (lambda: tf.roll(np.zeros((3, 4)), 1.0, 0), TypeError, "not in list of allowed values"),
    (lambda: tf.broadcast_to(np.float32([1, 2]), [3, 3]), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.broadcast_to(np.zeros(3, np.float32), [1]), ValueError,
     "Dimensions must be equal, but are 3 and 1"),
    (lambda: tf.broadcast_to(np.zeros((3, 4)), [4]), ValueError,
     "at most rank 1 but is rank 2"),
    (lambda: tf.broadcast_to(np.zeros((3, 4)), [[3, 4]]), ValueError,
     "Shape must be rank 1 but is rank 2"),
    (lambda: tf.broadcast_dynamic_shape([[2]], [3]), ValueError,
     "Shape must be rank 1 but is rank 2"),
    (lambda: tf.broadcast_dynamic_shape([0.0], [3.0]), TypeError,
     "not in list of allowed values: int32, int64"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


_X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("build,feeds,match", [
    (lambda: tf.roll(_X, 1, 2), [], "axis 2 is out of range"),
    (lambda: tf.roll(_X, 1, -3), [], "axis -1 is out of range"),
    (lambda a: tf.roll(_X, 1, a), [np.int32(5)], "axis 5 is out of range"),
    (lambda a: tf.roll(_X, [1, 2], a), [np.int32([0])], "shift and axis must have the same size"),
    (lambda s: tf.roll(_X, s, [0]), [np.int32([[1]])],
     r"shift must be a scalar or a 1-D vector. Found: \[1,1\]"),
    (lambda s, a: tf.roll(_X, s, a), [np.int32([1]), np.int32([[0]])],
     r"axis must be a scalar or a 1-D vector. Found: \[1,1\]"),
    (lambda x: tf.roll(x, 1, 0), [np.float32(3)], "input must be 1-D or higher"),
    (lambda: tf.broadcast_to(_X, [-1, 4]), [], "Dimension -1 must be >= 0"),
    (lambda s: tf.broadcast_to(_X, s), [np.int32([3, 3])], r"Incompatible shapes: \[3,4\] vs. "
     r"\[3,3\]"),
    (lambda s: tf.broadcast_to(_X, s), [np.int32([4])],
     r"Rank of input \(2\) must be no greater than rank of output shape \(1\)\."),
    (lambda s: tf.broadcast_to(_X, s), [np.int32([[3, 4]])],
     r"shape must be a vector of \{int32,int64\}, got shape \[1,2\]"),
    (lambda s: tf.broadcast_to(np.zeros(0, np.float32), s), [np.int32([5])],
     r"Incompatible shapes: \[0\] vs. \[5\]"),
    (lambda: tf.broadcast_to(np.zeros(0, np.float32), [1]), [],
     r"Unable to broadcast tensor of shape \[0\] to tensor of shape \[1\]"),
    (lambda: tf.broadcast_dynamic_shape([2], [3]), [], r"Incompatible shapes: \[2\] vs. \[3\]"),
    (lambda a: tf.broadcast_dynamic_shape(a, [3]), [np.int32([[3]])],
     r"In\[0\] must be a vector.\[1,1\]"),
])
def test_runtime_errors(build, feeds, match):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.as_dtype(np.asarray(f).dtype)) for f in feeds]
        tensor = build(*holders)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=match):
                sess.run(tensor, dict(zip(holders, feeds)))


def test_broadcast_to_its_own_shape_forwards_a_variable_read_safely():
    """BroadcastTo to the input's shape aliases it (returns_view): a fetched value must not
    change when the variable is updated afterwards."""
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32))
        same = tf.broadcast_to(v, [3])
        with tf.Session() as sess:
            sess.run(v.initializer)
            before = sess.run(same)
            sess.run(v.assign_add(np.ones(3, np.float32)))
            np.testing.assert_array_equal(before, np.ones(3, np.float32))
            np.testing.assert_array_equal(sess.run(same), np.full(3, 2.0, np.float32))
