"""Gradients of tf.while_loop bodies that use one tensor several times (a * a, e * e, x * x,
map_fn, foldr, nested loops), against TF 2.21's values and numerical gradients, with the graph
optimizer on (as users run) and off; and second-order gradients through a loop, which TF's v1
control flow refuses with a TypeError."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos.rewriter_config_pb2 import RewriterConfig

pytestmark = pytest.mark.usefixtures("executor_kind")

# Every rewrite off: L0 and Grappler disabled.
_OPTIMIZER_OFF = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0),
    rewrite_options=RewriterConfig(disable_meta_optimizer=True)))

_X = [1.0, 2.0, 3.0]


def _loop(body):
    """sum(a after 3 iterations of a <- body(x, i, a)), a starting at [0.1, 0.2, 0.3]."""
    x = tf.constant(_X)
    a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, body(x, i, a)),
                      [0, tf.constant([0.1, 0.2, 0.3])])[1]
    return x, tf.reduce_sum(a)


def _square_of_shifted(x, i, a):
    e = a * 0.5 + x
    return e * e


def _nested():
    x = tf.constant(_X)

    def outer(i, a):
        inner = tf.while_loop(lambda j, b: j < 2, lambda j, b: (j + 1, b * b * 0.5 + x),
                              [0, a])[1]
        return i + 1, inner * inner * 0.1
    a = tf.while_loop(lambda i, a: i < 2, outer, [0, tf.constant([0.1, 0.2, 0.3])])[1]
    return x, tf.reduce_sum(a)


def _tensor_array_read():
    x = tf.constant(_X)
    rows = tf.TensorArray(tf.float32, 3).unstack(x)

    def body(i, acc):
        e = rows.read(i)
        return i + 1, acc + e * e
    return x, tf.while_loop(lambda i, a: i < 3, body, [0, tf.constant(0.0)])[1]


def _map_fn():
    x = tf.constant(_X)
    return x, tf.reduce_sum(tf.map_fn(lambda e: e * e, x))


def _nested_map_fn():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    return x, tf.reduce_sum(tf.map_fn(lambda r: tf.map_fn(lambda e: e * e, r), x))


def _foldr():
    x = tf.constant(_X)
    return x, tf.foldr(lambda a, e: a + e * e, x)


# (name, builder of (x, y), d sum(y) / dx from TF 2.21, tensorflow.compat.v1, float32)
FANOUT_CASES = [
    ("a_times_a", lambda: _loop(lambda x, i, a: a * a + x), [13.201405, 63.601852, 181.1907]),
    ("e_times_e", lambda: _loop(_square_of_shifted), [18.41893, 304.31805, 2361.6902]),
    ("captured_x_times_x", lambda: _loop(lambda x, i, a: a + x * x), [6.0, 12.0, 18.0]),
    ("add_n_of_three", lambda: _loop(lambda x, i, a: tf.add_n([a, a, a]) * 0.5 + x),
     [4.75, 4.75, 4.75]),
    ("cube", lambda: _loop(lambda x, i, a: a * a * a + x), [49.216511, 4005.9573, 80737.297]),
    ("three_ops", lambda: _loop(lambda x, i, a: a * a + tf.sin(a) + x),
     [20.256134, 77.03159, 193.84921]),
    ("square_times_a", lambda: _loop(lambda x, i, a: tf.square(a) * a + x * a),
     [0.31246352, 4.827677, 111.22784]),
    ("cond_in_body", lambda: _loop(
        lambda x, i, a: tf.cond(i < 1, lambda: a * a, lambda: a + a) + x), [7.0, 7.0, 7.0]),
    ("nested_loops", _nested, [0.66101187, 26.591179, 30099.006]),
    ("tensor_array_read", _tensor_array_read, [2.0, 4.0, 6.0]),
    ("map_fn", _map_fn, [2.0, 4.0, 6.0]),
    ("nested_map_fn", _nested_map_fn, [[2.0, 4.0], [6.0, 8.0]]),
    ("foldr", _foldr, [2.0, 4.0, 1.0]),
]


@pytest.mark.parametrize("config", [None, _OPTIMIZER_OFF], ids=["optimized", "unoptimized"])
@pytest.mark.parametrize("build,want", [c[1:] for c in FANOUT_CASES],
                         ids=[c[0] for c in FANOUT_CASES])
def test_fanout_gradients_match_tensorflow(build, want, config):
    with tf.Graph().as_default():
        x, y = build()
        (g,) = tf.gradients(y, x)
        with tf.Session(config=config) as sess:
            np.testing.assert_allclose(sess.run(g), want, rtol=2e-6)


@pytest.mark.parametrize("body", [
    lambda x, a: a * a * 0.3 + x,                          # one tensor twice in one op
    lambda x, a: a * a * a * 0.1 + x * x,                  # three uses; a captured x twice
    lambda x, a: tf.square(a) * 0.2 + tf.sin(a) * a + x,   # through different ops
], ids=["twice", "three_times", "different_ops"])
def test_fanout_gradients_against_numerical_differentiation(body):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3])
        y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, body(x, a)), [0, x])[1]
        with tf.Session():
            err = tf.test.compute_gradient_error(x, [3], y, [3], delta=1e-5,
                                                 x_init_value=np.array([0.3, -0.7, 0.2]))
    assert err < 1e-7


def test_partial_gradients_of_a_body_tensor_are_summed_once_in_the_gradient_loop():
    """a * a sends two partial gradients to a: one AddN adds them, inside the gradient loop."""
    with tf.Graph().as_default() as graph:
        x, y = _loop(lambda x, i, a: a * a + x)
        (g,) = tf.gradients(y, x)
        add_ns = [op for op in graph.get_operations() if op.type == "AddN"]
        assert len(add_ns) == 1
        assert add_ns[0]._control_flow_context is not None
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g), [13.201405, 63.601852, 181.1907], rtol=2e-6)


def test_an_x_gradient_from_two_paths_is_one_add_n_named_as_tensorflow():
    with tf.Graph().as_default() as graph:
        x = tf.constant(_X)
        (g,) = tf.gradients(x * x, x)
        assert g.name == "gradients/AddN:0"
        assert [op.type for op in graph.get_operations()].count("AddN") == 1


def test_add_n_of_one_product_twice_in_a_loop_body_runs():
    """add_n(m, m) becomes m * 2, its constant tied to the loop's frame by a control edge from
    m; pushing that constant into m = a * x would make a cycle (TF declines to)."""
    with tf.Graph().as_default():
        x = tf.constant(_X)
        a = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.add_n([a * x, a * x])),
                          [0, tf.constant([0.1, 0.2, 0.3])])[1]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(a), [0.8, 12.8, 64.8], rtol=1e-6)


# --- second order -------------------------------------------------------------------------


def _power_loop(x, **kwargs):
    """x^4 by three multiplications in a loop."""
    return tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x], **kwargs)[1]


_SECOND_ORDER = "Second-order gradient for while loops not supported."


def test_gradient_of_a_loop_gradient_raises_like_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(2.0)
        r = _power_loop(x)
        (g,) = tf.gradients(r, x)
        with pytest.raises(TypeError, match=_SECOND_ORDER):
            tf.gradients(g, x)
        with pytest.raises(TypeError, match=_SECOND_ORDER):
            tf.gradients(g * r, x)
        with tf.Session() as sess:
            assert sess.run(g) == 32.0       # the first-order gradient is still usable


def test_hessians_of_a_loop_raise():
    """TF 2.21 raises too (a ValueError from the while loop its hessians builds, or this
    TypeError); tensorweave raises the TypeError, which names the reason."""
    with tf.Graph().as_default():
        x = tf.constant([2.0, 3.0])
        with pytest.raises(TypeError, match=_SECOND_ORDER):
            tf.hessians(tf.reduce_sum(_power_loop(x)), x)


def test_gradient_through_grad_ys_of_a_loop_gradient_raises():
    with tf.Graph().as_default():
        x, w = tf.constant(2.0), tf.constant(3.0)
        r = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + x), [0, x])[1]
        (g,) = tf.gradients(r, x, grad_ys=w * w)
        with pytest.raises(TypeError, match=_SECOND_ORDER):
            tf.gradients(g, w)


def test_second_order_cases_tensorflow_allows():
    """Where no gradient flows back through a gradient loop, TF answers: so do we."""
    with tf.Graph().as_default():
        x, z = tf.constant(2.0), tf.constant(1.0)
        (g,) = tf.gradients(_power_loop(x), x)
        assert tf.gradients(g, z) == [None]                       # not connected
        assert tf.gradients(g, x, stop_gradients=[g]) == [None]
        (own,) = tf.gradients(g * 3.0, g)                          # with respect to g itself
        # v + x: the gradient loop never reads x, so x does not reach it
        linear = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + x), [0, x])[1]
        (g_linear,) = tf.gradients(linear, x)
        assert tf.gradients(g_linear, x) == [None]
        assert tf.gradients(_power_loop(x, back_prop=False), x) == [None]
        # a loop applied to a first-order gradient (no loop gradient differentiated)
        (dc,) = tf.gradients(x * x * x, x)
        (through,) = tf.gradients(_power_loop(dc), x)
        with tf.Session() as sess:
            assert sess.run([own, g_linear, through]) == [3.0, 4.0, 82944.0]
