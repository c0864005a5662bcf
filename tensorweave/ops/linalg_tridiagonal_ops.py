"""Tridiagonal systems: the TridiagonalSolve and TridiagonalMatMul ops and their TF wrappers
tf.linalg.tridiagonal_solve and tf.linalg.tridiagonal_matmul, which accept the diagonals in
three formats.

`compact`: one tensor `[..., 3, M]` of superdiagonal (last entry ignored), main diagonal and
subdiagonal (first entry ignored); `sequence`: a list of the three (off-diagonals of length M
or M - 1); `matrix`: full `[..., M, M]` matrices, of which the three diagonals are read.
Gradients are TensorFlow's (`linalg_grad.py`): neither conjugates complex diagonals, and
neither do these. Kernels: `kernels/linalg_extra.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import merge_dims
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_join_ops import concat, stack
from tensorweave.ops.array_ops import expand_dims, rank, squeeze
from tensorweave.ops.linalg_decomp_ops import matrix_dims
from tensorweave.ops.linalg_ops import merge_inner
from tensorweave.ops.reduction_ops import reduce_sum

TYPES = frozenset({_dtypes.float32, _dtypes.float64, _dtypes.complex64, _dtypes.complex128})


# --- shape functions ----------------------------------------------------------------------------
def _with_value(dim, value: int):
    """TF's WithValue: `dim` must be `value` when known."""
    if dim is not None and dim != value:
        raise ValueError(f"Dimension must be {value} but is {dim}")


def _solve_shape(ctx):
    """[..., 3, M] and [..., M, K] with equal batches -> rhs's shape."""
    lhs_batch, three, m = matrix_dims(ctx.input_shape(0))
    rhs_batch, rhs_m, _ = matrix_dims(ctx.input_shape(1))
    merge_dims(lhs_batch, rhs_batch)
    merge_inner(m, rhs_m)
    _with_value(three, 3)
    return ctx.input_shape(1)


def _matmul_shape(ctx):
    """Three [..., 1, M] diagonals and [..., M, N] with equal batches -> rhs's shape."""
    diagonals = [ctx.input_shape(i)._dims for i in range(3)]
    for dims in diagonals:
        matrix_dims(_ts.TensorShape(dims))
    rhs_batch, rhs_m, _ = matrix_dims(ctx.input_shape(3))
    merged = merge_dims(merge_dims(diagonals[0], diagonals[1]), diagonals[2])
    for dims in diagonals[1:]:
        merge_dims(None if dims is None else dims[:-2], rhs_batch)
    if merged is not None:
        merge_inner(merged[-1], rhs_m)
        _with_value(merged[-2], 1)
    return ctx.input_shape(3)


TridiagonalSolve = define_op(
    "TridiagonalSolve", inputs=["diagonals: T", "rhs: T"], outputs=["output: T"],
    attrs=[Attr("partial_pivoting", "bool", True), Attr("perturb_singular", "bool", False),
           TypeAttr("T", TYPES)], shape_fn=_solve_shape)
TridiagonalMatMul = define_op(
    "TridiagonalMatMul", inputs=["superdiag: T", "maindiag: T", "subdiag: T", "rhs: T"],
    outputs=["output: T"], attrs=[TypeAttr("T", TYPES)], shape_fn=_matmul_shape)


# --- gradients ----------------------------------------------------------------------------------
def _shift(x, axis: int, up: bool):
    """`x` moved one step along `axis` (-1 or -2), zero-filled: up (towards index 0) takes
    x[i + 1], down takes x[i - 1]."""
    from tensorweave.ops.array_creation_ops import zeros
    from tensorweave.ops.array_tile_pad_ops import pad
    inner = [[0, 0]] * (-axis - 1)
    tail = [[0, 1] if up else [1, 0]] + inner
    kept = slice(1, None) if up else slice(None, -1)
    sliced = x[(Ellipsis, kept) + (slice(None),) * len(inner)]
    head = zeros(concat([[rank(x) - len(tail)], [2]], 0), dtype=_dtypes.int32)
    return pad(sliced, concat([head, tail], 0))


@TridiagonalMatMul.gradient
def _tridiagonal_matmul_grad(op, grad):
    """y_i = sup_i x_{i+1} + main_i x_i + sub_i x_{i-1}: each diagonal's gradient sums
    grad times the matching (shifted) rows of conj(x); x's gradient applies the adjoint."""
    from tensorweave.ops.array_matrix_ops import matrix_transpose
    from tensorweave.ops.math_unary_ops import conj
    superdiag, maindiag, subdiag = (matrix_transpose(d, conjugate=True) for d in op.inputs[:3])
    rhs_conj = conj(op.inputs[3])
    diag_grads = [reduce_sum(_shift(rhs_conj, -2, up=True) * grad, axis=-1),
                  reduce_sum(rhs_conj * grad, axis=-1),
                  reduce_sum(_shift(rhs_conj, -2, up=False) * grad, axis=-1)]
    rhs_grad = _shift(superdiag * grad, -2, up=False) + maindiag * grad + \
        _shift(subdiag * grad, -2, up=True)
    return [expand_dims(g, -2) for g in diag_grads] + [rhs_grad]


