"""Matrix functions (expm, MatrixSquareRoot, MatrixLogarithm) and matvec, normalize: forward
against SciPy and NumPy, shape functions against the kernels, gradients against central
differences, TensorFlow's errors at construction and at run time, names.

Square roots whose gradients are checked are of m m^T + 3 I, built inside the row from an
unconstrained m, so the checked function is smooth in every entry of m.
"""
import numpy as np
import pytest
import scipy.linalg

import tensorweave as tf
from tensorweave.testing.matrices import adjoint as _herm
from tensorweave.testing.matrices import random_matrices as _randn
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
COMPLEX = (tf.complex64, tf.complex128)
ALL = FLOAT + COMPLEX
TOL = {"rtol": 1e-4, "atol": 1e-4}


def _gram_np(m):
    return m @ _herm(m) + 3 * np.eye(m.shape[-1])


def _gram(m):
    return tf.matmul(m, m, adjoint_b=True) + 3 * np.eye(3)


def _scaled(scale, *shape):
    """Random matrices times `scale`: picks expm's Padé degree (and the number of squarings)."""
    make = _randn(*shape)
    return lambda rng, dtype: (make(rng, dtype) * scale).astype(dtype)


def _expm_ref(x):
    return scipy.linalg.expm(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))


def _logm_ref(x):
    return scipy.linalg.logm(x.astype(np.complex128))


