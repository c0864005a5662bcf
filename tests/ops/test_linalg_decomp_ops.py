"""Decompositions (MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, Cholesky,
SelfAdjointEigV2, Qr, Svd), logdet, pinv, matrix_rank and norm: forward against NumPy, shape
functions against the kernels, gradients against central differences, TensorFlow's errors at
construction and at run time, names and result types.

Matrices whose gradients are checked are built inside the row's builder from an unconstrained
random matrix (m m^H + 3 I is positive definite, m + m^H self-adjoint), so the checked function
is smooth in every input entry. Singular and eigenvectors are compared after a per-column sign
(phase) normalization, which makes them unique: the function TF's own tests differentiate.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.matrices import adjoint as _herm
from tensorweave.testing.matrices import random_matrices as _randn
from tensorweave.testing.matrices import well_conditioned as _well
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
ALL = FLOAT + (tf.complex64, tf.complex128)
TOL = {"rtol": 1e-4, "atol": 1e-4}


# Hermitian positive definite and self-adjoint matrices from an unconstrained m.
def _gram_np(m):
    return m @ _herm(m) + 3 * np.eye(m.shape[-1])


def _gram(m):
    return tf.matmul(m, m, adjoint_b=True) + 3 * np.eye(3)


def _sym(m):
    return m + tf.matrix_transpose(m, conjugate=True)


def _unphase_np(x):
    """Each column scaled by the conjugate phase of its first entry (real: by its sign)."""
    first = x[..., :1, :]
    return x * np.conj(first) / np.abs(first)


def _unphase(x):
    first = x[..., :1, :]
    return x * tf.conj(first) / tf.cast(tf.abs(first), x.dtype)


def _svd_outputs(**kwargs):
    def build(a):
        s, u, v = tf.svd(a, **kwargs)
        return [s, _unphase(u), _unphase(v)]

    def ref(a):
        u, s, vh = np.linalg.svd(a, full_matrices=kwargs.get("full_matrices", False))
        return [s, _unphase_np(u), _unphase_np(_herm(vh))]
    return build, ref


def _eigh_np(m):
    e, v = np.linalg.eigh(m + _herm(m))
    return [e, _unphase_np(v)]


CASES = [
    # --- MatrixInverse
    OpCase("inverse", tf.matrix_inverse, np.linalg.inv, [_well(3, 3)], ALL, **TOL),
    OpCase("inverse_batch_adjoint", lambda x: tf.matrix_inverse(x, adjoint=True),
           lambda x: np.linalg.inv(_herm(x)), [_well(2, 2, 3, 3)], ALL, **TOL),
    OpCase("inverse_half", tf.matrix_inverse, lambda x: np.linalg.inv(x.astype(np.float32)),
           [_well(2, 2)], (tf.float16,), rtol=1e-2, atol=1e-2, grad=False),
    OpCase("inverse_empty", tf.linalg.inv, lambda x: x, [np.zeros((2, 0, 0))], grad=False),
    # --- MatrixDeterminant, LogMatrixDeterminant
    OpCase("determinant", tf.matrix_determinant, np.linalg.det, [_well(2, 3, 3)], ALL, **TOL),
    OpCase("determinant_empty_matrices", tf.linalg.det, np.linalg.det, [np.zeros((3, 0, 0))],
           grad=False),
    OpCase("slogdet", lambda x: list(tf.linalg.slogdet(x)), lambda x: list(np.linalg.slogdet(x)),
           [_randn(2, 3, 3)], ALL, **TOL),
    OpCase("slogdet_singular", lambda x: list(tf.linalg.slogdet(x)),
           lambda x: [np.zeros(()), np.array(-np.inf)], [np.array([[1.0, 2.0], [2.0, 4.0]])],
           grad=False),
    # --- Cholesky, logdet
    OpCase("cholesky", lambda m: tf.cholesky(_gram(m)),
           lambda m: np.linalg.cholesky(_gram_np(m)), [_randn(2, 3, 3)], ALL, **TOL),
    OpCase("cholesky_reads_lower_triangle", tf.linalg.cholesky,
           lambda x: np.linalg.cholesky(np.tril(x) + np.tril(x, -1).T),
           [np.array([[4.0, 100.0], [2.0, 5.0]])], FLOAT, grad=False),
    OpCase("cholesky_not_positive_definite_is_nan", tf.cholesky,
           lambda x: np.stack([np.tril(np.full((2, 2), np.nan)), np.eye(2)]),
           [np.array([[[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])], FLOAT, grad=False),
    OpCase("logdet", lambda m: tf.linalg.logdet(_gram(m)),
           lambda m: np.linalg.slogdet(_gram_np(m))[1], [_randn(2, 3, 3)], ALL, **TOL),
    # --- SelfAdjointEigV2
    OpCase("self_adjoint_eig", lambda m: (lambda e, v: [e, _unphase(v)])(
        *tf.self_adjoint_eig(_sym(m))), _eigh_np, [_randn(2, 3, 3)], ALL, **TOL),
    OpCase("self_adjoint_eigvals", lambda m: tf.linalg.eigvalsh(_sym(m)),
           lambda m: np.linalg.eigvalsh(m + _herm(m)), [_randn(3, 3)], ALL, **TOL),
    OpCase("eigh_reads_lower_triangle", tf.self_adjoint_eigvals,
           lambda x: np.linalg.eigvalsh(x, UPLO="L"), [_randn(4, 4)], FLOAT, grad=False, **TOL),
    OpCase("eigh_empty", lambda x: list(tf.linalg.eigh(x)), lambda x: [np.zeros((2, 0)), x],
           [np.zeros((2, 0, 0))], grad=False),
    # --- Qr
    OpCase("qr_tall", lambda x: list(tf.qr(x)), lambda x: list(np.linalg.qr(x)),
           [_randn(2, 4, 3)], ALL, **TOL),
    OpCase("qr_wide", lambda x: list(tf.linalg.qr(x)), lambda x: list(np.linalg.qr(x)),
           [_randn(3, 5)], ALL, **TOL),
    OpCase("qr_full_square", lambda x: list(tf.qr(x, full_matrices=True)),
           lambda x: list(np.linalg.qr(x, "complete")), [_randn(3, 3)], FLOAT, **TOL),
    OpCase("qr_full_tall", lambda x: list(tf.qr(x, full_matrices=True)),
           lambda x: list(np.linalg.qr(x, "complete")), [_randn(4, 2)], FLOAT, grad=False,
           **TOL),
    OpCase("qr_half", lambda x: list(tf.qr(x)),
           lambda x: list(np.linalg.qr(x.astype(np.float32))), [_randn(3, 2)], (tf.float16,),
           rtol=1e-2, atol=1e-2, grad=False),
    # --- Svd
    OpCase("svd", *_svd_outputs(), [_randn(2, 3, 3)], ALL, **TOL),
    OpCase("svd_tall", *_svd_outputs(), [_randn(4, 3)], ALL, **TOL),
    OpCase("svd_wide", *_svd_outputs(), [_randn(2, 3, 4)], FLOAT, **TOL),
    OpCase("svd_full_tall", *_svd_outputs(full_matrices=True), [_randn(4, 3)], FLOAT, **TOL),
    OpCase("svd_full_wide_no_gradient", *_svd_outputs(full_matrices=True), [_randn(2, 5)],
           FLOAT, grad=False, **TOL),
    OpCase("svd_values_only", lambda x: tf.svd(x, compute_uv=False),
           lambda x: np.linalg.svd(x, compute_uv=False), [_randn(2, 3, 5)], ALL, **TOL),
    OpCase("svd_non_finite_is_nan", lambda x: tf.svd(x, compute_uv=False),
           lambda x: np.stack([np.full(2, np.nan), [2.0, 1.0]]),
           [np.array([[[np.inf, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 1.0]]])], grad=False),
    OpCase("svd_empty_batch", lambda x: list(tf.svd(x)),
           lambda x: [np.zeros((0, 2)), np.zeros((0, 2, 2)), np.zeros((0, 3, 2))],
           [np.zeros((0, 2, 3))], grad=False),
    # --- pinv, matrix_rank
    OpCase("pinv_wide", tf.linalg.pinv, np.linalg.pinv, [_randn(2, 3, 4)], FLOAT, **TOL),
    OpCase("pinv_rank_deficient", tf.linalg.pinv,
           lambda x: np.linalg.pinv(x, rtol=30 * np.finfo(x.dtype).eps),
           [np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])], FLOAT, grad=False, **TOL),
    OpCase("matrix_rank", tf.linalg.matrix_rank,
           lambda x: np.linalg.matrix_rank(x).astype(np.int32),
           [np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])], FLOAT, grad=False),
]


def _norm_case(label, ref, x, dtypes=FLOAT, **kwargs):
    return OpCase(f"norm_{label}", lambda t: tf.norm(t, **kwargs), ref, [x], dtypes, **TOL)


_norm = np.linalg.norm
NORM_CASES = [
    _norm_case("default", lambda x: _norm(x.ravel()), _randn(2, 3, 4), ALL),
    _norm_case("vector_1", lambda x: _norm(x, 1, axis=-1), _randn(2, 3), ALL, ord=1, axis=-1),
    _norm_case("vector_inf_keepdims", lambda x: _norm(x, np.inf, axis=0, keepdims=True),
               _randn(3, 2), ord=np.inf, axis=0, keepdims=True),
    _norm_case("vector_p3", lambda x: _norm(x.ravel(), 3), _randn(2, 3), ord=3),
    _norm_case("vector_p_half", lambda x: _norm(x, 0.5, axis=1), _randn(2, 3), ord=0.5, axis=1),
    _norm_case("vector_2", lambda x: _norm(x, 2, axis=1), _randn(2, 3), ALL, ord=2, axis=1),
    _norm_case("matrix_fro", lambda x: _norm(x, "fro", axis=(0, 2)), _randn(2, 3, 4), ALL,
               ord="fro", axis=(0, 2)),
    _norm_case("matrix_1", lambda x: _norm(x, 1, axis=(-2, -1)), _randn(2, 3, 4),
               ord=1, axis=(-2, -1)),
    _norm_case("matrix_inf_keepdims", lambda x: _norm(x, np.inf, axis=(1, 0), keepdims=True),
               _randn(3, 4), ord=np.inf, axis=[1, 0], keepdims=True),
    _norm_case("matrix_2", lambda x: _norm(x, 2, axis=(-1, 0)), _randn(3, 2, 4), ord=2,
               axis=(-1, 0)),
    _norm_case("matrix_2_complex", lambda x: _norm(x, 2, axis=(1, 2), keepdims=True),
               _randn(2, 3, 3), (tf.complex64,), ord=2, axis=(1, 2), keepdims=True),
]

test_forward, test_shapes, test_gradient = case_tests(CASES + NORM_CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_names_types_and_results():
    with tf.Graph().as_default():
        a = tf.constant(np.eye(3, dtype=np.float32) * 2)
        assert (tf.matrix_inverse(a).op.name, tf.linalg.inv(a).op.type) == \
            ("MatrixInverse", "MatrixInverse")
        assert tf.matrix_inverse(a, adjoint=True).op.get_attr("adjoint") is True
        assert tf.matrix_determinant(a, name="d").op.name == "d"
        sign, log_abs = result = tf.linalg.slogdet(a)
        assert type(result).__name__ == "LogMatrixDeterminant"
        assert result.log_abs_determinant is log_abs and sign.op.type == "LogMatrixDeterminant"
        qr = tf.qr(a)
        assert type(qr).__name__ == "Qr" and qr.q.op is qr.r.op
        assert qr.q.op.get_attr("full_matrices") is False
        s, u, v = tf.svd(a)
        assert (s.op.type, s.op.get_attr("compute_uv")) == ("Svd", True)
        assert tf.svd(a, compute_uv=False).op.get_attr("compute_uv") is False
        e, vec = tf.self_adjoint_eig(a)
        assert e.op.get_attr("compute_v") and not \
            tf.self_adjoint_eigvals(a).op.get_attr("compute_v")
        assert tf.linalg.logdet(a).op.name == "logdet/mul"
        assert tf.linalg.pinv(a).op.name == "pinv/MatMul"
        assert tf.norm(a).op.name == "norm/Squeeze"
        assert tf.linalg.norm(a, ord=2, axis=[0, 1]).op.name == "norm_1/Squeeze"
        assert tf.linalg.eigh is tf.self_adjoint_eig and tf.linalg.svd is tf.svd
        got = _run([tf.matrix_determinant(a), log_abs, tf.linalg.logdet(a)])
    np.testing.assert_allclose(got, [8.0, np.log(8.0), np.log(8.0)], rtol=1e-6)


def test_complex_svd_values_are_real():
    x = np.array([[2 + 1j, 1 - 1j], [1 + 1j, 3]], np.complex64)
    with tf.Graph().as_default():
        s = tf.svd(tf.constant(x), compute_uv=False)
        norm2 = tf.norm(tf.constant(x), ord=2, axis=[0, 1])
        assert s.dtype == norm2.dtype == tf.float32
        got_s, got_norm = _run([s, norm2])
    np.testing.assert_allclose(got_s, np.linalg.svd(x, compute_uv=False), rtol=1e-5)
    np.testing.assert_allclose(got_norm, np.linalg.norm(x, 2), rtol=1e-5)


def test_static_shapes():
    P = tf.placeholder
    with tf.Graph().as_default():
        assert tf.matrix_inverse(P(tf.float32, [None, 3])).shape.as_list() == [3, 3]
        assert tf.matrix_determinant(P(tf.float32, [2, None, 3])).shape.as_list() == [2]
        assert tf.matrix_determinant(P(tf.float32)).shape.ndims is None
        e, v = tf.self_adjoint_eig(P(tf.float32, [None, 3]))
        assert (e.shape.as_list(), v.shape.as_list()) == ([3], [3, 3])
        assert tf.self_adjoint_eigvals(P(tf.float32, [2, 3, 3])).op.outputs[1].shape == [0]
        s, u, v = tf.svd(P(tf.float32, [None, 5]))
        assert [t.shape.as_list() for t in (s, u, v)] == [[None], [None, None], [5, None]]
        s, u, v = tf.svd(P(tf.float32, [2, 3, 5]), full_matrices=True)
        assert [t.shape.as_list() for t in (s, u, v)] == [[2, 3], [2, 3, 3], [2, 5, 5]]
        assert tf.svd(P(tf.float32, [2, 3, 5]), compute_uv=False).op.outputs[2].shape == [0]
        q, r = tf.qr(P(tf.float32, [2, 3, 5]))
        assert (q.shape.as_list(), r.shape.as_list()) == ([2, 3, 3], [2, 3, 5])
        q, r = tf.qr(P(tf.float32, [None, 5]), full_matrices=True)
        assert (q.shape.as_list(), r.shape.as_list()) == ([None, None], [None, 5])
        assert tf.linalg.pinv(P(tf.float32, [2, None, 3])).shape.as_list() == [2, 3, None]
        assert tf.norm(P(tf.float32, [None, 4, 5]), axis=[-2, -1]).shape.as_list() == [None]


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.matrix_inverse(tf.ones([2, 3])), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.matrix_determinant(tf.ones([2, 3])), ValueError,
     "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.linalg.slogdet(tf.ones([4, 3, 2])), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.cholesky(tf.ones([3])), ValueError,
     "Shape must be at least rank 2 but is rank 1"),
    (lambda: tf.self_adjoint_eig(tf.ones([2, 3])), ValueError, "Dimensions must be equal"),
    (lambda: tf.qr(tf.ones([3])), ValueError, "at least rank 2"),
    (lambda: tf.svd(tf.ones([])), ValueError, "at least rank 2 but is rank 0"),
    (lambda: tf.matrix_inverse(tf.ones([2, 2], tf.int32)), TypeError, "allowed values"),
    (lambda: tf.svd(tf.ones([2, 2], tf.int64)), TypeError,
     "DataType int64 not in list of allowed values"),
    (lambda: tf.linalg.pinv(tf.ones([3])), ValueError, r"at least 2 dimensions \(saw: 1\)"),
    (lambda: tf.linalg.pinv(tf.ones([2, 2], tf.int32)), TypeError, "`float`-like"),
    (lambda: tf.norm(tf.ones([3]), ord="fro"), ValueError, "supported vector norm, got fro"),
    (lambda: tf.norm(tf.ones([3]), ord=-1), ValueError, "supported vector norm, got -1"),
    (lambda: tf.norm(tf.ones([3, 3]), ord=3, axis=[0, 1]), ValueError,
     "supported matrix norm in"),
    (lambda: tf.norm(tf.ones([3, 3]), axis=[1, 1]), ValueError, "2 unique integers"),
    (lambda: tf.norm(tf.ones([3, 3]), axis=[0, 1, 2]), ValueError, "2 unique integers"),
    (lambda: tf.norm(tf.ones([3]), keepdims=True, keep_dims=True), ValueError,
     "Cannot specify both"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("build,feed,match", [
    (tf.matrix_inverse, _SINGULAR, "Input is not invertible."),
    (tf.matrix_inverse, np.stack([np.eye(2), _SINGULAR]), "Input is not invertible."),
    (tf.matrix_inverse, np.array([[np.nan, 1.0], [1.0, 1.0]]), "Input is not invertible."),
    (lambda x: tf.matrix_inverse(x, adjoint=True), _SINGULAR.T, "Input is not invertible."),
    (tf.matrix_inverse, np.ones((2, 3)), "Input matrix must be square."),
    (tf.matrix_determinant, np.ones(3), "Input tensor 0 must have rank >= 2, got 1"),
    (tf.cholesky, np.ones((3, 2)), "Input matrix must be square."),
    (tf.self_adjoint_eigvals, np.array([[1.0, 0.0], [np.nan, 1.0]]),
     "Self-adjoint eigen decomposition was not successful"),
    (tf.svd, np.float64(1.0), "Input tensor 0 must have rank >= 2, got 0"),
])
def test_runtime_errors(build, feed, match):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64)
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(build(x), {x: feed})


def test_nan_off_the_first_pivot_or_triangle_is_not_an_error():
    """As TensorFlow's kernels: only a NaN first pivot fails an inverse; NaN results
    otherwise. The eigen solver ignores the upper triangle."""
    x = np.array([[2.0, 1.0], [1.0, np.nan]])
    with tf.Graph().as_default():
        inv = tf.matrix_inverse(tf.constant(x))
        eig = tf.self_adjoint_eigvals(tf.constant(np.array([[2.0, np.nan], [0.0, 1.0]])))
        got_inv, got_eig = _run([inv, eig])
    assert np.isnan(got_inv).all()
    np.testing.assert_allclose(got_eig, [1.0, 2.0])


@pytest.mark.parametrize("build,match", [
    (lambda a: tf.qr(a, full_matrices=True), "nrows > ncols and full_matrices"),
    (lambda a: tf.svd(a[:, :1], full_matrices=True)[1], r"abs\(m - n\) > 1"),
    (lambda a: tf.qr(tf.placeholder_with_default(a, [None, 2])).r, "dynamic shapes"),
    (lambda a: tf.svd(tf.placeholder_with_default(a, [None, 2]))[0], "unknown inner matrix"),
])
def test_gradients_tensorflow_does_not_define(build, match):
    with tf.Graph().as_default():
        a = tf.constant(np.arange(6.0).reshape(3, 2))
        with pytest.raises(NotImplementedError, match=match):
            tf.gradients(build(a), a)


def test_norm_2_with_unknown_rank_moves_axes_at_run_time():
    x = np.random.RandomState(0).randn(2, 3, 4)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64)
        kept = tf.norm(p, ord=2, axis=[2, 0], keepdims=True)
        dropped = tf.norm(p, ord=2, axis=[-1, 0])
        got_kept, got_dropped = _run([kept, dropped], {p: x})
    expected = np.linalg.norm(x, 2, axis=(2, 0))
    np.testing.assert_allclose(got_kept, expected.reshape(1, 3, 1), rtol=1e-10)
    np.testing.assert_allclose(got_dropped, expected, rtol=1e-10)
