"""Lookup-table kernels and their resources: sorted key and value arrays.

A table op (HashTableV2, MutableHashTableV2, MutableHashTableOfTensorsV2) looks up or creates
its table in the device's ResourceMgr under (container, shared_name) once per session and
outputs its handle; the other ops take the handle. A table keeps its entries as two parallel
arrays sorted by key: keys [n] and values [n] + value_shape (value_shape is () except in a
table of tensors), so a find of any number of keys is one binary search (no per-key Python
work), and an insert is one merge: new entries first (the last of repeated keys first), then
the old, deduplicated by np.unique keeping each key's first occurrence. An initializable table
(HashTableV2) starts uninitialized and is filled once; initializing it again with the same
entries is a no-op, with others an error, as in TensorFlow. Filled from key and value tensors
(InitializeTableV2, or LookupTableImportV2, which is its initialization), it refuses empty ones,
as TensorFlow's KeyValueTensorIterator does. A mutable table (MutableHashTableV2 and its table
of tensors) starts empty and takes inserts, removes and imports, empty ones included; an import
replaces the contents (a checkpoint restore). MutableDenseHashTableV2's table is in
kernels/dense_hash_table.py.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.queues import resource_handle, resource_of
from tensorweave.kernels.registry import kernel


def _text(value) -> str:
    """A key or value as TensorFlow prints it in messages (strings without b'')."""
    item = value.item() if isinstance(value, np.generic) else value
    return item.decode(errors="replace") if isinstance(item, bytes) else str(item)


def _unique_last_wins(keys: np.ndarray, values: np.ndarray):
    """Sorted unique keys with, for repeated keys, the value given last."""
    keys, values = keys[::-1], values[::-1]
    unique, first = np.unique(keys, return_index=True)
    return unique, values[first]


class TableSignature:
    """The key and value dtypes and the value shape of a table resource, and TF's checks of an
    op's dtypes and of its values' and defaults' shapes against them."""

    key_dtype: _dtypes.DType
    value_dtype: _dtypes.DType
    value_shape: tuple = ()

    def check_signature(self, key_dtype, value_dtype, arity: str) -> None:
        """The TF kernel's signature check: the op's key/value dtypes are the table's."""
        if key_dtype == self.key_dtype and value_dtype == self.value_dtype:
            return
        have = tf_name(key_dtype), tf_name(value_dtype)
        want = tf_name(self.key_dtype), tf_name(self.value_dtype)
        raise invalid_argument(f"Signature mismatch, have: {arity.format(*have)} expected: "
                               f"{arity.format(*want)}")

    def check_values(self, keys: np.ndarray, values: np.ndarray) -> None:
        """An insert's or import's values: one value of value_shape per key."""
        expected = keys.shape + self.value_shape
        if values.shape != expected:
            raise invalid_argument(f"Expected shape {dims_text(expected)} for value, got "
                                   f"{dims_text(values.shape)}")

    def check_default(self, keys: np.ndarray, default: np.ndarray) -> None:
        """A find's default: one value of value_shape for all keys, or one per key."""
        per_key = keys.shape + self.value_shape
        if default.shape != self.value_shape and default.shape != per_key:
            raise invalid_argument(f"Expected shape {dims_text(self.value_shape)} or "
                                   f"{dims_text(per_key)} for default value, got "
                                   f"{dims_text(default.shape)}")


