"""tf.data.experimental: TF1's transformation functions (for `Dataset.apply`) and helpers.

Each `f(...)` here returns a function of a dataset, as in TensorFlow; the transformations
themselves are in data/transformations.py (data/readers.py for CSV files,
data/sparse_batching.py for dense_to_sparse_batch; group_by_reducer, rejection_resample,
from_list, RandomDataset and pad_to_cardinality have modules of their own, as have
copy_to_device, the lookup tables from datasets, SqlDataset, snapshot, get_structure and the
variant conversions). AUTOTUNE asks tf.data to pick a parallelism itself; here every
transformation runs inline, so it is accepted wherever a parallelism is.
"""
from __future__ import annotations

from tensorweave.data import transformations as _t
from tensorweave.data.cardinality_padding import pad_to_cardinality
from tensorweave.data.device_transfer import copy_to_device, prefetch_to_device
from tensorweave.data.example_readers import (
    TFRecordWriter,
    make_batched_features_dataset,
    parse_example_dataset,
)
from tensorweave.data.grouping_reducer import GroupByReducer, Reducer
from tensorweave.data.iterator_checkpoint import make_saveable_from_iterator
from tensorweave.data.list_dataset import from_list
from tensorweave.data.lookup_from_dataset import (
    DatasetInitializer,
    index_table_from_dataset,
    table_from_dataset,
)
from tensorweave.data.optional import Optional, get_next_as_optional
from tensorweave.data.optional import OptionalSpec as OptionalStructure
from tensorweave.data.options import (
    AUTOTUNE,
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ThreadingOptions,
)
from tensorweave.data.random_dataset import RandomDataset
from tensorweave.data.readers import CsvDataset, make_csv_dataset
from tensorweave.data.snapshot import snapshot
from tensorweave.data.sparse_batching import DenseToSparseBatch
from tensorweave.data.sql_dataset import SqlDataset
from tensorweave.data.structures import (
    DatasetStructure,
    SparseTensorStructure,
    Structure,
    TensorStructure,
    get_structure,
)
from tensorweave.data.transformations import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    cardinality,
    choose_from_datasets,
    get_single_element,
    sample_from_datasets,
)
from tensorweave.data.variant_dataset import from_variant, to_variant
from tensorweave.framework import dtypes as _dtypes

__all__ = [
    "AUTOTUNE", "AutoShardPolicy", "AutotuneAlgorithm", "AutotuneOptions", "DistributeOptions",
    "ExternalStatePolicy", "OptimizationOptions", "TFRecordWriter", "ThreadingOptions",
    "INFINITE_CARDINALITY", "Optional", "OptionalStructure", "get_next_as_optional",
    "UNKNOWN_CARDINALITY", "Counter", "CsvDataset", "assert_cardinality",
    "bucket_by_sequence_length", "cardinality", "choose_from_datasets", "dense_to_sparse_batch",
    "enumerate_dataset", "get_single_element", "group_by_window", "ignore_errors",
    "make_batched_features_dataset", "make_csv_dataset", "make_saveable_from_iterator",
    "map_and_batch", "parallel_interleave",
    "RandomDataset", "Reducer", "SHARD_HINT", "from_list", "group_by_reducer",
    "map_and_batch_with_legacy_function", "pad_to_cardinality", "rejection_resample",
    "parse_example_dataset", "sample_from_datasets", "scan", "shuffle_and_repeat", "take_while",
    "unbatch", "unique", "copy_to_device", "prefetch_to_device", "DatasetInitializer",
    "index_table_from_dataset", "table_from_dataset", "snapshot", "SqlDataset",
    "DatasetStructure", "SparseTensorStructure", "Structure", "TensorStructure",
    "get_structure", "enable_debug_mode", "from_variant", "to_variant",
]

# The `num_shards` placeholder of tf.distribute's auto-sharding (TensorFlow's value).
SHARD_HINT = -1


def Counter(start=0, step=1, dtype=_dtypes.int64):  # noqa: N802 - TensorFlow's name
    """A dataset of start, start + step, start + 2 * step, ... (`dtype` scalars), endless.

    Args:
      start: the first value.
      step: the increment.
      dtype: the element dtype.

    Returns:
      A `Dataset`.
    """
    return _t.counter(start, step, dtype)


def enable_debug_mode():
    """TensorFlow's tf.data debug mode runs pipelines eagerly, which graph mode cannot.

    Raises:
      ValueError: always, as TensorFlow 2.21 does outside eager mode.
    """
    raise ValueError("`enable_debug_mode() is only supported in eager mode.")


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """`map(map_func)` then `batch(batch_size, drop_remainder)`, fused where exact (the
    parallelism arguments are hints: the pipeline runs inline).

    Raises:
      ValueError: if both `num_parallel_batches` and `num_parallel_calls` are given.
    """
    _one_parallelism("map_and_batch", num_parallel_batches, num_parallel_calls)
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder)


