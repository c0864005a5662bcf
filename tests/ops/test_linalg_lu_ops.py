"""Lu and the composites on its factors (lu_solve, lu_matrix_inverse, lu_reconstruct): forward
against SciPy and NumPy, shape functions against the kernel, gradients of the composites in
`lower_upper` and `rhs` (Lu itself has none in TensorFlow), TensorFlow's errors.

The composites take any packed `lower_upper` with a diagonal far from zero and any
permutation, so their rows feed those directly and the gradient check varies every entry.
"""
import numpy as np
import pytest
import scipy.linalg

import tensorweave as tf
from tensorweave.testing.matrices import random_matrices as _randn
from tensorweave.testing.matrices import well_conditioned as _well
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
ALL = FLOAT + (tf.complex64, tf.complex128)
TOL = {"rtol": 1e-4, "atol": 1e-4}
PERM = np.array([2, 0, 1])
PERMS = np.array([[2, 0, 1], [1, 2, 0]])


def _lu_np(x, index_dtype=np.int32):
    """SciPy's partial-pivoting LU in TensorFlow's packing: x[perm] = L U."""
    rows, lower, upper = scipy.linalg.lu(x, p_indices=True)
    return [np.tril(lower, -1) + upper, np.argsort(rows, axis=-1).astype(index_dtype)]


def _reconstruct_np(lower_upper, perm):
    """X with X[perm] = L U (L unit lower, U upper triangular)."""
    n = lower_upper.shape[-1]
    product = (np.tril(lower_upper, -1) + np.eye(n)) @ np.triu(lower_upper)
    x = np.empty_like(product)
    np.put_along_axis(x, perm[..., None].astype(np.intp),
                      product * np.ones_like(x), axis=-2)
    return x


def _solve_np(lower_upper, perm, rhs):
    x = _reconstruct_np(lower_upper, perm)
    batch = np.broadcast_shapes(x.shape[:-2], rhs.shape[:-2])
    return np.linalg.solve(np.broadcast_to(x, batch + x.shape[-2:]),
                           np.broadcast_to(rhs, batch + rhs.shape[-2:]))


