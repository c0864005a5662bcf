"""tf.gradients end to end: a linear regression against its analytic gradient, which paths carry
no gradient (integers, unconnected xs, stop_gradients), the LookupError for an op without a
gradient, gradient overrides, grad_ys, and the errors TensorFlow raises for bad arguments."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op

# Test-only ops (the "_Test" prefix keeps them out of the op-coverage meta-tests).
_NoGradient = define_op("_TestNoGradient", inputs=["x: T"], outputs=["y: T"],
                        attrs=[TypeAttr("T")], shape_fn=shape_fns.unchanged)
_Constant = define_op("_TestNotDifferentiable", inputs=["x: T"], outputs=["y: T"],
                      attrs=[TypeAttr("T")], shape_fn=shape_fns.unchanged,
                      not_differentiable=True)


@tf.RegisterGradient("_TestTimesTen")
def _times_ten(op, grad):
    return [grad * 10.0]


@tf.RegisterGradient("_TestWrongShape")
def _wrong_shape(op, grad):
    return [tf.constant([1.0, 2.0, 3.0])]


@tf.RegisterGradient("_TestWrongCount")
def _wrong_count(op, grad):
    return [grad, grad]


def _run(*fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches), feed)


def test_linear_regression_gradient_matches_the_analytic_one():
    rng = np.random.RandomState(0)
    xs = rng.randn(8, 3).astype(np.float32)
    ys = (xs @ np.array([[1.5], [-2.0], [0.5]]) + 0.3 + 0.1 * rng.randn(8, 1)).astype(np.float32)
    w0, b0 = rng.randn(3, 1).astype(np.float32), np.array([0.2], np.float32)
    with tf.Graph().as_default():
        w = tf.Variable(w0, name="w")
        b = tf.Variable(b0, name="b")
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        grad_w, grad_b = tf.gradients(loss, [w, b])
        assert grad_w.shape.as_list() == [3, 1] and grad_b.shape.as_list() == [1]
        assert grad_w.dtype == tf.float32 and grad_b.dtype == tf.float32
        got_w, got_b = _run(grad_w, grad_b, feed={x: xs, y: ys})
    residual = xs @ w0 + b0 - ys
    np.testing.assert_allclose(got_w, 2 / len(xs) * xs.T @ residual, rtol=1e-5)
    np.testing.assert_allclose(got_b, 2 / len(xs) * residual.sum(axis=0), rtol=1e-5)


def test_gradients_from_several_paths_add_up():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        (g,) = tf.gradients(x * 2.0 + tf.sin(x) + x * x, x)
        (identity,) = tf.gradients(x, x)
        xv = np.array([0.5, -1.0, 2.0])
        got, ones = _run(g, identity, feed={x: xv})
    np.testing.assert_allclose(got, 2 + np.cos(xv) + 2 * xv)
    np.testing.assert_array_equal(ones, [1, 1, 1])


def test_integer_paths_give_none():
    with tf.Graph().as_default():
        x = tf.constant([1.5, 2.5])
        i = tf.constant([1, 2])
        assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]
        assert tf.gradients(tf.cast(i, tf.float32) * 2.0, i) == [None]
        assert tf.gradients(i * 2, i) == [None]                  # an integer y
        assert tf.gradients(x > 1.0, x) == [None]                 # a bool y
        assert tf.gradients(tf.cast(x, tf.int32) * 3, x) == [None]
        # A float path next to an integer one still carries its gradient.
        (g,) = tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32) + x * 3.0, x)
        assert _run(g)[0].tolist() == [3.0, 3.0]


def test_an_op_without_gradient_raises_lookup_error_naming_its_type():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = apply_op(_NoGradient, [x * 2.0], name="custom")
        with pytest.raises(LookupError, match=r"'custom' \(op type: _TestNoGradient\)"):
            tf.gradients(y, x)
        # Off the path between xs and ys, or behind stop_gradient, it is never asked.
        other = tf.constant([3.0, 4.0])
        (beside,) = tf.gradients(apply_op(_NoGradient, [other]) + x, x)
        assert tf.gradients(y + x, other) == [None]
        (through_stop,) = tf.gradients(tf.stop_gradient(y) + x, x)
        # A declared non-differentiable op passes no gradient.
        assert tf.gradients(apply_op(_Constant, [x]), x) == [None]
        assert [v.tolist() for v in _run(beside, through_stop)] == [[1.0, 1.0], [1.0, 1.0]]


def test_not_differentiable_registration_and_override_of_a_missing_gradient():
    with tf.Graph().as_default() as g:
        x = tf.constant([1.0, 2.0])
        with g.gradient_override_map({"_TestNoGradient": "_TestTimesTen"}):
            y = apply_op(_NoGradient, [x])
        assert y.op.get_attr("_gradient_op_type") == b"_TestTimesTen"
        (grad,) = tf.gradients(y, x)
        assert _run(grad)[0].tolist() == [10.0, 10.0]
    with pytest.raises(KeyError, match="Registering two gradient with name '_TestTimesTen'"):
        tf.RegisterGradient("_TestTimesTen")(_times_ten)
    with pytest.raises(TypeError):
        tf.RegisterGradient(1)


def test_gradient_override_map_replaces_a_registered_gradient():
    with tf.Graph().as_default() as g:
        x = tf.constant([1.0, 3.0])
        with g.gradient_override_map({"Square": "_TestTimesTen"}):
            overridden = tf.square(x)
        plain = tf.square(x)
        got = _run(tf.gradients(overridden, x)[0], tf.gradients(plain, x)[0])
    np.testing.assert_array_equal(got[0], [10.0, 10.0])
    np.testing.assert_array_equal(got[1], [2.0, 6.0])


def test_stop_gradients_treats_tensors_as_constants():
    with tf.Graph().as_default():
        a = tf.constant(2.0)
        b = a * 3.0
        c = b * a
        stopped = tf.gradients(c, [a, b], stop_gradients=[b])
        full = tf.gradients(c, [a, b])
        blocked = tf.gradients(tf.stop_gradient(a * 3.0) * a, a)
        got = _run(*stopped, *full, *blocked)
    assert got == [6.0, 2.0, 12.0, 2.0, 6.0]


def test_unconnected_gradients():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        other = tf.placeholder(tf.float32, [3])
        assert tf.gradients(x * 2.0, other) == [None]
        assert tf.gradients(x * 2.0, other, unconnected_gradients="none") == [None]
        (zeros,) = tf.gradients(x * 2.0, other, unconnected_gradients="zero")
        (zeros_enum,) = tf.gradients(x * 2.0, [other],
                                     unconnected_gradients=tf.UnconnectedGradients.ZERO)
        assert zeros.shape.as_list() == [3] and zeros.dtype == tf.float32
        with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'bad'"):
            tf.gradients(x * 2.0, other, unconnected_gradients="bad")
        got = _run(zeros, zeros_enum)
    np.testing.assert_array_equal(got, [[0, 0, 0], [0, 0, 0]])


def test_grad_ys_weight_each_y():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0, 3.0])
        (weighted,) = tf.gradients(x * x, x, grad_ys=tf.constant([1.0, 2.0, 3.0]))
        (from_list,) = tf.gradients(x * x, x, grad_ys=[[0.5, 0.5, 0.5]])
        both = tf.gradients([x * 2.0, x * x], x, grad_ys=[tf.ones([3]), tf.fill([3], 0.5)])
        with pytest.raises(ValueError, match="Passed 2 grad_ys for 1 ys"):
            tf.gradients(x * 2.0, x, grad_ys=[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
        with pytest.raises(TypeError, match="Gradient type float64"):
            tf.gradients(x * 2.0, x, grad_ys=tf.constant([1.0, 1.0, 1.0], tf.float64))
        c = tf.constant([1j])
        with pytest.raises(TypeError, match="Gradients of complex tensors"):
            tf.gradients(c * c, c)
        got = _run(weighted, from_list, *both)
    np.testing.assert_array_equal(got[0], [2.0, 8.0, 18.0])
    np.testing.assert_array_equal(got[1], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(got[2], [3.0, 4.0, 5.0])


def test_gradient_functions_of_the_wrong_shape_or_count_are_errors():
    with tf.Graph().as_default() as g:
        x = tf.constant([1.0, 2.0])
        with g.gradient_override_map({"Neg": "_TestWrongShape"}):
            bad_shape = tf.negative(x)
        with g.gradient_override_map({"Neg": "_TestWrongCount"}):
            bad_count = tf.negative(x)
        with pytest.raises(ValueError, match=r"Incompatible shapes between op input and "
                           r"calculated input gradient\. Forward operation: Neg\. Input index: "
                           r"0\. Original input shape: \(2,\)\. Calculated input gradient "
                           r"shape: \(3,\)"):
            tf.gradients(bad_shape, x)
        with pytest.raises(ValueError, match="Num gradients 2 generated for op"):
            tf.gradients(bad_count, x)


def test_gradient_ops_live_in_the_gradients_name_scope():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0], name="x")
        y = tf.exp(x, name="e")
        (g,) = tf.gradients(y, x)
        (g2,) = tf.gradients(y, x, name="mine")
        assert g.op.name == "gradients/e_grad/mul" and g.op.type == "Mul"
        assert g2.op.name.startswith("mine/e_grad/")


def test_compute_gradient_error_is_small_for_correct_gradients():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 3])
        y = tf.tanh(x) * tf.exp(x) / (1.0 + tf.square(x))
        with tf.Session():
            err = tf.test.compute_gradient_error(x, [2, 3], y, [2, 3])
    assert err < 1e-5  # central differences with TF's default delta, 1e-3


@pytest.mark.parametrize("colocate", [False, True])
def test_default_grad_ys_follow_the_device_scope_unless_colocating(colocate):
    """TF 2.21: ones(shape(y), name='grad_ys_i') — a Fill 'g/grad_ys_0' fed by
    'g/grad_ys_0/Const' — colocated with y only under colocate_gradients_with_ops."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        with tf.device("/job:w/cpu:2"):
            z = tf.reduce_sum(x * 3.0, name="z")
        with tf.device("/cpu:0"):
            tf.gradients(z, x, name="g", colocate_gradients_with_ops=colocate)
    fill = g.get_operation_by_name("g/grad_ys_0")
    one = g.get_operation_by_name("g/grad_ys_0/Const")
    assert fill.type == "Fill" and fill.inputs[1].op is one
    for op in (fill, one):
        if colocate:
            assert op.device == "/job:w/device:CPU:2"
            assert op.colocation_groups() == [b"loc:@z"]
        else:
            assert op.device == "/device:CPU:0"
            assert "_class" not in op.node_def.attr
