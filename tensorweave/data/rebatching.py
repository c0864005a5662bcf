"""Dataset.rebatch: the rows of batched elements regrouped into batches of other sizes.

For a scalar batch_size it is unbatch().batch(batch_size, drop_remainder) without building the
rows one by one; a vector batch_size gives batch i the size batch_size[i % n] (a 0 gives an
empty batch). As in TensorFlow 2.21, the batch dimension of the element spec is known only when
every batch is sure to be full: one size (a scalar, or a vector of equal sizes) known when the
graph is built, and either drop_remainder known True or an input batch dimension known and a
multiple of that size. The runtime node is in kernels/dataset_rebatch.py.
"""
from __future__ import annotations

import numpy as np

from tensorweave.data import nest
from tensorweave.data.dataset_ops import (
    SparseTensorSpec,
    UnaryDataset,
    int64_arg,
    sparse_starts,
    tensor_structure,
)
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.kernels import dataset_rebatch  # noqa: F401 - registers the node


class Rebatch(UnaryDataset):
    def __init__(self, input_dataset, batch_size, drop_remainder=False):
        structure = tensor_structure(input_dataset, "Dataset.rebatch()")
        self._sizes = int64_arg(batch_size, "batch_sizes")
        self._drop = convert_to_tensor(drop_remainder, dtype=_dtypes.bool,
                                       name="drop_remainder")
        dim = self._static_batch_dim(structure)
        super().__init__(input_dataset, nest.map_structure(lambda s: _rebatched(s, dim),
                                                           structure))

    def _static_batch_dim(self, structure) -> int | None:
        """The batch dimension every output element is sure to have, or None."""
        sizes = constant_value(self._sizes)
        if sizes is None:
            return None
        sizes = np.asarray(sizes)
        if sizes.ndim > 1:
            raise ValueError("Invalid `batch_sizes`. Expected `batch_sizes` to be a scalar or a "
                             f"vector. Received `batch_sizes` of rank {sizes.ndim}.")
        if sizes.ndim == 1:
            if not sizes.size or np.any(sizes != sizes[0]):
                return None
            sizes = sizes[0]
        size = int(sizes)
        return None if self._may_be_partial(structure, size) else size

    def _may_be_partial(self, structure, size: int) -> bool:
        """Whether a batch may be short: TensorFlow's test on the input's batch dimensions."""
        drop = constant_value(self._drop)
        if drop is not None and bool(drop):
            return False
        known = []
        for spec in nest.flatten(structure):
            if spec.shape.ndims == 0:
                raise ValueError("Invalid `batch_sizes`. Expected dataset with rank of >= 1 but "
                                 "found a dataset with scalar elements. Fix the issue by adding "
                                 "the `batch` transformation to the dataset.")
            if spec.shape.ndims is not None and spec.shape[0].value is not None:
                known.append(spec.shape[0].value)
        if not known:
            return True
        if any(d != known[0] for d in known):
            raise ValueError(f"Invalid `input_dataset.` The batch dimension of component 0 is "
                             f"{known[0]}, while the batch dimension of component i is "
                             f"{np.asarray(known)}.")
        return size != 0 and known[0] % size != 0

    def _dataset_spec(self, builder):
        empty = [entry for s in nest.flatten(self._structure) for entry in _empty(s)]
        return self._spec(builder, "rebatch", args=builder.args([self._sizes, self._drop]),
                          sparse=sparse_starts(self._input._structure), empty=empty)


def _rebatched(spec, dim):
    """`spec` with its first dimension replaced by `dim` (TensorFlow's unbatch-then-batch)."""
    shape = spec.shape
    if shape.ndims == 0:
        raise ValueError("Unbatching a tensor is only supported for rank >= 1")
    if shape.ndims is None:
        return spec
    return type(spec)(_ts.TensorShape([dim]).concatenate(shape[1:]), spec.dtype)


def _empty(spec) -> list:
    """[shape, dtype] of each tensor of a component of a batch of no rows (0 for each unknown
    dimension): a SparseTensor's no indices, no values, and a dense shape of zeros."""
    shape = spec.shape
    if isinstance(spec, SparseTensorSpec):
        rank = shape.ndims or 0
        return [[[0, rank], "int64"], [[0], spec.dtype.name], [[rank], "int64"]]
    dims = [0] if shape.ndims is None else [0] + [d.value or 0 for d in shape[1:]]
    return [[dims, spec.dtype.name]]
