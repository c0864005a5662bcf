"""dense_to_sparse_batch: batches of dense elements of different shapes as one SparseTensor.

A SparseTensor component travels through the pipeline as three tensors (indices, values,
dense_shape), as TensorFlow's SparseTensorSpec describes it by its components; the runtime
node is in kernels/dataset_experimental.py (kind "dense_to_sparse_batch").
"""
from __future__ import annotations

from tensorweave.data import nest
from tensorweave.data.dataset_ops import (
    SparseTensorSpec,
    UnaryDataset,
    int64_arg,
    tensor_structure,
)
from tensorweave.framework import tensor_shape as _ts
from tensorweave.kernels import dataset_experimental  # noqa: F401 - registers the node


class DenseToSparseBatch(UnaryDataset):
    """`batch_size` consecutive elements (the last batch may be smaller) as one SparseTensor
    of dense shape [batch, *row_shape] holding every position of each element; a dim of
    `row_shape` that is None is the batch's largest."""

    def __init__(self, input_dataset, batch_size, row_shape):
        structure = tensor_structure(input_dataset, "dense_to_sparse_batch")
        if nest.is_nested(structure):
            types = nest.map_structure(lambda s: s.dtype, structure)
            raise TypeError("`dense_to_sparse_batch` requires an input dataset whose elements "
                            "have a single component, but the given dataset has the following "
                            f"component types: {types}.")
        row_shape = _ts.as_shape(row_shape)
        if row_shape.ndims is None:
            raise ValueError(f"Cannot convert a partially known TensorShape {row_shape} to a "
                             "Tensor.")
        self._size = int64_arg(batch_size, "batch_size")
        self._row_shape = [-1 if d is None else d for d in row_shape.as_list()]
        super().__init__(input_dataset, SparseTensorSpec(
            _ts.TensorShape([None]).concatenate(row_shape), structure.dtype))

    def _dataset_spec(self, builder):
        return self._spec(builder, "dense_to_sparse_batch", args=[builder.arg(self._size)],
                          row_shape=self._row_shape)
