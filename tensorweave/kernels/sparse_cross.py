"""SparseCross and SparseCrossV2 kernels: TensorFlow's sparse_cross_op.cc, vectorized.

Columns are the sparse inputs, then the dense ones. A sparse column's features in batch row b
are the run of entries whose row index is b, scanned as TensorFlow scans them: one pointer
over the entries, so rows must come in increasing order (a run that does not ends the scan).
A dense column's features in row b are its row b. Row b has the product of its columns'
feature counts as crosses, the last column varying fastest; the output's dense shape is
[batch, most crosses in a row].
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.string_hash import hash_strings

_MUL = np.uint64(0xC6A4A7935BD1E995)
_SHIFT = np.uint64(47)
_INT64_MAX = np.uint64(2**63 - 1)


def _shift_mix(v: np.ndarray) -> np.ndarray:
    return v ^ (v >> _SHIFT)


def fingerprint_cat64(fp1: np.ndarray, fp2: np.ndarray) -> np.ndarray:
    """TensorFlow's FingerprintCat64 on uint64 arrays (arithmetic modulo 2**64)."""
    result = fp1 ^ _MUL
    result ^= _shift_mix(fp2 * _MUL) * _MUL
    result *= _MUL
    return _shift_mix(_shift_mix(result) * _MUL)


def _validate(indices, values, shapes, dense) -> int:
    """TensorFlow's ValidateInput (its messages); returns the batch size."""
    for i, ind in enumerate(indices):
        if ind.ndim != 2:
            raise invalid_argument("Input indices should be a matrix but received shape "
                                   f"{dims_text(ind.shape)} at position {i}")
        if ind.shape[1] != 2:
            raise invalid_argument(f"Expected D2 of index to be 2 got {ind.shape[1]} at "
                                   f"position {i}")
    for i, val in enumerate(values):
        if val.ndim != 1:
            raise invalid_argument("Input values should be a vector but received shape "
                                   f"{dims_text(val.shape)} at position {i}")
        if indices[i].shape[0] != val.shape[0]:
            raise invalid_argument(f"Expected size of values to be {indices[i].shape[0]} got "
                                   f"{val.shape[0]} at position {i}")
    for i, shape in enumerate(shapes):
        if shape.ndim != 1:
            raise invalid_argument("Input shapes should be a vector but received shape "
                                   f"{dims_text(shape.shape)} at position {i}")
        if shape.size != 2:
            raise invalid_argument("shape should imply a 2D tensor, but got "
                                   f"{dims_text(shape.shape)} at position {i}")
    for i, den in enumerate(dense):
        if den.ndim != 2:
            raise invalid_argument("Dense inputs should be a matrix but received shape "
                                   f"{dims_text(den.shape)} at position {i}")
    batch = int(shapes[0][0]) if shapes else (dense[0].shape[0] if dense else 0)
    for i, shape in enumerate(shapes):
        if shape[0] != batch:
            raise invalid_argument(f"Expected batch size {batch} got {shape[0]} at position {i}")
    for i, den in enumerate(dense):
        if den.shape[0] != batch:
            raise invalid_argument(f"Expected batch size {batch} got {den.shape[0]} at dense "
                                   f"tensor {i}")
    return batch


