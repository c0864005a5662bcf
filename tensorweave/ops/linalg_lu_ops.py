"""LU factorization: the Lu op (tf.linalg.lu) and TensorFlow's composites on its factors,
lu_solve, lu_matrix_inverse and lu_reconstruct.

`lu` packs L (unit lower triangular, diagonal implied) and U in one matrix, `lu = L + U - I`,
and `perm` orders the rows: `input[..., perm, :] = L U`. TensorFlow registers no gradient for
Lu (tf.gradients raises LookupError); the composites are differentiable in `lower_upper` and
`rhs`. The row permutation is applied as a product with `one_hot(perm)`, which broadcasts
batch dimensions like TensorFlow's gather. Kernel: `kernels/linalg_extra.py`.
"""
from __future__ import annotations

import collections

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import identity, rank, shape
from tensorweave.ops.linalg_decomp_ops import LINALG_TYPES, batch_shape, square_dims
from tensorweave.ops.linalg_ops import matmul

_INDEX_TYPES = frozenset({_dtypes.int32, _dtypes.int64})


def _lu_shape(ctx):
    batch, n = square_dims(ctx.input_shape(0))
    return [batch_shape(batch, n, n), batch_shape(batch, n)]


Lu = define_op("Lu", inputs=["input: T"], outputs=["lu: T", "p: output_idx_type"],
               attrs=[TypeAttr("T", LINALG_TYPES),
                      TypeAttr("output_idx_type", _INDEX_TYPES, _dtypes.int32)],
               shape_fn=_lu_shape)

_LuResult = collections.namedtuple("Lu", ["lu", "p"])


def lu(input, output_idx_type=_dtypes.int32, name=None):  # noqa: A002 - TF's argument name
    """Computes the LU decomposition of one or more square matrices (tf.linalg.lu).

    Partial pivoting: `input[..., perm, :] = L U` with L unit lower triangular and U upper
    triangular.

    Args:
      input: a Tensor of float32, float64, complex64 or complex128 (float16 is accepted by the
        op but has no kernel, as in TensorFlow), shape `[..., M, M]`.
      output_idx_type: the dtype of `p`, int32 (default) or int64.
      name: a name for the operation (default "Lu").

    Returns:
      A namedtuple `(lu, p)`: `lu = L + U - I`, shape `[..., M, M]`, and the permutations
      `p`, shape `[..., M]`.

    Raises:
      ValueError: if `input` has rank < 2 or its matrices are statically not square.
      TypeError: for another dtype or `output_idx_type`.
      InvalidArgumentError: at run time, "Input is not invertible." for a zero pivot.
    """
    return _LuResult(*apply_op(Lu, [input], {"output_idx_type": output_idx_type}, name=name))


# --- composites ---------------------------------------------------------------------------------
def _reconstruct_assertions(lower_upper, perm, validate_args: bool) -> list:
    """TF's checks of (lower_upper, perm): ValueError when static, assertions otherwise (only
    with validate_args)."""
    from tensorweave.ops.check_ops import assert_equal, assert_rank, assert_rank_at_least
    assertions = []
    lu_rank, perm_rank = lower_upper.shape.ndims, perm.shape.ndims
    message = "Input `lower_upper` must have at least 2 dimensions."
    if lu_rank is not None and lu_rank < 2:
        raise ValueError(message)
    if lu_rank is None and validate_args:
        assertions.append(assert_rank_at_least(lower_upper, 2, message=message))
    message = "`rank(lower_upper)` must equal `rank(perm) + 1`"
    if lu_rank is not None and perm_rank is not None:
        if lu_rank != perm_rank + 1:
            raise ValueError(message)
    elif validate_args:
        assertions.append(assert_rank(lower_upper, rank(perm) + 1, message=message))
    message = "`lower_upper` must be square."
    if lu_rank is not None and lower_upper.shape[:-2].is_fully_defined():
        rows, cols = lower_upper.shape.as_list()[-2:]
        if None not in (rows, cols) and rows != cols:
            raise ValueError(message)
    elif validate_args:
        dims = shape(lower_upper)
        assertions.append(assert_equal(dims[-2], dims[-1], message=message))
    return assertions


def _solve_assertions(lower_upper, perm, rhs, validate_args: bool) -> list:
    """The checks of lu_reconstruct plus rhs's rank and rows."""
    from tensorweave.ops.check_ops import assert_equal, assert_rank_at_least
    assertions = _reconstruct_assertions(lower_upper, perm, validate_args)
    message = "Input `rhs` must have at least 2 dimensions."
    if rhs.shape.ndims is not None:
        if rhs.shape.ndims < 2:
            raise ValueError(message)
    elif validate_args:
        assertions.append(assert_rank_at_least(rhs, 2, message=message))
    message = "`lower_upper.shape[-1]` must equal `rhs.shape[-1]`."
    if lower_upper.shape.ndims is not None and rhs.shape.ndims is not None:
        # Known ranks: compared when both sizes are known (TF1's Dimension semantics).
        lu_cols, rhs_rows = lower_upper.shape.as_list()[-1], rhs.shape.as_list()[-2]
        if None not in (lu_cols, rhs_rows) and lu_cols != rhs_rows:
            raise ValueError(message)
    elif validate_args:
        assertions.append(assert_equal(shape(lower_upper)[-1], shape(rhs)[-2],
                                       message=message))
    return assertions


