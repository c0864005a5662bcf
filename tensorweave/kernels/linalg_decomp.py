"""Kernels of the decompositions and solvers (ops/linalg_decomp_ops.py, linalg_solve_ops.py).

Each kernel runs on whole batches of matrices ([..., M, N]) with NumPy's LAPACK gufuncs
(vectorized over the batch; SciPy's batched wrappers loop in Python). TensorFlow's CPU kernels
use Eigen; where the two differ at the edges, the kernel follows TensorFlow: an LU with an
exactly zero pivot (or a NaN first pivot) is "not invertible", a failed Cholesky factor is NaN
rather than an error, a triangular solve divides by a zero diagonal instead of refusing, an SVD
of non-finite values is NaN. float16 (MatrixInverse, Qr) is computed in float32. All are
registered `expensive`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_REAL = ("float32", "float64")
_TYPES = _REAL + ("complex64", "complex128")
_TYPES_HALF = _TYPES + ("float16",)


def _adjoint(x):
    """The conjugate transpose of each matrix (a view for real dtypes)."""
    x = np.swapaxes(x, -1, -2)
    return np.conj(x) if x.dtype.kind == "c" else x


def check_matrices(x) -> None:
    """TF's LinearAlgebraOp check of its first input (the others must match its rank)."""
    if x.ndim < 2:
        raise invalid_argument(f"Input tensor 0 must have rank >= 2, got {x.ndim}")


def check_square(x) -> None:
    """TF's check that the first input is a batch of square matrices."""
    check_matrices(x)
    if x.shape[-1] != x.shape[-2]:
        raise invalid_argument("Input matrix must be square.")


def _solver_inputs(matrix, rhs, square: bool) -> None:
    """TF's checks of (matrix, rhs) pairs, in its order and words."""
    check_matrices(matrix)
    if rhs.ndim != matrix.ndim:
        raise invalid_argument("All input tensors must have the same rank.")
    if rhs.shape[:-2] != matrix.shape[:-2]:
        raise invalid_argument("All input tensors must have the same outer dimensions.")
    if square and matrix.shape[-1] != matrix.shape[-2]:
        raise invalid_argument("First input (lhs) must be a square matrix.")
    if matrix.shape[-2] != rhs.shape[-2]:
        raise invalid_argument("Input matrix and rhs are incompatible.")


def _in_float32(fn):
    """Runs `fn` on float16 input in float32 and casts its outputs back (LAPACK has no half)."""
    def run(self, ctx, x):
        if x.dtype != np.float16:
            return fn(self, ctx, x)
        out = fn(self, ctx, x.astype(np.float32))
        return tuple(o.astype(np.float16) for o in out) if isinstance(out, tuple) else \
            out.astype(np.float16)
    return run


def _lu_solve(a, b, message: str):
    """a^-1 b (a^-1 if b is None) by LU with partial pivoting; InvalidArgumentError(message)
    where TensorFlow's kernel refuses. Its test is Eigen's `minCoeff(|pivots|) > 0`, whose
    scalar fold keeps a leading NaN and skips later ones: an exactly zero pivot fails (LAPACK
    reports it too), and so does a NaN first pivot, which partial pivoting picks only when
    a[0, 0] is NaN."""
    if np.isnan(a[..., 0, 0]).any():
        raise invalid_argument(message)
    try:
        return np.linalg.inv(a) if b is None else np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise invalid_argument(message) from None


# --- MatrixInverse, MatrixDeterminant, LogMatrixDeterminant ------------------------------------
@kernel("MatrixInverse", dtypes=_TYPES_HALF, expensive=True)
class MatrixInverseKernel:
    """inv(x) (or inv(x^H) with `adjoint`) from one LU per matrix."""

    def __init__(self, ctx):
        self.adjoint = ctx.attrs["adjoint"]

    @_in_float32
    def compute(self, ctx, x):
        check_square(x)
        if x.size == 0:
            return x.copy()
        a = _adjoint(x) if self.adjoint else x
        return _lu_solve(a, None, "Input is not invertible.")


@kernel("MatrixDeterminant", dtypes=_TYPES, expensive=True)
def _determinant(ctx, x):
    check_square(x)
    return np.asarray(np.linalg.det(x), dtype=x.dtype)


@kernel("LogMatrixDeterminant", dtypes=_TYPES, expensive=True)
def _log_determinant(ctx, x):
    """(sign, log|det|), both of x's dtype (a complex sign and log for complex x)."""
    check_square(x)
    sign, log_abs = np.linalg.slogdet(x)
    sign = np.where(np.isnan(log_abs), np.nan, sign)  # NaN pivots have no sign
    return np.asarray(sign, dtype=x.dtype), np.asarray(log_abs, dtype=x.dtype)


