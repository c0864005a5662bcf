"""StridedSliceAssign and ResourceStridedSliceAssign: `variable[spec].assign(value)`, with the
names, values, broadcasting and errors TensorFlow 2.21 gives the same programs."""
import re

import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor_kind")

INITIAL = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture(params=[False, True], ids=["ref", "resource"])
def variable(request):
    with tf.Graph().as_default():
        yield tf.Variable(INITIAL, name="v", use_resource=request.param)


def _run(variable, fetch, feed=None):
    with tf.Session() as sess:
        sess.run(variable.initializer)
        return sess.run(fetch, feed)


@pytest.mark.parametrize("spec, value", [
    ((0, slice(1, None)), [10.0, 20.0]),
    ((slice(None), 0), [7.0, 8.0]),
    ((slice(None, None, 2), slice(None, None, -1)), [[9.0, 8.0, 7.0]]),
    ((None, 0, Ellipsis), [[1.0, 1.0, 1.0]]),
    ((1,), [1.0, 2.0, 3.0]),
])
def test_assigns_the_slice_as_numpy_does(variable, spec, value):
    expected = INITIAL.copy()
    expected[tuple(s for s in spec if s is not None)] = np.reshape(
        value, expected[tuple(s for s in spec if s is not None)].shape)
    np.testing.assert_array_equal(_run(variable, variable[spec].assign(value)), expected)


def test_names_types_and_the_ref_result():
    with tf.Graph().as_default():
        v = tf.Variable(INITIAL, name="v")
        r = tf.Variable(INITIAL, name="r", use_resource=True)
        a = v[0, 1:].assign([10.0, 20.0])
        assert (a.op.name, a.op.type, a.dtype) == ("strided_slice/_assign",
                                                   "StridedSliceAssign", tf.float32_ref)
        assert [t.name for t in a.op.inputs] == [
            "v:0", "strided_slice/stack:0", "strided_slice/stack_1:0",
            "strided_slice/stack_2:0", "strided_slice/_assign/value:0"]
        assert (a.op.get_attr("shrink_axis_mask"), a.op.get_attr("end_mask")) == (1, 2)
        assert a.shape.as_list() == [2, 3]
        b = r[:, 0].assign([7.0, 8.0], name="named")
        update = b.op.control_inputs[0]
        assert (update.name, update.type) == ("named", "ResourceStridedSliceAssign")
        assert b.shape.as_list() == [2, 3]
        assert not hasattr(tf.constant([1.0])[0], "assign")


@pytest.mark.parametrize("value, result", [
    ([1.0], [1.0, 1.0, 1.0]),
    ([[1.0, 2.0, 3.0]], [1.0, 2.0, 3.0]),   # leading dimensions of size 1 are dropped
    (5.0, [5.0, 5.0, 5.0]),
])
def test_value_broadcasts_as_in_tensorflow(variable, value, result):
    np.testing.assert_array_equal(_run(variable, variable[0, :].assign(value))[0], result)


@pytest.mark.parametrize("value, shape", [([1.0, 2.0], "[2]"), ([[1.0], [2.0], [3.0]], "[3,1]")])
def test_value_that_cannot_broadcast_fails_the_step(variable, value, shape):
    fed = tf.placeholder(tf.float32)
    update = variable[0, :].assign(fed)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=re.escape(f"Cannot broadcast input shape {shape} into final "
                                       "shape [3]")):
        _run(variable, update, {fed: value})


def test_no_gradient_as_in_tensorflow():
    with tf.Graph().as_default():
        v = tf.Variable(INITIAL)
        x = tf.placeholder(tf.float32, [2])
        with pytest.raises(LookupError, match="op type: StridedSliceAssign"):
            tf.gradients(v[1, :2].assign(x * 2.0), x)


def test_assignments_chain_through_the_ref():
    with tf.Graph().as_default():
        v = tf.Variable(INITIAL)
        first = v[0, 0].assign(100.0)
        with tf.control_dependencies([first]):
            second = v[1, 2].assign(-1.0)
        got = _run(v, second)
    expected = INITIAL.copy()
    expected[0, 0], expected[1, 2] = 100.0, -1.0
    np.testing.assert_array_equal(got, expected)
