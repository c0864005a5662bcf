"""Square-matrix decompositions: MatrixInverse, MatrixDeterminant, LogMatrixDeterminant,
Cholesky, SelfAdjointEigV2; and logdet, which TF builds from Cholesky.

Every op works on the innermost two dimensions and batches over the rest. The helpers at the
top (TF's rank and squareness checks in its words, adjoint, real part) are shared with
`linalg_qr_svd_ops.py` and the solvers in `linalg_solve_ops.py`. The gradients are
TensorFlow's (`linalg_grad.py`), written with the matrix-structure ops of `array_matrix_ops.py`
(band part, diagonals, eye, transpose). Kernels: `kernels/linalg_decomp.py`.
"""
from __future__ import annotations

import collections

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.array_ops import expand_dims, shape
from tensorweave.ops.linalg_ops import matmul, merge_inner
from tensorweave.ops.reduction_ops import reduce_sum, tf_op

__all__ = ["cholesky", "matrix_determinant", "matrix_inverse", "self_adjoint_eig",
           "self_adjoint_eigvals"]

TensorShape = _ts.TensorShape
# TensorFlow's dtypes of every decomposition and solver (its CPU kernels: see the kernels).
LINALG_TYPES = frozenset({_dtypes.float16, _dtypes.float32, _dtypes.float64,
                          _dtypes.complex64, _dtypes.complex128})


# --- shape helpers ------------------------------------------------------------------------------
def matrix_dims(shape: TensorShape):
    """(batch dims, rows, cols) of a shape of rank >= 2; (None, None, None) for unknown rank."""
    dims = shape._dims
    if dims is None:
        return None, None, None
    if len(dims) < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {len(dims)}")
    return dims[:-2], dims[-2], dims[-1]


def square_dims(shape: TensorShape, cols_first: bool = False):
    """(batch dims, n) of a batch of square matrices; ValueError naming rows then columns
    (columns first for the determinants, whose TF shape functions merge that way)."""
    batch, rows, cols = matrix_dims(shape)
    n = merge_inner(cols, rows) if cols_first else merge_inner(rows, cols)
    return batch, n


def batch_shape(batch, *inner) -> TensorShape:
    """batch + inner dims, or an unknown shape when the batch rank is unknown."""
    return _ts.unknown_shape() if batch is None else TensorShape(list(batch) + list(inner))


def adjoint(x: Tensor) -> Tensor:
    """The conjugate transpose of the innermost matrices (TF's tf.linalg.adjoint)."""
    from tensorweave.ops.array_matrix_ops import matrix_transpose
    return matrix_transpose(x, conjugate=True)


def real_part(x: Tensor) -> Tensor:
    """TF's math_ops.real: the real part of a complex tensor (Cast keeps it, and its gradient
    casts back, as Real's does); a real tensor itself."""
    return tf_op("Cast", [x], {"DstT": x.dtype.real_dtype}) if x.dtype.is_complex else x


def safe_reciprocal(x: Tensor, epsilon: float = 1e-20) -> Tensor:
    """x / (x^2 + eps): 1/x without infinities where eigen/singular values coincide (TF)."""
    return x * tf_op("Reciprocal", [x * x + epsilon])


def _grad_matrix(x: Tensor) -> Tensor:
    """expand_dims(x, [-1, -1]): one value per matrix, to scale whole matrices."""
    return expand_dims(expand_dims(x, -1), -1)


# --- MatrixInverse, MatrixDeterminant, LogMatrixDeterminant ------------------------------------
def _square_shape(ctx):
    batch, n = square_dims(ctx.input_shape(0))
    return batch_shape(batch, n, n)


def _determinant_shape(ctx):
    batch, _ = square_dims(ctx.input_shape(0), cols_first=True)
    return batch_shape(batch)


MatrixInverse = define_op(
    "MatrixInverse", inputs=["input: T"], outputs=["output: T"],
    attrs=[Attr("adjoint", "bool", False), TypeAttr("T", LINALG_TYPES)], shape_fn=_square_shape)
MatrixDeterminant = define_op(
    "MatrixDeterminant", inputs=["input: T"], outputs=["output: T"],
    attrs=[TypeAttr("T", LINALG_TYPES)], shape_fn=_determinant_shape)
LogMatrixDeterminant = define_op(
    "LogMatrixDeterminant", inputs=["input: T"], outputs=["sign: T", "log_abs_determinant: T"],
    attrs=[TypeAttr("T", LINALG_TYPES)], shape_fn=_determinant_shape)