class TableResource(TableSignature):
    """A hash table: sorted keys [n], their values [n] + value_shape, the dtypes of both."""

    initializable = False

    def __init__(self, name: str, container: str, key_dtype, value_dtype,
                 value_shape: tuple = ()):
        self.name = name
        self.container = container
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        self.value_shape = tuple(value_shape)
        self._lock = threading.Lock()
        self._keys = self._empty(key_dtype, ())
        self._values = self._empty(value_dtype, self.value_shape)

    @staticmethod
    def _empty(dtype, value_shape: tuple) -> np.ndarray:
        return np.zeros((0,) + value_shape,
                        dtype=object if dtype == _dtypes.string else dtype.as_numpy_dtype)

    def _rows(self, keys: np.ndarray, values: np.ndarray):
        """Keys as a vector and values as one row of value_shape per key."""
        return keys.reshape(-1), values.reshape((-1,) + self.value_shape)

    def size(self) -> int:
        return len(self._keys)

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        """The value of each key; `default` (one value or one per key) where it is missing."""
        self.check_default(keys, default)
        with self._lock:
            table_keys, table_values = self._keys, self._values
        out_shape = keys.shape + self.value_shape
        flat = keys.reshape(-1)
        fallback = default if default.shape == self.value_shape else \
            default.reshape((-1,) + self.value_shape)
        if not len(table_keys):
            return np.broadcast_to(fallback, (flat.size,) + self.value_shape) \
                .astype(table_values.dtype).reshape(out_shape)
        at = np.minimum(np.searchsorted(table_keys, flat), len(table_keys) - 1)
        hit = np.asarray(table_keys[at] == flat, dtype=bool)
        hit = hit.reshape(hit.shape + (1,) * len(self.value_shape))
        return np.where(hit, table_values[at], fallback).astype(table_values.dtype) \
            .reshape(out_shape)

    def export(self):
        with self._lock:
            return self._keys.copy(), self._values.copy()

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Sets each key's value; of repeated keys the last one counts."""
        self.check_values(keys, values)
        keys, values = self._rows(keys, values)
        with self._lock:
            self._keys, self._values = _unique_last_wins(
                np.concatenate([self._keys, keys]), np.concatenate([self._values, values]))

    def remove(self, keys: np.ndarray) -> None:
        """Drops the given keys; keys not in the table are ignored."""
        with self._lock:
            keep = ~np.isin(self._keys, keys.reshape(-1))
            self._keys, self._values = self._keys[keep], self._values[keep]

    def import_values(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Replaces the whole contents."""
        self.check_values(keys, values)
        with self._lock:
            self._keys, self._values = _unique_last_wins(*self._rows(keys, values))

    def initialize(self, keys: np.ndarray, values: np.ndarray) -> None:
        raise invalid_argument(f"Table {self.container} {self.name} is not initializable")


class InitializableTableResource(TableResource):
    """HashTableV2's table: filled once by an initializer, then read-only."""

    initializable = True

    def __init__(self, name, container, key_dtype, value_dtype, value_shape=()):
        super().__init__(name, container, key_dtype, value_dtype, value_shape)
        self.is_initialized = False

    def find(self, keys, default):
        if not self.is_initialized:
            raise errors.FailedPreconditionError(None, None, "Table not initialized.")
        return super().find(keys, default)

    def export(self):
        if not self.is_initialized:
            raise errors.AbortedError(None, None, "HashTable is not initialized.")
        return super().export()

    def insert(self, keys, values):
        raise errors.UnimplementedError(
            None, None, "Insert not supported by InitializableLookupTable implementations")

    def remove(self, keys):
        raise errors.UnimplementedError(
            None, None, "Remove not supported by InitializableLookupTable implementations")

    def initialize(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Fills the table; again with the same entries is a no-op, with others an error."""
        self.check_values(keys, values)
        keys, values = keys.reshape(-1), values.reshape(-1)
        order = np.argsort(keys, kind="stable")
        keys, values = keys[order], values[order]
        repeated = np.flatnonzero(np.asarray(keys[1:] == keys[:-1], dtype=bool) &
                                  np.asarray(values[1:] != values[:-1], dtype=bool))
        if repeated.size:
            i = repeated[0]
            raise errors.FailedPreconditionError(
                None, None, f"HashTable has different value for same key. Key "
                f"{_text(keys[i])} has {_text(values[i])} and trying to add value "
                f"{_text(values[i + 1])}")
        keys, first = np.unique(keys, return_index=True)
        values = values[first]
        with self._lock:
            if self.is_initialized:
                if not (np.array_equal(keys, self._keys) and
                        np.array_equal(values, self._values)):
                    raise errors.FailedPreconditionError(
                        None, None, "Table was already initialized with different data.")
                return
            self._keys, self._values = keys, values
            self.is_initialized = True

    def import_values(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Fills the table from key and value tensors, which must not be empty (checked after
        their shapes and before a second initialization, as TensorFlow does)."""
        self.check_values(keys, values)
        if not keys.size:
            raise invalid_argument("keys and values cannot be empty tensors.")
        self.initialize(keys, values)


_TF_NAMES = {_dtypes.float32: "float", _dtypes.float64: "double", _dtypes.float16: "half"}


def tf_name(dtype) -> str:
    """The dtype's name in TensorFlow's kernel messages (DataTypeString)."""
    return _TF_NAMES.get(dtype.base_dtype, dtype.base_dtype.name)


WHOLE_LINE, LINE_NUMBER = -2, -1
_private_ids = itertools.count()


def _first(mask: np.ndarray) -> int:
    """The index of the first True in `mask`, or its length."""
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else len(mask)


def _convert(tokens: np.ndarray, dtype) -> np.ndarray:
    """String fields as `dtype`; InvalidArgument naming the first field that is not one."""
    if dtype == _dtypes.string:
        return tokens
    try:
        return tokens.astype(np.bytes_).astype(dtype.as_numpy_dtype)
    except ValueError:
        for n, token in enumerate(tokens):   # only to name the bad field
            try:
                np.array([token]).astype(dtype.as_numpy_dtype)
            except ValueError:
                raise invalid_argument(f"Field {_text(token)} in line {n} is not a valid "
                                       f"{tf_name(dtype)}.") from None
        raise


def read_text_table(filename: str, key_index: int, value_index: int, vocab_size: int,
                    delimiter: str, offset: int, key_dtype, value_dtype):
    """The keys and values InitializeTableFromTextFileV2 reads from a text file.

    TensorFlow reads line by line and stops at the first bad line (empty, too few columns,
    a field that does not parse), so of several problems the earliest line's is reported. An
    empty file without a vocab_size is OutOfRange, as TensorFlow's first read fails.
    """
    if len(delimiter) != 1:
        raise invalid_argument("delimiter should be only 1 char")
    try:
        with open(filename, "rb") as f:
            raw = f.read().split(b"\n")
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{filename}; No such file or directory") \
            from None
    if raw[-1] == b"":
        raw.pop()   # the file's final newline ends the last line
    if not raw and vocab_size == -1:
        # TF counts 0 lines, then its first read hits the end; a given vocab_size is checked
        # below instead.
        raise errors.OutOfRangeError(None, None, "Read less bytes than requested")
    if vocab_size != -1:
        raw = raw[:vocab_size]
    lines = [line[:-1] if line.endswith(b"\r") else line for line in raw]
    rows = [line.split(delimiter.encode()) for line in lines]
    columns = max(key_index, value_index) + 1
    n_empty = _first(np.array([len(line) == 0 for line in lines], dtype=bool))
    n_short = _first(np.array([len(r) < columns for r in rows], dtype=bool))
    good = min(n_empty, n_short)

    def field(index, dtype):
        if index == LINE_NUMBER:
            return np.arange(good, dtype=np.int64)
        tokens = lines[:good] if index == WHOLE_LINE else [r[index] for r in rows[:good]]
        return _convert(np.array(tokens, dtype=object), dtype)
    keys, values = field(key_index, key_dtype), field(value_index, value_dtype)
    if n_empty < len(lines) and n_empty == good:
        position = sum(len(line) + 1 for line in raw[:n_empty + 1])
        raise invalid_argument(f"Invalid content in {filename}: empty line found at position "
                               f"{position}.")
    if n_short < len(lines):
        raise invalid_argument(f"Invalid number of columns in {filename} line {n_short} "
                               f"({_text(lines[n_short])}) : expected at least {columns} got "
                               f"{len(rows[n_short])}")
    if vocab_size != -1 and len(lines) < vocab_size:
        raise invalid_argument(f"Invalid vocab_size in {filename}: expected {vocab_size} but got "
                               f"{len(lines)}")
    if value_index == LINE_NUMBER:
        values = values + offset
    return keys, values


def value_shape_attr(attrs) -> tuple:
    """A table op's value_shape attr as a tuple of ints (unset: a scalar)."""
    shape = attrs.get("value_shape")
    if shape is None:
        return ()
    dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
    return tuple(int(d) for d in dims)


class TableOpKernel:
    """HashTableV2 / MutableHashTableV2: creates (or finds, when shared) the node's table."""

    resource_type = TableResource

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.container = attrs.get("container") or ""
        self.shared_name = attrs.get("shared_name") or ""
        if not self.shared_name and attrs.get("use_node_name_sharing", False):
            self.shared_name = ctx.node_name
        self.value_shape = value_shape_attr(attrs)
        self.handle = None

    def _lookup_or_create(self, ctx, create):
        """The node's table from the ResourceMgr, made by `create(name)` the first time."""
        name = self.shared_name or f"_{next(_private_ids)}_{ctx.node_name}"
        return ctx.resources.lookup_or_create(self.container, name, lambda: create(name))

    def compute(self, ctx):
        if self.handle is None:
            attrs = ctx.attrs
            self.handle = resource_handle(self._lookup_or_create(
                ctx, lambda name: self.resource_type(
                    name, self.container or "localhost", attrs["key_dtype"],
                    attrs["value_dtype"], self.value_shape)))
        return self.handle


def register_table(op_type: str, value_dtypes: dict):
    """Registers the table kernel once per key dtype, for TensorFlow's (key, value) pairs."""
    def decorate(cls):
        for key, values in value_dtypes.items():
            kernel(op_type, dtypes={"key_dtype": [key], "value_dtype": values})(cls)
        return cls
    return decorate


_FLOATS = [_dtypes.float32, _dtypes.float64]


@register_table("HashTableV2", {
    _dtypes.string: _FLOATS + [_dtypes.int32, _dtypes.int64, _dtypes.string, _dtypes.bool],
    _dtypes.int64: _FLOATS + [_dtypes.int32, _dtypes.int64, _dtypes.string],
    _dtypes.int32: _FLOATS + [_dtypes.int32, _dtypes.string]})
class HashTableKernel(TableOpKernel):
    """HashTableV2: a table filled once by an initializer op."""

    resource_type = InitializableTableResource


_MUTABLE_PAIRS = {
    _dtypes.string: _FLOATS + [_dtypes.int32, _dtypes.int64, _dtypes.bool],
    _dtypes.int64: _FLOATS + [_dtypes.int32, _dtypes.int64, _dtypes.string],
    _dtypes.int32: _FLOATS + [_dtypes.int32]}


@register_table("MutableHashTableV2", _MUTABLE_PAIRS)
class MutableHashTableKernel(TableOpKernel):
    """MutableHashTableV2: a table filled by inserts."""


@register_table("MutableHashTableOfTensorsV2", _MUTABLE_PAIRS)
class MutableHashTableOfTensorsKernel(TableOpKernel):
    """MutableHashTableOfTensorsV2: a table of vectors of the op's value_shape."""

    def __init__(self, ctx):
        super().__init__(ctx)
        if len(self.value_shape) != 1:
            raise invalid_argument(f"Default value must be a vector, got shape "
                                   f"{dims_text(self.value_shape)}")


def _table(ctx, handle, arity: str, key_attr: str = "Tin", value_attr: str = "Tout"):
    table = resource_of(handle)
    table.check_signature(ctx.attrs[key_attr], ctx.attrs[value_attr], arity)
    return table


@kernel("InitializeTableV2")
def _initialize_table(ctx, handle, keys, values):
    table = _table(ctx, handle, "resource, {0}, {1}->", "Tkey", "Tval")
    if table.initializable:
        table.import_values(keys, values)   # the same key-value fill as LookupTableImportV2
    else:
        table.initialize(keys, values)      # InvalidArgument: not initializable


@kernel("LookupTableImportV2")
def _lookup_table_import(ctx, handle, keys, values):
    _table(ctx, handle, "resource, {0}, {1}->").import_values(keys, values)


@kernel("InitializeTableFromTextFileV2")
def _initialize_table_from_text_file(ctx, handle, filename):
    table = resource_of(handle)
    attrs = ctx.attrs
    keys, values = read_text_table(
        _text(np.asarray(filename).item()), attrs["key_index"], attrs["value_index"],
        attrs.get("vocab_size", -1), attrs.get("delimiter", "\t"), attrs.get("offset", 0),
        table.key_dtype, table.value_dtype)
    table.initialize(keys, values)


@kernel("LookupTableFindV2")
def _lookup_table_find(ctx, handle, keys, default_value):
    table = _table(ctx, handle, "resource, {0}, {1}->{1}")
    return table.find(np.asarray(keys), np.asarray(default_value))


@kernel("LookupTableInsertV2")
def _lookup_table_insert(ctx, handle, keys, values):
    _table(ctx, handle, "resource, {0}, {1}->").insert(np.asarray(keys), np.asarray(values))


@kernel("LookupTableRemoveV2")
def _lookup_table_remove(ctx, handle, keys):
    table = resource_of(handle)
    table.check_signature(ctx.attrs["Tin"], table.value_dtype, "resource, {0}->")
    table.remove(np.asarray(keys))


@kernel("LookupTableSizeV2")
def _lookup_table_size(ctx, handle):
    return np.int64(resource_of(handle).size())


@kernel("LookupTableExportV2")
def _lookup_table_export(ctx, handle):
    return _table(ctx, handle, "resource->{0}, {1}", "Tkeys", "Tvalues").export()
