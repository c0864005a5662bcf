"""tf.lookup.experimental.DenseHashTable: a mutable open-addressing table (MutableDenseHashTableV2).

The table object builds its resource op; the find, insert, remove, size and export ops on its
handle, with TF1's default names and colocation, come from MutableTable (lookup/tables.py), as
for MutableHashTable. It is checkpointed as TensorFlow does it (lookup/checkpointing.py): a
tf.train.Saver saves the exported buckets as "<name>-keys" and "<name>-values" and restores
them with LookupTableImportV2. The buckets and their hashing are TensorFlow's
(kernels/dense_hash_table.py), so exports match it bucket for bucket.
"""
from __future__ import annotations

from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.lookup.tables import MutableTable
from tensorweave.ops import lookup_ops

__all__ = ["DenseHashTable"]


class DenseHashTable(MutableTable):
    """A mutable hash table with open addressing (TF1's tf.lookup.experimental.DenseHashTable).

    Two keys that are never inserted mark free buckets: `empty_key` and `deleted_key`. Values
    may be scalars or vectors (the shape of `default_value`). The table grows (doubling its
    buckets) when an insert would exceed the load factor 0.8.
    """

    _remove_dtype_error = "Signature mismatch. Keys must be dtype {}, got {}."

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        """Creates an empty `DenseHashTable` object.

        Args:
          key_dtype: the type of the key tensors.
          value_dtype: the type of the value tensors.
          default_value: The value to use if a key is missing in the table; its shape is the
            shape of every value.
          empty_key: the key to use to represent empty buckets internally. Must not be used in
            insert, remove or lookup operations.
          deleted_key: the key to use to represent deleted buckets internally. Must not be
            used in insert, remove or lookup operations and be different from `empty_key`.
          initial_num_buckets: the initial number of buckets (a power of 2, at least 4;
            default 2^17).
          name: A name for the operation (optional).
          checkpoint: if True, the contents of the table are saved to and restored from
            checkpoints (and the table is shared under its node name).
          experimental_is_anonymous: Must be False (anonymous tables are TF2-only).

        Raises:
          ValueError: if the table is anonymous.
        """
        super().__init__(key_dtype, value_dtype, experimental_is_anonymous)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype,
                                                name="default_value")
        self._value_shape = self._default_value.shape
        self._name = name
        empty = convert_to_tensor(empty_key, dtype=self._key_dtype, name="empty_key")
        deleted = convert_to_tensor(deleted_key, dtype=self._key_dtype, name="deleted_key")
        attrs = {"shared_name": "", "use_node_name_sharing": checkpoint,
                 "key_dtype": self._key_dtype, "value_dtype": self._value_dtype,
                 "value_shape": self._value_shape}
        if initial_num_buckets is not None:
            attrs["initial_num_buckets"] = initial_num_buckets
        self._resource_handle = apply_op(lookup_ops.MutableDenseHashTableV2, [empty, deleted],
                                         attrs, name=name)
        self._table_name = self._resource_handle.op.name.split("/")[-1]
        if checkpoint:
            self._add_saveable()

    def lookup(self, keys, name=None):
        """Looks up `keys` in the table, outputs the corresponding values.

        Args:
          keys: A vector (or scalar) of keys of the table's key dtype.
          name: A name for the operation (optional).

        Returns:
          A tensor of shape `keys.shape + default_value.shape`.

        Raises:
          ValueError: when `keys` do not convert to the table key dtype.
        """
        return self._find(keys, self._default_value, name)

    def insert_or_assign(self, keys, values, name=None):
        """Associates `keys` with `values`, replacing the values of keys already present (the
        same as `insert`).

        Args:
          keys: Keys to insert (a vector), of the table's key type.
          values: Values shaped `keys.shape + default_value.shape`, of the value type.
          name: A name for the operation (optional).

        Returns:
          The created Operation.

        Raises:
          ValueError: when `keys` or `values` do not convert to the table data types.
        """
        return self.insert(keys, values, name)

    def erase(self, keys, name=None):
        """Removes `keys` and their values from the table (the same as `remove`).

        Args:
          keys: A vector of keys of the table's key type.
          name: A name for the operation (optional).

        Returns:
          The created Operation.

        Raises:
          TypeError: when `keys` do not match the table key data type.
        """
        return self.remove(keys, name)

    def export(self, name=None):
        """Returns the table's raw buckets, free ones included (TensorFlow's layout).

        Args:
          name: A name for the operation (optional).

        Returns:
          Keys of shape [num_buckets, 1] (free buckets hold `empty_key`, removed entries
          `deleted_key`) and values of shape [num_buckets, value size] (zeros where free).
        """
        return super().export(name)
