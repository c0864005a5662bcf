"""Fed shapes: a static shape inferred from a value the run feeds is re-inferred before any pass
trusts it; every other static shape is kept. Structurally (the pass alone) and numerically: with
the optimizer on, a fed shape value gives the result (or the error) it gives with it off."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.array_ops import shape_internal
from tensorweave.runtime.passes import arithmetic as _arithmetic
from tensorweave.runtime.passes.fed_shapes import reinfer_fed_shapes
from tensorweave.runtime.passes.options import ANY, PassOptions

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _outcome(pt, fetches, feed, cfg):
    """The run's results, or the type of the error it raised."""
    try:
        return pt.run(fetches, feed, cfg)
    except errors.OpError as e:
        return type(e)


def _same_on_and_off(pt, fetches, feed):
    """Runs with every pass off and on (also with only the arithmetic pass on): same results or
    the same error; returns the result."""
    only_arithmetic = pt.config(level_off=True,
                                arithmetic_optimization=pt.RewriterConfig.ON)
    plain = _outcome(pt, fetches, feed, pt.OFF)
    for cfg in (None, only_arithmetic):
        optimized = _outcome(pt, fetches, feed, cfg)
        if isinstance(plain, type):
            assert optimized is plain
        else:
            for a, b in zip(plain if isinstance(plain, list) else [plain],
                            optimized if isinstance(optimized, list) else [optimized]):
                np.testing.assert_array_equal(b, a)
    return plain


def _shape(graph, op):
    return next(n for n in graph if n.op == op).output_shapes[0].as_list()


