"""tf.nn.embedding_lookup_sparse and tf.nn.safe_embedding_lookup_sparse: one combined embedding
per row of a SparseTensor of ids (the bag-of-features input of TF1 recommender models).

As in TensorFlow 2.21: without weights, one table and no `max_norm`, the rows are combined
straight from the table by a sparse segment reduction (whose gradient is an IndexedSlices, so
optimizers update only the looked-up rows); otherwise the distinct ids are looked up with
`embedding_lookup` (sharding, `max_norm`), weighted and combined by segment sums. The safe
variant flattens ids of rank > 2 to rank 2, drops invalid ids (< 0) and, except for "sum",
non-positive weights, gives empty rows a zero (or `default_id`'s) embedding and restores the
leading dimensions.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.sliced_variables import PartitionedVariable
from tensorweave.ops.sparse_segment_ops import (
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
)

__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]

_SPARSE_COMBINERS = {"sum": sparse_segment_sum, "mean": sparse_segment_mean,
                     "sqrtn": sparse_segment_sqrt_n}


def _as_param_list(params) -> list:
    if isinstance(params, PartitionedVariable):
        return list(params)
    return params if isinstance(params, list) else [params]


def _weighted_combine(embeddings, idx, segment_ids, weights, combiner, name):
    """sum_i w_i e_i per segment, divided by sum w_i ("mean") or sqrt(sum w_i^2) ("sqrtn")."""
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import expand_dims, rank, reshape, shape
    from tensorweave.ops.math_ops import div_no_nan, pow
    from tensorweave.ops.math_segment_ops import segment_sum
    from tensorweave.ops.math_unary_ops import cast, sqrt
    if segment_ids.dtype != _dtypes.int32:
        segment_ids = cast(segment_ids, _dtypes.int32)
    embeddings = gather(embeddings, idx)
    original_dtype = embeddings.dtype
    if embeddings.dtype in (_dtypes.float16, _dtypes.bfloat16):
        embeddings = cast(embeddings, _dtypes.float32)   # accumulate low precision in float32
    if weights.dtype != embeddings.dtype:
        weights = cast(weights, embeddings.dtype)
    weights_shape = shape(weights)
    ones_shape = expand_dims(rank(embeddings) - 1, 0)
    static_weights_shape = weights.shape
    weights = reshape(weights, concat([weights_shape, ones(ones_shape, dtype=_dtypes.int32)],
                                      0))
    if embeddings.shape.ndims is not None:
        weights.set_shape(static_weights_shape.concatenate([1] * (embeddings.shape.ndims - 1)))
    embeddings = embeddings * weights
    if combiner == "sum":
        result = segment_sum(embeddings, segment_ids, name=name)
    else:
        total = segment_sum(embeddings, segment_ids)
        if combiner == "mean":
            norm = segment_sum(weights, segment_ids)
        else:
            norm = sqrt(segment_sum(pow(weights, 2), segment_ids))
        result = div_no_nan(total, norm, name=name)
    return cast(result, original_dtype) if result.dtype != original_dtype else result


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None, allow_fast_lookup=False):
    """Combined embeddings of the ids in each row of a SparseTensor (TF1's
    tf.nn.embedding_lookup_sparse).

    For row r with ids i_k and weights w_k (1 without `sp_weights`) the result is
    sum_k w_k params[i_k], divided by sum_k w_k ("mean") or sqrt(sum_k w_k^2) ("sqrtn").

    Args:
      params: an embedding table, a list of shards of one, or a PartitionedVariable.
      sp_ids: an N x M int64 SparseTensor of ids, rows in order (the first index column is the
        row of the result).
      sp_weights: None, or a SparseTensor of float weights with sp_ids' indices.
      partition_strategy: "mod" or "div", how ids are sharded over a list of params.
      name: the name scope (default "embedding_lookup_sparse").
      combiner: "sum", "mean" (default) or "sqrtn".
      max_norm: if set, embeddings are clipped to this L2 norm before combining.
      allow_fast_lookup: look rows up straight from the table when possible.

    Returns:
      A dense Tensor of shape [number of rows] + params.shape[1:].

    Raises:
      ValueError: for an unknown combiner.
      TypeError: if `sp_ids` is not a SparseTensor or `sp_weights` neither None nor one.
    """
    from tensorweave.ops.array_index_ops import unique
    from tensorweave.ops.array_slicing_ops import strided_slice
    from tensorweave.ops.embedding_ops import embedding_lookup
    from tensorweave.ops.math_unary_ops import cast
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    params = _as_param_list(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"sp_weights must be either None or SparseTensor,got "
                            f"{type(sp_weights)}")
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)
    with name_scope(name, "embedding_lookup_sparse") as scope:
        segment_ids = convert_to_tensor(strided_slice(sp_ids.indices, [0, 0], [0, 1],
                                                      shrink_axis_mask=2, end_mask=1),
                                        name="segment_ids")
        ids = sp_ids.values
        # Straight from the table only where it lives on this device (else a colocated
        # gather, as embedding_lookup makes).
        fast = len(params) == 1 and max_norm is None and \
            getattr(params[0], "device", None) == segment_ids.device and \
            (allow_fast_lookup or sp_weights is None)
        if fast:
            embeddings = params[0]
            idx = ids
        else:
            ids, idx = unique(ids)
            embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                          max_norm=max_norm)
        if sp_weights is not None:
            return _weighted_combine(embeddings, idx, segment_ids, sp_weights.values, combiner,
                                     scope)
        if segment_ids.dtype not in (_dtypes.int32, _dtypes.int64):
            segment_ids = cast(segment_ids, _dtypes.int32)
        return _SPARSE_COMBINERS[combiner](embeddings, idx, segment_ids, name=scope,
                                           sparse_gradient=fast and not allow_fast_lookup)


def _retain_both(sparse_ids, sparse_weights, keep):
    from tensorweave.ops.sparse_reshape_ops import sparse_retain
    sparse_ids = sparse_retain(sparse_ids, keep)
    if sparse_weights is not None:
        sparse_weights = sparse_retain(sparse_weights, keep)
    return sparse_ids, sparse_weights


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None,
                                 allow_fast_lookup=False):
    """`embedding_lookup_sparse` that tolerates invalid ids, empty rows and ids of any rank
    (TF1's tf.nn.safe_embedding_lookup_sparse).

    Ids < 0 are dropped, and so (except for the "sum" combiner) are entries whose weight is
    not positive. A row left without ids gets the embedding of `default_id`, or zeros.

    Args:
      embedding_weights: an embedding table, a list of shards or a PartitionedVariable.
      sparse_ids: an int64 SparseTensor of shape [d_0, ..., d_{n-1}, k] of ids.
      sparse_weights: None, or a float SparseTensor of weights with sparse_ids' indices.
      combiner: "sum", "mean" (default) or "sqrtn".
      default_id: the id whose embedding empty rows get (default: zeros).
      name: the name scope (default "embedding_lookup").
      partition_strategy: "div" (default) or "mod".
      max_norm: if set, embeddings are clipped to this L2 norm before combining.
      allow_fast_lookup: passed on to embedding_lookup_sparse.

    Returns:
      A dense Tensor of shape [d_0, ..., d_{n-1}] + embedding_weights.shape[1:].

    Raises:
      ValueError: if `embedding_weights` is None or empty, or for an unknown combiner.
    """
    from tensorweave.ops.array_creation_ops import ones_like, zeros_like
    from tensorweave.ops.array_index_ops import gather, where
    from tensorweave.ops.array_join_ops import concat, stack
    from tensorweave.ops.array_ops import reshape, shape, size
    from tensorweave.ops.array_slicing_ops import slice as slice_
    from tensorweave.ops.array_tile_pad_ops import tile
    from tensorweave.ops.math_ops import greater, greater_equal, logical_and
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.reduction_ops import reduce_prod
    from tensorweave.ops.sparse_reshape_ops import sparse_fill_empty_rows, sparse_reshape
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    embedding_weights = _as_param_list(embedding_weights)
    if len(embedding_weights) < 1:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    embedding_weights = [w if isinstance(w, Tensor) and dtype in (None, w.dtype.base_dtype)
                         else convert_to_tensor(w, dtype=dtype) for w in embedding_weights]
    with name_scope(name, "embedding_lookup") as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = _ts.dimension_value(original_shape.shape[0])
        rank = size(original_shape) if rank_dim is None else rank_dim
        sparse_ids = sparse_reshape(sparse_ids, [
            reduce_prod(slice_(original_shape, [0], [rank - 1])),
            gather(original_shape, rank - 1)])
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values,
                                          sparse_ids.dense_shape)
        valid = greater_equal(sparse_ids.values, 0)
        if sparse_weights is not None:
            valid = logical_and(valid, ones_like(sparse_weights.values, dtype=_dtypes.bool))
        sparse_ids, sparse_weights = _retain_both(sparse_ids, sparse_weights, valid)
        if combiner != "sum" and sparse_weights is not None:
            sparse_ids, sparse_weights = _retain_both(
                sparse_ids, sparse_weights, greater(sparse_weights.values, 0))
        sparse_ids, is_row_empty = sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(
            embedding_weights, sparse_ids, sparse_weights, combiner=combiner,
            partition_strategy=partition_strategy, name=None if default_id is None else scope,
            max_norm=max_norm, allow_fast_lookup=allow_fast_lookup)
        if default_id is None:
            is_row_empty = tile(reshape(is_row_empty, [-1, 1]), stack([1, shape(result)[1]]))
            result = where(is_row_empty, zeros_like(result), result, name=scope)
        final = reshape(result, concat([
            slice_(cast(original_shape, _dtypes.int32), [0], [rank - 1]),
            slice_(shape(result), [1], [-1])], 0))
        final.set_shape(_ts.unknown_shape(None if rank_dim is None else rank_dim - 1)
                        .concatenate(result.shape[1:]))
        return final