# --- Cholesky, SelfAdjointEigV2 -----------------------------------------------------------------
@kernel("Cholesky", dtypes=_TYPES, expensive=True)
def _cholesky(ctx, x):
    """The lower factor, from the lower triangle. A matrix that is not positive definite gets
    NaN in its lower triangle, not an error (TensorFlow 2.21's CPU kernel)."""
    check_square(x)
    try:
        return np.linalg.cholesky(x)
    except np.linalg.LinAlgError:
        pass
    # Some matrix failed: factor them one by one to find which (the error path only).
    flat = x.reshape((-1,) + x.shape[-2:])
    out = np.broadcast_to(np.tril(np.full(x.shape[-2:], np.nan, x.dtype)), flat.shape).copy()
    for i, matrix in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            continue
    return out.reshape(x.shape)


@kernel("SelfAdjointEigV2", dtypes=_TYPES, expensive=True)
class SelfAdjointEigKernel:
    """Eigenvalues (ascending, of x's dtype) and, with `compute_v`, eigenvectors as columns;
    reads the lower triangle. Without `compute_v` the second output is empty ([0])."""

    def __init__(self, ctx):
        self.compute_v = ctx.attrs["compute_v"]

    def compute(self, ctx, x):
        check_square(x)
        if not np.isfinite(np.tril(x)).all():
            raise invalid_argument("Self-adjoint eigen decomposition was not successful. The input "
                                   "might not be valid.")
        if not self.compute_v:
            return np.linalg.eigvalsh(x).astype(x.dtype), np.zeros(0, x.dtype)
        e, v = np.linalg.eigh(x)
        return e.astype(x.dtype), v


# --- Qr, Svd ------------------------------------------------------------------------------------
@kernel("Qr", dtypes=_TYPES_HALF, expensive=True)
class QrKernel:
    """Householder QR: q [..., M, P] and r [..., P, N] (P = M with `full_matrices`, else
    min(M, N))."""

    def __init__(self, ctx):
        self.mode = "complete" if ctx.attrs["full_matrices"] else "reduced"

    @_in_float32
    def compute(self, ctx, x):
        check_matrices(x)
        q, r = np.linalg.qr(x, mode=self.mode)
        return q, r


@kernel("Svd", dtypes=_TYPES, expensive=True)
class SvdKernel:
    """s (descending, of x's dtype), u and v (not v^H), or empty u and v without
    `compute_uv`. Matrices with non-finite entries give NaN outputs, like Eigen's SVD."""

    def __init__(self, ctx):
        self.compute_uv = ctx.attrs["compute_uv"]
        self.full = ctx.attrs["full_matrices"]

    def compute(self, ctx, x):
        check_matrices(x)
        bad = ~np.isfinite(x).all(axis=(-2, -1))
        clean = np.where(bad[..., None, None], 0, x) if bad.any() else x
        if not self.compute_uv:
            s = np.linalg.svd(clean, compute_uv=False).astype(x.dtype)
            s[bad] = np.nan
            return s, np.zeros(0, x.dtype), np.zeros(0, x.dtype)
        u, s, vh = np.linalg.svd(clean, full_matrices=self.full)
        outs = s.astype(x.dtype), u, np.ascontiguousarray(_adjoint(vh))
        for out in outs:
            out[bad] = np.nan
        return outs


# --- MatrixSolve, MatrixTriangularSolve, MatrixSolveLs ------------------------------------------
@kernel("MatrixSolve", dtypes=_TYPES, expensive=True)
class MatrixSolveKernel:
    """x with matrix x = rhs (matrix^H x = rhs with `adjoint`), by LU with partial pivoting."""

    def __init__(self, ctx):
        self.adjoint = ctx.attrs["adjoint"]

    def compute(self, ctx, matrix, rhs):
        _solver_inputs(matrix, rhs, square=True)
        if matrix.size == 0 or rhs.size == 0:
            return np.zeros(rhs.shape, rhs.dtype)
        a = _adjoint(matrix) if self.adjoint else matrix
        return _lu_solve(a, rhs, "Input matrix is not invertible.")


