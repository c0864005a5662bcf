"""tf.custom_gradient in graph mode (one IdentityN with an overridden gradient; inputs,
nested outputs, variables), tf.grad_pass_through and tf.recompute_grad: values and errors
recorded from TensorFlow 2.21 for the same programs."""
import numpy as np
import pytest

import tensorweave as tf


@tf.custom_gradient
def _log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.log(1 + e), grad


@tf.custom_gradient
def _two(a, b):
    def grad(da, db):
        return [da * 10.0 + db, db * 100.0]
    return [a * b, a + b], grad


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_the_gradient_function_replaces_autodiff():
    with tf.Graph().as_default():
        x = tf.constant([0.0, 100.0, -3.0])
        y = _log1pexp(x)
        assert y.op.type == "IdentityN"
        assert y.op.get_attr("_gradient_op_type").startswith(b"CustomGradient-")
        value, grad = _run([y, tf.gradients(y, x)[0]])
    np.testing.assert_allclose(value, [np.log(2), np.inf, np.log1p(np.exp(-3))], rtol=1e-6)
    # The stable form: autodiff of log(1 + e^x) would give NaN at x = 100.
    np.testing.assert_allclose(grad, [0.5, 1.0, 0.04742587], rtol=1e-6)


def test_several_inputs_and_a_list_of_outputs():
    with tf.Graph().as_default():
        a, b = tf.constant(2.0), tf.constant(3.0)
        p, q = _two(a, b)
        ga, gb = tf.gradients(p + 2 * q, [a, b])
        assert _run([p, q, ga, gb]) == [6.0, 5.0, 12.0, 200.0]


def test_variables_get_the_variable_gradients():
    seen = []
    with tf.Graph().as_default():
        w = tf.Variable(3.0, name="w")

        @tf.custom_gradient
        def scaled(x):
            def grad(dy, variables=None):
                seen.append([v.name for v in variables])
                return dy * 7.0, [dy * 11.0]
            return x * w, grad
        x = tf.constant(2.0)
        z = scaled(x)
        gx, gw = tf.gradients(z, [x, w])
        assert _run([z, gx, gw]) == [6.0, 7.0, 11.0]
    assert seen == [["w:0"]]


def test_errors():
    with tf.Graph().as_default():
        w = tf.Variable(3.0)

        @tf.custom_gradient
        def no_variables_argument(x):
            return x * w, lambda dy: dy
        with pytest.raises(TypeError, match="grad_fn must accept keyword argument 'variables'"):
            no_variables_argument(tf.constant(1.0))

        @tf.custom_gradient
        def creates(x):
            v = tf.get_variable("inner", [], initializer=tf.zeros_initializer())
            return x * v, lambda dy, variables=None: (dy, [dy])
        with pytest.raises(TypeError, match="must be `ResourceVariable`s"):
            creates(tf.constant(1.0))
        with pytest.raises(ValueError, match="supports keywords arguments only when eager"):
            _log1pexp(x=tf.constant(1.0))

        @tf.custom_gradient
        def short(x):
            return x * w, lambda dy, variables=None: (dy, [])
        z = short(tf.constant(1.0))
        with pytest.raises(ValueError, match="Must return gradient for each variable"):
            tf.gradients(z, w)


def test_grad_pass_through():
    with tf.Graph().as_default():
        u = tf.constant([1.4, -2.6])
        y = tf.grad_pass_through(lambda t: tf.round(t) * 2.0)(u)
        assert y.op.type == "IdentityN"
        value, grad = _run([y, tf.gradients(y * [3.0, 5.0], u)[0]])
    np.testing.assert_array_equal(value, [2.0, -6.0])
    np.testing.assert_array_equal(grad, [3.0, 5.0])


def test_recompute_grad_recomputes_the_forward_pass():
    with tf.Graph().as_default() as g:
        k = tf.constant([1.0, 2.0])
        r = tf.recompute_grad(lambda t: tf.sin(t) * t)(k)
        n_sin = sum(op.type == "Sin" for op in g.get_operations())
        grad = tf.gradients(r * [1.0, 3.0], k)[0]
        assert sum(op.type == "Sin" for op in g.get_operations()) == n_sin + 1
        value, grad = _run([r, grad])
    np.testing.assert_allclose(value, [0.841471, 1.8185948], rtol=1e-6)
    np.testing.assert_allclose(grad, [1.3817732, 0.23101115], rtol=1e-6)