INDEX = (None, tf.int32)
CASES = [
    # --- Lu (no gradient in TensorFlow)
    OpCase("lu", lambda x: list(tf.linalg.lu(x)), _lu_np, [_randn(3, 3)], ALL, grad=False,
           **TOL),
    OpCase("lu_batch_int64", lambda x: list(tf.linalg.lu(x, output_idx_type=tf.int64)),
           lambda x: _lu_np(x, np.int64), [_randn(2, 2, 4, 4)], FLOAT, grad=False, **TOL),
    OpCase("lu_empty", lambda x: list(tf.linalg.lu(x)),
           lambda x: [x, np.zeros((2, 0), np.int32)], [np.zeros((2, 0, 0))], FLOAT,
           grad=False),
    OpCase("lu_nan_after_first_pivot", lambda x: list(tf.linalg.lu(x)),
           lambda x: [np.array([[2.0, np.nan], [0.5, np.nan]]), np.array([1, 0], np.int32)],
           [np.array([[1.0, 2.0], [2.0, np.nan]])], FLOAT, grad=False),
    # --- lu_reconstruct, lu_matrix_inverse, lu_solve
    OpCase("lu_reconstruct", tf.linalg.lu_reconstruct, _reconstruct_np,
           [_well(3, 3), PERM], ALL, fixed_dtypes=INDEX, **TOL),
    OpCase("lu_reconstruct_batch", tf.linalg.lu_reconstruct, _reconstruct_np,
           [_well(2, 3, 3), PERMS], ALL, fixed_dtypes=INDEX, **TOL),
    OpCase("lu_matrix_inverse", tf.linalg.lu_matrix_inverse,
           lambda lu, p: np.linalg.inv(_reconstruct_np(lu, p)), [_well(2, 3, 3), PERMS], ALL,
           fixed_dtypes=INDEX, **TOL),
    OpCase("lu_solve", tf.linalg.lu_solve, _solve_np, [_well(3, 3), PERM, _randn(3, 2)], ALL,
           fixed_dtypes=INDEX, **TOL),
    OpCase("lu_solve_broadcast_rhs_batch", tf.linalg.lu_solve, _solve_np,
           [_well(3, 3), PERM, _randn(2, 3, 1)], FLOAT, fixed_dtypes=INDEX, **TOL),
    OpCase("lu_solve_broadcast_factor_batch", tf.linalg.lu_solve, _solve_np,
           [_well(2, 3, 3), PERMS, _randn(3, 2)], FLOAT, fixed_dtypes=INDEX, **TOL),
    OpCase("lu_round_trip", lambda x: tf.linalg.lu_reconstruct(*tf.linalg.lu(x)), lambda x: x,
           [_randn(2, 4, 4)], ALL, grad=False, **TOL),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def test_names_and_result_type():
    with tf.Graph().as_default():
        a = tf.constant(np.array([[4.0, 1.0], [0.5, 9.0]]))
        result = tf.linalg.lu(a)
        assert type(result).__name__ == "Lu" and result.lu.op is result.p.op
        assert (result.lu.op.name, result.p.dtype) == ("Lu", tf.int32)
        assert tf.linalg.lu(a, name="f").p.op.name == "f"
        assert tf.linalg.lu_solve(*result, a).op.name == \
            "lu_solve/triangular_solve_1/MatrixTriangularSolve"
        assert tf.linalg.lu_matrix_inverse(*result).op.name == \
            "lu_matrix_inverse/lu_solve/triangular_solve_1/MatrixTriangularSolve"
        assert tf.linalg.lu_reconstruct(*result).op.name == "lu_reconstruct/GatherV2"


def test_static_shapes():
    P = tf.placeholder
    with tf.Graph().as_default():
        lu, p = tf.linalg.lu(P(tf.float32, [2, None, 3]))
        assert (lu.shape.as_list(), p.shape.as_list()) == ([2, 3, 3], [2, 3])
        lu, p = tf.linalg.lu(P(tf.float32))
        assert lu.shape.ndims is None and p.shape.ndims is None
        x = tf.linalg.lu_reconstruct(P(tf.float32, [None, 3, 3]), P(tf.int32, [None, 3]))
        assert x.shape.as_list() == [None, 3, 3]


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.linalg.lu(tf.ones([3])), ValueError, "at least rank 2 but is rank 1"),
    (lambda: tf.linalg.lu(tf.ones([3, 2])), ValueError,
     "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.linalg.lu(tf.ones([2, 2], tf.int32)), TypeError, "allowed values"),
    (lambda: tf.linalg.lu(tf.ones([2, 2]), output_idx_type=tf.float32), TypeError,
     "DataType float32 not in list of allowed values"),
    (lambda: tf.linalg.lu_reconstruct(tf.ones([3]), [0, 1, 2]), ValueError,
     "Input `lower_upper` must have at least 2 dimensions."),
    (lambda: tf.linalg.lu_reconstruct(tf.ones([3, 3]), [[0, 1, 2]]), ValueError,
     r"`rank\(lower_upper\)` must equal `rank\(perm\) \+ 1`"),
    (lambda: tf.linalg.lu_matrix_inverse(tf.ones([3, 2]), [0, 1, 2]), ValueError,
     "`lower_upper` must be square."),
    (lambda: tf.linalg.lu_solve(tf.ones([3, 3]), [0, 1, 2], tf.ones([3])), ValueError,
     "Input `rhs` must have at least 2 dimensions."),
    (lambda: tf.linalg.lu_solve(tf.ones([3, 3]), [0, 1, 2], tf.ones([4, 1])), ValueError,
     r"`lower_upper.shape\[-1\]` must equal `rhs.shape\[-1\]`."),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


@pytest.mark.parametrize("feed,match", [
    (np.array([[1.0, 2.0], [2.0, 4.0]]), "Input is not invertible."),
    (np.zeros((2, 2)), "Input is not invertible."),
    (np.array([[np.nan, 2.0], [2.0, 4.0]]), "Input is not invertible."),
    (np.ones((2, 3)), "Input matrix must be square."),
])
def test_runtime_errors(feed, match):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64)
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            _run(tf.linalg.lu(x).lu, {x: feed})


def test_validate_args_checks_dynamic_shapes_at_run_time():
    with tf.Graph().as_default():
        lu = tf.placeholder(tf.float64)  # unknown ranks: the checks can only run later
        rhs = tf.placeholder(tf.float64)
        x = tf.linalg.lu_solve(lu, [0, 1], rhs, validate_args=True)
        assert _run(x, {lu: np.eye(2), rhs: np.ones((2, 1))}).shape == (2, 1)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must equal `rhs.shape"):
            _run(x, {lu: np.eye(2), rhs: np.ones((3, 1))})
        inverse = tf.linalg.lu_matrix_inverse(lu, [0, 1], validate_args=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be square"):
            _run(inverse, {lu: np.ones((2, 3))})
        with pytest.raises(tf.errors.InvalidArgumentError, match="must equal `rank"):
            _run(inverse, {lu: np.ones((2, 2, 2))})


def test_lu_has_no_gradient_as_in_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(np.eye(2))
        with pytest.raises(LookupError, match="op type: Lu"):
            tf.gradients(tf.linalg.lu(x).lu, x)


def test_half_is_accepted_but_has_no_kernel_as_in_tensorflow():
    with tf.Graph().as_default():
        factors = tf.linalg.lu(tf.constant(np.eye(2, dtype=np.float16)))
        assert factors.lu.dtype == tf.float16
        with pytest.raises(tf.errors.InvalidArgumentError, match="Lu"):
            _run(factors.lu)
