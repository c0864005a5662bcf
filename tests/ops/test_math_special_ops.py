"""Special functions: every op against SciPy (OpCase rows, with gradients), TensorFlow 2.21's
values at the edges of each domain (recorded from TF, where its Cephes ports differ from SciPy),
IgammaGradA against finite differences and TF, names, dtypes and errors."""
import numpy as np
import pytest
import scipy.special as sp

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.static_value import static_value
from tensorweave.ops import math_special_ops as special
from tensorweave.testing.op_case import OpCase, case_tests

F32_64 = (tf.float32, tf.float64)
NAN, INF = np.nan, np.inf


def _uniform(low, high, *shape):
    return lambda rng, dt: rng.uniform(low, high, shape).astype(dt)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


def _ref(fn):
    """`fn` in float64, cast back to the first input's dtype."""
    def ref(*args):
        return np.asarray(fn(*[a.astype(np.float64) for a in args])).astype(args[0].dtype)
    return ref


def _igamma_grad_a(a, x):
    """d/da P(a, x) by a central difference of SciPy's P (relative error about 1e-10)."""
    h = 1e-5 * a
    return (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)


def _zero_where_x_is_zero(fn):
    """The reference of xlogy & co: fn(x, y), and 0 wherever x == 0 (whatever y is)."""
    def ref(x, y):
        with np.errstate(all="ignore"):
            return np.where(x == 0, 0, fn(x, y)).astype(x.dtype)
    return ref


_NEGATIVE_AND_POSITIVE = _value([[-2.5, -1.3, -0.4], [0.3, 1.7, 6.0]])
_N = np.array([0.0, 1.0, 2.0, 3.0])
_ZETA_X = np.array([2.0, 3.5, 5.0])
_A, _B = np.array([0.5, 2.0, 3.0]), np.array([1.5, 1.0, 4.0])