def _transpose_compact(diags):
    """The compact diagonals of the transposed matrices (super and sub swap, shifted)."""
    superdiag = _shift(diags[..., 2, :], -1, up=True)
    subdiag = _shift(diags[..., 0, :], -1, up=False)
    return stack([superdiag, diags[..., 1, :], subdiag], axis=-2)


def _three_diagonals_of_product(x, y):
    """The compact diagonals of x y^T ([..., M, K] each) without forming the M x M product."""
    return stack([reduce_sum(x * _shift(y, -2, up=True), axis=-1),
                  reduce_sum(x * y, axis=-1),
                  reduce_sum(x * _shift(y, -2, up=False), axis=-1)], axis=-2)


@TridiagonalSolve.gradient
def _tridiagonal_solve_grad(op, grad):
    """x = A^-1 b: db = A^-T g (a solve with the transposed diagonals), and dA, kept to the
    three diagonals, is -db x^T."""
    attrs = {"partial_pivoting": op.get_attr("partial_pivoting"),
             "perturb_singular": op.get_attr("perturb_singular")}
    grad_rhs = apply_op(TridiagonalSolve, [_transpose_compact(op.inputs[0]), grad], attrs)
    return [-_three_diagonals_of_product(grad_rhs, op.outputs[0]), grad_rhs]


# --- wrappers -----------------------------------------------------------------------------------
def _matrix_diagonals(diagonals):
    """The compact diagonals of full matrices (ValueError if statically not square)."""
    from tensorweave.ops.array_matrix_ops import matrix_diag_part
    dims = diagonals.shape._dims
    m1, m2 = (dims[-1], dims[-2]) if dims is not None and len(dims) >= 2 else (None, None)
    if m1 and m2 and m1 != m2:
        raise ValueError(f"Expected last two dimensions of diagonals to be same, got {m1} "
                         f"and {m2}")
    return matrix_diag_part(diagonals, k=(-1, 1), padding_value=0.0, align="LEFT_RIGHT")


def _sequence_diagonals(diagonals):
    """The compact diagonals from (superdiag, maindiag, subdiag), padding off-diagonals of
    length M - 1 (TF's checks and messages)."""
    from tensorweave.ops.array_tile_pad_ops import pad
    if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
        raise ValueError("Expected diagonals to be a sequence of length 3.")
    superdiag, maindiag, subdiag = (convert_to_tensor(d) for d in diagonals)
    if not subdiag.shape[:-1].is_compatible_with(maindiag.shape[:-1]) or \
            not superdiag.shape[:-1].is_compatible_with(maindiag.shape[:-1]):
        raise ValueError(f"Tensors representing the three diagonals must have the same shape,"
                         f"except for the last dimension, got {subdiag.shape}, "
                         f"{maindiag.shape}, {superdiag.shape}")
    m = _last_dim(maindiag)

    def pad_if_necessary(t, name, last_dim_padding):
        n = _last_dim(t)
        if not n or n == m:
            return t
        if n == m - 1:
            return pad(t, [[0, 0]] * (t.shape.ndims - 1) + [last_dim_padding])
        raise ValueError(f"Expected {name} to be have length {m} or {m - 1}, got {n}.")

    subdiag = pad_if_necessary(subdiag, "subdiagonal", [1, 0])
    superdiag = pad_if_necessary(superdiag, "superdiagonal", [0, 1])
    return stack((superdiag, maindiag, subdiag), axis=-2)


