"""Edge cases of math, special-function, reduction and einsum ops, with the values and messages
TensorFlow 2.21 printed for the same TF1 programs (poles, negative arguments, infinities,
float16 overflow)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors

INF, NAN = np.inf, np.nan
F32_64 = (np.float32, np.float64)


def _run(fetch_fn):
    with tf.Graph().as_default(), tf.Session() as sess:
        return sess.run(fetch_fn())


def _check(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


@pytest.mark.parametrize("dtype", F32_64)
@pytest.mark.parametrize("name, x, want", [
    # Cephes' domain errors: Y0/Y1 are -inf and K0/K1 +inf for x < 0 (not SciPy's NaN).
    ("bessel_y0", [-1.0, -INF, NAN], [-INF, -INF, NAN]),
    ("bessel_y1", [-1.0, -INF, NAN], [-INF, -INF, NAN]),
    ("bessel_k0", [-1.0, -INF, NAN, 800.0], [INF, INF, NAN, 0.0]),
    ("bessel_k0e", [-1.0, -2.5, -INF], [INF, INF, INF]),
    ("bessel_k1", [-1.0, -1e-30, -INF], [INF, INF, INF]),
    ("bessel_k1e", [-1.0, -INF, NAN], [INF, INF, NAN]),
    # Ei is NaN for x < 0 and at +inf; -inf at 0.
    ("expint", [-1.0, -1e-30, -INF, INF, -0.0, 0.0], [NAN, NAN, NAN, NAN, -INF, -INF]),
    # Past |x| = 36974 the Fresnel integrals are exactly +-0.5.
    ("fresnel_sin", [1e5, 1e10, 1e30, -1e30, INF], [0.5, 0.5, 0.5, -0.5, 0.5]),
    ("fresnel_cos", [1e5, 1e10, 1e30, -1e30, INF], [0.5, 0.5, 0.5, -0.5, 0.5]),
])
def test_special_functions_at_domain_edges(name, x, want, dtype):
    fn = getattr(tf.math.special, name)
    got = _run(lambda: fn(tf.constant(np.array(x, dtype))))
    _check(got, np.array(want, dtype), 0)


def test_fresnel_beyond_float32_range_in_float64():
    got = _run(lambda: [tf.math.special.fresnel_sin(tf.constant([1e300, -1e300], tf.float64)),
                        tf.math.special.fresnel_cos(tf.constant([1e300, -1e300], tf.float64))])
    for g in got:
        _check(g, np.array([0.5, -0.5]), 0)


@pytest.mark.parametrize("dtype", F32_64)
def test_zeta_is_zero_once_the_first_term_underflows(dtype):
    x = [INF, INF, INF, INF, INF, 2.0, 1e30, 1e30, INF]
    q = [0.5, 1.0, 2.0, INF, 1.5, INF, 1.0, 2.0, 0.0]
    want = [INF, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, INF]
    got = _run(lambda: tf.math.zeta(tf.constant(np.array(x, dtype)),
                                    tf.constant(np.array(q, dtype))))
    _check(got, np.array(want, dtype), 0)


def test_complex_log1p_keeps_tiny_real_parts_and_nan_at_minus_one():
    z = np.array([0j, complex(-0.0, 0.0), complex(-1, 0), complex(np.inf, np.nan),
                  complex(-np.inf, 0), 3 + 4j, complex(1e-300, 1e-300)], np.complex128)
    got = _run(lambda: tf.log1p(tf.constant(z)))
    want = np.array([0j, complex(-0.0, 0.0), complex(-INF, NAN), complex(NAN, NAN),
                     complex(NAN, NAN), 1.732867951399863 + 0.7853981633974482j,
                     complex(1e-300, 1e-300)])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.signbit(got[1].real) and not np.signbit(got[1].imag)


def test_complex64_log1p():
    z = np.array([0j, complex(-1, 0), 3 + 4j], np.complex64)
    got = _run(lambda: tf.log1p(tf.constant(z)))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, [0j, complex(-INF, NAN), 1.732868 + 0.7853981j], rtol=1e-6)


@pytest.mark.parametrize("dtype", [tf.int8, tf.int16, tf.int32, tf.int64])
def test_integer_pow_with_a_negative_exponent_is_tensorflows_error(dtype):
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"^Integers to negative integer powers are not allowed$"):
        try:
            _run(lambda: tf.pow(tf.constant([2, 1], dtype), tf.constant([-1, 2], dtype)))
        except errors.InvalidArgumentError as e:
            raise errors.InvalidArgumentError(None, None, e.message.splitlines()[0]) from e


def test_integer_pow_wraps_on_overflow():
    got = _run(lambda: [tf.pow(tf.constant([3, 2], tf.int32), tf.constant([41, 70], tf.int32)),
                        tf.pow(tf.constant([3, 2], tf.int8), tf.constant([41, 70], tf.int8))])
    np.testing.assert_array_equal(got[0], np.array([2069870691, 0], np.int32))
    np.testing.assert_array_equal(got[1], np.array([99, 0], np.int8))


def test_float16_mean_rounds_its_sum_to_float16():
    got = _run(lambda: [tf.reduce_mean(tf.constant(np.full([4096], 30.0, np.float16))),
                        tf.reduce_mean(tf.constant(np.full([2000], 30.0, np.float16))),
                        tf.reduce_sum(tf.constant(np.full([4096], 1.0, np.float16)))])
    assert [g.dtype for g in got] == [np.float16] * 3
    assert np.isposinf(got[0])
    assert got[1] == 30
    assert got[2] == 4096


@pytest.mark.parametrize("equation, shapes, message", [
    ("ij->k", [(2, 3)], "Output subscripts contain the label k not present in the input "
                        "subscripts."),
    ("ij,jk->ik", [(2, 3)], 'Got 1 inputs for equation "ij,jk->ik", expecting 2'),
    ("i->ii", [(2,)], "Output subscripts contain a label appearing more than once: i->ii"),
    ("ij->jii", [(2, 3)], "Output subscripts contain a label appearing more than once: "
                          "ij->jii"),
    ("ij->i->j", [(2, 3)], "Subscripts have incorrect format: ij->i->j"),
])
def test_einsum_equation_errors_are_tensorflows(equation, shapes, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            tf.einsum(equation, *[tf.ones(s) for s in shapes])
    assert str(info.value) == message


@pytest.mark.parametrize("matrix, rhs, lower, adjoint, want", [
    # A NaN or inf reaches only the rows solved after it; 1 / inf is 0.
    ([[2.0, 0.0], [NAN, 1.0]], [[1.0], [1.0]], True, False, [[0.5], [NAN]]),
    ([[2.0, 0.0], [NAN, 1.0]], [[1.0], [1.0]], False, False, [[0.5], [1.0]]),
    ([[2.0, 0.0, 0.0], [NAN, 1.0, 0.0], [1.0, 1.0, 4.0]], [[1.0], [1.0], [1.0]], True, True,
     [[NAN], [0.75], [0.25]]),
    ([[2.0, 0.0, 0.0], [INF, 1.0, 0.0], [1.0, 1.0, 4.0]], [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]],
     True, False, [[0.5, 0.0], [-INF, NAN], [INF, NAN]]),
    ([[INF, 0.0], [1.0, 1.0]], [[1.0], [1.0]], True, False, [[0.0], [1.0]]),
    ([[2.0, 0.0], [1.0, 1.0]], [[NAN], [1.0]], True, False, [[NAN], [NAN]]),
    ([[2.0, 1.0], [0.0, 1.0]], [[NAN], [1.0]], False, False, [[NAN], [1.0]]),
])
def test_triangular_solve_with_non_finite_entries(matrix, rhs, lower, adjoint, want):
    got = _run(lambda: tf.linalg.triangular_solve(
        tf.constant(matrix, tf.float64), tf.constant(rhs, tf.float64), lower=lower,
        adjoint=adjoint))
    _check(got, np.array(want), 0)


@pytest.mark.parametrize("fn", [tf.math.floordiv, tf.math.floormod, tf.div, tf.truncatediv,
                                tf.truncatemod])
def test_integer_division_of_nothing_by_zero_is_no_error(fn):
    got = _run(lambda: fn(tf.zeros([0], tf.int32), tf.constant(0)))
    assert got.dtype == np.int32 and got.shape == (0,)


def test_integer_pow_of_nothing_to_a_negative_power_is_no_error():
    got = _run(lambda: [tf.pow(tf.zeros([0], tf.int32), tf.constant(-1)),
                        tf.pow(tf.constant(2), tf.zeros([0], tf.int32) - 1)])
    assert [g.shape for g in got] == [(0,), (0,)]
    with pytest.raises(errors.InvalidArgumentError, match="negative integer powers"):
        _run(lambda: tf.pow(tf.constant([2, 3]), tf.constant(-1)))
