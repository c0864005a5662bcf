"""MutableDenseHashTableV2: an open-addressing hash table with TensorFlow's bucket layout.

The table is TensorFlow's MutableDenseHashTable, ported step for step so that exports (the raw
bucket arrays) match it bucket for bucket: keys live in a [num_buckets, 1] array whose free
buckets hold `empty_key` and whose removed entries hold `deleted_key`; values in a
[num_buckets, value_size] array (zeros where free). A key's first bucket is
`hash(key) & (num_buckets - 1)`, with hash the key itself for integers (as uint64) and
TensorFlow's legacy Hash64 for strings; collisions probe triangularly (+1, +2, +3, ...). An
insert that would push the load past `max_load_factor` (counting every key as new) first doubles
the buckets and reinserts the live entries in bucket order.

TensorFlow's quirks are kept on purpose: an insert takes the first empty *or deleted* bucket
on its probe path, so re-inserting a key after removing an earlier key of its path can leave
two entries for it (size counts both; the first one on the path wins lookups); a failing batch
keeps the keys inserted before the bad one. Keys are scalars (TensorFlow also allows vector
keys; tensorweave does not). The probing is inherently per key, so it is a Python loop.
"""
from __future__ import annotations

import threading

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.lookup import TableOpKernel, TableSignature, register_table
from tensorweave.kernels.queues import resource_handle
from tensorweave.kernels.string_hash import hash_strings

_MASK64 = (1 << 64) - 1


