"""Arithmetic simplification: each rule structurally (the pass alone) and numerically."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import math_ops
from tensorweave.runtime.passes.arithmetic import simplify_arithmetic

SPECIAL = np.array([[np.nan, np.inf, -np.inf, -0.0], [0.0, 1.5, -2.25, 3e38]], np.float32)
# Kernels flush these to zero (runtime/float_env.py), as TensorFlow's do.
DENORMALS = np.array([1e-45, -1e-40, -0.0, 3.0], np.float32)
AGGRESSIVE = {"arithmetic_optimization"}


def _readers_of_retval(graph):
    return [n.inputs[0][0] for n in graph if n.op == "_Retval"]


def test_integer_identities_disappear(pt):
    x = tf.placeholder(tf.int32, [2, 4])
    one = tf.constant(1, tf.int32)
    y = tf.identity(apply_op(math_ops.Div, [x * 1 + 0 - 0, one]), name="y")   # C division
    graph, opts = pt.apply(simplify_arithmetic, y, feeds=[x])
    assert pt.ops(graph) == {"_Arg": 1, "Identity": 1, "_Retval": 1}
    assert {"mul_by_one", "add_zero", "sub_zero", "div_by_one"} <= set(opts.log.kinds())
    pt.compare(y, {x: np.array([[0, -1, 7, 2**31 - 1], [-2**31, 5, 6, 8]], np.int32)})


def _float_identities(x):
    return [x * 1.0, x / 1.0, x + (-0.0), x - 0.0, tf.cast(tf.cast(x, tf.float64), tf.float32)]


def test_float_identities_keep_the_op_that_flushes_denormals(pt):
    # x * 1 is 0 for a denormal x, as the off graph (and TensorFlow) computes it
    x = tf.placeholder(tf.float32, [4])
    ys = _float_identities(x)
    graph, opts = pt.apply(simplify_arithmetic, ys, feeds=[x])
    assert not {"mul_by_one", "div_by_one", "add_zero", "sub_zero", "cast_round_trip"} & \
        set(opts.log.kinds())
    assert pt.ops(graph)["Cast"] == 2 and "Identity" not in pt.ops(graph)
    plain, optimized = pt.compare(ys, {x: DENORMALS})
    assert all(v[1] == 0 for v in optimized)


def test_float_identities_disappear_when_aggressive(pt):
    x = tf.placeholder(tf.float32, [2, 4])
    ys = _float_identities(x)
    graph, opts = pt.apply(simplify_arithmetic, ys, feeds=[x], aggressive=AGGRESSIVE)
    assert pt.ops(graph) == {"_Arg": 1, "Identity": 5, "_Retval": 5}
    assert {"mul_by_one", "div_by_one", "add_zero", "sub_zero", "cast_round_trip"} <= \
        set(opts.log.kinds())
    cfg = pt.config(arithmetic_optimization=pt.RewriterConfig.AGGRESSIVE)
    feed = {x: np.array([[np.nan, np.inf, -np.inf, -0.0], [0.0, 1.5, -2.25, 3e38]], np.float32)}
    for a, b in zip(pt.run(ys, feed, pt.OFF), pt.run(ys, feed, cfg)):
        np.testing.assert_array_equal(b, a)   # NaN, inf and -0.0 pass through unchanged
        assert np.array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("aggressive", [(), AGGRESSIVE])
def test_float_zero_of_the_wrong_sign_is_kept(pt, aggressive):
    # -0.0 + 0.0 is +0.0: x + 0.0 and x - (-0.0) are not x
    x = tf.placeholder(tf.float32, [3])
    ys = [x + 0.0, x - (-0.0), 0.0 + x]
    graph, opts = pt.apply(simplify_arithmetic, ys, feeds=[x], aggressive=aggressive)
    assert pt.ops(graph)["AddV2"] == 2 and pt.ops(graph)["Sub"] == 1
    assert not {"add_zero", "sub_zero"} & set(opts.log.kinds())
    plain, optimized = pt.compare([1.0 / y for y in ys], {x: np.array([-0.0, 0.0, 2.0],
                                                                       np.float32)})
    assert optimized[0].tolist() == [np.inf, np.inf, 0.5]


def test_neutral_constant_that_broadcasts_is_kept(pt):
    x = tf.placeholder(tf.float32, [3])
    y = x * tf.ones([2, 3])           # changes the shape: not x
    graph, _ = pt.apply(simplify_arithmetic, y, feeds=[x])
    assert "Mul" in pt.ops(graph)
    assert pt.run(y, {x: np.arange(3, dtype=np.float32)}).shape == (2, 3)


def test_times_zero_and_float_self_subtraction_are_not_rewritten(pt):
    x = tf.placeholder(tf.float32, [2, 4])
    a, b = x * 0.0, x - x
    graph, _ = pt.apply(simplify_arithmetic, [a, b], feeds=[x])
    assert pt.ops(graph)["Mul"] == 1 and pt.ops(graph)["Sub"] == 1
    plain, optimized = pt.compare([a, b], {x: SPECIAL})
    assert np.isnan(optimized[1][0, :3]).all()   # inf - inf is NaN


def test_integer_self_subtraction_is_zero(pt):
    x = tf.placeholder(tf.int32, [3])
    y = x - x
    graph, opts = pt.apply(simplify_arithmetic, y, feeds=[x])
    assert "Sub" not in pt.ops(graph) and "sub_self" in opts.log.kinds()
    pt.compare(y, {x: np.array([1, -2, 2**31 - 1], np.int32)})
    u = tf.placeholder(tf.int32, [None])
    z = u - u                          # shape unknown: zeros_like(u)
    graph, _ = pt.apply(simplify_arithmetic, z, feeds=[u])
    assert "ZerosLike" in pt.ops(graph)
    assert pt.run(z, {u: np.arange(5, dtype=np.int32)}).tolist() == [0] * 5


def test_double_negation(pt):
    x = tf.placeholder(tf.int32, [3])
    y = tf.negative(tf.negative(x))
    graph, _ = pt.apply(simplify_arithmetic, y, feeds=[x])
    assert "Neg" not in pt.ops(graph)
    pt.compare(y, {x: np.array([np.iinfo(np.int32).min, 0, 5], np.int32)})


def test_transpose_pairs_compose_or_cancel(pt):
    x = tf.placeholder(tf.float32, [2, 3, 4])
    back = tf.transpose(tf.transpose(x, [2, 0, 1]), [1, 2, 0])
    rotated = tf.transpose(tf.transpose(x, [1, 0, 2]), [0, 2, 1])
    graph, _ = pt.apply(simplify_arithmetic, [back, rotated], feeds=[x])
    assert pt.ops(graph)["Transpose"] == 1
    pt.compare([back, rotated], {x: np.random.RandomState(0).rand(2, 3, 4).astype(np.float32)})


def test_reshape_pairs_and_reshape_to_own_shape(pt):
    x = tf.placeholder(tf.float32, [2, 6])
    a = tf.reshape(tf.reshape(x, [3, 4]), [4, -1])
    b = tf.reshape(x, [2, 6])
    graph, _ = pt.apply(simplify_arithmetic, [a, b], feeds=[x])
    assert pt.ops(graph)["Reshape"] == 1
    pt.compare([a, b], {x: np.arange(12, dtype=np.float32).reshape(2, 6)})


def test_cast_round_trips_only_when_exact(pt):
    i = tf.placeholder(tf.int32, [3])
    exact = tf.cast(tf.cast(i, tf.int64), tf.int32)
    f = tf.placeholder(tf.float64, [3])
    lossy = tf.cast(tf.cast(f, tf.float32), tf.float64)
    same = tf.cast(f, tf.float64)
    graph, _ = pt.apply(simplify_arithmetic, [exact, lossy, same], feeds=[i, f])
    assert pt.ops(graph)["Cast"] == 2          # only the lossy round trip stays
    feed = {i: np.array([1, -7, 2**31 - 1], np.int32), f: np.array([0.1, 1e300, np.nan])}
    plain, optimized = pt.compare([exact, lossy, same], feed)
    assert optimized[1][0] != 0.1              # float32 rounding still happens


# (integer, a float through which its round trip is exact, one through which it is not, and a
# value the second one rounds)
_ROUND_TRIPS = [
    (tf.int64, None, tf.float64, 2**53 + 1), (tf.int64, None, tf.complex128, 2**53 + 1),
    (tf.uint64, None, tf.float64, 2**53 + 1), (tf.int32, tf.float64, tf.float32, 2**24 + 1),
    (tf.uint32, tf.float64, tf.float32, 2**24 + 1), (tf.int32, tf.complex128, tf.complex64,
                                                     2**24 + 1),
    (tf.int16, tf.float32, tf.float16, 2**11 + 1), (tf.int8, tf.float16, None, -128),
    (tf.uint8, tf.float16, None, 255), (tf.uint16, tf.float32, tf.float16, 2**11 + 1),
]


@pytest.mark.parametrize("dtype, exact, inexact, value", _ROUND_TRIPS,
                         ids=[f"{c[0].name}-{(c[2] or c[1]).name}" for c in _ROUND_TRIPS])
def test_integer_cast_round_trip_only_through_enough_significand_digits(pt, dtype, exact,
                                                                         inexact, value):
    # an integer of v value bits survives a float of d significand digits iff v <= d
    x = tf.placeholder(dtype, [3])
    via = [v for v in (exact, inexact) if v is not None]
    ys = [tf.cast(tf.cast(x, v), dtype) for v in via]
    graph, opts = pt.apply(simplify_arithmetic, ys, feeds=[x])
    assert pt.ops(graph).get("Cast", 0) == (2 if inexact is not None else 0)
    assert opts.log.kinds().count("cast_round_trip") == (exact is not None)
    info = np.iinfo(dtype.as_numpy_dtype)
    plain, optimized = pt.compare(ys, {x: np.array([value, info.min, info.max],
                                                   dtype.as_numpy_dtype)})
    if inexact is not None:
        assert optimized[-1][0] != value       # the narrow float rounds it, optimized or not


def test_add_n_of_equal_terms_is_one_product(pt):
    """TensorFlow's SimplifyAggregation: only an AddN whose terms are all one tensor becomes a
    product; a sum with other terms keeps its order (and TF's bits)."""
    a = tf.placeholder(tf.float32, [3])
    b = tf.placeholder(tf.float32, [3])
    twice, thrice, mixed = tf.add_n([a, a]), tf.add_n([a, a, a]), tf.add_n([a, b, a, a])
    graph, opts = pt.apply(simplify_arithmetic, [twice, thrice, mixed], feeds=[a, b])
    assert opts.log.kinds().count("add_n_repeated") == 2 and pt.ops(graph)["AddN"] == 1
    feed = {a: np.array([1.0, 0.1, -3.0], np.float32), b: np.array([2.0, 0.2, 5.0], np.float32)}
    plain, optimized = pt.compare([twice, thrice, mixed], feed, rtol=2.5e-7)
    np.testing.assert_array_equal(plain[0], optimized[0])   # a + a == 2a exactly
    np.testing.assert_array_equal(plain[2], optimized[2])


@pytest.mark.parametrize("dtype", [tf.float32, tf.int32])
def test_fetched_node_keeps_its_name(pt, dtype):
    x = tf.placeholder(dtype, [3])
    y = tf.multiply(x, tf.constant(1, dtype), name="fetched")
    graph, _ = pt.apply(simplify_arithmetic, y, feeds=[x], aggressive=AGGRESSIVE)
    assert _readers_of_retval(graph) == ["fetched"]
    assert graph.nodes["fetched"].op == "Identity"


def test_a_reshape_whose_static_shape_came_from_its_input_size_is_kept():
    """The output shape [2] of reshape(cost, shape(logits)[:-1]) was inferred from cost's two
    elements; with logits fed [1, 3] the reshape must fail on and off, as in TensorFlow."""
    with tf.Graph().as_default():
        labels = tf.constant([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        logits = tf.placeholder(tf.float32, [None, 3])
        cost = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
        off = tf.ConfigProto(graph_options=tf.GraphOptions(
            optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0),
            rewrite_options={"disable_meta_optimizer": True}))
        for config in (None, off):
            with tf.Session(config=config) as sess:
                with pytest.raises(tf.errors.InvalidArgumentError, match="Input to reshape"):
                    sess.run(cost, {logits: np.ones((1, 3), np.float32)})
                assert sess.run(cost, {logits: np.ones((2, 3), np.float32)}).shape == (2,)
