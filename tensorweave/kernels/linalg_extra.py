"""Kernels of the matrix functions, the LU factorization and the tridiagonal ops
(ops/linalg_funcs_ops.py, linalg_lu_ops.py, linalg_tridiagonal_ops.py): MatrixSquareRoot,
MatrixLogarithm, Lu, TridiagonalSolve, TridiagonalMatMul.

SciPy's batched `sqrtm`, `logm` and `lu` compute them (TensorFlow uses Eigen's Schur-based
MatrixFunctions and PartialPivLU). Where the two differ at the edges the kernels follow
TensorFlow: a real matrix without a real square root (a negative eigenvalue) and a matrix
without a finite logarithm give NaN matrices; an LU with an exactly zero pivot, or a NaN first
pivot, is "Input is not invertible.". The ops allow float16 but, as in TensorFlow, have no
half kernel.

The tridiagonal solvers are TensorFlow's CPU algorithms, vectorized over batches and
right-hand sides (one Python step per row of the systems: the eliminations are sequential in
the rows): Gaussian elimination with partial pivoting (LAPACK's xGTSV), the Thomas algorithm
without, and with `perturb_singular` xLAGTF/xLAGTS's scaled pivoting whose tiny pivots are
perturbed. A system that meets an exactly zero pivot gets NaN (TensorFlow logs a warning; it
does not fail).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy  # scipy.linalg loads on first use (SciPy imports submodules lazily)

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.linalg_decomp import check_matrices, check_square
from tensorweave.kernels.registry import kernel

_REAL = ("float32", "float64")
_COMPLEX = ("complex64", "complex128")


def _nan_where(bad, out):
    """`out` with the matrices flagged in `bad` (shape [...]) replaced by NaN."""
    return np.where(bad[..., None, None], np.nan, out).astype(out.dtype)


def _matrix_function(fn, x):
    """SciPy's `fn` of each square matrix of x, without its accuracy warnings."""
    check_square(x)
    if x.size == 0:
        return x.copy()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(x))


@kernel("MatrixSquareRoot", dtypes=_REAL + _COMPLEX, expensive=True)
def _matrix_square_root(ctx, x):
    """The principal square root; NaN for a real matrix whose root is not real."""
    root = _matrix_function(scipy.linalg.sqrtm, x)
    if x.dtype.kind == "c":
        return root.astype(x.dtype)
    scale = np.abs(root).max(axis=(-2, -1), initial=0) + 1.0
    imag = np.abs(np.imag(root)).max(axis=(-2, -1), initial=0)
    not_real = imag > 1e3 * np.finfo(x.dtype).eps * scale
    return _nan_where(not_real, np.real(root).astype(x.dtype))


@kernel("MatrixLogarithm", dtypes=_COMPLEX, expensive=True)
def _matrix_logarithm(ctx, x):
    """The principal logarithm; NaN for a matrix without a finite one (a zero eigenvalue)."""
    log = _matrix_function(scipy.linalg.logm, x).astype(x.dtype)
    # SciPy perturbs a zero eigenvalue into a large finite log; Eigen's log(0) poisons all.
    singular = np.isneginf(np.linalg.slogdet(x)[1])
    return _nan_where(singular | ~np.isfinite(log).all(axis=(-2, -1)), log)


@kernel("Lu", dtypes=_REAL + _COMPLEX, expensive=True)
class LuKernel:
    """Partial-pivoting LU: lu = L + U - I (L unit lower) and perm with x[perm] = L U."""

    def __init__(self, ctx):
        self.index_dtype = ctx.attrs["output_idx_type"].as_numpy_dtype

    def compute(self, ctx, x):
        check_square(x)
        n = x.shape[-1]
        if x.size == 0:
            return x.copy(), np.broadcast_to(np.arange(n, dtype=self.index_dtype),
                                              x.shape[:-1]).copy()
        # Eigen's pivot test keeps a leading NaN (see kernels/linalg_decomp._lu_solve).
        if np.isnan(x[..., 0, 0]).any():
            raise invalid_argument("Input is not invertible.")
        rows, lower, upper = scipy.linalg.lu(x, p_indices=True, check_finite=False)
        if (np.diagonal(upper, axis1=-2, axis2=-1) == 0).any():
            raise invalid_argument("Input is not invertible.")
        # SciPy's x = L[rows] U, so L U = x[argsort(rows)].
        perm = np.argsort(rows, axis=-1).astype(self.index_dtype)
        return (np.tril(lower, -1) + upper).astype(x.dtype), perm


# --- TridiagonalMatMul, TridiagonalSolve ----------------------------------------------------------
def _same_batches(tensors) -> None:
    """TF's LinearAlgebraOp checks: every input of rank >= 2, equal ranks and batches."""
    check_matrices(tensors[0])
    for t in tensors[1:]:
        if t.ndim != tensors[0].ndim:
            raise invalid_argument("All input tensors must have the same rank.")
        if t.shape[:-2] != tensors[0].shape[:-2]:
            raise invalid_argument("All input tensors must have the same outer dimensions.")


