"""Solvers (MatrixSolve, MatrixTriangularSolve, MatrixSolveLs) and TF's composites
cholesky_solve and matrix_solve_ls: forward against NumPy, shape functions against the kernels,
gradients against central differences, batch broadcasting, TensorFlow's errors at construction
and at run time, and which graph matrix_solve_ls builds."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.linalg_solve_ops import MatrixSolveLs
from tensorweave.testing.matrices import adjoint as _herm
from tensorweave.testing.matrices import random_matrices as _randn
from tensorweave.testing.matrices import well_conditioned as _well
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
ALL = FLOAT + (tf.complex64, tf.complex128)
TOL = {"rtol": 1e-4, "atol": 1e-4}


def _tri_solve(lower=True, adjoint=False):
    """NumPy's solve of the triangle, broadcasting batch dimensions like the op."""
    def ref(a, b):
        t = np.tril(a) if lower else np.triu(a)
        return np.linalg.solve(_herm(t) if adjoint else t, b)
    return ref


def _lstsq(a, b, l2=0.0):
    """The regularized normal equations' solution (min-norm for wide a when l2 == 0)."""
    a_h = _herm(a)
    m, n = a.shape[-2:]
    if m >= n:
        return np.linalg.solve(a_h @ a + l2 * np.eye(n), a_h @ b)
    return a_h @ np.linalg.solve(a @ a_h + l2 * np.eye(m), b)


def _solve_ls_op(fast, l2=0.0):
    return lambda a, b: apply_op(MatrixSolveLs, [a, b, l2], {"fast": fast})


