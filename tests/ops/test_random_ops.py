"""Random ops: TF1 seed rules, determinism across sessions, distributions, dtypes and shapes.

Random values cannot be compared with a NumPy reference, so the OpCase rows use degenerate
parameters (a zero-width range, zero stddev, equal rows, one-hot logits) whose result is fixed;
the statistical behaviour is checked by the dedicated tests below.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import random_seed
from tensorweave.testing.op_case import OpCase, case_tests

SHAPE = np.array([2, 3])
INF = np.inf


def _full(value, dtype):
    return lambda s: np.full(s, value, dtype)


CASES = [
    OpCase("uniform_zero_width", lambda s: tf.random_uniform(s, 2.0, 2.0),
           _full(2.0, np.float32), [SHAPE], dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("uniform_float16", lambda s: tf.random_uniform(s, -1.0, -1.0, dtype=tf.float16),
           _full(-1.0, np.float16), [SHAPE], dtypes=(tf.int32,), grad=False),
    OpCase("uniform_float64_scaled", lambda s: tf.random_uniform(s, maxval=0.0, dtype=tf.float64),
           _full(0.0, np.float64), [SHAPE], dtypes=(tf.int32,), grad=False),
    OpCase("uniform_int32", lambda s: tf.random_uniform(s, 5, 6, dtype=tf.int32),
           _full(5, np.int32), [SHAPE], dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("uniform_int64", lambda s: tf.random_uniform(s, -7, -6, dtype=tf.int64),
           _full(-7, np.int64), [SHAPE], dtypes=(tf.int32,), grad=False),
    OpCase("normal_zero_stddev", lambda s: tf.random_normal(s, mean=1.5, stddev=0.0),
           _full(1.5, np.float32), [SHAPE], dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("normal_float64", lambda s: tf.random_normal(s, 3.0, 0.0, dtype=tf.float64),
           _full(3.0, np.float64), [SHAPE], dtypes=(tf.int32,), grad=False),
    OpCase("truncated_zero_stddev", lambda s: tf.truncated_normal(s, mean=-2.0, stddev=0.0),
           _full(-2.0, np.float32), [SHAPE], dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("truncated_float16", lambda s: tf.truncated_normal(s, 0.5, 0.0, dtype=tf.float16),
           _full(0.5, np.float16), [SHAPE], dtypes=(tf.int32,), grad=False),
    OpCase("shuffle_equal_rows", lambda x: tf.random_shuffle(x), lambda x: x,
           [lambda rng, dt: np.tile(rng.randn(1, 3) * 10, (4, 1)).astype(dt)],
           dtypes=(tf.float32, tf.float64, tf.int32, tf.int64), grad=False),
    OpCase("shuffle_scalar", lambda x: tf.random_shuffle(x), lambda x: x, [np.array(3.5)],
           dtypes=(tf.float32, tf.int32), unknown_shapes=False, grad=False),
    OpCase("shuffle_empty", lambda x: tf.random_shuffle(x), lambda x: x, [np.zeros((0, 2))],
           grad=False),
    OpCase("multinomial_one_hot", lambda lg: tf.multinomial(lg, 5),
           lambda lg: np.repeat(np.argmax(lg, axis=1)[:, None], 5, axis=1),
           [np.array([[-INF, 0.0, -INF], [3.0, -INF, -INF], [-INF, -INF, -1.0]])],
           dtypes=(tf.float32, tf.float64, tf.float16), grad=False),
    OpCase("multinomial_int32_out", lambda lg: tf.multinomial(lg, 2, output_dtype=tf.int32),
           lambda lg: np.ones((1, 2), np.int32), [np.array([[-INF, 1.0]])], grad=False),
]


test_forward, test_shapes = case_tests(CASES)


# --- seeds ----------------------------------------------------------------------------------
def test_get_seed_follows_tensorflow_2_21_compat_v1_rules():
    # The values TensorFlow 2.21 gives the same calls.
    with tf.Graph().as_default() as g:
        assert tf.get_seed(None) == (None, None)
        assert tf.get_seed(5) == (random_seed.DEFAULT_GRAPH_SEED, 5)
        tf.set_random_seed(1234)
        assert g.seed == 1234
        tf.constant(1.0)
        tf.constant(2.0)
        # The graph's calls without an op seed are counted (TF1 used the op count).
        assert (tf.get_seed(None), tf.get_seed(None)) == ((1234, 0), (1234, 1))
        r = tf.random_uniform([2])
        assert (r.op.get_attr("seed"), r.op.get_attr("seed2")) == (1234, 2)
        assert tf.get_seed(None) == (1234, 3)
        assert tf.get_seed(7) == (1234, 7)
        assert tf.get_seed(2**31 - 1 + 5) == (1234, 5)  # reduced modulo 2**31 - 1
        tf.set_random_seed(0)
        assert tf.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "unseeded"
        tf.set_random_seed(None)
        assert g.seed is None


def test_seed_attrs():
    with tf.Graph().as_default():
        unseeded = tf.random_uniform([2])
        op_only = tf.random_normal([2], seed=9)
        tf.set_random_seed(42)
        graph_only = tf.random_uniform([2], name="g")
        assert (unseeded.op.get_attr("seed"), unseeded.op.get_attr("seed2")) == (0, 0)
        rnd = op_only.op.inputs[0].op.inputs[0].op
        assert rnd.type == "RandomStandardNormal"
        assert (rnd.get_attr("seed"), rnd.get_attr("seed2")) == (87654321, 9)
        # The graph's first call without an op seed gets op seed 0 (TensorFlow 2.21).
        assert (graph_only.op.get_attr("seed"), graph_only.op.get_attr("seed2")) == (42, 0)


def _random_graph(graph_seed):
    with tf.Graph().as_default() as g:
        tf.set_random_seed(graph_seed)
        ops = {
            "uniform": tf.random_uniform([500], 2.0, 5.0, seed=7),
            "normal": tf.random_normal([500], seed=8),
            "truncated": tf.truncated_normal([500], seed=9),
            "int": tf.random_uniform([500], -3, 3, dtype=tf.int64, seed=10),
            "shuffle": tf.random_shuffle(np.arange(50), seed=11),
            "multinomial": tf.multinomial(np.zeros((2, 10), np.float32), 50, seed=12),
            "no_op_seed": tf.random_uniform([5]),
            "same_a": tf.random_uniform([5], seed=3),
            "same_b": tf.random_uniform([5], seed=3),
            "other": tf.random_uniform([5], seed=4),
        }
    return g, ops


def test_sessions_repeat_and_runs_advance():
    g, ops = _random_graph(1234)
    with tf.Session(graph=g) as sess:
        first, second = sess.run(ops), sess.run(ops)
    with tf.Session(graph=g) as sess:
        fresh = sess.run(ops)
    g2, ops2 = _random_graph(1234)
    with tf.Session(graph=g2) as sess:
        rebuilt = sess.run(ops2)
    g3, ops3 = _random_graph(99)
    with tf.Session(graph=g3) as sess:
        reseeded = sess.run(ops3)
    for key in ops:
        assert fresh[key].tobytes() == first[key].tobytes(), key  # bitwise
        assert rebuilt[key].tobytes() == first[key].tobytes(), key
        assert not np.array_equal(second[key], first[key]), key
        assert not np.array_equal(reseeded[key], first[key]), key
    np.testing.assert_array_equal(first["same_a"], first["same_b"])
    assert not np.array_equal(first["same_a"], first["other"])


def test_unseeded_ops_differ_between_sessions():
    with tf.Graph().as_default() as g:
        u = tf.random_uniform([100])
    runs = []
    for _ in range(2):
        with tf.Session(graph=g) as sess:
            runs.append(sess.run(u))
    assert not np.array_equal(runs[0], runs[1])


def test_one_op_in_two_fetch_signatures_shares_its_stream():
    with tf.Graph().as_default() as g:
        u = tf.random_uniform([4], seed=1)
        other = tf.constant(1.0)
    with tf.Session(graph=g) as sess:
        a = sess.run(u)
        b, _ = sess.run([u, other])
    with tf.Session(graph=g) as sess:
        a2, b2 = sess.run(u), sess.run(u)
    np.testing.assert_array_equal([a, b], [a2, b2])


# --- distributions, dtypes, ranges -----------------------------------------------------------
def _draw(tensor, feed=None):
    with tf.Session(graph=tensor.graph) as sess:
        return sess.run(tensor, feed)


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32, tf.float64])
def test_uniform_float(dtype):
    with tf.Graph().as_default():
        unit = _draw(tf.random_uniform([20000], dtype=dtype, seed=1))
        ranged = _draw(tf.random_uniform([20000], -4.0, 12.0, dtype=dtype, seed=2))
    assert unit.dtype == dtype.as_numpy_dtype and ranged.dtype == unit.dtype
    unit, ranged = unit.astype(np.float64), ranged.astype(np.float64)
    assert unit.min() >= 0.0 and unit.max() < 1.0
    assert abs(unit.mean() - 0.5) < 0.01 and abs(unit.std() - 12 ** -0.5) < 0.01
    assert ranged.min() >= -4.0 and ranged.max() < 12.0 and abs(ranged.mean() - 4.0) < 0.2


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_uniform_int(dtype):
    with tf.Graph().as_default():
        t = tf.random_uniform([6000], minval=-3, maxval=3, dtype=dtype, seed=5)
        assert t.op.type == "RandomUniformInt" and t.dtype == dtype
        values = _draw(t)
    assert values.dtype == dtype.as_numpy_dtype
    counts = np.bincount(values + 3, minlength=6)
    assert len(counts) == 6 and counts.min() > 850  # every value in [-3, 3), about 1000 each


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_normal_and_truncated(dtype):
    with tf.Graph().as_default():
        n = _draw(tf.random_normal([20000], mean=1.0, stddev=2.0, dtype=dtype, seed=3))
        tn = _draw(tf.truncated_normal([20000], mean=-1.0, stddev=0.5, dtype=dtype, seed=4))
    assert n.dtype == tn.dtype == dtype.as_numpy_dtype
    n, tn = n.astype(np.float64), tn.astype(np.float64)  # float16 sums would overflow
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 2.0) < 0.05
    assert np.abs(tn + 1.0).max() <= 1.0 + 1e-3
    # The std of a standard normal truncated to [-2, 2] is about 0.880.
    assert abs(tn.mean() + 1.0) < 0.02 and abs(tn.std() - 0.44) < 0.01


def test_normal_broadcasts_mean_and_stddev():
    with tf.Graph().as_default():
        t = tf.random_normal([20000, 2], mean=[0.0, 10.0], stddev=[[1.0, 3.0]], seed=1)
        assert t.shape.as_list() == [20000, 2]
        values = _draw(t)
    np.testing.assert_allclose(values.mean(0), [0.0, 10.0], atol=0.1)
    np.testing.assert_allclose(values.std(0), [1.0, 3.0], atol=0.1)


def test_shuffle_permutes_first_dimension():
    value = np.arange(30).reshape(10, 3)
    with tf.Graph().as_default():
        t = tf.random_shuffle(value, seed=2)
        with tf.Session() as sess:
            runs = [sess.run(t) for _ in range(5)]
    for r in runs:
        assert sorted(r[:, 0].tolist()) == list(range(0, 30, 3))
        np.testing.assert_array_equal(r[:, 1:] - r[:, :1], [[1, 2]] * 10)  # rows intact
    assert any(not np.array_equal(r, value) for r in runs)


def test_shuffle_strings():
    with tf.Graph().as_default():
        out = _draw(tf.random_shuffle(["a", "b", "c"], seed=1))
    assert sorted(out.tolist()) == [b"a", b"b", b"c"]


def test_multinomial_frequencies():
    logits = np.array([[np.log(0.1), np.log(0.2), np.log(0.7)], [1.0, 1.0, -np.inf]], np.float32)
    with tf.Graph().as_default():
        t = tf.multinomial(logits, 20000, seed=1)
        assert t.dtype == tf.int64 and t.shape.as_list() == [2, 20000]
        values = _draw(t)
    freq = np.stack([np.bincount(row, minlength=3) / 20000 for row in values])
    np.testing.assert_allclose(freq, [[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], atol=0.015)


def test_multinomial_non_finite_logits():
    logits = tf.placeholder(tf.float32, [None, None])
    with logits.graph.as_default():
        t = tf.multinomial(logits, 4, seed=3)
        with tf.Session() as sess:
            no_finite = sess.run(t, {logits: [[-np.inf, -np.inf]]})
            inf_nan = sess.run(t, {logits: [[np.inf, 0.0, np.nan]]})
            empty_batch = sess.run(t, {logits: np.zeros((0, 3))})
    np.testing.assert_array_equal(no_finite, [[2, 2, 2, 2]])  # num_classes, as TF's CPU kernel
    np.testing.assert_array_equal(inf_nan, [[1, 1, 1, 1]])
    assert empty_batch.shape == (0, 4)


# --- static shapes ---------------------------------------------------------------------------
def test_static_shapes():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        vec3 = tf.placeholder(tf.int32, [3])
        cases = [
            (tf.random_uniform([2, 3]), [2, 3]),
            (tf.random_uniform([]), []),
            (tf.random_uniform([-1, 4]), [None, 4]),
            (tf.random_uniform(tf.TensorShape([4, 1])), [4, 1]),
            (tf.random_uniform((2, tf.constant(3))), [2, 3]),
            (tf.random_normal(tf.stack([n, 3])), [None, 3]),
            (tf.truncated_normal(vec3), [None, None, None]),
            (tf.random_uniform(tf.placeholder(tf.int64, [None])), None),
            (tf.random_uniform(tf.placeholder(tf.int32)), None),
            (tf.random_uniform([2, 5], 0, 9, dtype=tf.int64), [2, 5]),
            (tf.multinomial(tf.placeholder(tf.float32, [None, 3]), n), [None, None]),
            (tf.multinomial(tf.placeholder(tf.float32), 7), [None, 7]),
            (tf.random_shuffle(tf.placeholder(tf.float32, [None, 2])), [None, 2]),
        ]
        for t, expected in cases:
            assert t.shape.as_list() == expected if expected is not None \
                else t.shape.ndims is None, (t, expected)


def test_fed_shape_tensor():
    with tf.Graph().as_default():
        shape = tf.placeholder(tf.int32, [None])
        t = tf.random_uniform(shape, dtype=tf.float64)
        with tf.Session() as sess:
            assert sess.run(t, {shape: [3, 1, 2]}).shape == (3, 1, 2)
            assert sess.run(t, {shape: [0]}).shape == (0,)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Dimension -2 must be"):
                sess.run(t, {shape: [4, -2]})


def test_default_names_match_tf():
    with tf.Graph().as_default():
        assert tf.random_uniform([5]).name == "random_uniform/RandomUniform:0"
        assert tf.random_uniform([5], 2.0, 5.0).name == "random_uniform_1:0"
        ints = tf.random_uniform([5], -3, 3, dtype=tf.int32)
        assert ints.name == "random_uniform_2:0" and ints.op.type == "RandomUniformInt"
        assert tf.random_normal([5], 1.0, 2.0).name == "random_normal:0"
        assert tf.truncated_normal([5]).name == "truncated_normal:0"
        assert tf.random_shuffle([1, 2]).name == "RandomShuffle:0"
        assert tf.multinomial([[1.0, 2.0]], 3).name == "multinomial/Multinomial:0"
        sampled = tf.random.categorical([[1.0, 2.0]], 3)   # no inner multinomial scope
        assert sampled.name == "categorical/Multinomial:0"
        assert sampled.op.inputs[1].name == "categorical/Multinomial/num_samples:0"
        scaled = tf.random_uniform([5], maxval=3.0)
        assert scaled.name == "random_uniform_3/Mul:0"
        g = tf.get_default_graph()
        assert [i.name for i in g.get_operation_by_name("random_uniform_1/mul").inputs] == \
            ["random_uniform_1/RandomUniform:0", "random_uniform_1/sub:0"]
        assert tf.random_normal([2], name="noise").name == "noise:0"


def test_ops_are_stateful():
    from tensorweave.framework.op_def import get_op_def
    for name in ("RandomUniform", "RandomUniformInt", "RandomStandardNormal",
                 "TruncatedNormal", "RandomShuffle", "Multinomial"):
        assert get_op_def(name).is_stateful and get_op_def(name).not_differentiable, name


# --- errors -----------------------------------------------------------------------------------
def test_construction_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
            tf.random_uniform([5], dtype=tf.int32)
        with pytest.raises(ValueError, match="Argument `dtype` got invalid value"):
            tf.random_uniform([5], maxval=1, dtype=tf.int8)
        with pytest.raises(TypeError, match="'dtype' has DataType int32 not in list"):
            tf.random_normal([5], mean=0, stddev=1, dtype=tf.int32)
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.random_uniform([[5]])
        with pytest.raises(ValueError, match="partially known TensorShape"):
            tf.random_uniform(tf.TensorShape([2, None]))
        with pytest.raises(TypeError, match="DataType float32 not in list"):
            tf.random_uniform(tf.constant([5.0]))
        with pytest.raises(ValueError, match="minval must be a scalar"):
            tf.random_uniform([2], minval=[1, 2], maxval=3, dtype=tf.int32)
        with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
            tf.multinomial([1.0, 2.0], 3)
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            tf.multinomial([[1.0, 2.0]], [3])
        with pytest.raises(ValueError, match="Argument `dtype` got invalid value"):
            tf.multinomial([[1.0, 2.0]], 3, output_dtype=tf.int16)


@pytest.mark.parametrize("build", [
    lambda: tf.random.uniform([2, -3]),
    lambda: tf.random.uniform([2, -3], maxval=5, dtype=tf.int32),
    lambda: tf.random.normal([2, -3]),
    lambda: tf.random.truncated_normal([2, -3]),
])
def test_invalid_shape_value_fails_without_node_text(build):
    """TF 2.21 rejects a constant shape entry below -1 while materializing it (no node text);
    -1 and packed negative scalars are unknown dims."""
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build()
        assert str(info.value) == "Invalid value in tensor used for shape: -3"
        assert tf.random.uniform([2, -1]).shape.as_list() == [2, None]
        packed = tf.stack([tf.constant(2), tf.constant(-3)])
        assert tf.random.uniform(packed).shape.as_list() == [2, None]


def test_runtime_errors():
    with tf.Graph().as_default():
        lo, hi = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
        shape = tf.placeholder(tf.int32, [None])
        ints = tf.random_uniform(shape, lo, hi, dtype=tf.int32)
        logits, n = tf.placeholder(tf.float32, [None, None]), tf.placeholder(tf.int32, [])
        samples = tf.multinomial(logits, n)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval, "
                                                                     "got 3 >= 3"):
                sess.run(ints, {shape: [2], lo: 3, hi: 3})
            assert sess.run(ints, {shape: [0], lo: 3, hi: 3}).shape == (0,)
            with pytest.raises(tf.errors.InvalidArgumentError, match="minval must be 0-D"):
                sess.run(ints, {shape: [2], lo: [1, 2], hi: 3})
            with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative, got -1"):
                sess.run(samples, {logits: [[1.0]], n: -1})
            with pytest.raises(tf.errors.InvalidArgumentError, match="num_classes should be"):
                sess.run(samples, {logits: np.zeros((1, 0)), n: 2})


def test_a_negative_sample_count_is_tensorflows_shape_error():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"^Dimension size, given by scalar input 1, must "
                           r"be non-negative but is -3 for '\{\{node categorical/Multinomial\}\}"):
            tf.random.categorical([[0.0, 1.0]], -3)
