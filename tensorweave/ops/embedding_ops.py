"""tf.nn.embedding_lookup: rows of an embedding table, possibly sharded over several tensors.

With one table the lookup is a GatherV2 colocated with the table (its gradient is an
IndexedSlices, so optimizers update only the looked-up rows). With a list of shards, ids are
assigned to shards by the partition strategy ("mod": id % n; "div": contiguous ranges), routed
with DynamicPartition, gathered on each shard and put back in order with ParallelDynamicStitch.
A PartitionedVariable is its list of parts; as in TensorFlow the default strategy is still
"mod", although partitioners split contiguously ("div" is the strategy that matches them).
`max_norm` clips each looked-up embedding to that L2 norm.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import colocate_with, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.sliced_variables import PartitionedVariable

__all__ = ["embedding_lookup"]


def _clip(params, ids, max_norm):
    """Rows of `params` (the trailing dims beyond ids' rank) clipped to L2 norm `max_norm`."""
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_ops import rank
    from tensorweave.ops.clip_ops import clip_by_norm
    if max_norm is None:
        return params
    ids_rank = convert_to_tensor(ids).get_shape().ndims
    params_rank = convert_to_tensor(params).get_shape().ndims
    if ids_rank and params_rank:
        axes = list(range(ids_rank, params_rank))
    else:
        axes = range_(ids_rank or rank(ids), params_rank or rank(params))
    return clip_by_norm(params, max_norm, axes=axes)


def _total_rows(params, dtype):
    """The number of rows over all shards (a constant when the shapes say so)."""
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.reduction_ops import reduce_sum
    dims = [_ts.dimension_value(p.get_shape()[0]) if p.get_shape().ndims else None
            for p in params]
    if all(d is not None for d in dims) and sum(dims):
        return constant(sum(dims), dtype)
    sizes = []
    for p, d in zip(params, dims):
        if d is not None:
            sizes.append(d)
        else:
            with colocate_with(p):
                sizes.append(shape(p)[0])
    return reduce_sum(cast(stack(sizes), dtype))


def _assign_shards(flat_ids, params, partition_strategy):
    """(shard of each id, its row within the shard)."""
    from tensorweave.ops.array_index_ops import where
    from tensorweave.ops.math_ops import maximum
    n = len(params)
    if partition_strategy == "mod":
        return flat_ids % n, flat_ids // n
    if partition_strategy == "div":
        total = _total_rows(params, flat_ids.dtype)
        ids_per_partition = total // n
        extras = total % n
        shard = maximum(flat_ids // (ids_per_partition + 1),
                        (flat_ids - extras) // ids_per_partition)
        row = where(shard < extras, flat_ids % (ids_per_partition + 1),
                    (flat_ids - extras) % ids_per_partition)
        return shard, row
    raise ValueError(f"Unrecognized partition strategy: {partition_strategy}. Must be one of "
                     "either `mod` or `div`.")


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """Looks up `ids` in a list of embedding tensors (tf.nn.embedding_lookup).

    Args:
      params: a Tensor or Variable (the whole table), a list of them (shards whose first
        dimensions add up to the vocabulary; all other dimensions equal), or a
        PartitionedVariable (its parts are the shards).
      ids: an int32/int64 Tensor of ids into the (concatenated) table.
      partition_strategy: "mod" (id p lives in shard p % n) or "div" (shards hold contiguous
        ranges; the first total % n shards hold one extra id). Ignored for one shard.
      name: the name scope (default "embedding_lookup").
      validate_indices: deprecated and ignored.
      max_norm: if set, embeddings with a larger L2 norm are scaled down to it.

    Returns:
      A Tensor of shape ids.shape + params[0].shape[1:] and params' dtype.

    Raises:
      ValueError: for empty `params` or an unknown partition strategy.
    """
    from tensorweave.ops.array_creation_ops import range as range_
    from tensorweave.ops.array_index_ops import gather
    from tensorweave.ops.array_join_ops import concat
    from tensorweave.ops.array_ops import identity, reshape, shape, size
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.partition_ops import dynamic_partition, parallel_dynamic_stitch
    del validate_indices
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, PartitionedVariable):
        params = list(params)
    if isinstance(params, (list, tuple)) and not params:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    params = list(params) if isinstance(params, (list, tuple)) else [params]
    with name_scope(name, "embedding_lookup") as name:
        # Variables stay as they are (a dense read of each would copy it); anything else
        # (an array, a list) becomes a tensor, as TensorFlow converts it.
        params = [p if hasattr(p, "_as_graph_element") or hasattr(p, "op") else
                  convert_to_tensor(p, name="params") for p in params]
        n = len(params)
        ids = convert_to_tensor(ids, name="ids")
        if n == 1:
            with colocate_with(params[0]):
                result = _clip(gather(params[0], ids, name=name), ids, max_norm)
            return identity(result)  # the result itself carries no colocation constraint
        flat_ids = reshape(ids, [-1])
        original_indices = range_(size(flat_ids))
        shard, new_ids = _assign_shards(flat_ids, params, partition_strategy)
        shard = cast(shard, _dtypes.int32)
        gather_ids = dynamic_partition(new_ids, shard, n)
        pindices = dynamic_partition(original_indices, shard, n)
        partitioned = []
        for p in range(n):
            with colocate_with(params[p]):
                partitioned.append(gather(params[p], gather_ids[p]))
        ret = parallel_dynamic_stitch(pindices, partitioned, name=name)
        element_shape = params[0].get_shape()[1:]
        for p in params[1:]:
            element_shape = element_shape.merge_with(p.get_shape()[1:])
        if element_shape.is_fully_defined():
            element_dims = element_shape.as_list()
        else:
            with colocate_with(params[0]):
                element_dims = shape(params[0])[1:]
        ret = reshape(ret, concat([shape(ids), element_dims], 0))
        ret.set_shape(ids.get_shape().concatenate(element_shape))
        return _clip(ret, ids, max_norm)