CASES = [
    # --- MatrixSolve
    OpCase("solve", tf.matrix_solve, np.linalg.solve, [_well(3, 3), _randn(3, 2)], ALL, **TOL),
    OpCase("solve_batch_adjoint", lambda a, b: tf.linalg.solve(a, b, adjoint=True),
           lambda a, b: np.linalg.solve(_herm(a), b), [_well(2, 3, 3), _randn(2, 3, 1)], ALL,
           **TOL),
    OpCase("solve_empty_rhs", tf.matrix_solve, lambda a, b: b, [_well(2, 2), np.zeros((2, 0))],
           grad=False),
    OpCase("solve_empty_matrix", tf.matrix_solve, lambda a, b: b,
           [np.zeros((0, 0)), np.zeros((0, 3))], grad=False),
    # --- MatrixTriangularSolve
    OpCase("triangular_solve", tf.matrix_triangular_solve, _tri_solve(),
           [_well(3, 3), _randn(3, 2)], ALL, **TOL),
    OpCase("triangular_solve_upper_adjoint",
           lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
           _tri_solve(lower=False, adjoint=True), [_well(2, 3, 3), _randn(2, 3, 2)], ALL,
           **TOL),
    OpCase("triangular_solve_lower_adjoint",
           lambda a, b: tf.matrix_triangular_solve(a, b, adjoint=True),
           _tri_solve(adjoint=True), [_well(3, 3), _randn(3, 2)], FLOAT, **TOL),
    OpCase("triangular_solve_broadcast", tf.matrix_triangular_solve, _tri_solve(),
           [_well(2, 1, 3, 3), _randn(4, 3, 2)], FLOAT, **TOL),
    OpCase("triangular_solve_matrix_against_batch", tf.matrix_triangular_solve, _tri_solve(),
           [_well(3, 3), _randn(2, 3, 1)], FLOAT, **TOL),
    OpCase("triangular_solve_zero_diagonal", tf.matrix_triangular_solve,
           lambda a, b: np.array([[np.inf, np.inf], [-np.inf, -np.inf]]),
           [np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 2.0], [2.0, 4.0]])], FLOAT,
           grad=False),
    OpCase("triangular_solve_empty", tf.matrix_triangular_solve,
           lambda a, b: np.zeros((2, 0, 3)), [np.zeros((2, 0, 0)), np.zeros((0, 3))],
           grad=False),
    # --- cholesky_solve: the factor is any well-conditioned lower triangle
    OpCase("cholesky_solve", tf.cholesky_solve,
           lambda c, b: np.linalg.solve(np.tril(c) @ _herm(np.tril(c)), b),
           [_well(2, 3, 3), _randn(2, 3, 2)], ALL, **TOL),
    # --- matrix_solve_ls: the Cholesky composite
    OpCase("solve_ls_tall", tf.matrix_solve_ls, _lstsq, [_randn(2, 5, 3), _randn(2, 5, 2)],
           ALL, **TOL),
    OpCase("solve_ls_wide", tf.linalg.lstsq, _lstsq, [_randn(3, 5), _randn(3, 2)], ALL, **TOL),
    OpCase("solve_ls_regularized", lambda a, b: tf.matrix_solve_ls(a, b, l2_regularizer=0.5),
           lambda a, b: _lstsq(a, b, 0.5), [_randn(4, 3), _randn(4, 1)],
           FLOAT + (tf.complex64,), **TOL),
    OpCase("solve_ls_regularized_wide", lambda a, b: tf.matrix_solve_ls(a, b, 0.5),
           lambda a, b: _lstsq(a, b, 0.5), [_randn(2, 4), _randn(2, 1)], FLOAT, **TOL),
    # --- the MatrixSolveLs op
    OpCase("solve_ls_op_fast", _solve_ls_op(True), _lstsq, [_randn(2, 5, 3), _randn(2, 5, 2)],
           ALL, **TOL),
    OpCase("solve_ls_op_fast_wide_regularized", _solve_ls_op(True, 0.25),
           lambda a, b: _lstsq(a, b, 0.25), [_randn(3, 4), _randn(3, 2)], FLOAT, **TOL),
    OpCase("solve_ls_op_min_norm", _solve_ls_op(False),
           lambda a, b: np.linalg.pinv(a) @ b, [_randn(2, 3, 4), _randn(2, 3, 2)], ALL,
           grad=False, **TOL),
    OpCase("solve_ls_op_rank_deficient", lambda a, b: tf.matrix_solve_ls(a, b, fast=False),
           lambda a, b: np.linalg.pinv(a, rtol=1e-6) @ b,
           [np.array([[1.0, 2.0], [2.0, 4.0]]), np.eye(2)], FLOAT, grad=False, **TOL),
    OpCase("solve_ls_op_empty", _solve_ls_op(False), lambda a, b: np.zeros((2, 1)),
           [np.zeros((0, 2)), np.zeros((0, 1))], grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_names_and_graphs():
    with tf.Graph().as_default():
        a = tf.constant(np.eye(3, dtype=np.float32))
        b = tf.ones([3, 2])
        assert tf.matrix_solve(a, b).op.name == "MatrixSolve"
        tri = tf.matrix_triangular_solve(a, b)
        assert (tri.op.name, tri.op.get_attr("lower")) == \
            ("triangular_solve/MatrixTriangularSolve", True)
        assert tf.linalg.triangular_solve(a, b, name="t").op.name == "t/MatrixTriangularSolve"
        x = tf.cholesky_solve(a, b)
        assert x.op.name == "cholesky_solve/MatrixTriangularSolve_1"
        assert x.op.get_attr("adjoint") and not x.op.inputs[1].op.get_attr("adjoint")
        ls = tf.matrix_solve_ls(a, b)
        assert ls.op.name == "matrix_solve_ls/cholesky_solve/MatrixTriangularSolve_1"
        # The op itself for fast=False, and for batches too large for the composite.
        assert tf.matrix_solve_ls(a, b, fast=False).op.type == "MatrixSolveLs"
        big = tf.matrix_solve_ls(tf.ones([200, 20, 20]), tf.ones([200, 20, 1]))
        assert (big.op.type, big.op.get_attr("fast")) == ("MatrixSolveLs", True)
        assert big.op.inputs[2].dtype == tf.float64


def test_solve_ls_with_unknown_matrix_shape_decides_at_run_time():
    """A cond picks the over- or underdetermined branch, forward and backward."""
    rng = np.random.RandomState(0)
    for a_value in (rng.randn(5, 3), rng.randn(3, 5)):
        b_value = rng.randn(a_value.shape[0], 2)
        with tf.Graph().as_default():
            a = tf.placeholder(tf.float64, [None, None])
            b = tf.placeholder(tf.float64, [None, 2])
            x = tf.matrix_solve_ls(a, b, l2_regularizer=0.1)
            grads = tf.gradients(tf.reduce_sum(x * x), [a, b])
            static_a, static_b = tf.constant(a_value), tf.constant(b_value)
            y = tf.matrix_solve_ls(static_a, static_b, l2_regularizer=0.1)
            static_grads = tf.gradients(tf.reduce_sum(y * y), [static_a, static_b])
            got = _run([x] + grads, {a: a_value, b: b_value})
            want = _run([y] + static_grads)
        np.testing.assert_allclose(got[0], _lstsq(a_value, b_value, 0.1), rtol=1e-8)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-12)