@MatrixInverse.gradient
def _matrix_inverse_grad(op, grad):
    """d(A^-1) = -A^-1 dA A^-1, so dA = -A^-H g A^-H (with the adjoint attr, transposed)."""
    ainv = op.outputs[0]
    adj = op.get_attr("adjoint")
    return [-matmul(ainv, matmul(grad, ainv, adjoint_a=adj, adjoint_b=not adj),
                    adjoint_a=not adj)]


@MatrixDeterminant.gradient
def _matrix_determinant_grad(op, grad):
    """d det(A) / dA = det(A) A^-T (TF's form: g * det times inv(A^H))."""
    a_adj_inv = matrix_inverse(op.inputs[0], adjoint=True)
    return [_grad_matrix(grad * op.outputs[0]) * a_adj_inv]


@LogMatrixDeterminant.gradient
def _log_matrix_determinant_grad(op, _, grad_log_abs):
    """d log|det(A)| / dA = A^-T; the sign has no gradient."""
    a_adj_inv = matrix_inverse(op.inputs[0], adjoint=True)
    return [_grad_matrix(grad_log_abs) * a_adj_inv]


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002 - TF's argument names
    """Computes the inverse of one or more square invertible matrices (tf.linalg.inv).

    Args:
      input: a Tensor of float16, float32, float64, complex64 or complex128, shape
        `[..., M, M]`.
      adjoint: if True, inverts the adjoint (conjugate transpose) of each matrix instead.
      name: a name for the operation (default "MatrixInverse").

    Returns:
      A Tensor like `input`: the inverses (of the adjoints, with `adjoint`).

    Raises:
      ValueError: if `input` has rank < 2 or its matrices are statically not square.
      TypeError: for another dtype.
      InvalidArgumentError: at run time, "Input is not invertible." when an LU pivot is 0.
    """
    return apply_op(MatrixInverse, [input], {"adjoint": adjoint}, name=name)


def matrix_determinant(input, name=None):  # noqa: A002
    """Computes the determinant of one or more square matrices (tf.linalg.det).

    Args:
      input: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, M]`.
      name: a name for the operation (default "MatrixDeterminant").

    Returns:
      A Tensor of shape `[...]`: the determinants (1 for 0 x 0 matrices).

    Raises:
      ValueError: if `input` has rank < 2 or its matrices are statically not square.
      TypeError: for another dtype.
    """
    return apply_op(MatrixDeterminant, [input], name=name)


_SlogdetResult = collections.namedtuple("LogMatrixDeterminant", ["sign", "log_abs_determinant"])


def slogdet(input, name=None):  # noqa: A002
    """Sign and log of the absolute value of determinants (tf.linalg.slogdet).

    Avoids the overflow and underflow of the determinant itself: det = sign * exp(log_abs).

    Args:
      input: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, M]`.
      name: a name for the operation (default "LogMatrixDeterminant").

    Returns:
      A namedtuple `(sign, log_abs_determinant)`, each of shape `[...]` and `input`'s dtype
      (a singular matrix has sign 0 and log -inf).

    Raises:
      ValueError: if `input` has rank < 2 or its matrices are statically not square.
      TypeError: for another dtype.
    """
    return _SlogdetResult(*apply_op(LogMatrixDeterminant, [input], name=name))


# --- Cholesky -----------------------------------------------------------------------------------
Cholesky = define_op("Cholesky", inputs=["input: T"], outputs=["output: T"],
                     attrs=[TypeAttr("T", LINALG_TYPES)], shape_fn=_square_shape)


