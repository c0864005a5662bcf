"""Property: on random graphs, every pass together computes what the unoptimized graph computes.

Graphs mix fed and constant inputs with the ops the passes rewrite (neutral constants,
duplicates, chains of constants, transposes, reshapes, casts, add_n, matmul + bias +
activation, shape arithmetic, seeded random ops) so rewrites interact. Float graphs agree within
the documented reassociation tolerance (NaN where NaN); integer graphs agree exactly.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorweave as tf
from tensorweave.protos import config_pb2

OFF = config_pb2.ConfigProto(graph_options=config_pb2.GraphOptions(
    optimizer_options=config_pb2.OptimizerOptions(opt_level=config_pb2.OptimizerOptions.L0),
    rewrite_options={"disable_meta_optimizer": True}))
ROWS, COLS = 3, 4
FLOAT_UNARY = ["neg", "abs", "tanh", "sigmoid", "relu", "square", "exp_clip", "identity",
               "double_neg", "transpose2", "reshape2", "cast_round_trip", "times_one",
               "plus_zero", "plus_const", "times_const", "div_const", "div_one",
               "stop_gradient", "shape_ones"]
FLOAT_BINARY = ["add", "sub", "mul", "maximum", "minimum", "add_n", "dense", "sub_self"]
INT_UNARY = ["neg", "abs", "double_neg", "plus_const", "times_const", "times_one",
             "plus_zero", "cast_round_trip", "identity", "transpose2"]
INT_BINARY = ["add", "sub", "mul", "maximum", "sub_self", "add_n"]


def _unary(kind, x, dtype, k):
    c = np.float32(k) if dtype == tf.float32 else np.int32(k)
    ops = {
        "neg": lambda: -x, "abs": lambda: tf.abs(x), "tanh": lambda: tf.tanh(x),
        "sigmoid": lambda: tf.sigmoid(x), "relu": lambda: tf.nn.relu(x),
        "square": lambda: tf.square(tf.clip_by_value(x, -30.0, 30.0)),
        "exp_clip": lambda: tf.exp(tf.clip_by_value(x, -5.0, 5.0)),
        "identity": lambda: tf.identity(x), "double_neg": lambda: tf.negative(-x),
        "transpose2": lambda: tf.transpose(tf.transpose(x)),
        "reshape2": lambda: tf.reshape(tf.reshape(x, [-1]), [ROWS, COLS]),
        "cast_round_trip": lambda: tf.cast(tf.cast(x, tf.float64 if dtype == tf.float32
                                                   else tf.int64), dtype),
        "times_one": lambda: x * tf.constant(1, dtype), "plus_zero": lambda: x + tf.constant(
            0, dtype), "plus_const": lambda: (x + c) + tf.constant(2, dtype),
        "times_const": lambda: (x * c) * tf.constant(3, dtype),
        "div_const": lambda: x / (c + np.float32(0.5)), "div_one": lambda: x / 1.0,
        "stop_gradient": lambda: tf.stop_gradient(x),
        "shape_ones": lambda: x * tf.ones(tf.shape(x)),
    }
    return ops[kind]()


def _binary(kind, a, b, weights):
    ops = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
        "maximum": lambda: tf.maximum(a, b), "minimum": lambda: tf.minimum(a, b),
        "add_n": lambda: tf.add_n([a, b, a]), "sub_self": lambda: a - a,
        "dense": lambda: tf.nn.relu(tf.nn.bias_add(tf.matmul(a, weights[0]), weights[1])) +
        b * 0.5,
    }
    return ops[kind]()


steps = st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.integers(0, 30),
                           st.integers(-3, 3)), min_size=1, max_size=14)


def _build(recipe, dtype):
    unary, binary = (FLOAT_UNARY, FLOAT_BINARY) if dtype == tf.float32 else \
        (INT_UNARY, INT_BINARY)
    tf.set_random_seed(7)
    p = [tf.placeholder(dtype, [ROWS, COLS], name=f"p{i}") for i in range(2)]
    values = list(p) + [tf.constant(np.arange(ROWS * COLS).reshape(ROWS, COLS) % 5 - 2,
                                    dtype)]
    weights = None
    if dtype == tf.float32:
        weights = (tf.constant(np.linspace(-1, 1, COLS * COLS, dtype=np.float32).reshape(
            COLS, COLS)), tf.constant(np.linspace(0.5, -0.5, COLS, dtype=np.float32)))
        values.append(tf.random_uniform([ROWS, COLS], seed=3))
    for is_binary, i, j, k in recipe:
        a, b = values[i % len(values)], values[j % len(values)]
        if is_binary:
            values.append(_binary(binary[(i + j + k) % len(binary)], a, b, weights))
        else:
            values.append(_unary(unary[(i * 7 + j + k) % len(unary)], a, dtype, k))
    return p, values[-3:]


def _feeds(p, dtype, special):
    rng = np.random.RandomState(0)
    if dtype == tf.float32:
        a = rng.uniform(-3, 3, (ROWS, COLS)).astype(np.float32)
        if special:
            a[0, :] = [np.nan, np.inf, -np.inf, -0.0]
        return {p[0]: a, p[1]: rng.uniform(-3, 3, (ROWS, COLS)).astype(np.float32)}
    return {p[0]: rng.randint(-2**31, 2**31 - 1, (ROWS, COLS)).astype(np.int32),
            p[1]: rng.randint(-50, 50, (ROWS, COLS)).astype(np.int32)}


def _run(graph, fetches, feed, cfg):
    with tf.Session(graph=graph, config=cfg) as sess:
        return sess.run(fetches, feed)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe=steps, special=st.booleans())
def test_random_float_graphs_agree(recipe, special):
    graph = tf.Graph()
    with graph.as_default():
        p, fetches = _build(recipe, tf.float32)
    feed = _feeds(p, tf.float32, special)
    plain = _run(graph, fetches, feed, OFF)
    optimized = _run(graph, fetches, feed, None)
    for a, b in zip(plain, optimized):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=1e-5, equal_nan=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe=steps)
def test_random_integer_graphs_agree_exactly(recipe):
    graph = tf.Graph()
    with graph.as_default():
        p, fetches = _build(recipe, tf.int32)
    feed = _feeds(p, tf.int32, False)
    plain = _run(graph, fetches, feed, OFF)
    optimized = _run(graph, fetches, feed, None)
    for a, b in zip(plain, optimized):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(b, a)
