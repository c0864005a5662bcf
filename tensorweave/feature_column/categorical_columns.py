"""Categorical feature columns: raw features to sparse int64 ids in [0, num_buckets).

Each column's `ids(cache)` returns (ids, weights or None), SparseTensors of the batch's rows;
`transform(cache)` makes the ids once per input_layer / linear_model call (the cache keeps
them). Dense string inputs drop "" and dense integer inputs drop -1 (TensorFlow's "missing"
values) on their way to sparse. Vocabulary lookups and hashing are TensorFlow's, so the ids
match TensorFlow's for the same inputs.
"""
from __future__ import annotations

import dataclasses

import tensorweave as tf
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.sparse_tensor import SparseTensor

__all__ = ["CategoricalColumn", "CrossedColumn", "HashedCategoricalColumn",
           "IdentityCategoricalColumn", "VocabularyFileCategoricalColumn",
           "VocabularyListCategoricalColumn", "WeightedCategoricalColumn", "sparse_input"]


def sparse_input(tensor, ignore_value=None):
    """`tensor` as a SparseTensor without its `ignore_value` entries (by default "" for
    strings and -1 for numbers: TensorFlow's missing values)."""
    if isinstance(tensor, SparseTensor):
        return tensor
    if ignore_value is None:
        ignore_value = "" if tensor.dtype == _dtypes.string else -1
    present = tf.not_equal(tensor, tf.constant(ignore_value, tensor.dtype))
    indices = tf.where(present)
    return SparseTensor(indices, tf.gather_nd(tensor, indices),
                        tf.shape(tensor, out_type=_dtypes.int64))


def _with_values(sparse, values):
    return SparseTensor(sparse.indices, values, sparse.dense_shape)


class CategoricalColumn:
    """A column of ids: `num_buckets`, `ids(cache)` and the parsing spec of its inputs."""

    num_buckets: int

    def ids(self, cache):
        """(SparseTensor of int64 ids, SparseTensor of float weights or None)."""
        return cache.get(self), None


class _OneFeatureColumn(CategoricalColumn):
    """A categorical column of the one feature `key`, parsed as a VarLenFeature of `dtype`."""

    @property
    def name(self) -> str:
        return self.key

    @property
    def parse_example_spec(self) -> dict:
        return {self.key: tf.VarLenFeature(self.dtype)}


@dataclasses.dataclass(frozen=True)
class IdentityCategoricalColumn(_OneFeatureColumn):
    """The input integers are the ids; out-of-range ones become `default_value`, or fail
    the step when it is None."""

    key: str
    num_buckets: int
    default_value: int | None = None
    dtype = _dtypes.int64   # (not a field: identity ids are always int64)

    def transform(self, cache):
        sparse = sparse_input(cache.get(self.key))
        if not sparse.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: "
                             f"{sparse.dtype}")
        values = tf.cast(sparse.values, _dtypes.int64)
        if self.default_value is None:
            checks = [tf.assert_non_negative(values, message=f"Negative id in {self.key}"),
                      tf.assert_less(values, tf.constant(self.num_buckets, _dtypes.int64),
                                  message=f"Id of {self.key} out of range "
                                          f"[0, {self.num_buckets})")]
            with tf.control_dependencies(checks):
                values = tf.identity(values)
        else:
            inside = tf.logical_and(
                tf.greater_equal(values, 0),
                tf.less(values, self.num_buckets))
            values = tf.where(inside, values, tf.fill(
                tf.shape(values), tf.constant(self.default_value,
                                                            _dtypes.int64)))
        return _with_values(sparse, values)


@dataclasses.dataclass(frozen=True)
class VocabularyListCategoricalColumn(_OneFeatureColumn):
    """Ids are positions in `vocabulary_list`; others `default_value` (-1: dropped) or one of
    `num_oov_buckets` hash buckets after the vocabulary."""

    key: str
    vocabulary_list: tuple
    dtype: _dtypes.DType
    default_value: int = -1
    num_oov_buckets: int = 0

    @property
    def num_buckets(self) -> int:
        return len(self.vocabulary_list) + self.num_oov_buckets

    def transform(self, cache):
        keys = tf.constant(list(self.vocabulary_list), self.dtype)
        initializer = tf.lookup.KeyValueTensorInitializer(
            keys, tf.range(len(self.vocabulary_list), dtype=_dtypes.int64))
        return _looked_up(cache, self.key, self.dtype, initializer, self.num_oov_buckets,
                          self.default_value)


