"""Grappler's constant-folding algebra (constant_push_down.py): division by a constant and
constants of add/mul chains, structurally (the pass alone) and against TF 2.21's results."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos.rewriter_config_pb2 import RewriterConfig
from tensorweave.runtime.passes.constant_push_down import push_down_constants


def test_integer_constant_hoisting_is_exact(pt):
    x = tf.placeholder(tf.int32, [3])
    y = x
    for c in (5, -3, 2**30, 2**30):            # wraps around: still exact
        y = y + c
    y = 7 - y
    graph, opts = pt.apply(push_down_constants, y, feeds=[x])
    assert pt.ops(graph) == {"_Arg": 1, "Const": 1, "Sub": 1, "_Retval": 1}
    assert "hoist_constants" in opts.log.kinds()
    pt.compare(y, {x: np.array([0, 1, 2**31 - 1], np.int32)})


def test_float_add_chain_becomes_one_add_within_tolerance(pt):
    x = tf.placeholder(tf.float32, [], name="x")
    y = x
    for _ in range(100):
        y = y + 1.0
    graph, _ = pt.apply(push_down_constants, y, feeds=[x])
    assert pt.ops(graph) == {"_Arg": 1, "Const": 1, "AddV2": 1, "_Retval": 1}
    for v in (0.0, 1e-3, -57.5, 3e7):
        plain = pt.run(y, {x: np.float32(v)}, pt.OFF)
        optimized = pt.run(y, {x: np.float32(v)})
        # reassociation: at most (n + 1)/2 ulp of the largest partial sum (n = 100)
        assert abs(optimized - plain) <= 50.5 * np.spacing(np.float32(abs(v) + 100))
    # and the hoisted form is the exact one where float32 drops the small steps
    assert pt.run(y, {x: np.float32(3e7)}) == np.float32(3e7) + np.float32(100)


def test_mul_chain_hoists_and_keeps_overflow(pt):
    x = tf.placeholder(tf.float32, [2])
    y = (x * 3.0) * 0.5
    huge = (x * 3e38) * 10.0            # the combined constant overflows: not hoisted
    graph, _ = pt.apply(push_down_constants, [y, huge], feeds=[x])
    assert pt.ops(graph)["Mul"] == 3
    pt.compare([y, huge], {x: np.array([1.0, -2.0], np.float32)}, rtol=2.5e-7)


def test_hoisting_is_reassociation_whose_intermediate_may_overflow(pt):
    # documented: (x * 10) * 0.1 -> x * 1.0 and (x + 1e38) - 1e38 -> x + 0.0 lose the
    # intermediate's overflow (TensorFlow's optimizer hoists the same way), within the combined
    # constant's limits
    x = tf.placeholder(tf.float32, [2])
    ys = [(x * 10.0) * 0.1, (x + 1e38) - 1e38]
    graph, opts = pt.apply(push_down_constants, ys, feeds=[x])
    assert opts.log.kinds().count("hoist_constants") == 2
    feed = {x: np.array([3e38, 1.0], np.float32)}
    plain, optimized = pt.run(ys, feed, pt.OFF), pt.run(ys, feed)
    assert np.isinf(plain[0][0]) and np.isinf(plain[1][0])
    assert optimized[0][0] == np.float32(3e38) and optimized[1][0] == np.float32(3e38)
    np.testing.assert_allclose(optimized[0][1], plain[0][1], rtol=2.5e-7)


def test_division_by_a_power_of_two_becomes_an_exact_multiplication(pt):
    x = tf.placeholder(tf.float32, [4])
    y, z = x / 4.0, x / tf.constant([0.5, -2.0, 8.0, 0.25])
    graph, opts = pt.apply(push_down_constants, [y, z], feeds=[x])
    assert "RealDiv" not in pt.ops(graph) and opts.log.kinds().count("div_to_mul") == 2
    feed = {x: np.array([1.0, 7.0, -0.1, 3e38], np.float32)}
    pt.compare([y, z], feed)                                   # exact


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("divisor", [255.0, [7.0, 3.0, 5.0, 9.0, 11.0]])
def test_division_by_a_constant_rounds_as_tensorflow_does(pt, dtype, divisor):
    """TensorFlow's constant folding turns x / c into x * (1 / c), so x / 255.0 rounds as
    there: checked against TF 2.21 for these dtypes, a scalar and a vector (under 8 float32
    values, where TF's reciprocal is rounded rather than Eigen's vectorized approximation).
    Exact with constant folding off (arithmetic optimization does not matter) or every
    rewrite off. The graph has the 4 nodes Grappler needs to look at it (see below)."""
    c = np.array(divisor, dtype)
    values = np.random.RandomState(0).uniform(0, 255, (200, c.size)).astype(dtype)
    x = tf.placeholder(tf.as_dtype(dtype), [None, c.size])
    y = x / tf.constant(c)
    tf.identity(y)
    graph, opts = pt.apply(push_down_constants, y, feeds=[x])
    assert "RealDiv" not in pt.ops(graph) and "div_to_mul" in opts.log.kinds()
    reciprocal = values * (dtype(1) / c)
    assert not np.array_equal(reciprocal, values / c)          # the rewrite is visible
    for cfg in (None, pt.config(arithmetic_optimization=pt.RewriterConfig.OFF)):
        np.testing.assert_array_equal(pt.run(y, {x: values}, cfg), reciprocal)
    for off in (pt.config(constant_folding=pt.RewriterConfig.OFF),
                pt.config(constant_folding=pt.RewriterConfig.OFF,
                          arithmetic_optimization=pt.RewriterConfig.AGGRESSIVE), pt.OFF):
        np.testing.assert_array_equal(pt.run(y, {x: values}, off), values / c)


def test_grappler_leaves_a_graph_of_fewer_than_four_nodes_alone(pt):
    """TF 2.21 skips Grappler (min_graph_nodes 0 means 4), counting the whole graph: x / 255
    alone (3 nodes) divides exactly; with two more nodes anywhere it multiplies. The older
    optimizer's folding still runs; min_graph_nodes=-1 never skips."""
    values = np.random.RandomState(0).uniform(0, 255, (200, 1)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 1])
    y = x / tf.constant(np.float32(255))
    exact, reciprocal = values / np.float32(255), values * (np.float32(1) / np.float32(255))
    np.testing.assert_array_equal(pt.run(y, {x: values}), exact)
    np.testing.assert_array_equal(
        pt.run(y, {x: values}, pt.config(min_graph_nodes=-1)), reciprocal)
    tf.add(y, 1.0)                                 # unused: the graph is what counts
    np.testing.assert_array_equal(pt.run(y, {x: values}), reciprocal)
    np.testing.assert_array_equal(
        pt.run(y, {x: values}, pt.config(min_graph_nodes=6)), exact)


