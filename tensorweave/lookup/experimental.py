"""tf.lookup.experimental: the mutable table."""
from tensorweave.lookup.tables import MutableHashTable

__all__ = ["MutableHashTable"]
