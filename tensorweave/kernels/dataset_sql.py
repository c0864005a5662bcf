"""Runtime node of tf.data.experimental.SqlDataset: a query's rows through Python's sqlite3.

In: the spec {"args": [driver, database file, query], "types": dtype names, one per column};
out: one tuple of NumPy scalars per row. Each epoch runs the query again. The checks and
conversions are TensorFlow 2.21's: its SQLite reader asks the C API for each column as the
requested type, so a value of another storage class converts as sqlite3_column_int64 /
_double / _text would. These use SQLite's own CAST (the same conversions): NULL is 0, 0.0 or
"", text gives its leading number, reals render as SQLite prints them. int8/int16/int32/
uint8/uint16/bool come from the 32-bit column value, wrapped as a C cast wraps it (bool: not
zero).
"""
from __future__ import annotations

import sqlite3

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import dataset_runtime

_SUPPORTED = ("string", "int8", "int16", "int32", "int64", "uint8", "uint16", "bool",
              "float64")
_NARROW = ("int8", "int16", "int32", "uint8", "uint16")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _cast(connection, value, affinity: str):
    """`value` converted by SQLite to the storage class `affinity` (INTEGER, REAL, TEXT)."""
    return connection.execute(f"SELECT CAST(? AS {affinity})", (value,)).fetchone()[0]


def _converter(connection, type_name: str):
    """value -> the NumPy scalar TensorFlow's reader makes of it for `type_name`."""
    if type_name == "string":
        def to_bytes(v):
            if v is None:
                return np.array(b"", dtype=object)
            if isinstance(v, float):
                v = _cast(connection, v, "TEXT")
            return np.array(v if isinstance(v, bytes) else str(v).encode(), dtype=object)
        return to_bytes
    if type_name == "float64":
        return lambda v: np.float64(0.0 if v is None else
                                    v if isinstance(v, (int, float)) else
                                    _cast(connection, v, "REAL"))

    def to_int64(v):
        if v is None:
            return 0
        if isinstance(v, int):
            return v
        return _cast(connection, v, "INTEGER")
    if type_name == "int64":
        return lambda v: np.int64(to_int64(v))
    if type_name == "bool":
        return lambda v: np.bool_(np.int64(to_int64(v)).astype(np.int32) != 0)
    dtype = np.dtype(type_name)
    return lambda v: np.int64(to_int64(v)).astype(np.int32).astype(dtype)


class _Sql(dataset_runtime.Node):
    def __init__(self, spec, args, functions):
        driver, self.database, self.query = (_text(np.asarray(args[i]).item())
                                             for i in spec["args"])
        if driver != "sqlite":
            raise errors.InvalidArgumentError(
                None, None, f"The database type, {driver}, is not supported by SqlDataset. The "
                "set of supported databases is: {'sqlite'}.")
        self.types = spec["types"]
        if any(t not in _SUPPORTED for t in self.types):
            raise errors.InvalidArgumentError(
                None, None, "Each element of `output_types_` must be one of: DT_STRING, "
                "DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_BOOL, DT_DOUBLE ")

    def __iter__(self):
        try:
            connection = sqlite3.connect(self.database)
        except sqlite3.Error as e:
            # TensorFlow 2.21 crashes (SIGSEGV) on a database it cannot open.
            raise errors.UnknownError(None, None, f"Sqlite3 error: {e}") from None
        try:
            try:
                cursor = connection.execute(self.query)
            except sqlite3.Error as e:
                code = getattr(e, "sqlite_errorcode", 1)
                raise errors.UnknownError(
                    None, None, f"Prepare() failed: [{code}] {e}: {self.query}") from None
            if len(cursor.description) != len(self.types):
                raise errors.InvalidArgumentError(
                    None, None, f"The number of columns in query ({len(cursor.description)}) "
                    f"must match the number of elements in output_types ({len(self.types)}).")
            convert = [_converter(connection, t) for t in self.types]
            for row in cursor:
                yield tuple(c(v) for c, v in zip(convert, row))
        finally:
            connection.close()

dataset_runtime.register_nodes({"sql": _Sql})
