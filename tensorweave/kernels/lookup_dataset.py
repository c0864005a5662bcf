"""Kernel of InitializeTableFromDataset: a table filled from a pipeline's (key, value) pairs.

In: a table handle and a pipeline variant (`DatasetValue`) of scalar (key, value) elements of
the table's dtypes; the pipeline is run to its end. Out: nothing; the table holds the pairs, as
`InitializableTableResource.initialize` checks them (a repeated key with another value, or a
second initialization with other entries, is FailedPreconditionError).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.kernels.queues import resource_of
from tensorweave.kernels.registry import kernel


def _column(values: list, dtype) -> np.ndarray:
    """A vector of `dtype` (strings as an object array, as tables keep them)."""
    if dtype == _dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = [np.asarray(v).item() for v in values]
        return out
    return np.asarray(values, dtype=dtype.as_numpy_dtype).reshape(-1)


@kernel("InitializeTableFromDataset")
def _initialize_table_from_dataset(ctx, handle, dataset):
    table = resource_of(handle)
    keys, values = [], []
    for key, value in dataset.make_node():
        keys.append(key)
        values.append(value)
    table.initialize(_column(keys, table.key_dtype), _column(values, table.value_dtype))
