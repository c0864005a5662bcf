"""Dense feature columns: what input_layer concatenates, each a [batch, width] float tensor.

`dense(cache, trainable, cols_to_vars)` builds the column's tensor (and any variables, in the
variable scope input_layer opened for it). A bucketized column is also categorical (its
bucket ids), which linear_model and crossed columns use.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

import tensorweave as tf
from tensorweave.feature_column.categorical_columns import CategoricalColumn
from tensorweave.framework import dtypes as _dtypes

__all__ = ["BucketizedColumn", "DenseColumn", "EmbeddingColumn", "IndicatorColumn",
           "NumericColumn", "SharedEmbeddingColumn"]


class DenseColumn:
    """A column input_layer can use: `width` values per example."""

    width: int

    def dense(self, cache, trainable: bool, cols_to_vars: dict):
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class NumericColumn(DenseColumn):
    """The feature `key` as floats of `shape` per example, after `normalizer_fn`."""

    key: str
    shape: tuple = (1,)
    default_value: tuple | None = None
    dtype: _dtypes.DType = _dtypes.float32
    normalizer_fn: Callable | None = None

    @property
    def name(self) -> str:
        return self.key

    @property
    def width(self) -> int:
        return int(np.prod(self.shape))

    @property
    def parse_example_spec(self) -> dict:
        return {self.key: tf.FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def transform(self, cache):
        value = cache.get(self.key)
        if isinstance(value, tf.SparseTensor):
            raise ValueError(f"The corresponding Tensor of numerical column must be a Tensor. "
                             f"SparseTensor is not supported. key: {self.key}")
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return tf.cast(value, _dtypes.float32)

    def dense(self, cache, trainable, cols_to_vars):
        value = cache.get(self)
        return tf.reshape(value, [-1, self.width])


@dataclasses.dataclass(frozen=True)
class BucketizedColumn(DenseColumn, CategoricalColumn):
    """Which of len(boundaries) + 1 buckets each value of a numeric column falls in: one-hot
    when dense, ids bucket + i * (len(boundaries) + 1) for the i-th value when categorical."""

    source_column: NumericColumn
    boundaries: tuple

    @property
    def name(self) -> str:
        return f"{self.source_column.name}_bucketized"

    @property
    def num_buckets(self) -> int:
        return (len(self.boundaries) + 1) * self.source_column.width

    @property
    def width(self) -> int:
        return self.num_buckets

    @property
    def parse_example_spec(self) -> dict:
        return self.source_column.parse_example_spec

    def transform(self, cache):
        from tensorweave.ops.bucketize_ops import bucketize
        return bucketize(cache.get(self.source_column), self.boundaries)

    def dense(self, cache, trainable, cols_to_vars):
        one_hot = tf.one_hot(cache.get(self), len(self.boundaries) + 1, dtype=_dtypes.float32)
        return tf.reshape(one_hot, [-1, self.width])

    def ids(self, cache):
        buckets = tf.cast(tf.reshape(cache.get(self), [-1, self.source_column.width]),
                          _dtypes.int64)
        rows = tf.shape(buckets, out_type=_dtypes.int64)[0]
        offsets = tf.range(self.source_column.width, dtype=_dtypes.int64) * \
            (len(self.boundaries) + 1)
        columns = tf.tile(tf.range(self.source_column.width, dtype=_dtypes.int64), [rows])
        row_ids = tf.reshape(tf.tile(tf.expand_dims(tf.range(rows), 1),
                                     [1, self.source_column.width]), [-1])
        return tf.SparseTensor(tf.stack([row_ids, columns], axis=1),
                               tf.reshape(buckets + offsets, [-1]),
                               tf.stack([rows, self.source_column.width])), None


class _OverCategorical(DenseColumn):
    """A dense view of `categorical_column`, which parses its inputs."""

    @property
    def parse_example_spec(self) -> dict:
        return self.categorical_column.parse_example_spec


@dataclasses.dataclass(frozen=True)
class IndicatorColumn(_OverCategorical):
    """A categorical column as a multi-hot vector of num_buckets: per example, the count
    (or the summed weights) of each id."""

    categorical_column: CategoricalColumn

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_indicator"

    @property
    def width(self) -> int:
        return self.categorical_column.num_buckets

    def transform(self, cache):
        ids, weights = self.categorical_column.ids(cache)
        if weights is None:
            dense_ids = tf.sparse.to_dense(ids, default_value=-1)
            one_hot = tf.one_hot(dense_ids, self.width, on_value=1.0, off_value=0.0)
            return tf.reduce_sum(one_hot, axis=[-2])
        where = tf.stack([ids.indices[:, 0], ids.values], axis=1)
        shape = tf.stack([ids.dense_shape[0], tf.constant(self.width, _dtypes.int64)])
        return tf.scatter_nd(where, tf.cast(weights.values, _dtypes.float32), shape)

    def dense(self, cache, trainable, cols_to_vars):
        return cache.get(self)


@dataclasses.dataclass(frozen=True)
class EmbeddingColumn(_OverCategorical):
    """A categorical column through a [num_buckets, dimension] table of trainable weights,
    the ids of each example combined ("mean", "sqrtn" or "sum"; an example without ids gives
    zeros), as safe_embedding_lookup_sparse does."""

    categorical_column: CategoricalColumn
    dimension: int
    combiner: str = "mean"
    initializer: Callable | None = None
    ckpt_to_load_from: str | None = None
    tensor_name_in_ckpt: str | None = None
    max_norm: float | None = None
    trainable: bool = True

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_embedding"

    @property
    def width(self) -> int:
        return self.dimension

    def transform(self, cache):
        return self.categorical_column.ids(cache)

    def dense(self, cache, trainable, cols_to_vars):
        table = self._table(trainable)
        cols_to_vars.setdefault(self, []).append(table)
        return self._looked_up(cache, table)

    def _table(self, trainable: bool):
        initializer = self.initializer or tf.truncated_normal_initializer(
            mean=0.0, stddev=1 / math.sqrt(self.dimension))
        table = tf.get_variable("embedding_weights",
                                [self.categorical_column.num_buckets, self.dimension],
                                initializer=initializer,
                                trainable=self.trainable and trainable)
        if self.ckpt_to_load_from is not None:
            tf.train.init_from_checkpoint(self.ckpt_to_load_from,
                                          {self.tensor_name_in_ckpt: table})
        return table

    def _looked_up(self, cache, table):
        ids, weights = cache.get(self)
        return tf.nn.safe_embedding_lookup_sparse(table, ids, weights, combiner=self.combiner,
                                                  max_norm=self.max_norm)


@dataclasses.dataclass(frozen=True)
class SharedEmbeddingColumn(EmbeddingColumn):
    """An embedding column whose table it shares with the other columns of one
    shared_embedding_columns call: the first input_layer to need it creates it, under the
    scope `shared_embedding_collection_name`, and puts it in that graph collection."""

    shared_embedding_collection_name: str = ""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def var_scope_name(self) -> str:
        return self.shared_embedding_collection_name

    def dense(self, cache, trainable, cols_to_vars):
        shared = tf.get_collection(self.shared_embedding_collection_name)
        table = shared[0] if shared else self._table(trainable)
        if not shared:
            tf.add_to_collection(self.shared_embedding_collection_name, table)
        cols_to_vars.setdefault(self, []).append(table)
        return self._looked_up(cache, table)