@dataclasses.dataclass(frozen=True)
class VocabularyFileCategoricalColumn(_OneFeatureColumn):
    """Ids are line numbers of `vocabulary_file` (its first `vocabulary_size` lines);
    others `default_value` or one of `num_oov_buckets` hash buckets."""

    key: str
    vocabulary_file: str
    vocabulary_size: int
    dtype: _dtypes.DType
    default_value: int = -1
    num_oov_buckets: int = 0

    @property
    def num_buckets(self) -> int:
        return self.vocabulary_size + self.num_oov_buckets

    def transform(self, cache):
        key_dtype = _dtypes.int64 if self.dtype.is_integer else _dtypes.string
        initializer = tf.lookup.TextFileInitializer(self.vocabulary_file, key_dtype,
                                          tf.lookup.TextFileIndex.WHOLE_LINE, _dtypes.int64,
                                          tf.lookup.TextFileIndex.LINE_NUMBER,
                                          vocab_size=self.vocabulary_size)
        return _looked_up(cache, self.key, self.dtype, initializer, self.num_oov_buckets,
                          self.default_value)


def _looked_up(cache, key, dtype, initializer, num_oov_buckets, default_value):
    """The sparse input of `key` mapped through a table of `initializer`: unknown keys get
    an out-of-vocabulary bucket, else `default_value` (entries of -1 are dropped)."""
    sparse = sparse_input(cache.get(key))
    if sparse.dtype.is_integer != dtype.is_integer:
        raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. key: {key}, "
                         f"column dtype: {dtype}, tensor dtype: {sparse.dtype}")
    values = tf.cast(sparse.values, _dtypes.int64) if dtype.is_integer else sparse.values
    if num_oov_buckets:
        table = tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets)
    else:
        table = tf.lookup.StaticHashTable(initializer, default_value)
    ids = table.lookup(values)
    if num_oov_buckets or default_value >= 0:
        return _with_values(sparse, ids)
    kept = tf.reshape(tf.where(tf.greater_equal(ids, 0)), [-1])
    return SparseTensor(tf.gather(sparse.indices, kept), tf.gather(ids, kept),
                        sparse.dense_shape)


@dataclasses.dataclass(frozen=True)
class HashedCategoricalColumn(_OneFeatureColumn):
    """Ids are Fingerprint64 of the value (integers as their decimal strings) modulo
    `hash_bucket_size`, TensorFlow's StringToHashBucketFast."""

    key: str
    hash_bucket_size: int
    dtype: _dtypes.DType = _dtypes.string

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size

    def transform(self, cache):
        sparse = sparse_input(cache.get(self.key))
        values = sparse.values if sparse.dtype == _dtypes.string else tf.as_string(sparse.values)
        return _with_values(sparse, tf.strings.to_hash_bucket_fast(values, self.hash_bucket_size,
                                                               name="lookup"))


@dataclasses.dataclass(frozen=True)
class CrossedColumn(CategoricalColumn):
    """The hashed cross of `keys` (feature names or categorical columns), as TensorFlow's
    SparseCross: every combination of one value per key, hashed into `hash_bucket_size`."""

    keys: tuple
    hash_bucket_size: int
    hash_key: int | None = None

    @property
    def name(self) -> str:
        return "_X_".join(sorted(k if isinstance(k, str) else k.name for k in self.keys))

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size

    @property
    def parse_example_spec(self) -> dict:
        spec = {}
        for key in self.keys:
            spec.update({key: tf.VarLenFeature(_dtypes.string)} if isinstance(key, str)
                        else key.parse_example_spec)
        return spec

    def transform(self, cache):
        # A raw feature goes in as it is: SparseCross crosses sparse inputs before dense
        # ones, so densifying or sparsifying one would change the hashes.
        inputs = [cache.get(k) if isinstance(k, str) else k.ids(cache)[0] for k in self.keys]
        return tf.sparse.cross_hashed(inputs, num_buckets=self.hash_bucket_size,
                                   hash_key=self.hash_key)


@dataclasses.dataclass(frozen=True)
class WeightedCategoricalColumn(CategoricalColumn):
    """`categorical_column`'s ids, each weighted by the entry of feature `weight_feature_key`
    at the same position."""

    categorical_column: CategoricalColumn
    weight_feature_key: str
    dtype: _dtypes.DType = _dtypes.float32

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def num_buckets(self) -> int:
        return self.categorical_column.num_buckets

    @property
    def parse_example_spec(self) -> dict:
        return {**self.categorical_column.parse_example_spec,
                self.weight_feature_key: tf.VarLenFeature(self.dtype)}

    def transform(self, cache):
        weights = sparse_input(cache.get(self.weight_feature_key), ignore_value=0)
        return _with_values(weights, tf.cast(weights.values, self.dtype))

    def ids(self, cache):
        return self.categorical_column.ids(cache)[0], cache.get(self)