def test_solve_ls_op_gradient_at_unknown_shape():
    rng = np.random.RandomState(1)
    a_value, b_value = rng.randn(2, 3, 4), rng.randn(2, 3, 1)
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float64)
        b = tf.placeholder(tf.float64)
        grads = tf.gradients(_solve_ls_op(True)(a, b), [a, b])
        got = _run(grads, {a: a_value, b: b_value})
        static_a, static_b = tf.constant(a_value), tf.constant(b_value)
        want = _run(tf.gradients(tf.matrix_solve_ls(static_a, static_b), [static_a, static_b]))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-12)


def test_triangular_solve_gradient_sums_over_broadcast_batches():
    rng = np.random.RandomState(2)
    a_value = rng.randn(3, 3) + 3 * np.eye(3)
    b_value = rng.randn(4, 3, 2)
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float64, [None, None])
        b = tf.constant(b_value)
        grad_a = tf.gradients(tf.matrix_triangular_solve(a, b), a)[0]
        tiled = tf.constant(np.broadcast_to(a_value, (4, 3, 3)))
        grad_tiled = tf.gradients(tf.matrix_triangular_solve(tiled, b), tiled)[0]
        got, want = _run([grad_a, grad_tiled], {a: a_value})
    assert got.shape == (3, 3)
    np.testing.assert_allclose(got, want.sum(axis=0), rtol=1e-10)
    np.testing.assert_array_equal(np.triu(got, 1), 0)