CASES = [
    OpCase("lgamma", tf.lgamma, _ref(sp.gammaln), [_NEGATIVE_AND_POSITIVE], dtypes=F32_64),
    OpCase("lgamma_half", tf.lgamma, _ref(sp.gammaln), [_uniform(0.5, 4, 5)],
           dtypes=(tf.float16,), rtol=2e-3, atol=2e-3, grad=False),
    OpCase("lgamma_empty", tf.lgamma, _ref(sp.gammaln), [np.zeros((0, 3))]),
    OpCase("digamma", tf.digamma, _ref(sp.psi), [_NEGATIVE_AND_POSITIVE], dtypes=F32_64),
    OpCase("erfc", tf.erfc, _ref(sp.erfc), [_uniform(-3, 3, 2, 4)], dtypes=F32_64),
    OpCase("erfc_half", tf.math.erfc, _ref(sp.erfc), [_uniform(-2, 2, 4)],
           dtypes=(tf.float16,), rtol=2e-3, atol=1e-3, grad=False),
    OpCase("erfinv", tf.math.erfinv, _ref(sp.erfinv), [_uniform(-0.95, 0.95, 6)],
           dtypes=F32_64),
    OpCase("ndtri", tf.math.ndtri, _ref(sp.ndtri), [_uniform(0.02, 0.98, 2, 3)],
           dtypes=F32_64),
    OpCase("erfcinv", tf.math.erfcinv, _ref(sp.erfcinv), [_uniform(0.05, 1.95, 5)],
           dtypes=F32_64),
    OpCase("bessel_i0e", tf.math.bessel_i0e, _ref(sp.i0e),
           [_value([[-6.0, -1.5, -0.2], [0.3, 2.0, 30.0]])], dtypes=F32_64),
    OpCase("bessel_i1e", tf.math.bessel_i1e, _ref(sp.i1e),
           [_value([-6.0, -0.2, 0.0, 0.7, 30.0])], dtypes=F32_64),
    OpCase("igamma_broadcast", tf.igamma, _ref(sp.gammainc),
           [_uniform(0.5, 4, 3, 1), _uniform(0.1, 6, 4)], dtypes=F32_64),
    OpCase("igamma_half", tf.math.igamma, _ref(sp.gammainc),
           [_uniform(0.5, 4, 3), _uniform(0.1, 6, 3)], dtypes=(tf.float16,), rtol=3e-3,
           atol=1e-3, grad=False),
    OpCase("igammac_broadcast", tf.igammac, _ref(sp.gammaincc),
           [_uniform(0.5, 4, 2, 3), _uniform(0.1, 6, 3)], dtypes=F32_64),
    OpCase("igamma_grad_a", lambda a, x: apply_op(special.IgammaGradA, [a, x]),
           _ref(_igamma_grad_a), [_uniform(0.3, 8, 2, 3), _uniform(0.05, 12, 3)],
           dtypes=F32_64, grad=False),
    OpCase("polygamma", lambda x: tf.polygamma(tf.constant(_N, x.dtype), x),
           _ref(lambda x: sp.polygamma(_N.astype(int), x)), [_uniform(0.5, 5, 3, 4)],
           dtypes=F32_64),
    OpCase("zeta", lambda q: tf.zeta(tf.constant(_ZETA_X, q.dtype), q),
           _ref(lambda q: sp.zeta(_ZETA_X, q)), [_uniform(0.5, 4, 2, 3)], dtypes=F32_64),
    OpCase("betainc", lambda x: tf.betainc(tf.constant(_A, x.dtype), tf.constant(_B, x.dtype), x),
           _ref(lambda x: sp.betainc(_A, _B, x)), [_uniform(0.05, 0.95, 3)], dtypes=F32_64),
    OpCase("betainc_scalar_x", lambda a, b: tf.betainc(a, b, tf.constant(0.3, a.dtype)),
           _ref(lambda a, b: sp.betainc(a, b, 0.3)),
           [_uniform(0.5, 3, 2, 2), _uniform(0.5, 3, 2, 2)], dtypes=F32_64, grad=False),
    OpCase("xlogy", tf.math.xlogy, _ref(sp.xlogy), [_uniform(0.5, 2, 2, 3),
                                                   _uniform(0.1, 3, 3)], dtypes=F32_64),
    OpCase("xlogy_zeros", tf.math.xlogy, _zero_where_x_is_zero(lambda x, y: x * np.log(y)),
           [_value([0.0, 0.0, 2.0, 0.0]), _value([0.0, NAN, 3.0, -1.0])],
           dtypes=(tf.float16, tf.float32, tf.complex64, tf.complex128), grad=False),
    OpCase("xdivy", tf.math.xdivy, _ref(lambda x, y: x / y),
           [_uniform(0.5, 2, 3, 1), _uniform(0.5, 3, 2)], dtypes=F32_64),
    OpCase("xdivy_zeros", tf.math.xdivy, _zero_where_x_is_zero(lambda x, y: x / y),
           [_value([0.0, 0.0, 2.0]), _value([0.0, NAN, 4.0])],
           dtypes=(tf.float32, tf.complex128), grad=False),
    OpCase("xlog1py", tf.math.xlog1py, _ref(sp.xlog1py),
           [_uniform(0.5, 2, 4), _uniform(-0.5, 3, 4)], dtypes=F32_64),
    OpCase("xlog1py_zeros", tf.math.xlog1py, _zero_where_x_is_zero(lambda x, y: x * np.log1p(y)),
           [_value([0.0, 0.0, 2.0]), _value([-1.0, NAN, 1.0])], grad=False),
    OpCase("lbeta", tf.lbeta,
           _ref(lambda x: sp.gammaln(x).sum(-1) - sp.gammaln(x.sum(-1))),
           [_uniform(0.3, 4, 2, 3, 4)], dtypes=(tf.float16, tf.float32, tf.float64),
           rtol=2e-3, atol=2e-3),
    OpCase("lbeta_empty_last_dim", tf.lbeta, lambda x: np.full(2, -INF, x.dtype),
           [np.zeros((2, 0))], grad=False),
    OpCase("log_sigmoid", tf.log_sigmoid, _ref(lambda x: -np.logaddexp(0, -x)),
           [_value([-100.0, -3.0, 0.0, 2.5, 100.0])], dtypes=(tf.float16,) + F32_64,
           rtol=1e-3, atol=1e-6),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- TensorFlow's values at the edges (recorded from TF 2.21, float32) ------------------------
def _run(fn, *arrays):
    with tf.Graph().as_default():
        out = fn(*[tf.constant(np.asarray(a, np.float32)) for a in arrays])
        with tf.Session() as sess:
            return sess.run(out)


EDGES = [
    ("lgamma", tf.lgamma, ([0.0, -1.0, -0.5, -2.5, INF, -INF, NAN, 1e-30],),
     [INF, INF, 1.2655121, -0.056243714, INF, INF, NAN, 69.077553]),
    ("digamma", tf.digamma, ([0.0, -0.0, -1.0, -0.5, INF, -INF, NAN, 1e-30],),
     [NAN, NAN, NAN, 0.036489964, INF, NAN, NAN, -1e30]),
    ("igamma", tf.igamma, ([0.0, 0.0, 1.0, -1.0, 1.0, NAN, 2.0, 1.0, INF, 1.0],
                           [0.0, 1.0, 0.0, 1.0, -1.0, 1.0, NAN, INF, 1.0, 1e-30]),
     [0.0, NAN, 0.0, NAN, NAN, NAN, NAN, 1.0, 0.0, 1e-30]),
    ("igammac", tf.igammac, ([0.0, 0.0, 1.0, -1.0, 1.0, NAN, 2.0, 1.0, INF, 1.0],
                             [0.0, 1.0, 0.0, 1.0, -1.0, 1.0, NAN, INF, 1.0, 1e-30]),
     [NAN, NAN, 1.0, NAN, NAN, NAN, NAN, 0.0, 1.0, 1.0]),
    ("polygamma", tf.polygamma, ([0.0, 1.0, 1.5, -1.0, 2.0, 3.0, 1.0, 1.0, 1.0],
                                 [1.0, 1.0, 1.0, 1.0, 0.0, -1.0, -1.5, INF, NAN]),
     [-0.5772157, 1.644934, NAN, NAN, NAN, INF, 9.379247, 0.0, NAN]),
    ("zeta", tf.zeta, ([1.0, 0.5, 2.0, 2.0, 2.0, 2.5, 3.0, INF, 2.0, -1.0],
                       [1.0, 1.0, 0.0, -1.0, -1.5, -1.5, -1.5, 1.0, INF, -2.0]),
     [INF, NAN, INF, INF, 9.379247, NAN, 0.11810221, 1.0, 0.0, NAN]),
    ("betainc", tf.betainc, ([0.0, 1.0, -1.0, 1.0, 1.0, 1.0, 2.0, 0.0, NAN],
                             [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 3.0, 0.0, 1.0],
                             [0.5, 0.5, 0.5, -0.1, 1.1, 0.0, 1.0, 0.5, 0.5]),
     [NAN, NAN, NAN, NAN, NAN, 0.0, 1.0, NAN, NAN]),
    ("erfinv", tf.math.erfinv, ([-1.0, 1.0, 1.5, 0.0, NAN, -0.999999],),
     [-INF, INF, NAN, 0.0, NAN, -3.4570746]),
    ("ndtri", tf.math.ndtri, ([0.0, 1.0, 1.5, 0.5, NAN, -0.1],),
     [-INF, INF, NAN, 0.0, NAN, NAN]),
    ("erfc", tf.erfc, ([-INF, INF, NAN, 30.0, -30.0],), [2.0, 0.0, NAN, 0.0, 2.0]),
    ("bessel_i0e", tf.math.bessel_i0e, ([0.0, -1.0, 1e3, INF, -INF, NAN],),
     [1.0, 0.46575963, 0.012617242, 0.0, 0.0, NAN]),
    ("bessel_i1e", tf.math.bessel_i1e, ([0.0, -1.0, 1e3, INF, -INF, NAN],),
     [0.0, -0.20791042, 0.012610932, 0.0, -0.0, NAN]),
    ("xlogy", tf.math.xlogy, ([0.0, 0.0, 0.0, 1.0, 0.0, 2.0], [0.0, NAN, INF, 0.0, -1.0, -1.0]),
     [0.0, 0.0, 0.0, -INF, 0.0, NAN]),
    ("xdivy", tf.math.xdivy, ([0.0, 0.0, 0.0, 1.0, 0.0], [0.0, NAN, INF, 0.0, -1.0]),
     [0.0, 0.0, 0.0, INF, 0.0]),
    ("xlog1py", tf.math.xlog1py, ([0.0, 0.0, 0.0, 1.0, 0.0], [-1.0, NAN, INF, 0.0, -2.0]),
     [0.0, 0.0, 0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize("fn,inputs,expected", [e[1:] for e in EDGES], ids=[e[0] for e in EDGES])
def test_values_at_the_edges_match_tensorflow(fn, inputs, expected):
    got = _run(fn, *inputs)
    np.testing.assert_allclose(got, np.float32(expected), rtol=2e-6, equal_nan=True)


def test_igamma_gradients_match_tensorflow():
    """d/da and d/dx of P(a, x) in float64, against TF 2.21's IgammaGradA and formula."""
    a = np.array([0.5, 1.0, 2.5, 10.0, 0.1, 3.0, 50.0, 1e-3, 200.0])
    x = np.array([0.3, 2.0, 2.5, 12.0, 5.0, 0.01, 45.0, 1e-3, 210.0])
    tf_da = [-0.77057035137535179, -0.22082542621185938, -0.26084496236866950,
             -0.097177972037179469, -1.7539473155578889e-03, -9.6968742676774889e-07,
             -0.045543292140124293, -6.2932038249004263, -0.021619881014597615]
    tf_dx = [0.76309057876818598, 0.13533528323661270, 0.24408304269877479,
             0.087364379903049488, 1.6638490099201526e-04, 4.9502491687458457e-05,
             0.047869249786210766, 0.99269544719614966, 0.021083359201785140]
    with tf.Graph().as_default():
        ta, tx = tf.constant(a), tf.constant(x)
        grads = tf.gradients(tf.igamma(ta, tx), [ta, tx])
        grads_c = tf.gradients(tf.igammac(ta, tx), [ta, tx])
        with tf.Session() as sess:
            (da, dx), (dca, dcx) = sess.run([grads, grads_c])
    np.testing.assert_allclose(da, tf_da, rtol=1e-11)
    np.testing.assert_allclose(dx, tf_dx, rtol=1e-11)
    np.testing.assert_array_equal(dca, -da)
    np.testing.assert_array_equal(dcx, -dx)


def test_igamma_grad_a_edges_and_no_second_derivative():
    with tf.Graph().as_default():
        a = tf.constant([0.0, -1.0, 1.0, 1.0, 1.0, NAN])
        x = tf.constant([1.0, 1.0, 0.0, -1.0, INF, 1.0])
        d = apply_op(special.IgammaGradA, [a, x])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(d), [NAN, NAN, 0.0, NAN, 0.0, NAN])
        with pytest.raises(LookupError, match="IgammaGradA"):
            tf.gradients(tf.gradients(tf.igamma(a, x), a)[0], a)


def test_gradients_flow_only_where_tensorflow_defines_them():
    with tf.Graph().as_default():
        a, b, x = tf.constant(2.0), tf.constant(3.0), tf.constant(0.4)
        assert tf.gradients(tf.betainc(a, b, x), [a, b]) == [None, None]
        assert tf.gradients(tf.zeta(b, x), b) == [None]
        assert tf.gradients(tf.polygamma(a, x), a) == [None]
        x2 = tf.constant([0.0, 0.0])
        y2 = tf.constant([0.0, 2.0])
        gx, gy = tf.gradients(tf.math.xlogy(x2, y2), [x2, y2])
        with tf.Session() as sess:
            gx, gy = sess.run([gx, gy])
    np.testing.assert_array_equal(gx, [0.0, 0.0])  # xlogy(0, y): d/dx taken as 0, as in TF
    np.testing.assert_array_equal(gy, [0.0, 0.0])


def test_bessel_i1e_gradient_at_zero_is_one_half():
    with tf.Graph().as_default():
        x = tf.constant([0.0, 0.0], tf.float64)
        (g,) = tf.gradients(tf.math.bessel_i1e(x), x)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(g), [0.5, 0.5])


def test_default_names_and_op_types():
    with tf.Graph().as_default():
        x, y = tf.constant([0.5, 1.5]), tf.constant([1.0, 2.0])
        made = [tf.lgamma(x), tf.digamma(x), tf.erfc(x), tf.math.erfinv(x), tf.math.ndtri(x),
                tf.math.bessel_i0e(x), tf.math.bessel_i1e(x), tf.igamma(x, y), tf.igammac(x, y),
                tf.polygamma(y, x), tf.zeta(y, x), tf.betainc(x, y, x), tf.math.xlogy(x, y),
                tf.math.xdivy(x, y), tf.math.xlog1py(x, y), tf.log_sigmoid(x),
                tf.lbeta([[1.0, 2.0]]), tf.math.erfcinv(x)]
    assert [t.name for t in made] == [
        "Lgamma:0", "Digamma:0", "Erfc:0", "erfinv/Erfinv:0", "ndtri/Ndtri:0",
        "bessel_i0e/BesselI0e:0", "bessel_i1e/BesselI1e:0", "Igamma:0", "Igammac:0",
        "Polygamma:0", "Zeta:0", "Betainc:0", "Xlogy:0", "xdivy/Xdivy:0", "xlog1py/Xlog1py:0",
        "LogSigmoid:0", "lbeta/sub:0", "erfcinv/mul_1:0"]
    assert made[15].op.type == "Neg"


def test_namespaces():
    assert tf.math.lgamma is tf.lgamma and tf.math.betainc is tf.betainc
    assert tf.math.log_sigmoid is tf.log_sigmoid and tf.math.zeta is tf.zeta
    for name in ("erfinv", "ndtri", "bessel_i0e", "xlogy", "xdivy", "xlog1py", "erfcinv"):
        assert not hasattr(tf, name), name


def test_static_values_fold():
    with tf.Graph().as_default():
        np.testing.assert_allclose(static_value(tf.lgamma([3.0])), [np.log(2.0)], rtol=1e-6)
        np.testing.assert_allclose(static_value(tf.math.xlogy([0.0], [0.0])), [0.0])


def test_betainc_shape_rules():
    with tf.Graph().as_default():
        assert tf.betainc(tf.ones([2, 3]), 1.0, 0.5).shape.as_list() == [2, 3]
        assert tf.betainc(1.0, 1.0, 0.5).shape.as_list() == []
        unknown = tf.placeholder(tf.float32, None)
        assert tf.betainc(unknown, 1.0, 0.5).shape.ndims is None
        assert tf.betainc(unknown, tf.ones([3]), 0.5).shape.as_list() == [3]
        partial = tf.placeholder(tf.float32, [None, 3])
        merged = tf.betainc(partial, tf.placeholder(tf.float32, [2, None]), 0.5)
        assert merged.shape.as_list() == [2, 3]
        with pytest.raises(ValueError, match="Shapes must be equal rank, but are 2 and 1"):
            tf.betainc(tf.ones([2, 3]), tf.ones([3]), 0.5)
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
            tf.betainc(tf.ones([2]), tf.ones([3]), 0.5)
        fed = tf.placeholder(tf.float32, None)
        z = tf.betainc(fed, tf.ones([3]), 0.5)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"Shapes of a and b are inconsistent: \[2,3\] vs. \[3\]"):
                sess.run(z, {fed: np.ones((2, 3))})
            z2 = tf.betainc(1.0, fed, tf.ones([2]))
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"Shapes of b and x are inconsistent: \[3\] vs. \[2\]"):
                sess.run(z2, {fed: np.ones(3)})


@pytest.mark.parametrize("build,match", [
    (lambda: tf.lgamma(tf.constant([1, 2])), "int32 not in list of allowed values"),
    (lambda: tf.polygamma(tf.constant([1.0], tf.float16), tf.constant([1.0], tf.float16)),
     "float16 not in list of allowed values"),
    (lambda: tf.math.xlogy(tf.constant([1]), tf.constant([1])), "int32 not in list"),
    (lambda: tf.igamma(tf.constant([1.0]), tf.constant([1.0], tf.float64)), "float64"),
    (lambda: tf.lbeta(tf.constant([1, 2])), "int32 not in list of allowed values"),
])
def test_type_errors(build, match):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=match):
            build()


def test_value_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.igamma(tf.ones([2]), tf.ones([3]))
        with pytest.raises(ValueError, match="Invalid reduction dimension -1"):
            tf.lbeta(2.0)
