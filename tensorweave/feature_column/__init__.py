"""tf.feature_column (TF1): columns that turn raw features into a model's dense inputs.

Numeric, bucketized, categorical (identity, vocabulary list or file, hash bucket), crossed
and weighted columns, used through indicator and embedding columns by `input_layer`, or
directly by `linear_model`; `make_parse_example_spec` gives tf.parse_example's spec. Names,
variable names, ids and values are TensorFlow's. Not provided: the sequence_* columns.
"""
from __future__ import annotations

import os

import numpy as np

from tensorweave.feature_column.categorical_columns import (
    CategoricalColumn, CrossedColumn, HashedCategoricalColumn, IdentityCategoricalColumn,
    VocabularyFileCategoricalColumn, VocabularyListCategoricalColumn,
    WeightedCategoricalColumn)
from tensorweave.feature_column.dense_columns import (BucketizedColumn, EmbeddingColumn,
                                                      IndicatorColumn, NumericColumn,
                                                      SharedEmbeddingColumn)
from tensorweave.feature_column.feature_layers import (input_layer, linear_model,
                                                       make_parse_example_spec)
from tensorweave.framework import dtypes as _dtypes

__all__ = ["bucketized_column", "categorical_column_with_hash_bucket",
           "categorical_column_with_identity", "categorical_column_with_vocabulary_file",
           "categorical_column_with_vocabulary_list", "crossed_column", "embedding_column",
           "indicator_column", "input_layer", "linear_model", "make_parse_example_spec",
           "numeric_column", "shared_embedding_columns", "weighted_categorical_column"]


def numeric_column(key, shape=(1,), default_value=None, dtype=_dtypes.float32,
                   normalizer_fn=None):
    """The feature `key`: `shape` numbers per example (cast to float32), after
    `normalizer_fn`; `default_value` fills examples without it when parsing."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    if any(d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    if default_value is not None:
        default_value = np.broadcast_to(np.asarray(default_value, dtype.as_numpy_dtype),
                                        shape)
        default_value = tuple(default_value.reshape(-1).tolist())
    return NumericColumn(_key(key), shape, default_value, dtype, normalizer_fn)


def bucketized_column(source_column, boundaries):
    """The bucket of each value of numeric `source_column` among sorted `boundaries`."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). "
                         f"Given: {source_column}")
    if not isinstance(boundaries, (list, tuple)) or not boundaries:
        raise ValueError(f"boundaries must be a sorted list. boundaries: {boundaries}")
    if any(b >= a for a, b in zip(boundaries[1:], boundaries)):
        raise ValueError(f"boundaries must be a sorted list. boundaries: {boundaries}")
    return BucketizedColumn(source_column, tuple(float(b) for b in boundaries))


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer feature `key` as its own ids in [0, num_buckets); an id outside is
    `default_value`, or fails the step when that is None."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), "
                         f"column_name {key}")
    return IdentityCategoricalColumn(_key(key), int(num_buckets), default_value)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                            num_oov_buckets=0):
    """Feature `key` as positions in `vocabulary_list`; other values get `default_value`
    (-1: no id) or one of `num_oov_buckets` hash buckets after the vocabulary."""
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: "
                         f"{key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, "
                         f"column_name: {key}")
    strings = all(isinstance(v, (str, bytes)) for v in vocabulary_list)
    vocabulary_dtype = _dtypes.string if strings else _dtypes.int64
    dtype = vocabulary_dtype if dtype is None else _dtypes.as_dtype(dtype)
    if dtype.is_integer != vocabulary_dtype.is_integer:
        raise ValueError(f"dtype {dtype} and vocabulary dtype {vocabulary_dtype} do not "
                         f"match, column_name: {key}")
    _check_oov(key, num_oov_buckets, default_value)
    return VocabularyListCategoricalColumn(_key(key), tuple(vocabulary_list), dtype,
                                           default_value, num_oov_buckets)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                            num_oov_buckets=0, default_value=None,
                                            dtype=_dtypes.string):
    """Feature `key` as line numbers in `vocabulary_file` (the first `vocabulary_size`
    lines; all of them when None); other values as for the vocabulary list."""
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        if not os.path.exists(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with open(vocabulary_file, "rb") as f:
            vocabulary_size = sum(1 for _ in f)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    default_value = -1 if default_value is None else default_value
    _check_oov(key, num_oov_buckets, default_value)
    return VocabularyFileCategoricalColumn(_key(key), vocabulary_file, int(vocabulary_size),
                                           _dtypes.as_dtype(dtype), default_value,
                                           num_oov_buckets)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=_dtypes.string):
    """Feature `key` hashed into `hash_bucket_size` ids (integers hashed as strings)."""
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: "
                         f"{hash_bucket_size}, key: {key}")
    dtype = _dtypes.as_dtype(dtype)
    if dtype != _dtypes.string and not dtype.is_integer:
        raise ValueError(f"dtype must be string or integer. dtype: {dtype}, column_name: "
                         f"{key}")
    return HashedCategoricalColumn(_key(key), int(hash_bucket_size), dtype)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """The hashed cross of `keys` (feature names or categorical columns other than hashed
    ones): one id per combination of their values, in `hash_bucket_size` buckets."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: "
                         f"{hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, CategoricalColumn)):
            raise ValueError(f"Unsupported key type. All keys must be either string, or "
                             f"categorical column except _HashedCategoricalColumn. Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for "
                             "crossing. Hashing before crossing will increase probability of "
                             "collision. Instead, use the feature name as a string. Given: "
                             f"{key}")
    return CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=_dtypes.float32):
    """`categorical_column`'s ids weighted by feature `weight_feature_key`."""
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column. Given: "
                         f"{categorical_column}")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