def test_solve_ls_gradient_of_fast_false_is_undefined():
    with tf.Graph().as_default():
        a = tf.constant(np.eye(2))
        with pytest.raises(ValueError, match="Gradient not defined for fast=False"):
            tf.gradients(tf.matrix_solve_ls(a, a, fast=False), a)


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.matrix_solve(tf.ones([2, 3]), tf.ones([2, 1])), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.matrix_solve(tf.ones([2, 2]), tf.ones([3, 1])), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.matrix_solve(tf.ones([3, 2, 2]), tf.ones([1, 2, 1])), ValueError,
     "Dimension 0 in both shapes must be equal, but are 3 and 1"),
    (lambda: tf.matrix_solve(tf.ones([2, 2]), tf.ones([4, 2, 1])), ValueError,
     "Shapes must be equal rank, but are 0 and 1"),
    (lambda: tf.matrix_solve(tf.ones([2, 2]), tf.ones([2])), ValueError, "at least rank 2"),
    (lambda: tf.matrix_solve(tf.ones([2, 2]), tf.ones([2, 1], tf.float64)), TypeError,
     "does not match"),
    (lambda: tf.matrix_triangular_solve(tf.ones([3, 2, 2]), tf.ones([2, 2, 1])), ValueError,
     "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.matrix_triangular_solve(tf.ones([2, 3]), tf.ones([2, 1])), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.cholesky_solve(tf.ones([2, 2]), tf.ones([3, 2])), ValueError,
     "Dimensions must be equal, but are 2 and 3"),
    (lambda: tf.matrix_solve_ls(tf.ones([4, 5]), tf.ones([3, 2]), fast=False), ValueError,
     "Dimensions must be equal, but are 4 and 3"),
    (lambda: apply_op(MatrixSolveLs, [tf.ones([4, 5]), tf.ones([4, 2]), [0.0]]), ValueError,
     "Shape must be rank 0 but is rank 1"),
    (lambda: tf.matrix_solve_ls(tf.ones([2, 2], tf.complex128), tf.ones([2, 1], tf.complex128),
                                l2_regularizer=0.1), NotImplementedError,
     "disabled for complex128 and l2_regularizer != 0"),
    (lambda: tf.matrix_solve(tf.ones([2, 2], tf.int32), tf.ones([2, 1], tf.int32)), TypeError,
     "allowed values"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
_LS_FAST = _solve_ls_op(True)


@pytest.mark.parametrize("build,feeds,match", [
    (tf.matrix_solve, [_SINGULAR, np.ones((2, 1))], "Input matrix is not invertible."),
    (tf.matrix_solve, [np.full((2, 2), np.nan), np.ones((2, 1))],
     "Input matrix is not invertible."),
    (tf.matrix_solve, [np.ones((2, 3)), np.ones((2, 1))],
     r"First input \(lhs\) must be a square matrix."),
    (tf.matrix_solve, [np.eye(3), np.ones(3)], "All input tensors must have the same rank."),
    (tf.matrix_solve, [np.eye(3), np.ones((2, 1))], "Input matrix and rhs are incompatible."),
    (tf.matrix_solve, [np.ones((2, 3, 3)), np.ones((1, 3, 1))],
     "All input tensors must have the same outer dimensions."),
    (tf.matrix_solve, [np.ones(3), np.ones((3, 1))], "Input tensor 0 must have rank >= 2, got 1"),
    (tf.matrix_triangular_solve, [np.ones((2, 3)), np.ones((2, 1))],
     r"In\[0\] matrices in the last dimensions must be square \(3 =/= 2\)"),
    (tf.matrix_triangular_solve, [np.eye(3), np.ones(3)], r"In\[1\] ndims must be >= 2: 1"),
    (tf.matrix_triangular_solve, [np.eye(3), np.ones((2, 1))],
     r"In\[0\] mismatch In\[1\] shape: 3 vs. 2: \[3,3\] \[2,1\] 1 0"),
    (tf.matrix_triangular_solve, [np.ones((2, 3, 3)), np.ones((3, 3, 1))],
     r"must have compatible batch dimensions: \[2,3,3\] vs. \[3,3,1\]"),
    (_LS_FAST, [np.ones((2, 3)), np.ones((2, 1))],
     "Input matrix was rank deficient or ill-conditioned"),
    (_LS_FAST, [np.ones((2, 2, 2)), np.ones((3, 2, 1))], "same outer dimensions"),
    (lambda a, b, l2: apply_op(MatrixSolveLs, [a, b, l2]),
     [np.eye(2), np.ones((2, 1)), np.zeros(2)], r"l2_regularizer must be scalar, got shape \[2\]"),
])
def test_runtime_errors(build, feeds, match):
    with tf.Graph().as_default():
        holders = [tf.placeholder(tf.float64) for _ in feeds]
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(build(*holders), dict(zip(holders, feeds)))


def test_composite_solve_ls_of_rank_deficient_matrix_is_nan():
    """As TensorFlow: the Cholesky of a singular Gramian is NaN, and so is the solution."""
    with tf.Graph().as_default():
        got = _run(tf.matrix_solve_ls(tf.constant(_SINGULAR), tf.constant(np.eye(2))))
    assert np.isnan(got).all()
