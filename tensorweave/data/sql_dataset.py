"""tf.data.experimental.SqlDataset: the rows of an SQL query, one element per row.

TensorFlow supports the 'sqlite' driver only, and so does this (through Python's sqlite3; the
runtime is kernels/dataset_sql.py). Each element is a tuple of scalars of `output_types`, one
per column of the query; the element structure is known without running the query.
"""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import Dataset, TensorSpec
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.kernels import dataset_sql  # noqa: F401 - registers the node

__all__ = ["SqlDataset"]


class SqlDataset(Dataset):
    """A `Dataset` of the rows of a query run on a SQL database."""

    def __init__(self, driver_name, data_source_name, query, output_types):
        """Creates a `SqlDataset`.

        Args:
          driver_name: a 0-D string tensor, the database type: only "sqlite".
          data_source_name: a 0-D string tensor, the database's file name.
          query: a 0-D string tensor, the SQL query to run.
          output_types: a (tuple of) `tf.DType`, one per column of the query: string, int8,
            int16, int32, int64, uint8, uint16, bool or float64.

        The query runs when an iterator starts; an unsupported driver or dtype, a column count
        other than the number of `output_types`, or a query SQLite refuses (UnknownError)
        fail then, with TensorFlow's errors. Values convert as SQLite's C API converts them
        (NULL to 0 or "", text to its leading number, wider integers wrapping).
        """
        self._args = [convert_to_tensor(v, _dtypes.string, name=what) for what, v in (
            ("driver_name", driver_name), ("data_source_name", data_source_name),
            ("query", query))]
        self._types = nest.map_structure(_dtypes.as_dtype, output_types)
        self._structure = nest.map_structure(lambda t: TensorSpec([], t), self._types)

    def _dataset_spec(self, builder):
        return {"kind": "sql", "args": builder.args(self._args),
                "types": [t.name for t in nest.flatten(self._types)]}
