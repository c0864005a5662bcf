"""Linear solvers: MatrixSolve, MatrixTriangularSolve, MatrixSolveLs, and TF's composites
cholesky_solve and matrix_solve_ls (least squares through the Cholesky factor of the
regularized Gramian, falling back to the MatrixSolveLs op for fast=False or large batches).

MatrixSolve and MatrixSolveLs need equal batch dimensions; MatrixTriangularSolve broadcasts
them (TF 2.x), and its gradient sums back over the broadcast ones. Gradients follow
TensorFlow's `linalg_grad.py`. Kernels: `kernels/linalg_decomp.py`.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank, merge_dims
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import shape
from tensorweave.ops.linalg_decomp_ops import (
    LINALG_TYPES,
    batch_shape,
    cholesky,
    matrix_dims,
    square_dims,
)
from tensorweave.ops.linalg_ops import matmul, merge_inner
from tensorweave.ops.reduction_ops import tf_op

__all__ = ["cholesky_solve", "matrix_solve", "matrix_solve_ls", "matrix_triangular_solve"]


# --- shape functions ----------------------------------------------------------------------------
def _solve_shape(ctx, square: bool):
    """TF's MatrixSolveShapeFn: equal batches, lhs rows == rhs rows -> batch + [N, K]."""
    if square:
        lhs_batch, n = square_dims(ctx.input_shape(0))
        m = n
    else:
        lhs_batch, m, n = matrix_dims(ctx.input_shape(0))
    rhs_batch, rhs_rows, k = matrix_dims(ctx.input_shape(1))
    batch = merge_dims(lhs_batch, rhs_batch)
    m = merge_inner(m, rhs_rows)
    return batch_shape(batch, merge_inner(m, n) if square else n, k)


def _solve_ls_shape(ctx):
    dims_with_rank(ctx.input_shape(2)._dims, 0)
    return _solve_shape(ctx, square=False)


def _triangular_solve_shape(ctx):
    """Square lhs, batch dimensions broadcast, lhs size == rhs rows -> batch + [M, K]."""
    lhs_batch, n = square_dims(ctx.input_shape(0))
    rhs_batch, rhs_rows, k = matrix_dims(ctx.input_shape(1))
    m = merge_inner(n, rhs_rows)
    if lhs_batch is None or rhs_batch is None:
        return _ts.unknown_shape()
    batch = shape_fns.broadcast_shapes(_ts.TensorShape(lhs_batch), _ts.TensorShape(rhs_batch))
    return batch.concatenate([m, k])


MatrixSolve = define_op(
    "MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
    attrs=[Attr("adjoint", "bool", False), TypeAttr("T", LINALG_TYPES)],
    shape_fn=lambda ctx: _solve_shape(ctx, square=True))
MatrixTriangularSolve = define_op(
    "MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
    attrs=[Attr("lower", "bool", True), Attr("adjoint", "bool", False),
           TypeAttr("T", LINALG_TYPES | {_dtypes.bfloat16})],
    shape_fn=_triangular_solve_shape)
MatrixSolveLs = define_op(
    "MatrixSolveLs", inputs=["matrix: T", "rhs: T", "l2_regularizer: float64"],
    outputs=["output: T"], attrs=[TypeAttr("T", LINALG_TYPES), Attr("fast", "bool", True)],
    shape_fn=_solve_ls_shape)


# --- gradients ----------------------------------------------------------------------------------
def _solve_matrix_grad(op, grad_rhs):
    """-grad_rhs c^H (c grad_rhs^H with the adjoint attr): the matrix's gradient of a solve
    whose output is c, given the rhs's gradient."""
    c = op.outputs[0]
    if op.get_attr("adjoint"):
        return -matmul(c, grad_rhs, adjoint_b=True)
    return -matmul(grad_rhs, c, adjoint_b=True)


@MatrixSolve.gradient
def _matrix_solve_grad(op, grad):
    """x = A^-1 b: db = A^-H g and dA = -db x^H."""
    grad_b = matrix_solve(op.inputs[0], grad, adjoint=not op.get_attr("adjoint"))
    return [_solve_matrix_grad(op, grad_b), grad_b]


@MatrixTriangularSolve.gradient
def _matrix_triangular_solve_grad(op, grad):
    """As MatrixSolve's, with dA kept to the triangle the op reads and both gradients summed
    over broadcast batch dimensions."""
    from tensorweave.autodiff.broadcast import reduce_to_shape_of
    from tensorweave.ops.array_matrix_ops import matrix_band_part
    a, b = op.inputs
    lower = op.get_attr("lower")
    grad_b = apply_op(MatrixTriangularSolve, [a, grad],
                      {"lower": lower, "adjoint": not op.get_attr("adjoint")})
    grad_a = _solve_matrix_grad(op, grad_b)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    if a.shape.is_fully_defined() and b.shape.is_fully_defined() and \
            a.shape[:-2] == b.shape[:-2]:
        return [grad_a, grad_b]
    return [reduce_to_shape_of(grad_a, a), reduce_to_shape_of(grad_b, b)]