@kernel("TridiagonalMatMul", dtypes=_REAL + _COMPLEX)
def _tridiagonal_matmul(ctx, superdiag, maindiag, subdiag, rhs):
    """y_i = sup_i x_{i+1} + main_i x_i + sub_i x_{i-1} (sup's last, sub's first ignored)."""
    _same_batches([superdiag, maindiag, subdiag, rhs])
    m = rhs.shape[-2]
    for diag, label in ((superdiag, "superdiagonal"), (maindiag, "main diagonal"),
                        (subdiag, "subdiagonal")):
        if diag.shape[-2:] != (1, m):
            raise invalid_argument(f"Invalid {label} shape.")
    out = maindiag[..., 0, :, None] * rhs
    out[..., 1:, :] += subdiag[..., 0, 1:, None] * rhs[..., :-1, :]
    out[..., :-1, :] += superdiag[..., 0, :-1, None] * rhs[..., 1:, :]
    return out


@kernel("TridiagonalSolve", dtypes=_REAL + _COMPLEX, expensive=True)
class TridiagonalSolveKernel:
    """x with A x = rhs for A given by its compact diagonals [..., 3, M]; rhs [..., M, K]."""

    def __init__(self, ctx):
        self.pivoting = ctx.attrs["partial_pivoting"]
        self.perturb = ctx.attrs["perturb_singular"]
        if self.perturb and not self.pivoting:
            raise invalid_argument("Setting perturb_singular requires also setting "
                                   "partial_pivoting.")

    def compute(self, ctx, diagonals, rhs):
        _same_batches([diagonals, rhs])
        if diagonals.shape[-2] != 3:
            raise invalid_argument("Expected diagonals to be provided as a matrix with 3 rows, got "
                                   f"{diagonals.shape[-2]} rows.")
        m = diagonals.shape[-1]
        if m != rhs.shape[-2]:
            raise invalid_argument(f"Expected the same number of left-hand sides and right-hand "
                                   f"sides, got {m} and {rhs.shape[-2]}.")
        if m == 0 or rhs.size == 0:
            return np.zeros(rhs.shape, rhs.dtype)
        flat = diagonals.reshape((-1, 3, m))
        sup, main, sub = flat[:, 0], flat[:, 1], flat[:, 2]
        b = rhs.reshape((-1,) + rhs.shape[-2:])
        with np.errstate(all="ignore"):
            if self.perturb:
                x = _solve_perturbed(sup, main, sub, b)
            elif self.pivoting:
                x = _solve_pivoting(sup, main, sub, b)
            else:
                x = _solve_thomas(sup, main, sub, b)
        return x.astype(rhs.dtype).reshape(rhs.shape)


def _rows(v):
    """A [B] vector as [B, 1], to scale rows of [B, K]."""
    return v[:, None]


def _solve_thomas(sup, main, sub, b):
    """The Thomas algorithm; NaN for a system that meets a zero pivot."""
    n = main.shape[1]
    x = b.copy()
    u = np.zeros_like(main)
    failed = main[:, 0] == 0
    u[:, 0] = sup[:, 0] / main[:, 0]
    x[:, 0] = b[:, 0] / _rows(main[:, 0])
    for i in range(1, n):
        denom = main[:, i] - sub[:, i] * u[:, i - 1]
        failed |= denom == 0
        u[:, i] = sup[:, i] / denom
        x[:, i] = (b[:, i] - _rows(sub[:, i]) * x[:, i - 1]) / _rows(denom)
    for i in range(n - 2, -1, -1):
        x[:, i] -= _rows(u[:, i]) * x[:, i + 1]
    x[failed] = np.nan
    return x


def _solve_pivoting(sup, main, sub, b):
    """Partial pivoting between rows i and i + 1 (xGTSV): U has up to two superdiagonals
    (u0, u1, u2); NaN for a system that meets a zero pivot."""
    n = main.shape[1]
    u0, u1, u2 = main.copy(), np.zeros_like(main), np.zeros_like(main)
    u1[:, 0] = sup[:, 0]
    x = b.copy()
    failed = np.zeros(main.shape[0], bool)
    for i in range(n - 1):
        keep = np.abs(u0[:, i]) >= np.abs(sub[:, i + 1])
        failed |= keep & (u0[:, i] == 0)
        _eliminate(i, keep, sub[:, i + 1] / u0[:, i], (sup, main, sub), b, x, (u0, u1, u2))
    failed |= u0[:, n - 1] == 0
    x[:, n - 1] /= _rows(u0[:, n - 1])
    for i in range(n - 2, -1, -1):
        rest = _rows(u1[:, i]) * x[:, i + 1]
        if i < n - 2:
            rest = rest + _rows(u2[:, i]) * x[:, i + 2]
        x[:, i] = (x[:, i] - rest) / _rows(u0[:, i])
    x[failed] = np.nan
    return x