def _last_dim(t):
    dims = t.shape._dims
    return dims[-1] if dims else None


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False):
    """Solves tridiagonal systems of equations (tf.linalg.tridiagonal_solve).

    On CPU by Gaussian elimination with partial pivoting (or the Thomas algorithm without).
    A singular system gives NaN (TensorFlow's kernel logs a warning and does not fail), unless
    `perturb_singular`, which perturbs tiny pivots as LAPACK's xLAGTS does.

    Args:
      diagonals: the diagonals, in `diagonals_format`: `[..., 3, M]` (compact), a list of
        `[..., M]` or `[..., M - 1]` tensors (sequence), or `[..., M, M]` (matrix).
      rhs: the right-hand sides, `[..., M, K]` or `[..., M]` (a single one).
      diagonals_format: "compact", "sequence" or "matrix".
      transpose_rhs: if True, `rhs` is `[..., K, M]` and is transposed first (ignored for a
        vector `rhs`).
      conjugate_rhs: if True, `rhs` is conjugated first.
      name: a name for the operation (default "TridiagonalSolve").
      partial_pivoting: whether to pivot (more stable; the Thomas algorithm otherwise).
      perturb_singular: whether to perturb singular systems (requires `partial_pivoting`).

    Returns:
      The solutions, shaped like `rhs` (`[..., M, K]` after a transpose).

    Raises:
      ValueError: for an unknown format, `perturb_singular` without `partial_pivoting`, or
        shapes that do not match (TensorFlow's messages).
    """
    if perturb_singular and not partial_pivoting:
        raise ValueError("partial_pivoting must be True if perturb_singular is.")
    if diagonals_format == "sequence":
        diagonals = _sequence_diagonals(diagonals)
    elif diagonals_format == "matrix":
        diagonals = _matrix_diagonals(convert_to_tensor(diagonals))
    elif diagonals_format != "compact":
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    return _solve_compact(convert_to_tensor(diagonals), convert_to_tensor(rhs), transpose_rhs,
                          conjugate_rhs, partial_pivoting, perturb_singular, name)


def _solve_compact(diagonals, rhs, transpose_rhs, conjugate_rhs, partial_pivoting,
                   perturb_singular, name):
    """TF's static checks, the vector and transposed forms of rhs, then the op."""
    from tensorweave.ops.array_matrix_ops import matrix_transpose
    from tensorweave.ops.math_unary_ops import conj
    diags_rank, rhs_rank = diagonals.shape.ndims, rhs.shape.ndims
    if diags_rank:
        if diags_rank < 2:
            raise ValueError(f"Expected diagonals to have rank at least 2, got {diags_rank}")
        if rhs_rank and rhs_rank not in (diags_rank, diags_rank - 1):
            raise ValueError(f"Expected the rank of rhs to be {diags_rank - 1} or "
                             f"{diags_rank}, got {rhs_rank}")
        if rhs_rank and not diagonals.shape[:-2].is_compatible_with(
                rhs.shape[:diags_rank - 2]):
            raise ValueError(f"Batch shapes {_dims_str(diagonals.shape[:-2])} and "
                             f"{_dims_str(rhs.shape[:diags_rank - 2])} are incompatible")
    three = diagonals.shape._dims[-2] if diags_rank else None
    if three and three != 3:
        raise ValueError(f"Expected 3 diagonals got {three}")
    attrs = {"partial_pivoting": partial_pivoting, "perturb_singular": perturb_singular}
    vector = bool(rhs_rank and diags_rank and rhs_rank == diags_rank - 1)
    if vector:
        rhs = expand_dims(conj(rhs) if conjugate_rhs else rhs, -1)
    elif transpose_rhs:
        rhs = matrix_transpose(rhs, conjugate=conjugate_rhs)
    elif conjugate_rhs:
        rhs = conj(rhs)
    m, rhs_m = _last_dim(diagonals), (rhs.shape._dims[-2] if rhs.shape._dims else None)
    if m and rhs_m and m != rhs_m:
        raise ValueError(f"Expected number of left-hand sided and right-hand sides to be "
                         f"equal, got {m} and {rhs_m}")
    out = apply_op(TridiagonalSolve, [diagonals, rhs], attrs, name=name)
    return squeeze(out, -1) if vector else out


def _dims_str(shape) -> str:
    """A TensorShape as TF prints it in these messages: `(2, 3)`, `(2,)`, `()`."""
    return str(tuple(shape.as_list()))


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """Multiplies tridiagonal matrices by matrices (tf.linalg.tridiagonal_matmul).

    Args:
      diagonals: the diagonals, in `diagonals_format`: `[..., 3, M]` (compact; the last
        superdiagonal and first subdiagonal entries are ignored), a list of three `[..., M]`
        tensors (sequence), or `[..., M, M]` (matrix).
      rhs: a Tensor `[..., M, N]` of float32, float64, complex64 or complex128.
      diagonals_format: "compact", "sequence" or "matrix".
      name: a name for the operation (default "TridiagonalMatMul").

    Returns:
      The products, `[..., M, N]`.

    Raises:
      ValueError: for an unknown format or shapes that do not match.
    """
    if diagonals_format == "compact":
        diagonals = convert_to_tensor(diagonals)
        superdiag, maindiag, subdiag = (diagonals[..., i, :] for i in range(3))
    elif diagonals_format == "sequence":
        superdiag, maindiag, subdiag = diagonals
    elif diagonals_format == "matrix":
        diags = _matrix_diagonals(convert_to_tensor(diagonals))
        superdiag, maindiag, subdiag = (diags[..., i, :] for i in range(3))
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    inputs = [expand_dims(d, -2) for d in (superdiag, maindiag, subdiag)]
    return apply_op(TridiagonalMatMul, inputs + [rhs], name=name)
