"""tf.lookup.experimental: the mutable tables."""
from tensorweave.lookup.dense_hash_table import DenseHashTable
from tensorweave.lookup.tables import MutableHashTable

__all__ = ["DenseHashTable", "MutableHashTable"]