# (x + 1.1) + 2.2) + 3.3 and x / 3 under each config, as TF 2.21 computes them.
_CONFIGS_LIKE_TENSORFLOW = [
    ({}, True), ({"level_l0": True}, True),
    ({"constant_folding": "OFF"}, False), ({"arithmetic_optimization": "OFF"}, True),
    ({"disable_meta_optimizer": True}, False), ({"level_l0": True, "fold": True}, True),
]


@pytest.mark.parametrize("settings, rewritten", _CONFIGS_LIKE_TENSORFLOW)
def test_constant_folding_owns_the_algebra_as_in_tensorflow(settings, rewritten):
    """Which switch owns the rewrites: TF 2.21 combines the chain's constants and multiplies by
    the reciprocal under its Grappler constant folding, whatever arithmetic optimization or
    opt_level say (L0 only switches the older optimizer off)."""
    settings = dict(settings)
    opt = tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0 if settings.pop("level_l0", 0)
                              else tf.OptimizerOptions.L1,
                              do_constant_folding=settings.pop("fold", False))
    rewrite = {k: getattr(RewriterConfig, v) if isinstance(v, str) else v
               for k, v in settings.items()}
    config = tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=opt, rewrite_options=RewriterConfig(**rewrite)))
    values = (np.random.RandomState(0).randn(64) * 2).astype(np.float32)
    f = np.float32
    x = tf.placeholder(tf.float32, [64])
    chain, quotient = ((x + 1.1) + 2.2) + 3.3, x / 3.0
    with tf.Session(config=config) as sess:
        got = sess.run([chain, quotient], {x: values})
    if rewritten:
        want = [values + (f(1.1) + f(2.2) + f(3.3)), values * (f(1) / f(3))]
    else:
        want = [((values + f(1.1)) + f(2.2)) + f(3.3), values / f(3)]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(want[0], ((values + f(1.1)) + f(2.2)) + f(3.3)) or not rewritten


