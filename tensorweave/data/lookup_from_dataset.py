"""tf.data.experimental.DatasetInitializer, table_from_dataset and index_table_from_dataset.

A DatasetInitializer fills a tf.lookup table from a dataset of scalar (key, value) pairs: its
`initialize(table)` adds an InitializeTableFromDataset op (ops/lookup_dataset_ops.py) to
TABLE_INITIALIZERS, which runs the dataset to its end when `tf.tables_initializer()` runs.
table_from_dataset makes a StaticHashTable of such pairs, and with `num_oov_buckets` a
StaticVocabularyTable, whose misses hash into buckets after the vocabulary as TensorFlow's
IdTableWithHashBuckets does (its inner table's default is -1, so a key whose value equals a
user `default_value` other than -1 is not taken for a miss there). Only TensorFlow's default
`hasher_spec`, FastHashSpec, is supported: the buckets are Fingerprint64's, as TensorFlow's.
"""
from __future__ import annotations

from tensorweave.data.dataset_ops import TensorSpec, pipeline_tensor
from tensorweave.data.transformations import AssertCardinality
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import scopes as _scopes
from tensorweave.framework.graph import GraphKeys, add_to_collection
from tensorweave.lookup.initializers import TableInitializerBase, check_table_dtypes
from tensorweave.lookup.tables import StaticHashTable, StaticVocabularyTable
from tensorweave.ops.lookup_dataset_ops import initialize_table_from_dataset

__all__ = ["DatasetInitializer", "index_table_from_dataset", "table_from_dataset"]

# TensorFlow's HasherSpec("fasthash", None), the only hasher these tables use.
FAST_HASH_SPEC = ("fasthash", None)

_ELEMENT_ERROR = ("Datasets used to initialize lookup tables must produce elements in the form "
                  "(key, value), where the keys and values are scalar tensors. ")


def _check_element_spec(spec) -> None:
    """ValueError (TypeError for a single component) unless the elements are scalar pairs."""
    if not isinstance(spec, (tuple, list)):
        raise TypeError(f"object of type '{type(spec).__name__}' has no len()")
    if len(spec) != 2:
        raise ValueError(_ELEMENT_ERROR + f"However, the given dataset produces {len(spec)} "
                         "components instead of two (key, value) components. Full dataset "
                         f"element spec: {spec}.")
    for what, component in zip(("key", "value"), spec):
        if not isinstance(component, TensorSpec):
            raise ValueError(_ELEMENT_ERROR + f"However, the given dataset produces non-Tensor "
                             f"{what}s of type {type(component)}.")
        if component.shape.ndims not in (None, 0):
            raise ValueError(_ELEMENT_ERROR + f"However, the given dataset produces non-scalar "
                             f"{what} Tensors of rank {component.shape.ndims}.")


class DatasetInitializer(TableInitializerBase):
    """Table initializer from a dataset of scalar (key, value) pairs."""

    def __init__(self, dataset):
        """Creates a table initializer from a `tf.data.Dataset`.

        Args:
          dataset: a dataset whose elements are (key, value) pairs of scalar tensors.

        Raises:
          ValueError: when the elements are not (key, value) pairs of scalars.
        """
        _check_element_spec(dataset.element_spec)
        self.dataset = dataset
        key, value = dataset.element_spec
        super().__init__(key.dtype, value.dtype)

    def initialize(self, table):
        """Adds (and returns) the op that fills `table` with the dataset's pairs.

        Args:
          table: the table to initialize.

        Returns:
          The InitializeTableFromDataset operation.

        Raises:
          TypeError: when the key and value dtypes are not the table's.
        """
        check_table_dtypes(table, self.key_dtype, self.value_dtype)
        variant = pipeline_tensor(self.dataset)[0]
        init_op = initialize_table_from_dataset(table.resource_handle, variant)
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


def table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None, default_value=None,
                       hasher_spec=FAST_HASH_SPEC, key_dtype=_dtypes.string, name=None):
    """A lookup table from a dataset of (key, value) pairs.

    Args:
      dataset: a dataset of (key, value) pairs of scalar tensors.
      num_oov_buckets: the number of buckets for keys not in the dataset (int64 values only).
      vocab_size: the number of pairs, if known: only that many are read, and a dataset with
        fewer fails the table's initialization (FailedPreconditionError).
      default_value: the value of a missing key (-1 by default for numeric values).
      hasher_spec: how keys hash into buckets; only the default (FastHashSpec).
      key_dtype: the dtype of the keys looked up (integer or string).
      name: the name scope (default "string_to_index").

    Returns:
      A StaticHashTable, or a StaticVocabularyTable with `num_oov_buckets`.

    Raises:
      ValueError: for a bad element structure, `num_oov_buckets` < 0, `vocab_size` < 1, a
        missing `default_value` for non-numeric values, or another `hasher_spec`.
      TypeError: for a `key_dtype` that is neither integer nor string.
    """
    value_dtype = DatasetInitializer(dataset).value_dtype
    if default_value is None:
        if not (value_dtype.is_integer or value_dtype.is_floating):
            raise ValueError("`default_value` must be specified when creating a table from a "
                             f"dataset that produces values of type <dtype: '{value_dtype.name}'>.")
        default_value = -1
    if num_oov_buckets < 0:
        raise ValueError("`num_oov_buckets` must be greater than or equal to 0, got "
                         f"{num_oov_buckets}.")
    if vocab_size is not None and not hasattr(vocab_size, "dtype") and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    key_dtype = _dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype.base_dtype != _dtypes.string:
        raise TypeError("`key_dtype` must be either an integer or string type, but got "
                        f"<dtype: '{key_dtype.name}'>")
    if tuple(hasher_spec) != FAST_HASH_SPEC:
        raise ValueError(f"Only the fasthash hasher_spec is supported, got {hasher_spec}.")
    if vocab_size is not None:
        dataset = AssertCardinality(dataset.take(vocab_size), vocab_size)
    with _scopes.name_scope(name, "string_to_index"):
        initializer = DatasetInitializer(dataset)
        with _scopes.name_scope(None, "hash_table"):
            if num_oov_buckets:
                return StaticVocabularyTable(initializer, num_oov_buckets,
                                             lookup_key_dtype=key_dtype)
            return StaticHashTable(initializer, default_value)


def index_table_from_dataset(dataset=None, num_oov_buckets=0, vocab_size=None,
                             default_value=-1, hasher_spec=FAST_HASH_SPEC,
                             key_dtype=_dtypes.string, name=None):
    """A table from each key of `dataset` (scalars) to its int64 position in it.

    Args: as `table_from_dataset`, for a dataset of keys.

    Returns:
      A StaticHashTable, or a StaticVocabularyTable with `num_oov_buckets`.
    """
    pairs = dataset.enumerate().map(lambda index, key: (key, index))
    return table_from_dataset(pairs, num_oov_buckets, vocab_size, default_value, hasher_spec,
                              key_dtype, name)
