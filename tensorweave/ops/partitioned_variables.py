"""Partitioners: how many parts `get_variable(..., partitioner=...)` splits a variable into.

A partitioner is a callable `(shape: TensorShape, dtype: DType) -> list of ints`, one count per
dimension, at most one of them greater than 1; `get_variable` then makes that many parts along
that axis (see ops/sliced_variables.py). The three here compute TensorFlow 2.21's counts for
the same shapes and dtypes; `create_partitioned_variables` is TF1's older list-returning form.
"""
from __future__ import annotations

import math

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts

__all__ = ["create_partitioned_variables", "variable_axis_size_partitioner",
           "min_max_variable_partitioner", "fixed_size_partitioner"]


def _element_bytes(dtype, bytes_per_string_element: int) -> int:
    dtype = _dtypes.as_dtype(dtype)
    if dtype.base_dtype == _dtypes.string:
        return bytes_per_string_element
    return dtype.size


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner keeping each part of a variable below `max_shard_bytes` (TF1's
    tf.variable_axis_size_partitioner).

    The variable is split along `axis` only; when even one slice along it is larger than
    `max_shard_bytes`, every slice becomes a part of its own. `max_shards` caps the count.

    Args:
      max_shard_bytes: the largest size a part should have, in bytes.
      axis: the axis to split along.
      bytes_per_string_element: the assumed size of one element of a string variable.
      max_shards: the largest number of parts (None: no limit).

    Returns:
      A partitioner for `variable_scope` and `get_variable`.

    Raises:
      ValueError: a byte count or `max_shards` is not positive, or (when called) the shape
        is not a fully defined TensorShape.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(
            "Both max_shard_bytes and bytes_per_string_element must be positive. "
            f"Currently, max_shard_bytes is {max_shard_bytes} and"
            f"bytes_per_string_element is {bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, _ts.TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        axis_dim = _ts.dimension_value(shape[axis])
        bytes_per_slice = shape.num_elements() / axis_dim * \
            _element_bytes(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(axis_dim / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions = [1] * shape.ndims
        partitions[axis] = axis_shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner giving each part at least `min_slice_size` bytes, in at most
    `max_partitions` parts (TF1's tf.min_max_variable_partitioner).

    Args:
      max_partitions: the largest number of parts.
      axis: the axis to split along.
      min_slice_size: the smallest size of a part, in bytes.
      bytes_per_string_element: the assumed size of one element of a string variable.

    Returns:
      A partitioner for `variable_scope` and `get_variable`; calling it raises ValueError
      when the variable has no dimension `axis`.
    """
    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is "
                             f"only {shape}")
        total_bytes = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(_ts.dimension_value(shape[axis]), max_partitions,
                                      int(math.ceil(total_bytes / min_slice_size))))
        return partitions

    return _partitioner


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner splitting a variable into `num_shards` parts along `axis`, or one part
    per slice if it has fewer (TF1's tf.fixed_size_partitioner).

    Args:
      num_shards: the number of parts.
      axis: the axis to split along.

    Returns:
      A partitioner for `variable_scope` and `get_variable`.
    """
    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, _ts.dimension_value(shape[axis]))
        return partitions

    return _partitioner


def call_partitioner(partitioner, shape, dtype) -> list:
    """The partitioner's counts per dimension, checked: at most one greater than 1."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but "
                         f"instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, (list, tuple)):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    if len(slicing) != shape.ndims:
        raise ValueError(f"Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {slicing} vs. {shape}")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, "
                         f"partitioning: {slicing}")
    return slicing


def slice_dim_and_num_slices(slicing) -> tuple:
    """(axis, count) of the split; (0, 1) when nothing is split."""
    for dim, count in enumerate(slicing):
        if count > 1:
            return dim, count
    return 0, 1


def create_partitioned_variables(shape, slicing, initializer, dtype=_dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """Creates the parts of a variable split as `slicing` says (deprecated TF1 API; use
    `get_variable` with a partitioner).

    The parts are named `<name>/part_<i>`; if the split is uneven the first parts are one
    larger. A callable `initializer` is called once per part with the part's shape.

    Args:
      shape: the full variable's shape, a list of ints (rank at least 1).
      slicing: the number of parts per dimension, at most one of them greater than 1.
      initializer: a Tensor of `shape`, a value, or an initializer.
      dtype: the variables' dtype (ignored when `initializer` is a Tensor).
      trainable: also add the parts to TRAINABLE_VARIABLES.
      collections: the collections of the parts (default [GLOBAL_VARIABLES]).
      name: the full variable's name (default "PartitionedVariable", made unique).
      reuse: True to reuse existing parts; None inherits the scope's reuse.

    Returns:
      The list of part Variables.

    Raises:
      ValueError: `shape` and `slicing` differ in length, the rank is 0, the slicing splits
        more than one dimension, or the variable scope has a custom getter.
    """
    from tensorweave.ops import variable_scope
    if len(shape) != len(slicing):
        raise ValueError("The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with variable_scope.variable_scope(name, "PartitionedVariable", reuse=reuse):
        partitioned = variable_scope.get_partitioned_variable(
            None, shape, dtype, initializer, trainable, collections, lambda **_: slicing)
    return list(partitioned)