def test_constants_are_pushed_into_chains_of_fed_tensors_as_in_tensorflow():
    """TF 2.21's results for chains whose leaves are both fed (or computed): the constant is
    pushed next to the leaf with the larger input name (canonical_inputs.py), unless the chain
    has other readers (subgraph elimination merged the three (ra + b) first, so it is left
    alone). Each case names the expression TF's value equals bit for bit."""
    rng = np.random.RandomState(0)
    av = rng.randn(1000).astype(np.float32) * 3
    bv = rng.randn(1000).astype(np.float32) * 1e-3
    ra_v, rb_v, c = np.maximum(av, 0), np.maximum(bv, 0), np.float32(1.1)
    a = tf.placeholder(tf.float32, [1000])      # "Placeholder" < "Placeholder_1" < "Relu"
    b = tf.placeholder(tf.float32, [1000])
    ra, rb = tf.nn.relu(a), tf.nn.relu(b)
    cases = {   # built: (tensor, TF's value)
        "(ra+b)+c": ((ra + b) + 1.1, (ra_v + bv) + c),      # (ra + b) has three readers
        "(a+rb)+c": ((a + rb) + 1.1, av + (c + rb_v)),
        "(ra+rb)+c": ((ra + rb) + 1.1, ra_v + (c + rb_v)),
        "(a+b)+c": ((a + b) + 1.1, av + (c + bv)),
        "(ra-b)+c": ((ra - b) + 1.1, ra_v + (c - bv)),
        "(a-b)+c": ((a - b) + 1.1, av + (c - bv)),
        "(ra*b)*c": ((ra * b) * 1.1, bv * (c * ra_v)),      # b's name sorts first
        "(a*b)*c": ((a * b) * 1.1, av * (c * bv)),
        "c+(ra+b)": (1.1 + (ra + b), (ra_v + bv) + c),
        "(ra+b)-c": ((ra + b) - 1.1, (ra_v + bv) - c),
    }
    with tf.Session() as sess:
        got = sess.run({k: t for k, (t, _) in cases.items()}, {a: av, b: bv})
    for name, (_, want) in cases.items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)
    plain = {"(a+b)+c": (av + bv) + c, "(ra*b)*c": (ra_v * bv) * c, "(a-b)+c": (av - bv) + c}
    assert all(not np.array_equal(cases[k][1], v) for k, v in plain.items())   # visible


def test_half_precision_chains_keep_their_order(pt):
    """TF does not push constants down in float16 or bfloat16."""
    x = tf.placeholder(tf.float16, [8])
    ys = [((x + 1.1) + 2.2) + 3.3, (x * 1.1) * 2.2]
    graph, opts = pt.apply(push_down_constants, ys, feeds=[x])
    assert "hoist_constants" not in opts.log.kinds()


def test_float_identity_from_hoisting_drops_when_aggressive(pt):
    """(x * 2) * 0.5 hoists to x * 1.0, which AGGRESSIVE arithmetic optimization drops: 3e38
    passes through where the unoptimized graph overflows (hoisting is reassociation)."""
    x = tf.placeholder(tf.float32, [3])
    y = (x * 2.0) * 0.5
    cfg = pt.config(arithmetic_optimization=pt.RewriterConfig.AGGRESSIVE)
    with tf.Session(config=cfg) as sess:
        _, (gd,) = pt.partition_graphs(sess, y, {x: np.zeros(3, np.float32)})
    assert not {"Mul", "AddV2"} & {n.op for n in gd.node}
    feed = {x: np.array([1.5, -0.0, 3e38], np.float32)}
    assert pt.run(y, feed, cfg).tolist() == feed[x].tolist()
    assert np.isinf(pt.run(y, feed, pt.OFF)[2])


def test_division_by_zero_or_tiny_constant_is_kept(pt):
    x = tf.placeholder(tf.float32, [2])
    a, b = x / 0.0, x / 1e-39
    graph, _ = pt.apply(push_down_constants, [a, b], feeds=[x])
    assert pt.ops(graph)["RealDiv"] == 2




def test_a_constant_anchored_to_the_chain_is_not_pushed_into_it():
    """In a graph with control flow a new constant waits on its node's first input (here the
    product the AddN's two equal terms became): pushing it into that input would make a cycle."""
    x = tf.Variable(2.0, name="x")
    p = tf.placeholder_with_default(True, [], name="p")
    y = tf.cond(p, lambda: x * x, lambda: x * 3.0, name="c")
    grad = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([y, grad]) == [4.0, 4.0]
