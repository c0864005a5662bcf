"""tf.lookup tables: StaticHashTable, StaticVocabularyTable and experimental.MutableHashTable.

A table object owns one table resource op (HashTableV2, or MutableHashTableV2 and for vector
values MutableHashTableOfTensorsV2) and builds the find, size, insert, remove and export ops on
its handle, with TF1's default op names and dtype checks. As in TensorFlow, a mutable table
(MutableTable: MutableHashTable, DenseHashTable) colocates its find, insert, size and export ops
with the table op, but not its remove op; a static table colocates none. A mutable table is
checkpointed as in TensorFlow (lookup/checkpointing.py).
StaticVocabularyTable adds out-of-vocabulary buckets in the graph as TensorFlow does: a key the
table misses gets `table size + Fingerprint64(key as string) mod num_oov_buckets`.
"""
from __future__ import annotations

import contextlib
import uuid

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import scopes as _scopes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.lookup.checkpointing import CheckpointedTable
from tensorweave.lookup.initializers import KeyValueTypes
from tensorweave.ops import lookup_ops

__all__ = ["StaticHashTable", "StaticVocabularyTable", "MutableHashTable"]


class LookupInterface(KeyValueTypes):
    """A lookup table that persists across steps: its dtypes, name and resource handle."""

    _export_scope = "{}_Export"   # the default name scope of export()

    @property
    def name(self):
        """The name of the table (its resource op's last name component)."""
        return self._table_name

    @property
    def resource_handle(self):
        """The table's resource handle Tensor."""
        return self._resource_handle

    def _create_table_op(self, op_def, shared_name, use_node_name_sharing=False, **attrs):
        handle = apply_op(op_def, [], {"shared_name": shared_name or "",
                                       "use_node_name_sharing": use_node_name_sharing,
                                       "key_dtype": self._key_dtype,
                                       "value_dtype": self._value_dtype, **attrs},
                          name=self._name)
        self._resource_handle = handle
        self._table_name = handle.op.name.split("/")[-1]

    def _colocated(self):
        """The scope of the ops on the table's handle: TensorFlow colocates a static table's
        ops with nothing (a MutableTable overrides this)."""
        return contextlib.nullcontext()

    def _check_keys(self, keys):
        if keys.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: "
                            f"{keys.dtype}")

    def size(self, name=None):
        """Computes the number of elements in this table.

        Args:
          name: A name for the operation (optional).

        Returns:
          A scalar int64 tensor (0 while an initializable table is not initialized).
        """
        with _scopes.name_scope(name, f"{self.name}_Size", [self.resource_handle]), \
                self._colocated():
            return apply_op(lookup_ops.LookupTableSizeV2, [self.resource_handle])

    def export(self, name=None):
        """Returns tensors of all keys and values in the table (in key order).

        Args:
          name: A name for the operation (optional).

        Returns:
          A pair of vectors: the keys and their values.
        """
        with _scopes.name_scope(name, self._export_scope.format(self.name),
                                [self.resource_handle]), self._colocated():
            return tuple(apply_op(lookup_ops.LookupTableExportV2, [self.resource_handle],
                                  {"Tkeys": self._key_dtype, "Tvalues": self._value_dtype}))

    def __getitem__(self, keys):
        """Looks up `keys` in a table, outputs the corresponding values."""
        return self.lookup(keys)


class StaticHashTable(LookupInterface):
    """A generic hash table that is immutable once initialized.

    In graph mode run `table.initializer` (or `tf.tables_initializer()`) before looking up;
    a lookup in a table not initialized fails with FailedPreconditionError.
    """

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        """Creates a non-initialized `HashTable` object.

        Args:
          initializer: The table initializer to use (KeyValueTensorInitializer or
            TextFileInitializer); it gives the key and value types.
          default_value: The value to use if a key is missing in the table.
          name: A name for the operation (optional).
          experimental_is_anonymous: Must be False (anonymous tables are TF2-only).

        Raises:
          TypeError: if `default_value` does not convert to the value dtype.
          ValueError: if `default_value` is not a scalar.
        """
        if experimental_is_anonymous:
            raise ValueError("experimental_is_anonymous tables are not supported in graph "
                             "mode by tensorweave.")
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._initializer = initializer
        self._name = name or "hash_table"
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._default_value.shape.merge_with(TensorShape([]))
        # A shared name, so every kernel of this table finds one resource.
        shared_name = initializer._shared_name or f"hash_table_{uuid.uuid4()}"
        self._create_table_op(lookup_ops.HashTableV2, shared_name)
        self._init_op = initializer.initialize(self)

    @property
    def default_value(self):
        """The default value of the table."""
        return self._default_value

    @property
    def initializer(self):
        """The op that initializes the table."""
        return self._init_op

    def lookup(self, keys, name=None):
        """Looks up `keys` in the table, outputs the corresponding values.

        Args:
          keys: A Tensor of keys, of any shape and of the table's key dtype.
          name: A name for the operation (optional).

        Returns:
          A Tensor of the keys' shape: each key's value, or `default_value`.

        Raises:
          TypeError: when `keys` doesn't match the table key dtype.
        """
        self._check_keys(keys)
        with _scopes.name_scope(name, f"{self.name}_Lookup",
                                (self.resource_handle, keys, self._default_value)):
            values = apply_op(lookup_ops.LookupTableFindV2,
                              [self.resource_handle, keys, self._default_value])
        values.set_shape(keys.shape)
        return values