def _overdetermined_grad(op, grad):
    """X = (A^H A + l I)^-1 A^H B: with z = (A^H A + l I)^-1 g, dB = A z and
    dA = -A (x z^H + (x z^H)^T) + B z^H."""
    from tensorweave.ops.array_matrix_ops import matrix_transpose
    a, b, l2 = op.inputs
    x = op.outputs[0]
    l2 = tf_op("Cast", [l2], {"DstT": a.dtype.base_dtype})
    chol = _regularized_gramian_cholesky(a, l2, first_kind=True)
    z = cholesky_solve(chol, grad)
    xzt = matmul(x, z, adjoint_b=True)
    zx_sym = xzt + matrix_transpose(xzt)
    grad_a = -matmul(a, zx_sym) + matmul(b, z, adjoint_b=True)
    return [grad_a, matmul(a, z), None]


def _underdetermined_grad(op, grad):
    """X = A^H (A A^H + l I)^-1 B: with t = (A A^H + l I)^-1 B, dB = (A A^H + l I)^-1 A g and
    dA = -dB (t^H A) + t (g - A^H dB)^H."""
    a, b, l2 = op.inputs
    l2 = tf_op("Cast", [l2], {"DstT": a.dtype.base_dtype})
    chol = _regularized_gramian_cholesky(a, l2, first_kind=False)
    grad_b = cholesky_solve(chol, matmul(a, grad))
    tmp = cholesky_solve(chol, b)
    a1 = -matmul(grad_b, matmul(tmp, a, adjoint_a=True))
    a2 = matmul(tmp, grad - matmul(a, grad_b, adjoint_a=True), adjoint_b=True)
    return [a1 + a2, grad_b, None]


@MatrixSolveLs.gradient
def _matrix_solve_ls_grad(op, grad):
    """The gradient of the normal equations (fast=True only), picked by the matrix's shape:
    statically when known, else by a cond at run time."""
    from tensorweave.ops.cond import cond
    if not op.get_attr("fast"):
        raise ValueError("Gradient not defined for fast=False")
    rows, cols = _static_matrix_dims(op.inputs[0])
    if rows is not None and cols is not None:
        return (_overdetermined_grad if rows >= cols else _underdetermined_grad)(op, grad)
    dims = shape(op.inputs[0])
    grads = cond(dims[-2] >= dims[-1], lambda: _overdetermined_grad(op, grad)[:2],
                 lambda: _underdetermined_grad(op, grad)[:2])
    return list(grads) + [None]