def test_a_shape_inferred_from_a_fed_value_is_forgotten(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    s = tf.shape(x)
    z = tf.reshape(x, s)
    assert z.shape.as_list() == [2, 3]             # built from the value of Shape
    graph, opts = pt.apply(reinfer_fed_shapes, tf.reduce_sum(z, 0), feeds=[x, s])
    assert _shape(graph, "Reshape") == [None, None] and _shape(graph, "Sum") == [None]
    assert opts.log.kinds() == ["fed_shape", "fed_shape"]


def test_shapes_not_built_from_a_fed_value_stay(pt):
    x = tf.placeholder(tf.float32, [None, 3])
    n = tf.placeholder(tf.int32, [])
    a = tf.reshape(x, [-1, 1, 3]) * tf.ones([1, 2, 3])
    b = tf.reshape(x, tf.stack([n, 3]))            # the fed n was never a known value
    c = tf.reshape(x * 2.0, tf.shape(x))
    c.set_shape([4, 3])                             # refined by the user: kept
    graph, opts = pt.apply(reinfer_fed_shapes, [a, b, c], feeds=[x, n])
    assert opts.log.count == 0
    shapes = {n.name: n.output_shapes for n in graph}
    assert shapes[a.op.name][0].as_list() == [None, 2, 3]
    assert shapes[b.op.name][0].as_list() == [None, 3]
    assert shapes[c.op.name][0].as_list() == [4, 3]


def test_reshape_to_a_fed_shape_is_not_reshape_to_its_own_shape(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    s = tf.shape(x)
    z = tf.reduce_sum(tf.reshape(x, s), 0)
    assert _same_on_and_off(pt, z, {x: X, s: [3, 2]}).tolist() == [6.0, 9.0]
    graph, _ = pt.apply(lambda g, o: _arithmetic.simplify_arithmetic(reinfer_fed_shapes(g, o),
                                                                     o), z, feeds=[x, s])
    assert "Reshape" in pt.ops(graph)


def test_a_fed_shape_keeps_the_broadcast_of_x_times_ones(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    c = tf.constant([2, 3])
    w = tf.reshape(x, c) * tf.ones([2, 3])
    assert _same_on_and_off(pt, w, {x: X, c: [3, 2]}) is errors.InvalidArgumentError
    assert _same_on_and_off(pt, w, {x: X, c: [1, 6]}) is errors.InvalidArgumentError
    np.testing.assert_array_equal(_same_on_and_off(pt, w, {x: X, c: [2, 3]}), X)


def test_a_fed_inner_shape_keeps_a_reshape_pair_and_its_error(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    k = tf.constant([3, 2])
    v = tf.reshape(tf.reshape(x, k), [2, 3])
    assert _same_on_and_off(pt, v, {x: X, k: [1, 7]}) is errors.InvalidArgumentError
    np.testing.assert_array_equal(_same_on_and_off(pt, v, {x: X, k: [6, 1]}), X)


@pytest.mark.parametrize("inner", [[5, 6], [-1, 4], [-1, 12]], ids=str)
def test_a_reshape_pair_whose_inner_reshape_may_fail_is_kept(pt, inner):
    x = tf.placeholder(tf.float32, [None, 6])
    v = tf.reshape(tf.reshape(x, inner), [-1])
    graph, _ = pt.apply(_arithmetic.simplify_arithmetic, v, feeds=[x])
    assert pt.ops(graph)["Reshape"] == 2
    assert _same_on_and_off(pt, v, {x: np.ones((1, 6), np.float32)}) is \
        errors.InvalidArgumentError


def test_a_reshape_pair_whose_inner_reshape_cannot_fail_collapses(pt):
    x = tf.placeholder(tf.float32, [None, 6])
    v = tf.reshape(tf.reshape(x, [-1, 3]), [-1, 2])
    graph, opts = pt.apply(_arithmetic.simplify_arithmetic, v, feeds=[x])
    assert pt.ops(graph)["Reshape"] == 1 and "reshape_pair" in opts.log.kinds()
    _same_on_and_off(pt, v, {x: np.arange(12, dtype=np.float32).reshape(2, 6)})


def test_a_folded_shape_of_a_fed_reshape_is_the_fed_one(pt):
    # (tf.shape itself would be a constant when built: a Shape op is what constant folding sees)
    x = tf.placeholder(tf.float32, [2, 3])
    c = tf.constant([2, 3])
    r = tf.reshape(x, c)
    fetches = [shape_internal(r, optimize=False), shape_internal(r * 2.0, optimize=False)]
    out = _same_on_and_off(pt, fetches, {x: X, c: [3, 2]})
    assert out[0].tolist() == [3, 2] and out[1].tolist() == [3, 2]


def test_fed_shapes_inside_a_cond(pt):
    x = tf.placeholder(tf.float32, [2, 3])
    p = tf.placeholder(tf.bool, [])
    c = tf.constant([2, 3])
    y = tf.cond(p, lambda: tf.reshape(x, c) * tf.ones([2, 3]), lambda: tf.reshape(x, c) * 2.0)
    for pred in (True, False):
        _same_on_and_off(pt, y, {x: X, c: [3, 2], p: pred})


def test_fed_shapes_around_a_loop(pt):
    # the loop variable starts as a reshape to a fed shape: Enter, Merge, Switch, the body and
    # Exit all forget the built shape, and x * ones keeps its broadcast
    x = tf.placeholder(tf.float32, [2, 3])
    c = tf.constant([2, 3])
    _, out = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 1.0 + tf.ones([2, 3])),
                           [tf.constant(0), tf.reshape(x, c)])
    y = out * tf.ones([2, 3])
    graph, opts = pt.apply(reinfer_fed_shapes, y, feeds=[x, c])
    assert {"Enter", "Merge", "Switch", "Exit"} <= {n.op for n in graph
                                                    if n.name in {e[2] for e in opts.log}}
    assert _same_on_and_off(pt, y, {x: X, c: [3, 2]}) is errors.InvalidArgumentError
    np.testing.assert_array_equal(_same_on_and_off(pt, y, {x: X}), X + 3)


def test_runs_whenever_any_pass_runs():
    # no switch of its own (the numeric checks above also run with only arithmetic on)
    assert not PassOptions(switches=()).enabled(ANY)
    assert PassOptions(switches=("remapping",)).enabled(ANY)
