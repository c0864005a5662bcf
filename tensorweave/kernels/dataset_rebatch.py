"""Runtime node of Dataset.rebatch: the rows of the input's batches regrouped into new batches.

In: the spec's input, whose element components share their first (batch) dimension; params
[batch_sizes (an int64 scalar or vector), drop_remainder (bool)]; "sparse", where each
SparseTensor's three components start; "empty", the [shape, dtype] of each component of a
batch of no rows. Out: TensorFlow 2.21's RebatchDatasetV2 order: batch i holds the next
batch_sizes[i % n] rows, an input element sliced where a batch ends inside it (a SparseTensor
keeps its dense shape after the first dimension); a batch of size 0 is emitted without reading
input; the last batch is short unless drop_remainder, and there is none when no row is left. A
failed input element (or one whose components' batch sizes differ) is passed on in place of
the batch it fell in: the rows gathered for that batch are dropped and the next batch has the
same size (TF 2.21).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.kernels import dataset_runtime

_END = object()


class _Rebatch(dataset_runtime.UnaryNode):
    passes_errors = True

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.sizes = [int(s) for s in np.ravel(self.params[0])]
        if not self.sizes or min(self.sizes) < 0:
            raise errors.InvalidArgumentError(
                None, None, "Invalid `batch_sizes`: expected a scalar or a non-empty vector of "
                f"non-negative sizes, got {self.sizes}.")
        self.drop = bool(self.params[1])
        self.starts = frozenset(spec.get("sparse") or ())
        self.empty = tuple(np.zeros(shape, _dtypes.as_dtype(dtype).as_numpy_dtype)
                           for shape, dtype in spec["empty"])

    def __iter__(self):
        inputs = iter(self.child)
        parts, rows, offset, turn = None, 0, 0, 0
        while True:
            desired = self.sizes[turn % len(self.sizes)]
            pieces, have, ended, failed = [], 0, False, None
            while have < desired:
                if parts is None:
                    e = next(inputs, _END)
                    if e is _END:
                        ended = True
                        break
                    if type(e) is dataset_runtime.ElementError:
                        failed = e
                        break
                    parts, offset = dataset_runtime.grouped_parts(e, self.starts), 0
                    try:
                        rows = _rows(parts)
                    except errors.OpError as error:   # fails like a failed element
                        parts, failed = None, self.failure(error)
                        break
                end = min(offset + desired - have, rows)
                pieces.append([_slice(p, offset, end) for p in parts])
                have += end - offset
                parts, offset = (None, 0) if end == rows else (parts, end)
            if failed is not None:   # TF drops the batch's rows and retries this size
                yield failed
                continue
            if ended and (have == 0 or (have < desired and self.drop)):
                return
            yield self._batch(pieces)
            if ended:
                return
            turn += 1

    def _batch(self, pieces: list) -> tuple:
        if not pieces:
            return self.empty
        columns = zip(*pieces)
        joined = [_concat(column, k) for k, column in enumerate(columns)]
        return tuple(c for part in joined for c in (part if isinstance(part, tuple) else (part,)))


def _size(part) -> int | None:
    if isinstance(part, tuple):
        return int(part[2][0]) if part[2].size else None
    return part.shape[0] if part.ndim else None


def _rows(parts) -> int:
    """The batch size all components of an input element share (TensorFlow's checks)."""
    sizes = [_size(p) for p in parts]
    if None in sizes:
        raise errors.InvalidArgumentError(
            None, None, "Input element must have a non-scalar value in each component.")
    for k, size in enumerate(sizes):
        if size != sizes[0]:
            raise errors.InvalidArgumentError(
                None, None, "Input element must have the same batch size in each component. "
                f"Component 0 had size {sizes[0]} but component {k} had size, {size}.")
    return sizes[0] if sizes else 0


def _slice(part, start: int, end: int):
    """Rows start..end of a component."""
    if not isinstance(part, tuple):
        return part[start:end]
    indices, values, dense_shape = part
    mine = (indices[:, 0] >= start) & (indices[:, 0] < end)
    shifted = indices[mine]
    shifted[:, 0] -= start
    return shifted, values[mine], np.concatenate([[end - start], dense_shape[1:]]).astype(
        np.int64)


def _concat(column, k: int):
    """One component of a batch from its slices, in order."""
    if len(column) == 1:
        return column[0]
    if not isinstance(column[0], tuple):
        try:
            return np.concatenate(column)
        except ValueError:
            raise errors.FailedPreconditionError(
                None, None, f"Cannot rebatch component {k}: its slices have shapes "
                f"{[list(c.shape) for c in column]}, which differ after the batch "
                "dimension.") from None
    starts = np.cumsum([0] + [int(c[2][0]) for c in column])
    indices = []
    for (ix, _, _), first in zip(column, starts):
        ix = ix.copy()
        ix[:, 0] += first
        indices.append(ix)
    dense_shape = np.concatenate([[starts[-1]], np.max([c[2][1:] for c in column], axis=0)])
    return (np.concatenate(indices), np.concatenate([c[1] for c in column]),
            dense_shape.astype(np.int64))


dataset_runtime.register_nodes({"rebatch": _Rebatch})
