"""TridiagonalSolve and TridiagonalMatMul through tf.linalg.tridiagonal_solve and
tridiagonal_matmul in their three diagonal formats: forward against dense NumPy, shape
functions against the kernels, gradients against central differences, TensorFlow's errors at
construction and at run time, and its NaN (not an error) for singular systems.

Systems whose gradients are checked have a main diagonal far from zero, so every solver is
smooth around them; the ignored corner entries (last superdiagonal, first subdiagonal) get
zero gradients, as central differences also find.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.matrices import random_matrices as _randn
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
ALL = FLOAT + (tf.complex64, tf.complex128)
TOL = {"rtol": 1e-4, "atol": 1e-4}


def _compact(*shape):
    """Random compact diagonals [..., 3, M] with the main diagonal shifted by 4."""
    make = _randn(*shape)

    def build(rng, dtype):
        x = make(rng, dtype)
        x[..., 1, :] += 4
        return x
    return build


def _dense(diags):
    """[..., M, M] matrices from compact diagonals [..., 3, M]."""
    m = diags.shape[-1]
    out = np.zeros(diags.shape[:-2] + (m, m), diags.dtype)
    i = np.arange(m)
    out[..., i, i] = diags[..., 1, :]
    out[..., i[:-1], i[1:]] = diags[..., 0, :-1]
    out[..., i[1:], i[:-1]] = diags[..., 2, 1:]
    return out


def _solve_np(diags, rhs):
    return np.linalg.solve(_dense(diags), rhs)


def _well_matrix(*shape):
    """Square matrices with a dominant diagonal (only their tridiagonal band is read)."""
    return _randn(*shape, shift=4.0)


def _band(x):
    return np.triu(np.tril(x, 1), -1)


SINGULAR = np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
CASES = [
    # --- tridiagonal_solve: compact
    OpCase("solve", tf.linalg.tridiagonal_solve, _solve_np, [_compact(2, 3, 5), _randn(2, 5, 2)],
           ALL, **TOL),
    OpCase("solve_thomas", lambda d, r: tf.linalg.tridiagonal_solve(d, r, partial_pivoting=False),
           _solve_np, [_compact(3, 4), _randn(4, 3)], ALL, **TOL),
    OpCase("solve_perturb_singular_regular_system",
           lambda d, r: tf.linalg.tridiagonal_solve(d, r, perturb_singular=True), _solve_np,
           [_compact(2, 3, 4), _randn(2, 4, 2)], ALL, **TOL),
    OpCase("solve_pivots", tf.linalg.tridiagonal_solve, _solve_np,
           [np.array([[2.0, 1.0, 3.0, 0.0], [0.1, 0.2, 1.0, 2.0], [0.0, 5.0, 4.0, 1.0]]),
            _randn(4, 1)], ALL, **TOL),
    OpCase("solve_perturb_pivots",
           lambda d, r: tf.linalg.tridiagonal_solve(d, r, perturb_singular=True), _solve_np,
           [np.array([[2.0, 1.0, 3.0, 0.0], [0.1, 0.2, 1.0, 2.0], [0.0, 5.0, 0.0, 1.0]]),
            _randn(4, 2)], FLOAT, **TOL),
    OpCase("solve_one_equation", tf.linalg.tridiagonal_solve, lambda d, r: r / d[1, 0],
           [np.array([[1.0], [3.0], [1.0]]), _randn(1, 2)], ALL, **TOL),
    # A vector rhs is recognized by the static ranks (as in TF): pinned for the unknown-rank
    # shape check.
    OpCase("solve_vector_rhs",
           lambda d, r: tf.linalg.tridiagonal_solve(tf.ensure_shape(d, [None] * 3),
                                                    tf.ensure_shape(r, [None] * 2)),
           lambda d, r: _solve_np(d, r[..., None])[..., 0], [_compact(2, 3, 4), _randn(2, 4)],
           ALL, **TOL),
    OpCase("solve_transposed_conjugated_rhs",
           lambda d, r: tf.linalg.tridiagonal_solve(d, r, transpose_rhs=True,
                                                    conjugate_rhs=True),
           lambda d, r: _solve_np(d, np.conj(np.swapaxes(r, -1, -2))),
           [_compact(3, 4), _randn(2, 4)], ALL, **TOL),
    OpCase("solve_empty", tf.linalg.tridiagonal_solve, lambda d, r: r,
           [np.zeros((2, 3, 0)), np.zeros((2, 0, 2))], FLOAT, grad=False),
    # Singular systems: NaN, not an error; perturb_singular finds a solution (TF's values).
    OpCase("solve_singular_is_nan", tf.linalg.tridiagonal_solve,
           lambda d, r: np.full(r.shape, np.nan), [SINGULAR, np.ones((3, 2))], ALL, grad=False),
    OpCase("solve_thomas_zero_pivot_is_nan",
           lambda d, r: tf.linalg.tridiagonal_solve(d, r, partial_pivoting=False),
           lambda d, r: np.full(r.shape, np.nan),
           [np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]), np.ones((3, 1))],
           FLOAT, grad=False),
    OpCase("solve_perturb_singular",
           lambda d, r: tf.linalg.tridiagonal_solve(d, r, perturb_singular=True),
           lambda d, r: np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]),
           [SINGULAR, np.ones((3, 2))], FLOAT, grad=False),
    OpCase("solve_perturb_singular_consistent",
           lambda d, r: tf.linalg.tridiagonal_solve(d, r, perturb_singular=True),
           lambda d, r: np.array([[0.0], [1.0], [0.0]]),
           [np.array([[1.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 1.0]]),
            np.array([[1.0], [2.0], [1.0]])], FLOAT, grad=False, **TOL),
    # --- tridiagonal_solve: sequence, matrix
    OpCase("solve_sequence",
           lambda d, r: tf.linalg.tridiagonal_solve([d[..., i, :] for i in range(3)], r,
                                                    diagonals_format="sequence"),
           _solve_np, [_compact(2, 3, 4), _randn(2, 4, 2)], ALL, **TOL),
    OpCase("solve_matrix",
           lambda a, r: tf.linalg.tridiagonal_solve(a, r, diagonals_format="matrix"),
           lambda a, r: np.linalg.solve(_band(a), r), [_well_matrix(2, 4, 4), _randn(2, 4, 3)],
           ALL, **TOL),
    # --- tridiagonal_matmul
    OpCase("matmul", tf.linalg.tridiagonal_matmul, lambda d, r: _dense(d) @ r,
           [_randn(2, 3, 5), _randn(2, 5, 3)], ALL, **TOL),
    OpCase("matmul_sequence",
           lambda d, r: tf.linalg.tridiagonal_matmul([d[..., i, :] for i in range(3)], r,
                                                     diagonals_format="sequence"),
           lambda d, r: _dense(d) @ r, [_randn(3, 4), _randn(4, 2)], FLOAT, **TOL),
    OpCase("matmul_matrix",
           lambda a, r: tf.linalg.tridiagonal_matmul(a, r, diagonals_format="matrix"),
           lambda a, r: _band(a) @ r, [_randn(4, 4), _randn(4, 2)], ALL, **TOL),
    OpCase("matmul_one_row", tf.linalg.tridiagonal_matmul, lambda d, r: d[1, :, None] * r,
           [_randn(3, 1), _randn(1, 2)], FLOAT, **TOL),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_names_and_attrs():
    with tf.Graph().as_default():
        d, r = tf.ones([3, 4], tf.float64), tf.ones([4, 2], tf.float64)
        solve = tf.linalg.tridiagonal_solve(d, r)
        assert (solve.op.name, solve.op.get_attr("partial_pivoting"),
                solve.op.get_attr("perturb_singular")) == ("TridiagonalSolve", True, False)
        assert tf.linalg.tridiagonal_solve(d, r[:, 0]).op.name == "Squeeze"
        assert tf.linalg.tridiagonal_matmul(d, r, name="tm").op.name == "tm"
        assert tf.linalg.tridiagonal_matmul(d, r).op.type == "TridiagonalMatMul"


def test_static_shapes():
    P = tf.placeholder
    with tf.Graph().as_default():
        d = P(tf.float32, [None, 3, None])
        assert tf.linalg.tridiagonal_solve(d, P(tf.float32, [2, 4, 5])).shape.as_list() == \
            [2, 4, 5]
        assert tf.linalg.tridiagonal_solve(d, P(tf.float32, [2, 4])).shape.as_list() == [2, 4]
        assert tf.linalg.tridiagonal_solve(P(tf.float32), P(tf.float32)).shape.ndims is None
        assert tf.linalg.tridiagonal_matmul(d, P(tf.float32, [None, 4, 5])).shape.as_list() == \
            [None, 4, 5]


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([4, 3]), tf.ones([3, 1])), ValueError,
     "Expected 3 diagonals got 4"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([3, 1]), "x"), ValueError,
     "Unrecognized diagonals_format: x"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([4, 1])), ValueError,
     "Expected number of left-hand sided and right-hand sides to be equal, got 3 and 4"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 4]), tf.ones([4, 1]),
                                         diagonals_format="matrix"), ValueError,
     "Expected last two dimensions of diagonals to be same, got 4 and 3"),
    (lambda: tf.linalg.tridiagonal_solve([tf.ones([3]), tf.ones([3]), tf.ones([1])],
                                         tf.ones([3, 1]), diagonals_format="sequence"),
     ValueError, "Expected subdiagonal to be have length 3 or 2, got 1."),
    (lambda: tf.linalg.tridiagonal_solve([tf.ones([3]), tf.ones([3])], tf.ones([3, 1]),
                                         diagonals_format="sequence"),
     ValueError, "Expected diagonals to be a sequence of length 3."),
    (lambda: tf.linalg.tridiagonal_solve([tf.ones([2, 3]), tf.ones([3]), tf.ones([3])],
                                         tf.ones([3, 1]), diagonals_format="sequence"),
     ValueError, r"must have the same shape,except for the last dimension, got \(3,\), "
     r"\(3,\), \(2, 3\)"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([2, 3, 3]), tf.ones([3, 1])), ValueError,
     r"Batch shapes \(2,\) and \(3,\) are incompatible"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3]), tf.ones([3, 1])), ValueError,
     "Expected diagonals to have rank at least 2, got 1"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([3, 1, 1, 1])), ValueError,
     "Expected the rank of rhs to be 1 or 2, got 4"),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3]), tf.ones([3, 1]),
                                         partial_pivoting=False, perturb_singular=True),
     ValueError, "partial_pivoting must be True if perturb_singular is."),
    (lambda: tf.linalg.tridiagonal_solve(tf.ones([3, 3], tf.float16), tf.ones([3, 1],
                                                                                tf.float16)),
     TypeError, "DataType float16 not in list of allowed values"),
    (lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 3]), tf.ones([3, 1]), "x"), ValueError,
     "Unrecognized diagonals_format: x"),
    (lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 3]), tf.ones([4, 1])), ValueError,
     "Dimensions must be equal, but are 3 and 4"),
    (lambda: tf.linalg.tridiagonal_matmul(tf.ones([2, 3, 3]), tf.ones([3, 3, 1])), ValueError,
     "Dimension 0 in both shapes must be equal, but are 2 and 3"),
    (lambda: tf.linalg.tridiagonal_matmul(tf.ones([3, 3], tf.int32), tf.ones([3, 1], tf.int32)),
     TypeError, "DataType int32 not in list of allowed values"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


@pytest.mark.parametrize("diagonals,rhs,match", [
    (np.ones((4, 3)), np.ones((3, 1)),
     "Expected diagonals to be provided as a matrix with 3 rows, got 4 rows."),
    (np.ones((3, 3)), np.ones((4, 1)),
     "Expected the same number of left-hand sides and right-hand sides, got 3 and 4."),
    (np.ones((2, 3, 3)), np.ones((3, 3, 1)),
     "All input tensors must have the same outer dimensions."),
    (np.ones((3, 3)), np.ones((3, 1, 1)), "All input tensors must have the same rank."),
])
def test_solve_runtime_errors(diagonals, rhs, match):
    with tf.Graph().as_default():
        d, r = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(tf.linalg.tridiagonal_solve(d, r), {d: diagonals, r: rhs})


@pytest.mark.parametrize("index,match", [(0, "Invalid superdiagonal shape."),
                                         (1, "Invalid main diagonal shape."),
                                         (2, "Invalid subdiagonal shape.")])
def test_matmul_runtime_errors(index, match):
    with tf.Graph().as_default():
        diags = [tf.placeholder(tf.float64) for _ in range(3)]
        feed = {d: np.ones(3) for d in diags}
        feed[diags[index]] = np.ones(2)
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(tf.linalg.tridiagonal_matmul(diags, np.ones((3, 1)),
                                              diagonals_format="sequence"), feed)


def test_sequence_off_diagonals_of_length_m_minus_1_are_padded():
    """Statically shorter off-diagonals are padded (superdiagonal at its end, subdiagonal at
    its start): the same systems as the compact format's."""
    rng = np.random.RandomState(0)
    compact = rng.randn(2, 3, 4)
    compact[:, 1] += 4
    compact[:, 0, -1] = compact[:, 2, 0] = 0
    rhs = rng.randn(2, 4, 2)
    with tf.Graph().as_default():
        sequence = [tf.constant(compact[:, 0, :-1]), tf.constant(compact[:, 1]),
                    tf.constant(compact[:, 2, 1:])]
        solved = tf.linalg.tridiagonal_solve(sequence, rhs, diagonals_format="sequence")
        assert solved.op.inputs[0].shape.as_list() == [2, 3, 4]
        got = _run(solved)
    np.testing.assert_allclose(got, _solve_np(compact, rhs), rtol=1e-10)


def test_gradients_match_tensorflow_for_complex_diagonals():
    """TF's gradients do not conjugate the diagonals of a solve; values from TF 2.21."""
    d = np.array([[1.0 + 1j, 0.0], [3.0, 2.0 - 1j], [0.0, 1j]])
    r = np.array([[1.0], [1j]])
    with tf.Graph().as_default():
        diags, rhs = tf.constant(d), tf.constant(r)
        grads = tf.gradients(tf.linalg.tridiagonal_solve(diags, rhs), [diags, rhs],
                             grad_ys=tf.constant(np.ones((2, 1), np.complex128)))
        got_d, got_r = _run(grads)
    a = np.array([[3.0, 1 + 1j], [1j, 2 - 1j]])
    x = np.linalg.solve(a, r)
    grad_r = np.linalg.solve(a.T, np.ones((2, 1)))
    np.testing.assert_allclose(got_r, grad_r, rtol=1e-12)
    full = -grad_r @ x.T
    expected = np.array([[full[0, 1], 0.0], [full[0, 0], full[1, 1]], [0.0, full[1, 0]]])
    np.testing.assert_allclose(got_d, expected, rtol=1e-12)
