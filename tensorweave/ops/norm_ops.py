"""tf.norm: vector and matrix norms composed from reductions, as TensorFlow builds them.

Vector norms (`axis` None or an int): euclidean, 1, inf and any p > 0. Matrix norms (`axis` a
pair): euclidean/fro, 1 (max column sum), inf (max row sum) and 2 (the largest singular
value: the two axes are moved last for an Svd, and the result moved back). The gradients are
those of the ops used.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import expand_dims, squeeze, transpose
from tensorweave.ops.linalg_qr_svd_ops import Svd
from tensorweave.ops.math_ops import pow  # noqa: A004 - TF's name
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import conj, sqrt
from tensorweave.ops.reduction_ops import reduce_max, reduce_sum, tf_op

__all__ = ["norm"]

_MATRIX_NORMS = ["euclidean", "fro", 1, 2, np.inf]
_VECTOR_NORMS = ["euclidean", 1, 2, np.inf]


def _check_args(ord, axis):  # noqa: A002 - TF's argument name
    """TF's validation; returns (is_matrix_norm, axis as a tuple or None)."""
    is_matrix_norm = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix_norm:
        axis = tuple(axis)
        if not isinstance(axis[0], int) or not isinstance(axis[1], int) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique "
                             f"integers, got {axis}")
        if ord not in _MATRIX_NORMS:
            raise ValueError(f"'ord' must be a supported matrix norm in {_MATRIX_NORMS}, got "
                             f"{ord}")
        return True, axis
    if not (isinstance(axis, int) or axis is None):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                         f"got {axis}")
    if (not np.isreal(ord) or ord <= 0) and ord not in _VECTOR_NORMS:
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return False, None if axis is None else (axis,)


def _matrix_2_norm(tensor, axis):
    """The largest singular value over the two `axis` dimensions, kept as size-1 dimensions.

    The two axes are moved last (perm_before), reduced, and moved back (perm_after, the
    inverse permutation): with static rank both are lists, else computed at run time."""
    from tensorweave.ops.array_creation_ops import range as _range
    from tensorweave.ops.array_index_ops import boolean_mask, scatter_nd, where_v2
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.reduction_ops import reduce_all
    rank = tensor.shape.ndims
    if rank is not None:
        positive = [a if a >= 0 else a + rank for a in axis]
        perm_before = [d for d in range(rank) if d not in positive] + positive
        perm_after = np.argsort(perm_before).tolist()
    else:
        rank = tf_op("Rank", [tensor])
        axes = convert_to_tensor(list(axis), dtype=_dtypes.int32)
        positive = where_v2(axes >= 0, axes, axes + rank)
        dims = _range(rank)
        others = tf_op("NotEqual", [expand_dims(dims, 1), positive])
        perm_before = concat([boolean_mask(dims, reduce_all(others, axis=1)), positive], 0)
        perm_after = scatter_nd(expand_dims(perm_before, 1), dims, expand_dims(rank, 0))
    s = apply_op(Svd, [transpose(tensor, perm_before)], {"compute_uv": False})[0]
    largest = reduce_max(_abs(s), axis=-1, keepdims=True)
    return transpose(expand_dims(largest, -1), perm_after)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None,  # noqa: A002
         keep_dims=None):
    """Computes the norm of vectors, matrices and tensors (TF1's tf.norm, tf.linalg.norm).

    Args:
      tensor: a Tensor of float32, float64, complex64 or complex128.
      ord: 'euclidean' (the default: the Frobenius norm for matrices, the 2-norm for
        vectors), 'fro' (matrices only), 1, 2, np.inf, or any p > 0 for vector norms.
      axis: None (the whole tensor as one vector), an int (vectors along that axis) or a
        pair of ints (matrices over those axes); negative values count from the end.
      keepdims: if True, the reduced dimensions are kept with size 1.
      name: a name for the scope (default "norm").
      keep_dims: the deprecated name of `keepdims`.

    Returns:
      The norms: a Tensor of `tensor`'s dtype (real for the matrix 2-norm of complex input).

    Raises:
      ValueError: if `ord` or `axis` is invalid, or both `keepdims` and `keep_dims` are given.
    """
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    is_matrix_norm, axis = _check_args(ord, axis)
    with name_scope(name, "norm", [tensor]):
        tensor = convert_to_tensor(tensor)
        if ord in ["fro", "euclidean", 2, 2.0]:
            if is_matrix_norm and ord in [2, 2.0]:
                result = _matrix_2_norm(tensor, axis)
            else:
                result = sqrt(reduce_sum(tensor * conj(tensor), axis, keepdims=True))
        else:
            result = _abs(tensor)
            if ord == 1:
                result = reduce_sum(result, None if axis is None else axis[0], keepdims=True)
                if is_matrix_norm:
                    result = reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if is_matrix_norm:
                    result = reduce_sum(result, axis[1], keepdims=True)
                result = reduce_max(result, None if axis is None else axis[0], keepdims=True)
            else:  # a general p-norm, p > 0
                result = pow(reduce_sum(pow(result, ord), axis, keepdims=True), 1.0 / ord)
        return result if keepdims else squeeze(result, axis)