def _checked(tensors, assertions):
    """`tensors` behind control dependencies on `assertions` (unchanged when there are none)."""
    if not assertions:
        return tensors
    with control_dependencies(assertions):
        return [identity(t) for t in tensors]


def _factor_inputs(lower_upper, perm):
    return (convert_to_tensor(lower_upper, dtype_hint=_dtypes.float32, name="lower_upper"),
            convert_to_tensor(perm, dtype_hint=_dtypes.int32, name="perm"))


def _checked_factors(lower_upper, perm, validate_args: bool):
    """(lower_upper, perm) as tensors, checked as lu_reconstruct and lu_matrix_inverse do."""
    lower_upper, perm = _factor_inputs(lower_upper, perm)
    assertions = _reconstruct_assertions(lower_upper, perm, validate_args)
    return _checked([lower_upper, perm], assertions)


def _permutation_matrices(perm, like):
    """P with P[..., i, perm[i]] = 1, so (P x)[i] = x[perm[i]], in `like`'s dtype."""
    from tensorweave.ops.array_index_ops import one_hot
    return one_hot(perm, shape(like)[-1], dtype=like.dtype.base_dtype)


def _unit_lower(lower_upper):
    """L from `lu = L + U - I`: the strict lower triangle with ones on the diagonal."""
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_matrix_ops import matrix_band_part, matrix_set_diag
    return matrix_set_diag(matrix_band_part(lower_upper, -1, 0),
                           ones(shape(lower_upper)[:-1], dtype=lower_upper.dtype.base_dtype))


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """Solves `X x = rhs` given the LU factorization of X (tf.linalg.lu_solve).

    Args:
      lower_upper: `lu` as returned by `tf.linalg.lu`, shape `[..., M, M]`.
      perm: `p` as returned by `tf.linalg.lu`, shape `[..., M]`.
      rhs: the right-hand sides, `[..., M, N]` (batch dimensions broadcast).
      validate_args: whether to check ranks and shapes at run time when they are not static.
      name: a name for the scope (default "lu_solve").

    Returns:
      The solutions `x`, shape `broadcast(batch dims) + [M, N]`.

    Raises:
      ValueError: for statically wrong ranks, non-square `lower_upper` or `rhs` rows.
    """
    from tensorweave.ops.linalg_solve_ops import matrix_triangular_solve
    with name_scope(name or "lu_solve"):
        lower_upper, perm = _factor_inputs(lower_upper, perm)
        rhs = convert_to_tensor(rhs, dtype_hint=lower_upper.dtype, name="rhs")
        assertions = _solve_assertions(lower_upper, perm, rhs, validate_args)
        lower_upper, perm, rhs = _checked([lower_upper, perm, rhs], assertions)
        permuted_rhs = matmul(_permutation_matrices(perm, lower_upper), rhs)
        return matrix_triangular_solve(
            lower_upper, matrix_triangular_solve(_unit_lower(lower_upper), permuted_rhs),
            lower=False)  # only the upper triangle is read


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """Computes the inverse from the LU factorization of a matrix (tf.linalg.lu_matrix_inverse).

    `lu_matrix_inverse(*tf.linalg.lu(X)) = tf.matrix_inverse(X)`; invertibility is not checked.

    Args:
      lower_upper: `lu` as returned by `tf.linalg.lu`, shape `[..., M, M]`.
      perm: `p` as returned by `tf.linalg.lu`, shape `[..., M]`.
      validate_args: whether to check ranks and squareness at run time when not static.
      name: a name for the scope (default "lu_matrix_inverse").

    Returns:
      The inverses, `[..., M, M]`.

    Raises:
      ValueError: for statically wrong ranks or non-square `lower_upper`.
    """
    from tensorweave.ops.array_matrix_ops import eye
    with name_scope(name or "lu_matrix_inverse"):
        lower_upper, perm = _checked_factors(lower_upper, perm, validate_args)
        dims = shape(lower_upper)
        identity_rhs = eye(dims[-1], batch_shape=dims[:-2], dtype=lower_upper.dtype.base_dtype)
        return lu_solve(lower_upper, perm, rhs=identity_rhs, validate_args=False)


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """Reconstructs matrices from their LU factorizations (tf.linalg.lu_reconstruct).

    Args:
      lower_upper: `lu` as returned by `tf.linalg.lu`, shape `[..., M, M]`.
      perm: `p` as returned by `tf.linalg.lu`, shape `[..., M]`.
      validate_args: whether to check ranks and squareness at run time when not static.
      name: a name for the scope (default "lu_reconstruct").

    Returns:
      `X` with `tf.linalg.lu(X) = (lower_upper, perm)`, shape `[..., M, M]`.

    Raises:
      ValueError: for statically wrong ranks or non-square `lower_upper`.
    """
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.array_matrix_ops import matrix_band_part
    from tensorweave.ops.misc_array_ops import invert_permutation
    with name_scope(name or "lu_reconstruct"):
        lower_upper, perm = _checked_factors(lower_upper, perm, validate_args)
        product = matmul(_unit_lower(lower_upper), matrix_band_part(lower_upper, 0, -1))
        if lower_upper.shape.ndims == 2:  # X[perm] = L U: a gather by the inverse perm (TF)
            x = gather(product, invert_permutation(perm))
        else:  # X = P^T (L U), batched
            x = matmul(_permutation_matrices(perm, lower_upper), product, transpose_a=True)
        x.set_shape(lower_upper.shape)
        return x
