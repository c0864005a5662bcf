"""Orthogonal factorizations of [..., M, N] matrices: Qr and Svd with TensorFlow's gradients,
and pinv and matrix_rank, which TF builds from the SVD.

The gradients follow `linalg_grad.py`: QR by Roberts & Roberts (arXiv:2009.10071, wide
matrices reduced to the square case), SVD by Giles and Townsend (with the complex correction
term). Both need the matrix dimensions statically, and raise NotImplementedError otherwise,
as TensorFlow does. Kernels: `kernels/linalg_decomp.py`.
"""
from __future__ import annotations

import collections

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import expand_dims, shape
from tensorweave.ops.linalg_decomp_ops import (
    LINALG_TYPES,
    adjoint,
    batch_shape,
    matrix_dims,
    real_part,
    safe_reciprocal,
)
from tensorweave.ops.linalg_ops import matmul
from tensorweave.ops.reduction_ops import reduce_max, reduce_sum, tf_op

__all__ = ["qr", "svd"]

TensorShape = _ts.TensorShape


def _small_dim(m, n):
    return None if m is None or n is None else min(m, n)


def _qr_shape(ctx):
    batch, m, n = matrix_dims(ctx.input_shape(0))
    if batch is None:
        return [_ts.unknown_shape(), _ts.unknown_shape()]
    p = m if ctx.attrs["full_matrices"] else _small_dim(m, n)
    return [batch_shape(batch, m, p), batch_shape(batch, p, n)]


def _svd_shape(ctx):
    batch, m, n = matrix_dims(ctx.input_shape(0))
    if batch is None:
        return [_ts.unknown_shape()] * 3
    p = _small_dim(m, n)
    if not ctx.attrs["compute_uv"]:
        return [batch_shape(batch, p), TensorShape([0]), TensorShape([0])]
    full = ctx.attrs["full_matrices"]
    return [batch_shape(batch, p), batch_shape(batch, m, m if full else p),
            batch_shape(batch, n, n if full else p)]


Qr = define_op("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
               attrs=[Attr("full_matrices", "bool", False), TypeAttr("T", LINALG_TYPES)],
               shape_fn=_qr_shape)
Svd = define_op("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
                attrs=[Attr("compute_uv", "bool", True), Attr("full_matrices", "bool", False),
                       TypeAttr("T", LINALG_TYPES)],
                shape_fn=_svd_shape)


# --- gradients ----------------------------------------------------------------------------------
def _solve_right_by_r(x: Tensor, r: Tensor) -> Tensor:
    """x r^-H for upper triangular r, by a triangular solve."""
    from tensorweave.ops.linalg_solve_ops import matrix_triangular_solve
    return adjoint(matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))


def _qr_grad_square_and_deep(q, r, dq, dr):
    """The QR gradient for M >= N (reduced q): q (dr + tril(q^H dq - h.c. + r dr^H - h.c.)
    r^-H) + (dq - q q^H dq) r^-H, plus a correction of the diagonal's phase for complex."""
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.array_matrix_ops import (
        matrix_band_part,
        matrix_diag_part,
        matrix_set_diag,
    )
    qdq = matmul(q, dq, adjoint_a=True)
    rdr = matmul(r, dr, adjoint_b=True)
    tril = matrix_band_part(qdq - adjoint(qdq) + rdr - adjoint(rdr), -1, 0)
    grad = matmul(q, dr + _solve_right_by_r(tril, r)) + \
        _solve_right_by_r(dq - matmul(q, qdq), r)
    if q.dtype.is_complex:
        m = rdr - adjoint(qdq)
        eyem = matrix_set_diag(zeros_like(m), matrix_diag_part(m))
        correction = eyem - tf_op("Cast", [real_part(eyem)], {"DstT": q.dtype})
        grad = grad + _solve_right_by_r(matmul(q, adjoint(correction)), r)
    return grad


@Qr.gradient
def _qr_grad(op, dq, dr):
    """TF's QrGrad: M >= N directly; M < N by splitting a = [x, y] and r = [u, v], which
    reduces to the square case for x; no gradient for M > N with full_matrices."""
    from tensorweave.ops.array_join_ops import concat
    q, r = op.outputs
    if r.shape.ndims is None or None in r.shape.as_list()[-2:]:
        raise NotImplementedError(f"QrGrad not implemented with dynamic shapes. Received "
                                  f"r.shape: {r.shape}")
    rows, cols = r.shape.as_list()[-2:]
    if rows > cols and q.shape.as_list()[-2] == q.shape.as_list()[-1]:
        raise NotImplementedError(f"QrGrad not implemented when nrows > ncols and "
                                  f"full_matrices is true. Received r.shape={r.shape} with "
                                  f"nrows={rows}and ncols={cols}.")
    num_rows = q.shape.as_list()[-2]
    if num_rows >= cols:
        return [_qr_grad_square_and_deep(q, r, dq, dr)]
    y = op.inputs[0][..., :, num_rows:]
    u = r[..., :, :num_rows]
    dv = dr[..., :, num_rows:]
    du = dr[..., :, :num_rows]
    dy = matmul(q, dv)
    dx = _qr_grad_square_and_deep(q, u, dq + matmul(y, dv, adjoint_b=True), du)
    return [concat([dx, dy], axis=-1)]