class StaticVocabularyTable(LookupInterface):
    """A string-or-integer to id table that hashes out-of-vocabulary keys into buckets.

    A key not in the table gets `Fingerprint64(str(key)) % num_oov_buckets + vocab_size`, as
    in TensorFlow, so the ids are TensorFlow's.
    """

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        """Constructs a `StaticVocabularyTable` object.

        Args:
          initializer: A table initializer (int64 values, string or int64 keys), or None to
            use only the out-of-vocabulary buckets.
          num_oov_buckets: Number of buckets for out-of-vocabulary keys (> 0).
          lookup_key_dtype: Data type of keys passed to `lookup` (defaults to the
            initializer's key dtype, else string); integer keys are cast to int64.
          name: A name for the operation (optional).
          experimental_is_anonymous: Must be False (anonymous tables are TF2-only).

        Raises:
          ValueError: when `num_oov_buckets` is not positive.
          TypeError: when lookup_key_dtype or initializer.key_dtype are not integer or
            string, or initializer.value_dtype is not int64.
        """
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if name:
            name = name.rstrip("/")
        if initializer:
            if lookup_key_dtype is None:
                lookup_key_dtype = initializer.key_dtype
            lookup_key_dtype = _dtypes.as_dtype(lookup_key_dtype)
            supported = (_dtypes.int64, _dtypes.string)
            if initializer.key_dtype not in supported:
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), "
                                f"but got {initializer.key_dtype}.")
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                kind = "integer" if lookup_key_dtype.is_integer else "non-integer"
                raise TypeError(f"Invalid `key_dtype`, expected {kind} but got "
                                f"{initializer.key_dtype}.")
            if initializer.value_dtype != _dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`, expected {_dtypes.int64} but got "
                                f"{initializer.value_dtype}.")
            self._table = StaticHashTable(initializer, default_value=-1)
            name = name or self._table.name
        else:
            lookup_key_dtype = _dtypes.string
            self._table = None
            name = name or "hash_bucket"
        if not lookup_key_dtype.is_integer and lookup_key_dtype != _dtypes.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got "
                            f"{lookup_key_dtype}")
        self._num_oov_buckets = num_oov_buckets
        self._table_name = name.split("/")[-1]
        super().__init__(lookup_key_dtype, _dtypes.int64)

    @property
    def resource_handle(self):
        """The underlying table's handle (None without an initializer)."""
        return self._table.resource_handle if self._table is not None else None

    @property
    def initializer(self):
        """The op that initializes the table (a NoOp without an initializer)."""
        if self._table is not None:
            return self._table.initializer
        from tensorweave.ops.control_flow_ops import no_op
        with _scopes.name_scope(None, "init"):
            return no_op()

    def size(self, name=None):
        """The number of ids: the table's entries plus `num_oov_buckets`."""
        with _scopes.name_scope(name, f"{self.name}_Size"):
            if self._table is not None:
                table_size = self._table.size()
            else:
                table_size = convert_to_tensor(0, dtype=_dtypes.int64)
            return table_size + self._num_oov_buckets

    def lookup(self, keys, name=None):
        """Looks up `keys`; keys not in the table go to hash buckets after the vocabulary.

        Args:
          keys: A Tensor of keys of `lookup_key_dtype`, any shape.
          name: Optional name for the op.

        Returns:
          An int64 Tensor of the keys' shape.

        Raises:
          TypeError: when `keys` doesn't match the table key data type.
        """
        from tensorweave.ops.array_index_ops import where_v2
        from tensorweave.ops.math_ops import add, not_equal
        from tensorweave.ops.math_unary_ops import cast
        from tensorweave.ops.string_hash_ops import string_to_hash_bucket_fast
        from tensorweave.ops.string_ops import as_string
        self._check_keys(keys)
        values = keys
        if self._table is not None and self._table.key_dtype == _dtypes.int64:
            values = cast(values, _dtypes.int64)
        with _scopes.name_scope(name, f"{self.name}_Lookup"):
            strings = values if values.dtype == _dtypes.string else as_string(values)
            buckets = string_to_hash_bucket_fast(strings, num_buckets=self._num_oov_buckets,
                                                 name="hash_bucket")
            if self._table is None:
                return buckets
            ids = self._table.lookup(values)
            buckets = add(buckets, self._table.size())
            is_id_non_default = not_equal(ids, self._table.default_value)
            return where_v2(is_id_non_default, ids, buckets)


class MutableTable(CheckpointedTable, LookupInterface):
    """What MutableHashTable and DenseHashTable share: the find, insert and remove ops on the
    handle, with TensorFlow's names, dtype checks and colocation with the table op.

    `_remove_dtype_error` is TensorFlow's TypeError message for keys of another dtype given to
    `remove`, formatted with the table's and the keys' dtypes; DenseHashTable has its own.
    """

    _export_scope = "{}_lookup_table_export_values"
    _remove_dtype_error = "Dtype of argument `keys` must be {}, received: {}"

    def __init__(self, key_dtype, value_dtype, experimental_is_anonymous: bool):
        """Checks the constructor argument both tables share (graph mode has no anonymous
        tables) and records the dtypes."""
        if experimental_is_anonymous:
            raise ValueError("experimental_is_anonymous tables are not supported in graph "
                             "mode by tensorweave.")
        super().__init__(key_dtype, value_dtype)

    def _colocated(self):
        """TensorFlow colocates a mutable table's find, insert, size and export with it."""
        return _scopes.colocate_with(self.resource_handle)

    def _find(self, keys, default, name):
        """The LookupTableFindV2 of `keys` (converted to the key dtype), `default` for misses."""
        with _scopes.name_scope(name, f"{self.name}_lookup_table_find",
                                (self.resource_handle, keys, default)):
            keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
            with self._colocated():
                return apply_op(lookup_ops.LookupTableFindV2,
                                [self.resource_handle, keys, default])

    def insert(self, keys, values, name=None):
        """Associates `keys` with `values`.

        Args:
          keys: Keys to insert, any shape, of the table's key type.
          values: Values of the table's value type, shaped as the keys followed by the shape
            of `default_value`.
          name: A name for the operation (optional).

        Returns:
          The created Operation.

        Raises:
          ValueError: when `keys` or `values` do not convert to the table data types.
        """
        with _scopes.name_scope(name, f"{self.name}_lookup_table_insert",
                                [self.resource_handle, keys, values]):
            keys = convert_to_tensor(keys, self._key_dtype, name="keys")
            values = convert_to_tensor(values, self._value_dtype, name="values")
            with self._colocated():
                return apply_op(lookup_ops.LookupTableInsertV2,
                                [self.resource_handle, keys, values])

    def remove(self, keys, name=None):
        """Removes `keys` and their values from the table; keys not in it are ignored.

        Args:
          keys: Keys to remove, of rank 1 or more, of the table's key type.
          name: A name for the operation (optional).

        Returns:
          The created Operation.

        Raises:
          TypeError: when `keys` do not match the table key data type.
          ValueError: when `keys` is a scalar.
        """
        if not isinstance(keys, Tensor):
            # TensorFlow takes only tensors here; a list or array converts as for lookup.
            keys = convert_to_tensor(keys, dtype=self._key_dtype)
        if keys.dtype != self._key_dtype:   # as in TF, a reference dtype does not match
            raise TypeError(self._remove_dtype_error.format(self._key_dtype, keys.dtype))
        # Unlike its other ops, TensorFlow does not colocate a remove with the table.
        with _scopes.name_scope(name, f"{self.name}_lookup_table_remove",
                                (self.resource_handle, keys, self._default_value)):
            return apply_op(lookup_ops.LookupTableRemoveV2, [self.resource_handle, keys])


class MutableHashTable(MutableTable):
    """A generic mutable hash table, filled with `insert`.

    The table starts empty (no initializer). Values are scalars, or vectors when
    `default_value` is one (a MutableHashTableOfTensorsV2). With `checkpoint=True` a
    tf.train.Saver saves its contents as "<name>-keys" and "<name>-values" and a restore
    replaces them.
    """

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True, experimental_is_anonymous=False):
        """Creates an empty `MutableHashTable` object.

        Args:
          key_dtype: the type of the key tensors.
          value_dtype: the type of the value tensors.
          default_value: The value to use if a key is missing in the table: a scalar, or a
            vector whose shape every value has.
          name: A name for the operation (optional).
          checkpoint: if True, the contents of the table are saved to and restored from
            checkpoints (under "<name>-keys" and "<name>-values"), and the table is shared
            under its node name.
          experimental_is_anonymous: Must be False (anonymous tables are TF2-only).

        Raises:
          ValueError: if the table is anonymous.
        """
        super().__init__(key_dtype, value_dtype, experimental_is_anonymous)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        value_shape = self._default_value.shape
        self._name = name
        if value_shape.ndims == 0:
            self._create_table_op(lookup_ops.MutableHashTableV2, None,
                                  use_node_name_sharing=checkpoint)
        else:
            self._create_table_op(lookup_ops.MutableHashTableOfTensorsV2, None,
                                  use_node_name_sharing=checkpoint, value_shape=value_shape)
        if checkpoint:
            self._add_saveable()

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """Looks up `keys` in the table, outputs the corresponding values.

        Args:
          keys: Keys to look up, any shape, convertible to the table's key dtype.
          dynamic_default_values: Values for missing keys: one default (the shape of
            `default_value`) or one per key (the shape of the result); `default_value` when
            None.
          name: A name for the operation (optional).

        Returns:
          A tensor of the keys' shape followed by the shape of `default_value`.

        Raises:
          ValueError: when `keys` do not convert to the table key dtype.
        """
        return self._find(keys, self._default_value if dynamic_default_values is None
                          else dynamic_default_values, name)