def _sparse_runs(rows: np.ndarray, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """(count, start) per batch row, as TensorFlow's single-pointer scan finds them: the runs of
    equal row indices are taken while their rows increase and stay in [0, batch). (An empty
    row's start is never read.)"""
    counts = np.zeros(batch, np.int64)
    starts = np.zeros(batch, np.int64)
    if rows.size:
        first = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
        run_rows = rows[first]
        ok = (run_rows >= 0) & (run_rows < batch)
        ok[1:] &= run_rows[1:] > run_rows[:-1]
        taken = ok.size if ok.all() else int(np.argmin(ok))
        ends = np.append(first[1:], rows.size)
        counts[run_rows[:taken]] = ends[:taken] - first[:taken]
        starts[run_rows[:taken]] = first[:taken]
    return counts, starts


def _columns(indices, values, shapes, dense, batch):
    """Per column: (flat features, count per row, start per row)."""
    columns = []
    for ind, val in zip(indices, values):
        counts, starts = _sparse_runs(ind[:, 0], batch)
        columns.append((val, counts, starts))
    for den in dense:
        width = den.shape[1]
        columns.append((den.reshape(-1), np.full(batch, width, np.int64),
                        np.arange(batch, dtype=np.int64) * width))
    return columns


def _crosses(columns, batch):
    """The output indices and, per column, the flat position of each cross's feature."""
    if not columns:
        return np.zeros((0, 2), np.int64), [], np.array([batch, 0], np.int64)
    per_row = np.ones(batch, np.int64)
    for _, counts, _ in columns:
        per_row *= counts
    total = int(per_row.sum())
    row = np.repeat(np.arange(batch, dtype=np.int64), per_row)
    offsets = np.concatenate([[0], np.cumsum(per_row)[:-1]]).astype(np.int64)
    cross = np.arange(total, dtype=np.int64) - offsets[row]
    positions = [None] * len(columns)
    rest = cross.copy()
    for c in range(len(columns) - 1, -1, -1):   # the last column varies fastest
        _, counts, starts = columns[c]
        n = counts[row]
        positions[c] = starts[row] + rest % np.maximum(n, 1)
        rest //= np.maximum(n, 1)
    shape = np.array([batch, per_row.max() if batch else 0], np.int64)
    return np.stack([row, cross], axis=1), positions, shape


def _feature_text(features: np.ndarray) -> np.ndarray:
    """Strings as they are, integers in decimal (std::to_string)."""
    if features.dtype == object:
        return features
    return np.array([str(int(v)).encode() for v in features.tolist()], dtype=object)


def _string_cross(inputs, sep: bytes):
    indices, values, shapes, dense = inputs
    batch = _validate(indices, values, shapes, dense)
    columns = _columns(indices, values, shapes, dense, batch)
    out_indices, positions, shape = _crosses(columns, batch)
    parts = [_feature_text(np.asarray(col[0]).reshape(-1))[pos]
             for col, pos in zip(columns, positions)]
    joined = np.empty(len(out_indices), dtype=object)
    joined[:] = [sep.join(p) for p in zip(*parts)] if parts else []
    return out_indices, joined, shape


def _split(inputs, n_sparse: int):
    """The flat input list as (indices, values, shapes, dense) lists."""
    inputs = [np.asarray(x) for x in inputs]
    n = n_sparse
    return inputs[:n], inputs[n:2 * n], inputs[2 * n:3 * n], inputs[3 * n:]


@kernel("SparseCrossV2")
class SparseCrossV2Kernel:
    """Crosses as strings joined by the `sep` input."""

    def __init__(self, ctx):
        self.n = ctx.attrs["N"]

    def compute(self, ctx, *inputs):
        sep = np.asarray(inputs[-1], dtype=object)
        split = _split(inputs[:-1], self.n)
        if sep.ndim != 0:
            raise invalid_argument("Input separator should be a scalar. Received: "
                                   f"Tensor<type: string shape: {dims_text(sep.shape)}>")
        return _string_cross(split, sep[()])


@kernel("SparseCross")
class SparseCrossKernel:
    """Crosses joined by "_X_", or with hashed_output the FingerprintCat64 chain from hash_key
    over the features (Fingerprint64 of a string, an int64's bits), modulo num_buckets."""

    def __init__(self, ctx):
        self.n = ctx.attrs["N"]
        self.hashed = ctx.attrs["hashed_output"]
        self.num_buckets = ctx.attrs["num_buckets"]
        self.hash_key = np.uint64(ctx.attrs["hash_key"] % 2**64)

    def compute(self, ctx, *inputs):
        split = _split(inputs, self.n)
        if not self.hashed:
            return _string_cross(split, b"_X_")
        indices, values, shapes, dense = split
        batch = _validate(indices, values, shapes, dense)
        columns = _columns(indices, values, shapes, dense, batch)
        out_indices, positions, shape = _crosses(columns, batch)
        hashed = np.full(len(out_indices), self.hash_key, np.uint64)
        for (features, _, _), pos in zip(columns, positions):
            features = np.asarray(features).reshape(-1)
            keys = hash_strings(features) if features.dtype == object else \
                features.astype(np.int64).view(np.uint64)
            hashed = fingerprint_cat64(hashed, keys[pos])
        modulo = np.uint64(self.num_buckets) if self.num_buckets > 0 else _INT64_MAX
        return out_indices, (hashed % modulo).astype(np.int64), shape