@Svd.gradient
def _svd_grad(op, grad_s, grad_u, grad_v):
    """TF's SvdGrad: u (gS + (F o u^H gu + h.c.) S + S (F o v^H gv + h.c.)) v^H with
    F_ij = 1 / (s_j^2 - s_i^2), plus the terms for M != N (computed on a^H when M > N, then
    transposed back), the extra columns with full_matrices (|M - N| <= 1 only) and the complex
    phase term. Without u and v it decomposes again: gA = u diag(gs) v^H."""
    from tensorweave.ops.array_creation_ops import zeros_like
    from tensorweave.ops.array_matrix_ops import eye, matrix_diag, matrix_set_diag
    a = op.inputs[0]
    a_shape = a.shape.with_rank_at_least(2)
    grad_s_mat = matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        grad_a = matmul(u, matmul(grad_s_mat, v, adjoint_b=True))
        grad_a.set_shape(a_shape)
        return [grad_a]
    full_matrices = op.get_attr("full_matrices")
    grad_u_shape = grad_u.shape.with_rank_at_least(2)
    grad_v_shape = grad_v.shape.with_rank_at_least(2)
    m = a_shape[-2].merge_with(grad_u_shape[-2])
    n = a_shape[-1].merge_with(grad_v_shape[-2])
    batch = a_shape[:-2].merge_with(grad_u_shape[:-2]).merge_with(grad_v_shape[:-2])
    a_shape = batch.concatenate([m, n])
    m, n = _ts.dimension_value(m), _ts.dimension_value(n)
    if m is None or n is None:
        raise NotImplementedError("SVD gradient has not been implemented for input with "
                                  "unknown inner matrix shape.")
    s, u, v = op.outputs
    use_adjoint = m > n
    if use_adjoint:  # differentiate a^H = v S u^H instead
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError(f"svd gradient is not implemented for abs(m - n) > 1 when "
                                  f"full_matrices is True. Received: m={m} and n={n} from op "
                                  f"input={a} with shape={a_shape}.")
    s_mat = matrix_diag(s)
    s2 = s * s
    # Infinite (NaN) where singular values repeat: their vectors are not unique.
    f = matrix_set_diag(safe_reciprocal(expand_dims(s2, -2) - expand_dims(s2, -1)),
                        zeros_like(s))
    s_inv_mat = matrix_diag(safe_reciprocal(s))
    v1 = v[..., :, :m]
    grad_v1 = grad_v[..., :, :m]
    f_u = f * matmul(u, grad_u, adjoint_a=True)
    v_gv = matmul(v1, grad_v1, adjoint_a=True)
    f_v = f * v_gv
    term1_nouv = grad_s_mat + matmul(f_u + adjoint(f_u), s_mat) + \
        matmul(s_mat, f_v + adjoint(f_v))
    grad = matmul(u, matmul(term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = adjoint(grad_v1)
        term2_nous = gv1t - matmul(matmul(gv1t, v1), v1, adjoint_b=True)
        if full_matrices:
            v2 = v[..., :, m:n]
            term2_nous -= matmul(matmul(v1, grad_v[..., :, m:n], adjoint_a=True), v2,
                                 adjoint_b=True)
        grad += matmul(matmul(u, s_inv_mat), term2_nous)
    if a.dtype.is_complex:
        s_dims = shape(s)
        diag_v_gv = eye(s_dims[-1], batch_shape=s_dims[:-1], dtype=a.dtype) * v_gv
        term3_nouv = matmul(s_inv_mat, adjoint(diag_v_gv) - diag_v_gv)
        grad += 0.5 * matmul(u, matmul(term3_nouv, v1, adjoint_b=True))
    grad_a = adjoint(grad) if use_adjoint else grad
    grad_a.set_shape(a_shape)
    return [grad_a]


# --- wrappers -----------------------------------------------------------------------------------
_QrResult = collections.namedtuple("Qr", ["q", "r"])


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TF's argument name
    """QR decomposition of one or more matrices (tf.linalg.qr): `input = q r`.

    Args:
      input: a Tensor of float16, float32, float64, complex64 or complex128, shape
        `[..., M, N]`.
      full_matrices: if True, q is `[..., M, M]` and r `[..., M, N]`; otherwise (the default)
        only the leading P = min(M, N) columns of q and rows of r.
      name: a name for the operation (default "Qr").

    Returns:
      A namedtuple `(q, r)`: q with orthonormal columns, r upper triangular.

    Raises:
      ValueError: if `input` has rank < 2.
      TypeError: for another dtype.
    """
    return _QrResult(*apply_op(Qr, [input], {"full_matrices": full_matrices}, name=name))


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """Singular value decomposition of one or more matrices (tf.linalg.svd).

    `tensor = u diag(s) v^H`, in TF's output order, with `v` itself (NumPy returns `v^H`).

    Args:
      tensor: a Tensor of float32, float64, complex64 or complex128, shape `[..., M, N]`.
      full_matrices: if True, u is `[..., M, M]` and v `[..., N, N]`; otherwise (the default)
        only the leading P = min(M, N) singular vectors. Ignored without `compute_uv`.
      compute_uv: if False, only the singular values are computed (and returned).
      name: a name for the operation (default "Svd").

    Returns:
      `(s, u, v)`, or `s` alone without `compute_uv`; s is real, `[..., P]`, descending.

    Raises:
      ValueError: if `tensor` has rank < 2.
      TypeError: for another dtype.
    """
    s, u, v = apply_op(Svd, [tensor], {"compute_uv": compute_uv,
                                       "full_matrices": full_matrices}, name=name)
    return (real_part(s), u, v) if compute_uv else real_part(s)


def _float_matrix(a: Tensor) -> None:
    """TF's checks in pinv and matrix_rank: a float dtype and rank >= 2."""
    if not a.dtype.is_floating:
        raise TypeError(f"Input `a` must have `float`-like `dtype` (saw {a.dtype.name}).")
    if a.shape.ndims is not None and a.shape.ndims < 2:
        raise ValueError(f"Input `a` must have at least 2 dimensions (saw: {a.shape.ndims}).")


def _largest_dim(a: Tensor):
    """max(M, N): a Python float when both are static, else a scalar of a's dtype."""
    dims = a.shape._dims
    rows, cols = dims[-2:] if dims is not None else (None, None)
    if rows is not None and cols is not None:
        return float(max(rows, cols))
    return tf_op("Cast", [reduce_max(shape(a)[-2:])], {"DstT": a.dtype.base_dtype})


def pinv(a, rcond=None, validate_args=False, name=None):
    """Moore-Penrose pseudo-inverse of one or more matrices via the SVD (tf.linalg.pinv).

    Singular values up to `rcond` times the largest count as zero: their reciprocal is taken
    as 0 (by dividing by infinity, which keeps gradients finite).

    Args:
      a: a float Tensor of shape `[..., M, N]`.
      rcond: the relative cutoff; default `10 * max(M, N) * eps(dtype)`.
      validate_args: accepted for TF's signature; the checks are static and always run.
      name: a name for the scope (default "pinv").

    Returns:
      The pseudo-inverses, shape `[..., N, M]`.

    Raises:
      TypeError: if `a` is not of a float dtype.
      ValueError: if `a` has rank < 2.
    """
    del validate_args  # TF's run-time assertions repeat the static checks
    from tensorweave.ops.array_index_ops import where_v2
    with name_scope(name or "pinv"):
        a = convert_to_tensor(a, name="a")
        _float_matrix(a)
        np_dtype = a.dtype.as_numpy_dtype
        if rcond is None:
            rcond = 10.0 * _largest_dim(a) * np.finfo(np_dtype).eps
        rcond = convert_to_tensor(rcond, dtype=a.dtype.base_dtype, name="rcond")
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        cutoff = rcond * reduce_max(s, axis=-1)
        s = where_v2(s > expand_dims(cutoff, -1), s, np.array(np.inf, np_dtype))
        a_pinv = matmul(v / expand_dims(s, -2), u, adjoint_b=True)
        if a.shape.ndims is not None:
            a_pinv.set_shape(a.shape[:-2].concatenate([a.shape[-1], a.shape[-2]]))
        return a_pinv


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above a tolerance, per matrix (tf.linalg.matrix_rank).

    Args:
      a: a float Tensor of shape `[..., M, N]`.
      tol: singular values at or below it count as zero; default `eps * max(M, N) * max(s)`.
      validate_args: accepted for TF's signature; the checks are static and always run.
      name: a name for the scope (default "matrix_rank").

    Returns:
      An int32 Tensor of shape `[...]`.

    Raises:
      TypeError: if `a` is not of a float dtype.
      ValueError: if `a` has rank < 2.
    """
    del validate_args
    with name_scope(name or "matrix_rank"):
        a = convert_to_tensor(a, preferred_dtype=_dtypes.float32, name="a")
        _float_matrix(a)
        s = svd(a, compute_uv=False)
        if tol is None:
            eps = np.finfo(a.dtype.as_numpy_dtype).eps
            tol = eps * _largest_dim(a) * reduce_max(s, axis=-1, keepdims=True)
        return reduce_sum(tf_op("Cast", [s > tol], {"DstT": _dtypes.int32}), axis=-1)
