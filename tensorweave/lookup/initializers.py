"""tf.lookup table initializers: from key and value tensors, or from the lines of a text file.

An initializer knows its key and value dtypes and, given a table, adds the op that fills it
(LookupTableImportV2 or InitializeTableFromTextFileV2) to the graph's TABLE_INITIALIZERS
collection, which `tf.tables_initializer()` runs, as in TensorFlow.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import scopes as _scopes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import GraphKeys, add_to_collection
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import lookup_ops

__all__ = ["KeyValueTensorInitializer", "TextFileIndex", "TextFileInitializer"]


def check_table_dtypes(table, key_dtype, value_dtype) -> None:
    """TypeError unless `key_dtype` and `value_dtype` are the table's."""
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype for table, expected {table.key_dtype} but got "
                        f"{key_dtype}.")
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype for table, expected {table.value_dtype} but got "
                        f"{value_dtype}.")


class KeyValueTypes:
    """The key dtype and value dtype of a table, or of what an initializer puts in one."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dtypes.as_dtype(key_dtype)
        self._value_dtype = _dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        """The (expected) table key dtype."""
        return self._key_dtype

    @property
    def value_dtype(self):
        """The (expected) table value dtype."""
        return self._value_dtype


class TableInitializerBase(KeyValueTypes):
    """Base class of table initializers."""

    @property
    def _shared_name(self) -> str:
        """The name tables made from this initializer share (none: each table is its own)."""
        return ""


class KeyValueTensorInitializer(TableInitializerBase):
    """Table initializer given `keys` and `values` tensors (vectors of equal length)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        """Constructs a table initializer object based on keys and values tensors.

        Args:
          keys: The tensor for the keys.
          values: The tensor for the values.
          key_dtype: The `keys` data type. Used when `keys` is a python array.
          value_dtype: The `values` data type. Used when `values` is a python array.
          name: A name for the operation (optional).
        """
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        """Adds (and returns) the op that fills `table` with the keys and values.

        Args:
          table: The table to initialize.

        Returns:
          The operation that initializes the table.

        Raises:
          TypeError: when the keys and values data types do not match the table key and
            value data types.
        """
        check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        with _scopes.name_scope(self._name, values=(table.resource_handle, self._keys,
                                                    self._values)):
            init_op = apply_op(lookup_ops.LookupTableImportV2,
                               [table.resource_handle, self._keys, self._values])
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


class TextFileIndex:
    """What a text file line gives as key or value, besides a column number >= 0.

    `LINE_NUMBER` is the line's number from zero (int64); `WHOLE_LINE` the whole line (string
    or integer).
    """

    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _check_index(what: str, index: int, dtype) -> None:
    if index < -2:
        raise ValueError(f"`{what}_index` should be >= -2, received: {index}.")
    if index == TextFileIndex.LINE_NUMBER and dtype != _dtypes.int64:
        raise ValueError(f"`{what}_dtype` must be int64 if `{what}_index` is "
                         f"{TextFileIndex.LINE_NUMBER}, received: {dtype}")
    if index == TextFileIndex.WHOLE_LINE and not dtype.is_integer and dtype != _dtypes.string:
        raise ValueError(f"`{what}_dtype` should be either integer or string for "
                         f"`{what}_index` {TextFileIndex.WHOLE_LINE}, received: {dtype}")


class TextFileInitializer(TableInitializerBase):
    """Table initializer from a text file: one entry per line.

    The key and the value of a line are, per `key_index` / `value_index`, one column of the line
    split at `delimiter` (an index >= 0), the whole line (`TextFileIndex.WHOLE_LINE`) or the
    line number from zero (`TextFileIndex.LINE_NUMBER`). Empty lines are an error at run time.
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0):
        """Constructs a table initializer object to populate from a text file.

        Args:
          filename: The filename of the text file (a string or a scalar string Tensor).
          key_dtype: The `key` data type.
          key_index: the index that represents information of a line to get the table 'key'
            values from.
          value_dtype: The `value` data type.
          value_index: the index that represents information of a line to get the table
            'value' values from.
          vocab_size: The number of elements in the file, if known: only that many lines are
            read, and a shorter file is an error.
          delimiter: The delimiter to separate fields in a line (one character).
          name: A name for the operation (optional).
          value_index_offset: A number added to line-number values.

        Raises:
          ValueError: when the filename is empty, or when the table key and value data types
            do not match the expected data types.
        """
        if not isinstance(filename, Tensor) and not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key_dtype = _dtypes.as_dtype(key_dtype)
        value_dtype = _dtypes.as_dtype(value_dtype)
        _check_index("key", key_index, key_dtype)
        _check_index("value", value_index, value_dtype)
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        self._offset = value_index_offset
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        """Adds (and returns) the op that fills `table` from the text file.

        Args:
          table: The table to be initialized.

        Returns:
          The operation that initializes the table.

        Raises:
          TypeError: when the keys and values data types do not match the table key and
            value data types.
        """
        check_table_dtypes(table, self.key_dtype, self.value_dtype)
        with _scopes.name_scope(self._name, "text_file_init", (table.resource_handle,)):
            filename = convert_to_tensor(self._filename, _dtypes.string, name="asset_filepath")
            init_op = apply_op(lookup_ops.InitializeTableFromTextFileV2,
                               [table.resource_handle, filename],
                               {"key_index": self._key_index, "value_index": self._value_index,
                                "vocab_size": -1 if self._vocab_size is None
                                else self._vocab_size,
                                "delimiter": self._delimiter, "offset": self._offset})
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        if filename.op.type == "Const":
            add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return init_op

    @property
    def _shared_name(self) -> str:
        """Tables of one file read the same way share one resource, as in TensorFlow."""
        parts = [str(self._filename)]
        if self._vocab_size:
            parts.append(str(self._vocab_size))
        parts += [str(self._key_index), str(self._value_index)]
        if self._offset:
            parts.append(str(self._offset))
        return "hash_table_" + "_".join(parts)