class DenseTableResource(TableSignature):
    """The buckets of one MutableDenseHashTable and the count of live entries."""

    initializable = False

    def __init__(self, name: str, container: str, key_dtype, value_dtype, value_shape,
                 empty_key: np.ndarray, deleted_key: np.ndarray, initial_num_buckets: int,
                 max_load_factor: float):
        if not 0 < max_load_factor < 1:
            raise invalid_argument(f"max_load_factor must be between 0 and 1, got: "
                                   f"{max_load_factor}")
        if len(value_shape) > 1:
            raise invalid_argument(f"Empty value must be a scalar or a vector, got shape "
                                   f"{dims_text(value_shape)}")
        if empty_key.ndim != 0:
            raise errors.UnimplementedError(
                None, None, "tensorweave's MutableDenseHashTable takes scalar keys only; got "
                f"empty_key of shape {dims_text(empty_key.shape)}")
        if deleted_key.shape != empty_key.shape:
            raise invalid_argument(f"Empty and deleted keys must have same shape, got shapes: "
                                   f"{dims_text(empty_key.shape)} and "
                                   f"{dims_text(deleted_key.shape)}")
        self.name, self.container = name, container
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.value_shape = tuple(value_shape)
        self.max_load_factor = np.float32(max_load_factor)   # TF compares in float
        self._strings = key_dtype == _dtypes.string
        self.empty_key, self.deleted_key = empty_key.item(), deleted_key.item()
        if self.empty_key == self.deleted_key:
            raise invalid_argument("Empty and deleted keys cannot be equal")
        self._value_size = int(np.prod(self.value_shape, dtype=np.int64))
        self._lock = threading.Lock()
        self._allocate(initial_num_buckets)

    # --- buckets -----------------------------------------------------------------------------
    def _allocate(self, num_buckets: int) -> None:
        if num_buckets < 4 or num_buckets & (num_buckets - 1):
            raise invalid_argument(f"Number of buckets must be at least 4 and a power of 2, "
                                   f"got: {num_buckets}")
        key_np = object if self._strings else self.key_dtype.as_numpy_dtype
        self._keys = np.full((num_buckets, 1), self.empty_key, dtype=key_np)
        self._values = np.zeros((num_buckets, self._value_size),
                                dtype=self.value_dtype.as_numpy_dtype)
        self._num_entries = 0

    def _hashes(self, keys: np.ndarray) -> list:
        """Each key's uint64 hash, as Python ints (integers: the key's two's complement)."""
        if self._strings:
            return [int(h) for h in hash_strings(keys, legacy=True)]
        return [int(k) & _MASK64 for k in keys.tolist()]

    def _check_key(self, key) -> None:
        if key == self.empty_key:
            raise invalid_argument("Using the empty_key as a table key is not allowed")
        if key == self.deleted_key:
            raise invalid_argument("Using the deleted_key as a table key is not allowed")

    def _probe(self, key, key_hash: int, stop_at_deleted: bool):
        """The bucket holding `key`, or the first free bucket of its path (None past all)."""
        num_buckets = len(self._keys)
        mask = num_buckets - 1
        bucket, probes = key_hash & mask, 0
        while True:
            held = self._keys[bucket, 0]
            if held == key or held == self.empty_key or (stop_at_deleted and
                                                        held == self.deleted_key):
                return bucket
            probes += 1
            bucket = (bucket + probes) & mask
            if probes >= num_buckets:
                return None

    def _insert(self, keys: np.ndarray, values: np.ndarray, skip_free: bool) -> None:
        flat_keys = keys.reshape(-1).tolist()
        rows = values.reshape(len(flat_keys), self._value_size)
        for i, (key, key_hash) in enumerate(zip(flat_keys, self._hashes(keys.reshape(-1)))):
            if skip_free and (key == self.empty_key or key == self.deleted_key):
                continue
            self._check_key(key)
            bucket = self._probe(key, key_hash, stop_at_deleted=True)
            if bucket is None:
                raise errors.InternalError(None, None,
                                           "Internal error in MutableDenseHashTable insert")
            if self._keys[bucket, 0] != key:
                self._num_entries += 1
                self._keys[bucket, 0] = key
            self._values[bucket] = rows[i]

    def _rebucket(self, num_buckets: int) -> None:
        old_keys, old_values = self._keys, self._values
        self._allocate(num_buckets)
        self._insert(old_keys[:, 0], old_values, skip_free=True)

    # --- the table interface the lookup kernels call -----------------------------------------
    def size(self) -> int:
        return self._num_entries

    def _batch(self, keys: np.ndarray) -> int:
        """The number of keys: the first dimension (1 for a scalar); keys must be a batch of
        scalars."""
        batch = 1 if keys.ndim == 0 else keys.shape[0]
        if keys.size != batch:
            raise invalid_argument(f"Expected key shape [{batch}] got {dims_text(keys.shape)}")
        return batch

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        """Each key's value; the default (one value, or one per key) where it is missing."""
        self.check_default(keys, default)
        out_shape = keys.shape + self.value_shape
        batch = self._batch(keys)
        fallback = default.reshape(-1, self._value_size)
        out = np.empty((batch, self._value_size), dtype=self._values.dtype)
        with self._lock:
            for i, (key, key_hash) in enumerate(zip(keys.reshape(-1).tolist(),
                                                    self._hashes(keys.reshape(-1)))):
                self._check_key(key)
                bucket = self._probe(key, key_hash, stop_at_deleted=False)
                if bucket is None:
                    raise errors.InternalError(
                        None, None, "Internal error in MutableDenseHashTable lookup")
                found = self._keys[bucket, 0] == key
                out[i] = self._values[bucket] if found else fallback[i % len(fallback)]
        return out.reshape(out_shape)

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Sets each key's value, growing first if all of them could be new."""
        self.check_values(keys, values)
        batch = self._batch(keys)
        with self._lock:
            pending = self._num_entries + batch
            num_buckets = len(self._keys)
            if pending > num_buckets * self.max_load_factor:
                while pending > num_buckets * self.max_load_factor:
                    num_buckets <<= 1
                self._rebucket(num_buckets)
            self._insert(keys, values, skip_free=False)

    def remove(self, keys: np.ndarray) -> None:
        """Marks each present key's bucket deleted; missing keys are ignored."""
        if keys.ndim == 0 or keys.size != keys.shape[0]:
            batch = keys.shape[0] if keys.ndim else 1
            raise invalid_argument(f"Expected key shape [{batch}] got {dims_text(keys.shape)}")
        with self._lock:
            for key, key_hash in zip(keys.tolist(), self._hashes(keys)):
                self._check_key(key)
                bucket = self._probe(key, key_hash, stop_at_deleted=False)
                if bucket is None:
                    raise errors.InternalError(
                        None, None, "Internal error in MutableDenseHashTable remove")
                if self._keys[bucket, 0] == key:
                    self._keys[bucket, 0] = self.deleted_key
                    self._num_entries -= 1

    def export(self):
        """The raw buckets: keys [num_buckets, 1] and values [num_buckets, value_size]."""
        with self._lock:
            return self._keys.copy(), self._values.copy()

    def import_values(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Takes exported buckets as they are (a checkpoint restore) and recounts entries."""
        expected = keys.shape[:-1] + (self._value_size,)
        if keys.ndim < 1 or values.shape != expected:
            raise invalid_argument(f"Expected shape {dims_text(expected)} for value, got "
                                   f"{dims_text(values.shape)}")
        with self._lock:
            self._keys = np.array(keys, dtype=self._keys.dtype).reshape(-1, 1)
            self._values = np.array(values, dtype=self._values.dtype)
            live = [k != self.empty_key and k != self.deleted_key
                    for k in self._keys[:, 0].tolist()]
            self._num_entries = int(sum(live))

    def initialize(self, keys: np.ndarray, values: np.ndarray) -> None:
        raise invalid_argument(f"Table {self.container} {self.name} is not initializable")


_FLOATS = [_dtypes.float32, _dtypes.float64]


@register_table("MutableDenseHashTableV2", {
    _dtypes.string: _FLOATS + [_dtypes.int32, _dtypes.int64, _dtypes.bool],
    _dtypes.int64: _FLOATS + [_dtypes.int32, _dtypes.int64, _dtypes.bool],
    _dtypes.int32: _FLOATS + [_dtypes.int32]})
class MutableDenseHashTableKernel(TableOpKernel):
    """MutableDenseHashTableV2: creates the table from its empty and deleted keys (once)."""

    def compute(self, ctx, empty_key, deleted_key):
        if self.handle is None:
            attrs = ctx.attrs

            def create(name):
                return DenseTableResource(
                    name, self.container or "localhost", attrs["key_dtype"],
                    attrs["value_dtype"], self.value_shape,
                    np.asarray(empty_key), np.asarray(deleted_key),
                    attrs.get("initial_num_buckets", 131072),
                    attrs.get("max_load_factor", 0.8))
            self.handle = resource_handle(self._lookup_or_create(ctx, create))
        return self.handle