def indicator_column(categorical_column):
    """`categorical_column` as a multi-hot dense vector of its num_buckets."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"Unsupported input type. Input must be a CategoricalColumn. Given: "
                         f"{categorical_column}")
    return IndicatorColumn(categorical_column)


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None,
                     ckpt_to_load_from=None, tensor_name_in_ckpt=None, max_norm=None,
                     trainable=True, use_safe_embedding_lookup=True):
    """`categorical_column` through a trainable [num_buckets, dimension] embedding, each
    example's ids combined by `combiner`; the table may start from a checkpoint."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or "
                         "none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: "
                         f"{categorical_column.name}")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn', 'sum'. Given: {combiner}")
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"Unsupported input type. Input must be a CategoricalColumn. Given: "
                         f"{categorical_column}")
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer,
                           ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable)


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True,
                             use_safe_embedding_lookup=True):
    """Embedding columns of `categorical_columns` (all with the same num_buckets) that share
    one table, collected under `shared_embedding_collection_name` (by default the columns'
    sorted names joined by "_", then "_shared_embedding")."""
    columns = list(categorical_columns)
    if not columns:
        raise ValueError("categorical_columns must not be empty.")
    embedding_column(columns[0], dimension, combiner, initializer, ckpt_to_load_from,
                     tensor_name_in_ckpt, max_norm)   # the same argument checks
    for column in columns[1:]:
        if not isinstance(column, CategoricalColumn):
            raise ValueError(f"All categorical_columns must be subclasses of "
                             f"_CategoricalColumn. Given: {column}")
        if column.num_buckets != columns[0].num_buckets:
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must "
                             f"have the same number of buckets. Given column: {columns[0]} "
                             f"with buckets: {columns[0].num_buckets} does not match column: "
                             f"{column} with buckets: {column.num_buckets}")
    name = shared_embedding_collection_name or \
        "_".join(sorted(c.name for c in columns)) + "_shared_embedding"
    return [SharedEmbeddingColumn(c, int(dimension), combiner, initializer, ckpt_to_load_from,
                                  tensor_name_in_ckpt, max_norm, trainable,
                                  shared_embedding_collection_name=name) for c in columns]


def _key(key) -> str:
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Given: {key}")
    return key


def _check_oov(key, num_oov_buckets, default_value) -> None:
    if num_oov_buckets < 0:
        raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    if num_oov_buckets and default_value != -1:
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")