# --- wrappers -----------------------------------------------------------------------------------
def _static_matrix_dims(matrix: Tensor):
    """(rows, cols) of the innermost matrices, each None if unknown."""
    dims = matrix.shape._dims
    return (dims[-2], dims[-1]) if dims is not None and len(dims) >= 2 else (None, None)


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """Solves systems of linear equations `matrix x = rhs` (tf.linalg.solve).

    Args:
      matrix: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, M]`.
      rhs: a Tensor of the same dtype, shape `[..., M, K]` (the same batch dimensions).
      adjoint: if True, solves with the adjoint of each matrix instead.
      name: a name for the operation (default "MatrixSolve").

    Returns:
      A Tensor of shape `[..., M, K]`.

    Raises:
      ValueError: for rank < 2, non-square matrices or mismatched dimensions.
      TypeError: for another or mixed dtypes.
      InvalidArgumentError: at run time, "Input matrix is not invertible." for a zero pivot.
    """
    return apply_op(MatrixSolve, [matrix, rhs], {"adjoint": adjoint}, name=name)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solves triangular systems `matrix x = rhs` (tf.linalg.triangular_solve).

    Only the lower (`lower=True`) or upper triangle of each matrix is read. Batch dimensions
    broadcast. A zero on the diagonal gives infinities or NaNs, not an error.

    Args:
      matrix: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, M]`.
      rhs: a Tensor of the same dtype, shape `[..., M, K]`.
      lower: whether the matrices are lower (True) or upper triangular.
      adjoint: if True, solves with the adjoint of each triangle instead.
      name: a name for the scope (default "triangular_solve").

    Returns:
      A Tensor of shape `broadcast(batch dims) + [M, K]`.

    Raises:
      ValueError: for rank < 2, non-square matrices or incompatible dimensions.
      TypeError: for another or mixed dtypes.
    """
    with name_scope(name, "triangular_solve", [matrix, rhs]):
        return apply_op(MatrixTriangularSolve, [matrix, rhs],
                        {"lower": lower, "adjoint": adjoint})


def cholesky_solve(chol, rhs, name=None):
    """Solves `A x = rhs` given the Cholesky factor `chol` of A (tf.linalg.cholesky_solve).

    Two triangular solves: `chol y = rhs`, then `chol^H x = y`; only the lower triangle of
    `chol` is read.

    Args:
      chol: a Tensor of shape `[..., M, M]`, e.g. `tf.cholesky(A)`.
      rhs: a Tensor of the same dtype, shape `[..., M, K]`.
      name: a name for the scope (default "cholesky_solve").

    Returns:
      The solutions, shape `[..., M, K]`.

    Raises:
      ValueError: for rank < 2, non-square factors or incompatible dimensions.
    """
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = apply_op(MatrixTriangularSolve, [chol, rhs], {"adjoint": False, "lower": True})
        return apply_op(MatrixTriangularSolve, [chol, y], {"adjoint": True, "lower": True})


def _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind: bool):
    """The Cholesky factor of A^H A + l I (first kind) or A A^H + l I (TF's helper)."""
    from tensorweave.ops.array_matrix_ops import eye
    gramian = matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if isinstance(l2_regularizer, Tensor) or l2_regularizer != 0:
        dims = shape(matrix)
        small_dim = dims[-1] if first_kind else dims[-2]
        identity = eye(small_dim, batch_shape=dims[:-2], dtype=matrix.dtype)
        small_static = matrix.shape[-1 if first_kind else -2]
        identity.set_shape(matrix.shape[:-2].concatenate([small_static, small_static]))
        gramian += l2_regularizer * identity
    return cholesky(gramian)


def _use_composite(fast: bool, matrix: Tensor) -> bool:
    """TF's choice: the Cholesky composite unless fast=False, or the matrices fill more than
    an L2 cache and the batch is larger than the smaller matrix dimension (IO bound)."""
    if not fast:
        return False
    tensor_shape = matrix.shape
    if not tensor_shape.is_fully_defined():
        return True
    dims = tensor_shape.as_list()
    tensor_size = int(np.prod(dims)) * matrix.dtype.size
    io_bound = int(np.prod(dims[:-2])) > min(dims[-2:])
    return not (tensor_size > 256000 and io_bound)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """Solves linear least-squares problems (tf.linalg.lstsq).

    With `fast`, solves the normal equations by Cholesky: `(A^H A + l I)^-1 A^H B` when
    M >= N, the minimum-norm `A^H (A A^H + l I)^-1 B` when M < N (stable only for numerically
    full-rank A or a large enough `l2_regularizer`). With `fast=False`, the MatrixSolveLs op
    computes the minimum-norm least-squares solution even for rank-deficient A (ignoring
    `l2_regularizer`).

    Args:
      matrix: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, N]`.
      rhs: a Tensor of the same dtype, shape `[..., M, K]`.
      l2_regularizer: a scalar (float64) regularization weight.
      fast: whether to use the normal equations (see above).
      name: a name for the scope or op (default "matrix_solve_ls" or "MatrixSolveLs").

    Returns:
      The solutions, shape `[..., N, K]`.

    Raises:
      ValueError: for rank < 2 or mismatched dimensions.
      NotImplementedError: for complex128 with a nonzero `l2_regularizer` (as TensorFlow).
    """
    from tensorweave.ops.cond import cond
    matrix = convert_to_tensor(matrix, name="matrix")
    regularized = isinstance(l2_regularizer, Tensor) or l2_regularizer != 0
    if matrix.dtype.base_dtype == _dtypes.complex128 and regularized:
        raise NotImplementedError("matrix_solve_ls is currently disabled for complex128 and "
                                  "l2_regularizer != 0 due to poor accuracy.")
    if not _use_composite(fast, matrix):
        return apply_op(MatrixSolveLs, [matrix, rhs, l2_regularizer], {"fast": fast},
                        name=name)

    def overdetermined():
        chol = _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=True)
        return cholesky_solve(chol, matmul(matrix, rhs, adjoint_a=True))

    def underdetermined():
        chol = _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=False)
        return matmul(matrix, cholesky_solve(chol, rhs), adjoint_a=True)

    with name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]):
        rows, cols = _static_matrix_dims(matrix)
        if rows is not None and cols is not None:
            return overdetermined() if rows >= cols else underdetermined()
        dims = shape(matrix)
        return cond(dims[-2] >= dims[-1], overdetermined, underdetermined)
