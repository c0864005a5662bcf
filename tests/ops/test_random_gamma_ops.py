"""Gamma and Poisson sampling: degenerate parameters with fixed results (OpCase rows), the
distributions' moments, seeding and determinism, the reparameterization gradients (of
tf.random_gamma and tf.random.stateless_gamma) against finite differences of the Gamma quantile
function, TensorFlow's graph structure and errors. TensorFlow's own numbers:
test_gamma_poisson_like_tensorflow.py."""
import numpy as np
import pytest
import scipy.special as sp

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import random_gamma_ops
from tensorweave.testing.op_case import OpCase, case_tests

SHAPE = np.array([2, 3])
I32 = (tf.int32,)


def _full(value, dtype, shape):
    return lambda s: np.full(tuple(s) + shape, value, dtype)


def _sample_grad_ref(alpha, sample):
    """dx/dalpha at fixed u = P(alpha, x): a central difference of SciPy's Gamma quantile, in
    float64."""
    a, x = np.float64(alpha), np.float64(sample)
    u = sp.gammainc(a, x)
    h = 1e-6 * a
    grad = (sp.gammaincinv(a + h, u) - sp.gammaincinv(a - h, u)) / (2 * h)
    return grad.astype(np.result_type(alpha, sample))


CASES = [
    # alpha == 0 draws 0, which the wrapper raises to the dtype's smallest normal number.
    OpCase("gamma_alpha_zero", lambda s: tf.random_gamma(s, [0.0, 0.0]),
           _full(np.finfo(np.float32).tiny, np.float32, (2,)), [SHAPE], dtypes=I32,
           grad=False),
    OpCase("gamma_alpha_zero_float64", lambda s: tf.random_gamma(s, 0.0, beta=[2.0, 4.0],
                                                                 dtype=tf.float64),
           _full(np.finfo(np.float64).tiny, np.float64, (2,)), [SHAPE], dtypes=I32,
           grad=False),
    OpCase("gamma_alpha_zero_float16", lambda s: tf.random_gamma(s, [[0.0]], dtype=tf.float16),
           _full(np.finfo(np.float16).tiny, np.float16, (1, 1)), [SHAPE], dtypes=I32,
           grad=False),
    OpCase("gamma_empty", lambda s: tf.random_gamma(s, [1.0, 2.0]),
           lambda s: np.zeros((0, 2), np.float32), [np.array([0])], dtypes=I32, grad=False),
    OpCase("poisson_rate_zero_or_negative", lambda s: tf.random_poisson([0.0, -2.0], s),
           _full(0.0, np.float32, (2,)), [SHAPE], dtypes=I32, grad=False),
    OpCase("poisson_int64_out", lambda s: tf.random_poisson(tf.zeros([3], tf.float64), s,
                                                            dtype=tf.int64),
           _full(0, np.int64, (3,)), [SHAPE], dtypes=I32, grad=False),
    OpCase("poisson_int_rate", lambda s: tf.random_poisson(tf.zeros([1], tf.int32), s,
                                                           dtype=tf.float16),
           _full(0, np.float16, (1,)), [SHAPE], dtypes=I32, grad=False),
    OpCase("random_gamma_grad", lambda a, x: apply_op(random_gamma_ops.RandomGammaGrad, [a, x]),
           _sample_grad_ref,
           [lambda rng, dt: rng.uniform(0.3, 6, (3, 1)).astype(dt),
            lambda rng, dt: rng.uniform(0.05, 8, (2, 3, 4)).astype(dt)],
           dtypes=(tf.float32, tf.float64), rtol=1e-5, grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _draw(build, runs=1, seed=1):
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        out = build()
        with tf.Session() as sess:
            return [sess.run(out) for _ in range(runs)]


# --- distributions ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_gamma_moments(dtype):
    alpha, beta = np.array([0.5, 2.0, 9.0]), np.array([[1.0], [4.0]])
    (x,) = _draw(lambda: tf.random_gamma([20000], alpha, beta=beta, dtype=dtype))
    assert x.shape == (20000, 2, 3) and x.dtype == dtype.as_numpy_dtype
    x = x.astype(np.float64)
    np.testing.assert_allclose(x.mean(axis=0), alpha / beta, rtol=0.04)
    np.testing.assert_allclose(x.var(axis=0), alpha / beta**2, rtol=0.1)
    assert (x > 0).all()


@pytest.mark.parametrize("dtype", [tf.float32, tf.int32, tf.int64])
def test_poisson_moments(dtype):
    lam = np.array([[0.3, 4.0], [25.0, 300.0]])
    (x,) = _draw(lambda: tf.random_poisson(lam, [20000], dtype=dtype))
    assert x.shape == (20000, 2, 2) and x.dtype == dtype.as_numpy_dtype
    x = x.astype(np.float64)
    assert np.array_equal(x, np.round(x)) and (x >= 0).all()
    np.testing.assert_allclose(x.mean(axis=0), lam, rtol=0.03)
    np.testing.assert_allclose(x.var(axis=0), lam, rtol=0.1)


def test_gamma_parameters_tensorflow_handles_specially():
    (x,) = _draw(lambda: tf.random_gamma([3], [0.0, -1.0, np.nan, 1.0], beta=[1.0, 1.0, 1.0, 0.0]))
    tiny = np.finfo(np.float32).tiny
    assert (x[:, 0] == tiny).all() and np.isnan(x[:, 1:3]).all() and np.isinf(x[:, 3]).all()


# --- seeding ------------------------------------------------------------------------------------
def _sessions(graph_seed, sessions=2, runs=2):
    """results[session][run]: the ops below, built once with `graph_seed`, run `runs` times in
    each of `sessions` fresh sessions."""
    with tf.Graph().as_default() as g:
        tf.set_random_seed(graph_seed)
        fetches = {"gamma": tf.random_gamma([50], [1.0, 3.0], seed=4),
                   "poisson": tf.random_poisson([2.0, 7.0], [50], seed=5),
                   "gamma_a": tf.random_gamma([5], 2.0, seed=6),
                   "gamma_b": tf.random_gamma([5], 2.0, seed=6)}
    results = []
    for _ in range(sessions):
        with tf.Session(graph=g) as sess:
            results.append([sess.run(fetches) for _ in range(runs)])
    return results


def test_seeds_repeat_across_sessions_and_runs_advance():
    seven, rebuilt, eight = _sessions(7), _sessions(7, sessions=1), _sessions(8, sessions=1)
    first = seven[0][0]
    for key, value in first.items():
        assert seven[1][0][key].tobytes() == value.tobytes(), key  # a new session restarts
        assert rebuilt[0][0][key].tobytes() == value.tobytes(), key  # so does a new graph
        assert not np.array_equal(seven[0][1][key], value), key  # the next run goes on
        assert not np.array_equal(eight[0][0][key], value), key  # another graph seed differs
    np.testing.assert_array_equal(first["gamma_a"], first["gamma_b"])


def test_unseeded_ops_draw_new_numbers_in_each_session():
    """Seed (0, 0) means unseeded: two random 64-bit seeds per kernel, as in TF."""
    with tf.Graph().as_default() as g:
        fetches = [tf.random_gamma([20], [0.5, 3.0]), tf.random_poisson([4.0, 80.0], [20])]
    draws = []
    for _ in range(2):
        with tf.Session(graph=g) as sess:
            draws.append(sess.run(fetches))
    for first, second in zip(*draws):
        assert not np.array_equal(first, second)


def test_seed_attrs_and_graph_structure():
    with tf.Graph().as_default() as g:
        out = tf.random_gamma([2], [1.0, 2.0], seed=3)
        gamma = g.get_operation_by_name("random_gamma/RandomGamma")
        assert out.name == "random_gamma/Maximum:0" and out.shape.as_list() == [2, 2]
        assert (gamma.get_attr("seed"), gamma.get_attr("seed2")) == (87654321, 3)
        assert out.op.inputs[1].op.type == "RealDiv"
        p = tf.random_poisson([[1.0, 2.0]], [4, 1], seed=9)
        assert p.name == "random_poisson/RandomPoissonV2:0"
        assert p.shape.as_list() == [4, 1, 1, 2]
        assert p.op.get_attr("dtype") == tf.float32 and p.op.get_attr("R") == tf.float32
        assert p.op.inputs[1].name == "random_poisson/RandomPoissonV2/rate:0"
        assert tf.random.gamma is tf.random_gamma and tf.random.poisson is tf.random_poisson
        unknown = tf.random_gamma(tf.placeholder(tf.int32, [2]), tf.ones([3]))
        assert unknown.shape.as_list() == [None, None, 3]


# --- gradients ----------------------------------------------------------------------------------
def test_gamma_reparameterization_gradient():
    """d sample / d alpha is the implicit derivative at the sample's quantile, summed over the
    sample dimension; d (x / beta) / d beta = -x / beta^2."""
    alpha_v, beta_v = np.array([0.7, 2.5, 6.0]), np.array([2.0, 0.5, 1.0])
    with tf.Graph().as_default():
        alpha, beta = tf.constant(alpha_v), tf.constant(beta_v)
        x = tf.random_gamma([40], alpha, beta=beta, dtype=tf.float64, seed=2)
        grads = tf.gradients(x, [alpha, beta])
        with tf.Session() as sess:
            sample, (g_alpha, g_beta) = sess.run([x, grads])
    standard = sample * beta_v
    expected_alpha = (_sample_grad_ref(np.broadcast_to(alpha_v, standard.shape), standard)
                      / beta_v).sum(axis=0)
    np.testing.assert_allclose(g_alpha, expected_alpha, rtol=1e-5)
    np.testing.assert_allclose(g_beta, (-sample / beta_v).sum(axis=0), rtol=1e-10)


def test_stateless_gamma_reparameterization_gradient():
    """TF's _StatelessGammaGradAlpha: the implicit derivative at each sample, summed over the
    leading (sample) dimensions of `shape`; alpha broadcast against beta first."""
    alpha_v, beta_v = np.array([0.7, 2.5, 6.0]), np.array([[2.0], [0.5]])
    with tf.Graph().as_default():
        alpha, beta = tf.constant(alpha_v), tf.constant(beta_v)
        x = tf.random.stateless_gamma([40, 2, 3], seed=[4, 5], alpha=alpha, beta=beta,
                                      dtype=tf.float64)
        grads = tf.gradients(x, [alpha, beta])
        with tf.Session() as sess:
            sample, (g_alpha, g_beta) = sess.run([x, grads])
    standard = sample * beta_v
    expected_alpha = (_sample_grad_ref(np.broadcast_to(alpha_v, standard.shape), standard)
                      / beta_v).sum(axis=(0, 1))
    np.testing.assert_allclose(g_alpha, expected_alpha, rtol=1e-5)
    np.testing.assert_allclose(g_beta, (-sample / beta_v).sum(axis=(0, 2))[:, None], rtol=1e-10)


def test_no_second_derivative_and_no_poisson_gradient():
    with tf.Graph().as_default():
        alpha = tf.constant([1.0, 2.0])
        (g,) = tf.gradients(tf.random_gamma([3], alpha), alpha)
        with pytest.raises(LookupError, match="RandomGammaGrad"):
            tf.gradients(g, alpha)
        rate = tf.constant([1.0, 2.0])
        assert tf.gradients(tf.random_poisson(rate, [3]), rate) == [None]
        assert tf.gradients(tf.random.stateless_poisson([3, 2], [1, 2], rate), rate) == [None]


# --- errors -------------------------------------------------------------------------------------
def test_graph_construction_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="data type <class 'numpy.int32'> not inexact"):
            tf.random_gamma([2], 1, dtype=tf.int32)
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.random_gamma([[1]], 1.0)
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.random_poisson(1.0, [[2]])
        with pytest.raises(ValueError, match="Invalid value in tensor used for shape: -2"):
            tf.random_poisson(1.0, [-2])
        with pytest.raises(ValueError, match="requested dtype int32 for Tensor with dtype int64"):
            tf.random_gamma(tf.constant([2], tf.int64), 1.0)
        with pytest.raises(TypeError, match="bfloat16 not in list of allowed values"):
            tf.random_poisson(1.0, [2], dtype=tf.bfloat16)


def test_run_time_errors():
    """(The Poisson kernels' and the stateless ops' errors: test_gamma_poisson_like_tensorflow.)"""
    with tf.Graph().as_default():
        out = tf.random_gamma(tf.placeholder_with_default([-1], [1]), 1.0)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="Dimension -1 must be >= 0"):
                sess.run(out)