@kernel("MatrixTriangularSolve", dtypes=_TYPES, expensive=True)
class MatrixTriangularSolveKernel:
    """x with tri(matrix) x = rhs (or tri(matrix)^H x = rhs), batch dimensions broadcast;
    only the `lower` (or upper) triangle of matrix is read."""

    def __init__(self, ctx):
        self.lower = ctx.attrs["lower"]
        self.adjoint = ctx.attrs["adjoint"]

    def compute(self, ctx, matrix, rhs):
        for i, t in enumerate((matrix, rhs)):
            if t.ndim < 2:
                raise invalid_argument(f"In[{i}] ndims must be >= 2: {t.ndim}")
        m, n = matrix.shape[-2:]
        if m != n:
            raise invalid_argument(f"In[0] matrices in the last dimensions must be square ({n} =/= "
                                   f"{m})")
        if n != rhs.shape[-2]:
            raise invalid_argument(f"In[0] mismatch In[1] shape: {n} vs. {rhs.shape[-2]}: "
                                   f"{dims_text(matrix.shape)} {dims_text(rhs.shape)} 1 0")
        try:
            batch = np.broadcast_shapes(matrix.shape[:-2], rhs.shape[:-2])
        except ValueError:
            raise invalid_argument("In[0] and In[1] must have compatible batch dimensions: "
                                   f"{dims_text(matrix.shape)} vs. "
                                   f"{dims_text(rhs.shape)}") from None
        if matrix.size == 0 or rhs.size == 0:
            return np.zeros(batch + rhs.shape[-2:], rhs.dtype)
        a = np.tril(matrix) if self.lower else np.triu(matrix)
        if self.adjoint:
            a = _adjoint(a)
        if np.isfinite(a).all() and np.isfinite(rhs).all():
            try:  # LU of the triangle: one vectorized LAPACK call over all batches
                return np.linalg.solve(a, rhs)
            except np.linalg.LinAlgError:  # a zero on the diagonal
                pass
        return _substitute(a, rhs, lower=self.lower != self.adjoint)


def _substitute(a, rhs, lower: bool):
    """Forward (lower) or back substitution one row at a time, vectorized over batches and
    columns, for a triangle with a zero on its diagonal or a non-finite entry (in it or in
    rhs): like TensorFlow's kernel (and unlike LAPACK, which refuses, or whose LU spreads a
    NaN to every row) it divides by the zero, and inf and NaN reach only the rows solved
    after them. Row i reads only the x already solved, so 1 / inf is 0, not NaN."""
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    n = a.shape[-1]
    x = np.zeros(batch + rhs.shape[-2:], rhs.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(n) if lower else range(n - 1, -1, -1):
            solved = slice(0, i) if lower else slice(i + 1, n)
            known = np.einsum("...k,...kj->...j", a[..., i, solved], x[..., solved, :])
            x[..., i, :] = (rhs[..., i, :] - known) / a[..., i, i, None]
    return x


@kernel("MatrixSolveLs", dtypes=_TYPES, expensive=True)
class MatrixSolveLsKernel:
    """Least squares: with `fast`, the (regularized) normal equations by Cholesky (the
    minimum-norm solution when M < N); otherwise the minimum-norm solution via the
    pseudo-inverse (TensorFlow: a complete orthogonal decomposition), ignoring l2."""

    def __init__(self, ctx):
        self.fast = ctx.attrs["fast"]

    def compute(self, ctx, matrix, rhs, l2_regularizer):
        if np.ndim(l2_regularizer) != 0:
            raise invalid_argument(f"l2_regularizer must be scalar, got shape "
                                   f"{dims_text(np.shape(l2_regularizer))}")
        _solver_inputs(matrix, rhs, square=False)
        m, n = matrix.shape[-2:]
        if matrix.size == 0 or rhs.size == 0:
            return np.zeros(matrix.shape[:-2] + (n, rhs.shape[-1]), rhs.dtype)
        if not self.fast:
            eps = np.finfo(matrix.dtype).eps
            return (np.linalg.pinv(matrix, rtol=eps * max(m, n)) @ rhs).astype(rhs.dtype)
        a_h = _adjoint(matrix)
        gramian = a_h @ matrix if m >= n else matrix @ a_h
        l2 = float(l2_regularizer)
        if l2 > 0:
            gramian = gramian + l2 * np.eye(gramian.shape[-1], dtype=gramian.dtype)
        try:
            chol = np.linalg.cholesky(gramian)
        except np.linalg.LinAlgError:
            raise invalid_argument("Input matrix was rank deficient or ill-conditioned. Try "
                                   "setting fast=False or provide an l2_regularizer > 0.") from None
        # The factor proved the Gramian positive definite; solve with it (one batched call).
        y = np.linalg.solve(chol, a_h @ rhs if m >= n else rhs)
        x = np.linalg.solve(_adjoint(chol), y)
        return x if m >= n else a_h @ x