CASES = [
    # --- expm: every Padé degree, with and without squarings, batches
    OpCase("expm_tiny_norm", tf.linalg.expm, _expm_ref, [_scaled(0.003, 3, 3)], ALL, **TOL),
    OpCase("expm_small_norm", tf.linalg.expm, _expm_ref, [_scaled(0.05, 2, 3, 3)], ALL,
           **TOL),
    OpCase("expm_medium_norm", tf.linalg.expm, _expm_ref, [_scaled(0.3, 3, 3)], ALL, **TOL),
    OpCase("expm_unit_norm", tf.linalg.expm, _expm_ref, [_scaled(0.5, 2, 2, 3, 3)], ALL,
           **TOL),
    OpCase("expm_squarings", tf.linalg.expm, _expm_ref, [_scaled(3.0, 2, 3, 3)], ALL,
           rtol=1e-4, atol=1e-3),
    OpCase("expm_infinite_is_nan", tf.linalg.expm, lambda x: np.full_like(x, np.nan),
           [np.array([[np.inf, 0.0], [0.0, 1.0]])], FLOAT, grad=False),
    # --- MatrixSquareRoot
    OpCase("sqrtm", lambda m: tf.linalg.sqrtm(_gram(m)),
           lambda m: scipy.linalg.sqrtm(_gram_np(m)), [_randn(2, 3, 3)], ALL, **TOL),
    OpCase("sqrtm_upper_triangular", tf.matrix_square_root,
           lambda x: np.array([[2.0, 0.2], [0.0, 3.0]]), [np.array([[4.0, 1.0], [0.0, 9.0]])],
           FLOAT, **TOL),
    OpCase("sqrtm_no_real_root_is_nan", tf.linalg.sqrtm,
           lambda x: np.stack([np.full((2, 2), np.nan), np.eye(2)]),
           [np.array([[[-1.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])], FLOAT,
           grad=False),
    OpCase("sqrtm_complex_negative_eigenvalue", tf.linalg.sqrtm,
           lambda x: np.diag([1j, 2.0]), [np.array([[-1.0, 0.0], [0.0, 4.0]])], COMPLEX,
           grad=False, **TOL),
    OpCase("sqrtm_empty", tf.linalg.sqrtm, lambda x: x, [np.zeros((2, 0, 0))], ALL,
           grad=False),
    # --- MatrixLogarithm (complex only; no gradient in TensorFlow)
    OpCase("logm", tf.linalg.logm, _logm_ref, [_randn(3, 3, shift=4.0)], COMPLEX,
           grad=False, **TOL),
    OpCase("logm_batch", tf.linalg.logm, _logm_ref,
           [_randn(2, 2, 2, shift=3.0)], COMPLEX, grad=False, **TOL),
    OpCase("logm_empty", tf.linalg.logm, lambda x: x, [np.zeros((2, 0, 0))], COMPLEX,
           grad=False),
    OpCase("logm_singular_is_nan", tf.linalg.logm, lambda x: np.full_like(x, np.nan),
           [np.array([[0.0, 0.0], [0.0, 1.0]])], COMPLEX, grad=False),
    # --- matvec, normalize
    OpCase("matvec", tf.linalg.matvec, lambda a, b: np.einsum("...ij,...j->...i", a, b),
           [_randn(2, 3, 4), _randn(2, 4)], ALL, **TOL),
    OpCase("matvec_adjoint", lambda a, b: tf.linalg.matvec(a, b, adjoint_a=True),
           lambda a, b: np.einsum("...ji,...j->...i", np.conj(a), b),
           [_randn(3, 4), _randn(3)], ALL, **TOL),
    OpCase("matvec_transpose", lambda a, b: tf.linalg.matvec(a, b, transpose_a=True),
           lambda a, b: np.einsum("...ji,...j->...i", a, b), [_randn(2, 3, 4), _randn(2, 3)],
           FLOAT, **TOL),
    OpCase("normalize", lambda x: list(tf.linalg.normalize(x)),
           lambda x: [x / np.linalg.norm(x), np.linalg.norm(x).reshape(1, 1)],
           [_randn(3, 4)], ALL, **TOL),
    OpCase("normalize_1_axis", lambda x: list(tf.linalg.normalize(x, ord=1, axis=-1)),
           lambda x: [x / np.abs(x).sum(-1, keepdims=True), np.abs(x).sum(-1, keepdims=True)],
           [_randn(2, 3, 4)], FLOAT, **TOL),
    OpCase("normalize_matrix_inf", lambda x: list(tf.linalg.normalize(x, np.inf, [0, 1])),
           lambda x: [x / np.linalg.norm(x, np.inf), np.linalg.norm(x, np.inf).reshape(1, 1)],
           [_randn(3, 4)], FLOAT, grad=False, **TOL),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_names_and_namespaces():
    with tf.Graph().as_default():
        a = tf.constant(np.eye(2) * 4)
        assert tf.linalg.expm(a).op.name == "matrix_exponential/Reshape_1"
        assert tf.linalg.sqrtm(a).op.name == "MatrixSquareRoot"
        assert tf.linalg.sqrtm is tf.matrix_square_root
        assert tf.linalg.logm(tf.cast(a, tf.complex64)).op.type == "MatrixLogarithm"
        assert tf.linalg.matvec(a, a[0]).op.name == "MatVec/Squeeze"
        normalized, norm = tf.linalg.normalize(a)
        assert (normalized.op.name, norm.op.name) == ("normalize/truediv",
                                                     "normalize/norm/Sqrt")


def test_expm_of_empty_matrices_is_the_input():
    with tf.Graph().as_default():
        x = tf.zeros([2, 0, 0])
        assert tf.linalg.expm(x) is x


def test_expm_with_unknown_batch_keeps_its_shape():
    x = np.random.RandomState(0).randn(2, 3, 3)
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64, [None, 3, 3])
        out = tf.linalg.expm(p)
        assert out.shape.as_list() == [None, 3, 3]
        got = _run(out, {p: x})
    np.testing.assert_allclose(got, scipy.linalg.expm(x), rtol=1e-10)


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.linalg.expm(tf.ones([3, 3], tf.int32)), ValueError,
     "tf.linalg.expm does not support matrices of type"),
    (lambda: tf.linalg.expm(tf.ones([3, 2])), ValueError, "Dimensions must be equal"),
    (lambda: tf.linalg.sqrtm(tf.ones([3, 2])), ValueError,
     "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.linalg.sqrtm(tf.ones([3])), ValueError, "at least rank 2 but is rank 1"),
    (lambda: tf.linalg.sqrtm(tf.ones([2, 2], tf.int32)), TypeError, "allowed values"),
    (lambda: tf.linalg.logm(tf.ones([3, 3])), TypeError,
     "DataType float32 not in list of allowed values"),
    (lambda: tf.linalg.logm(tf.ones([3, 2], tf.complex64)), ValueError,
     "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.linalg.matvec(tf.ones([3, 2]), tf.ones([3])), ValueError,
     "Dimensions must be equal"),
    (lambda: tf.linalg.normalize(tf.ones([3, 2]), ord="fro"), ValueError,
     "'ord' must be a supported vector norm, got fro"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


@pytest.mark.parametrize("build,dtype", [(tf.linalg.sqrtm, tf.float64),
                                         (tf.linalg.logm, tf.complex64)])
def test_runtime_rejects_non_square_matrices(build, dtype):
    with tf.Graph().as_default():
        x = tf.placeholder(dtype)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input matrix must be square"):
            _run(build(x), {x: np.ones((2, 3))})


def test_logm_has_no_gradient_as_in_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(np.eye(2, dtype=np.complex64))
        with pytest.raises(LookupError, match="op type: MatrixLogarithm"):
            tf.gradients(tf.linalg.logm(x), x, grad_ys=tf.ones([2, 2], tf.complex64))


def test_expm_of_logm_and_square_of_sqrtm_round_trip():
    x = np.array([[3.0, 1.0], [0.5, 2.0]])
    with tf.Graph().as_default():
        root = tf.linalg.sqrtm(tf.constant(x))
        back = tf.linalg.expm(tf.linalg.logm(tf.constant(x.astype(np.complex128))))
        got_square, got_back = _run([tf.matmul(root, root), back])
    np.testing.assert_allclose(got_square, x, rtol=1e-12)
    np.testing.assert_allclose(got_back, x, rtol=1e-12)


def test_half_is_accepted_but_has_no_kernel_as_in_tensorflow():
    with tf.Graph().as_default():
        root = tf.linalg.sqrtm(tf.constant(np.eye(2, dtype=np.float16)))
        assert root.dtype == tf.float16
        with pytest.raises(tf.errors.InvalidArgumentError, match="MatrixSquareRoot"):
            _run(root)