def _eliminate(k, keep, f, diagonals, b, x, u):
    """Eliminates row k + 1's subdiagonal entry with row k (factor f) where `keep`, else
    interchanges the two rows first; in place on x and U's diagonals u = (u0, u1, u2). The
    last row's u1 entry, which back substitution never reads, is left alone."""
    sup, main, sub = diagonals
    u0, u1, u2 = u
    g = u0[:, k] / sub[:, k + 1]               # the factor after the interchange
    u0_next = np.where(keep, main[:, k + 1] - f * u1[:, k], u1[:, k] - g * main[:, k + 1])
    x_next = np.where(_rows(keep), b[:, k + 1] - _rows(f) * x[:, k],
                      x[:, k] - _rows(g) * b[:, k + 1])
    x[:, k] = np.where(_rows(keep), x[:, k], b[:, k + 1])
    x[:, k + 1] = x_next
    u0[:, k] = np.where(keep, u0[:, k], sub[:, k + 1])
    u0[:, k + 1] = u0_next
    if k < main.shape[1] - 2:
        u2[:, k] = np.where(keep, 0, sup[:, k + 1])
        u1[:, k + 1] = np.where(keep, sup[:, k + 1], -g * sup[:, k + 1])
    u1[:, k] = np.where(keep, u1[:, k], main[:, k + 1])


def _solve_perturbed(sup, main, sub, b):
    """xLAGTF's scaled partial pivoting fused with the forward solve, then back substitution
    whose tiny pivots are perturbed by about eps * max|U| (TensorFlow's kernel)."""
    n = main.shape[1]
    eps = np.finfo(main.real.dtype).eps
    u0, u1, u2 = main.copy(), np.zeros_like(main), np.zeros_like(main)
    u1[:, 0] = sup[:, 0]
    x = b.copy()
    if n == 1:
        max_abs_u = np.abs(main[:, 0])
    else:
        max_abs_u = np.maximum(np.abs(u0[:, 0]), np.abs(u1[:, 0]))
    scale1 = np.abs(u0[:, 0]) + np.abs(u1[:, 0])
    for k in range(n - 1):
        inner = k < n - 2
        scale2 = np.abs(sub[:, k + 1]) + np.abs(main[:, k + 1])
        if inner:
            scale2 = scale2 + np.abs(sup[:, k + 1])
        zero_sub = sub[:, k + 1] == 0
        piv1 = np.where(u0[:, k] == 0, 0, np.abs(u0[:, k]) / scale1)
        piv2 = np.abs(sub[:, k + 1]) / scale2
        keep = zero_sub | (piv2 <= piv1)       # no interchange (f = 0 when sub is 0)
        scale1 = np.where(keep, scale2, scale1)
        f = np.where(zero_sub, 0, sub[:, k + 1] / u0[:, k])
        _eliminate(k, keep, f, (sup, main, sub), b, x, (u0, u1, u2))
        if inner:
            max_abs_u = np.maximum.reduce([max_abs_u, np.abs(u0[:, k]), np.abs(u1[:, k]),
                                           np.abs(u2[:, k])])
    max_abs_u = np.maximum(max_abs_u, np.abs(u0[:, n - 1]))
    tol = eps * max_abs_u
    for k in range(n - 1, -1, -1):
        row = x[:, k].copy()
        if k < n - 1:
            row -= _rows(u1[:, k]) * x[:, k + 1]
        if k < n - 2:
            row -= _rows(u2[:, k]) * x[:, k + 2]
        denom, row = _maybe_perturb_pivot(tol, u0[:, k].copy(), row)
        x[:, k] = row * _rows(1 / denom)
    return x


def _maybe_perturb_pivot(perturb, pivot, row):
    """xLAGTS's guard, per system: grow a pivot of magnitude < 1 by doubling perturbations
    (or scale it and its row up) until neither 1 / pivot nor row / pivot overflows."""
    real = np.finfo(np.abs(pivot).dtype)
    small = 1 / real.max
    safemin = real.tiny if small < real.tiny else small * (1 + real.eps)
    bignum = 1 / safemin
    abs_pivot = np.abs(pivot)
    perturb = np.copysign(np.maximum(np.abs(perturb), safemin), pivot.real)
    max_factor = np.abs(row).max(axis=-1, initial=0)
    active = abs_pivot < 1
    while active.any():
        tiny = abs_pivot < safemin
        grow = np.where(tiny, (abs_pivot == 0) | (max_factor * safemin > abs_pivot),
                        max_factor > abs_pivot * bignum) & active
        rescale = active & tiny & ~grow
        pivot = np.where(grow, pivot + perturb, np.where(rescale, pivot * bignum, pivot))
        perturb = np.where(grow, perturb * 2, perturb)
        row = np.where(_rows(rescale), row * bignum, row)
        abs_pivot = np.abs(pivot)
        active = grow & (abs_pivot < 1)
    return pivot, row