def map_and_batch_with_legacy_function(map_func, batch_size, num_parallel_batches=None,
                                       drop_remainder=False, num_parallel_calls=None):
    """TF1's map_and_batch through a `Defun`-style function: here the same as
    `map_and_batch` (the same traced function, as `map_with_legacy_function`)."""
    _one_parallelism("map_and_batch_with_legacy_function", num_parallel_batches,
                     num_parallel_calls)
    return map_and_batch(map_func, batch_size, num_parallel_batches, drop_remainder)


def _one_parallelism(api: str, num_parallel_batches, num_parallel_calls) -> None:
    """TensorFlow's ValueError when both parallelism arguments are set (0 counts as set)."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError(f"`{api}` allows only one of `num_parallel_batches` and "
                         "`num_parallel_calls` to be set, but `num_parallel_batches` was set to "
                         f"{num_parallel_batches} and `num_parallel_calls` as set to "
                         f"{num_parallel_calls}.")


def dense_to_sparse_batch(batch_size, row_shape):
    """Batches consecutive elements of different shapes into `tf.SparseTensor`s.

    Each batch of `batch_size` elements (the last one may be smaller) becomes one SparseTensor
    of dense shape `[batch, *row_shape]` holding every position of each element (zeros
    included) in row-major order; a `None` dim of `row_shape` is the batch's largest.

    Args:
      batch_size: an int64 scalar: the number of consecutive elements in a batch.
      row_shape: a `tf.TensorShape` or list of dims (None: unknown), the dense shape of one
        row. Each element must have its rank and no larger dims.

    Returns:
      A function from a dataset of single-component elements to the batched dataset.

    Raises:
      TypeError: when applied to a dataset whose elements have several components.
      ValueError: for a negative dim or a row_shape of unknown rank.
      InvalidArgumentError: (at run time) for an element of another rank, or a batch size
        below one; DataLossError for an element larger than `row_shape`.
    """
    return lambda dataset: DenseToSparseBatch(dataset, batch_size, row_shape)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """`interleave(map_func, cycle_length, block_length)`: the same order as TensorFlow's
    deterministic (sloppy=False) parallel interleave; `sloppy` only allows another order."""
    del sloppy, buffer_output_elements, prefetch_input_elements
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """`shuffle(buffer_size, seed)` then `repeat(count)`: reshuffled every epoch."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def unbatch():
    """Splits each element into the slices of its first dimension (`Dataset.unbatch`)."""
    return lambda dataset: dataset.unbatch()


def ignore_errors(log_warning=False):
    """Drops the elements whose computation raises an error (`Dataset.ignore_errors`)."""
    return lambda dataset: dataset.ignore_errors(log_warning)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """Groups elements by the int64 `key_func(element)` into windows of `window_size` (or
    `window_size_func(key)`) elements; `reduce_func(key, window_dataset)` returns the dataset
    each full window (and each last partial one, by ascending key) becomes.

    Raises:
      ValueError: unless exactly one of window_size and window_size_func is given.
    """
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size,
                                                   window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """Batches elements whose `element_length_func` falls into the same bucket of
    `bucket_boundaries`, `bucket_batch_sizes[bucket]` at a time, padded.

    Raises:
      ValueError: if `len(bucket_batch_sizes) != len(bucket_boundaries) + 1`.
    """
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)


def scan(initial_state, scan_func):
    """`scan_func(state, element) -> (new_state, output)` over the elements, from
    `initial_state`; the outputs are the new elements."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def take_while(predicate):
    """The elements before the first for which `predicate` is False."""
    return lambda dataset: dataset.take_while(predicate)


def enumerate_dataset(start=0):
    """(int64 index, element) pairs, the index from `start`."""
    return lambda dataset: dataset.enumerate(start)


def unique():
    """The first occurrence of each element (one int32, int64 or string component)."""
    return lambda dataset: dataset.unique()


def group_by_reducer(key_func, reducer):
    """Groups elements by the int64 scalar `key_func(element)` and folds each group with
    `reducer` (a `Reducer`): one output element per key, in ascending key order, once the
    input is exhausted.

    Raises:
      ValueError: when `key_func` does not return an int64 scalar.
      TypeError: when `reducer.reduce_func` changes the state's dtypes.
    """
    return lambda dataset: GroupByReducer(dataset, key_func, reducer)


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """(class, element) pairs resampled so the classes `class_func(element)` follow
    `target_dist` (`Dataset.rejection_resample`; `initial_dist` None: estimated)."""
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist,
                                                      seed)


def assert_cardinality(expected_cardinality):
    """The same elements; iterating raises FailedPreconditionError as soon as their number
    is known to differ from `expected_cardinality` (which cardinality() then reports)."""
    return lambda dataset: _t.AssertCardinality(dataset, expected_cardinality)