@Cholesky.gradient
def _cholesky_grad(op, grad):
    """dA = L^-H Phi(L^H g) L^-1, symmetrized, where Phi takes the lower triangle with the
    diagonal halved (Murray 2016, as TensorFlow writes it)."""
    from tensorweave.ops.array_matrix_ops import (
        eye,
        matrix_band_part,
        matrix_diag_part,
        matrix_set_diag,
    )
    from tensorweave.ops.linalg_solve_ops import matrix_triangular_solve
    chol = op.outputs[0]
    dims = shape(chol)
    identity = eye(dims[-1], batch_shape=dims[:-2], dtype=chol.dtype)
    chol_inverse = matrix_triangular_solve(chol, identity)
    middle = matmul(chol, grad, adjoint_a=True)
    middle = matrix_set_diag(middle, 0.5 * matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = matmul(matmul(chol_inverse, middle, adjoint_a=True), chol_inverse)
    grad_a += adjoint(grad_a)
    return [grad_a * 0.5]


def cholesky(input, name=None):  # noqa: A002
    """Computes the Cholesky decomposition of one or more square matrices (tf.linalg.cholesky).

    Each matrix is taken as Hermitian positive definite and only its lower triangle (with the
    diagonal) is read. The result L is lower triangular with `input = L L^H`. A matrix that is
    not positive definite gives a NaN factor (TensorFlow 2.21's CPU kernel does not fail).

    Args:
      input: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, M]`.
      name: a name for the operation (default "Cholesky").

    Returns:
      A Tensor like `input`: the lower triangular factors.

    Raises:
      ValueError: if `input` has rank < 2 or its matrices are statically not square.
      TypeError: for another dtype.
    """
    return apply_op(Cholesky, [input], name=name)


def logdet(matrix, name=None):
    """Log of the determinant of Hermitian positive definite matrices (tf.linalg.logdet).

    Computed as `2 * sum(log(real(diag(cholesky(matrix)))))`, which avoids over- and
    underflow.

    Args:
      matrix: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, M]`.
      name: a name for the scope (default "logdet").

    Returns:
      The real log-determinants, shape `[...]` (NaN for a matrix that is not positive
      definite).

    Raises:
      ValueError: if `matrix` has rank < 2 or its matrices are statically not square.
    """
    from tensorweave.ops.array_matrix_ops import matrix_diag_part
    with name_scope(name, "logdet", [matrix]):
        chol = apply_op(Cholesky, [matrix])
        return 2.0 * reduce_sum(tf_op("Log", [real_part(matrix_diag_part(chol))]), axis=[-1])


# --- SelfAdjointEigV2 ---------------------------------------------------------------------------
def _eig_shape(ctx):
    batch, n = square_dims(ctx.input_shape(0))
    if batch is None:
        return [_ts.unknown_shape(), _ts.unknown_shape()]
    vectors = batch_shape(batch, n, n) if ctx.attrs["compute_v"] else TensorShape([0])
    return [batch_shape(batch, n), vectors]


SelfAdjointEigV2 = define_op(
    "SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"],
    attrs=[Attr("compute_v", "bool", True), TypeAttr("T", LINALG_TYPES)], shape_fn=_eig_shape)


@SelfAdjointEigV2.gradient
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    """dA = V (diag(ge) + F o (V^H gv)) V^H with F_ij = 1 / (e_j - e_i) off the diagonal, then
    folded onto the lower triangle the op reads. Without eigenvectors it decomposes again."""
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.array_matrix_ops import (
        matrix_band_part,
        matrix_diag,
        matrix_diag_part,
        matrix_set_diag,
    )
    e = op.outputs[0]
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        # Infinite (NaN) where eigenvalues repeat: their eigenvectors are not unique.
        f = matrix_set_diag(safe_reciprocal(expand_dims(e, -2) - expand_dims(e, -1)),
                            zeros_like(e))
        middle = matrix_diag(grad_e) + f * matmul(v, grad_v, adjoint_a=True)
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        middle = matrix_diag(grad_e)
    grad_a = matmul(v, matmul(middle, v, adjoint_b=True))
    grad_a = matrix_band_part(grad_a + adjoint(grad_a), -1, 0)
    return [matrix_set_diag(grad_a, 0.5 * matrix_diag_part(grad_a))]


def self_adjoint_eig(tensor, name=None):
    """Eigen decomposition of one or more self-adjoint matrices (tf.linalg.eigh).

    Args:
      tensor: a Tensor of float32, float64, complex64 or complex128, shape `[..., N, N]`; only
        the lower triangle of each matrix is read.
      name: a name for the operation (default "SelfAdjointEigV2").

    Returns:
      `(e, v)`: the eigenvalues `[..., N]` in non-decreasing order (of `tensor`'s dtype) and
      the eigenvectors `[..., N, N]` as columns, with `tensor v[..., i] = e[i] v[..., i]`.

    Raises:
      ValueError: if `tensor` has rank < 2 or its matrices are statically not square.
      InvalidArgumentError: at run time, if the lower triangle has infinities or NaNs.
    """
    e, v = apply_op(SelfAdjointEigV2, [tensor], {"compute_v": True}, name=name)
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """Eigenvalues of self-adjoint matrices, without eigenvectors (tf.linalg.eigvalsh).

    Args:
      tensor: a float32, float64, complex64 or complex128 Tensor `[..., N, N]`, of which the
        lower triangles are read.
      name: the op's name (default "SelfAdjointEigV2").

    Returns:
      The eigenvalues `[..., N]`, ascending.

    Raises:
      ValueError: for rank < 2 or statically non-square matrices.
      InvalidArgumentError: at run time, for infinities or NaNs in a lower triangle.
    """
    e, _ = apply_op(SelfAdjointEigV2, [tensor], {"compute_v": False}, name=name)
    return e
