"""Sparse segment reduction kernels and their gradients, with TensorFlow's index validation.

Forward: out[segment_ids[i]] += data[indices[i]] (rows scattered in order with `scatter_rows`),
then divided by the segment's size (Mean) or its square root (SqrtN). Gradient: the same
weights, scattered the other way, out[indices[i]] += grad[segment_ids[i]] * weight.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.segment import scatter_rows

_NORMS = {"Sum": None, "Mean": np.asarray, "SqrtN": np.sqrt}


def _first(mask: np.ndarray) -> int | None:
    return int(np.argmax(mask)) if mask.any() else None


def _check_indices(indices: np.ndarray, limit: int, template: str) -> None:
    bad = _first((indices < 0) | (indices >= limit))
    if bad is not None:
        raise invalid_argument(template.format(i=bad, v=indices[bad], n=limit))


def _segment_weights(ids: np.ndarray, rows: int, kind: str, dtype) -> np.ndarray | None:
    """1 / size (Mean) or 1 / sqrt(size) (SqrtN) per segment; None for Sum."""
    norm = _NORMS[kind]
    if norm is None:
        return None
    counts = np.bincount(ids, minlength=rows)[:rows].astype(dtype)
    return 1 / norm(np.maximum(counts, 1))


def _broadcast(weights: np.ndarray, like: np.ndarray) -> np.ndarray:
    return weights.reshape((-1,) + (1,) * (like.ndim - 1))


class _SparseSegmentKernel:
    """SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]."""

    def __init__(self, ctx):
        name = ctx.op_type.removeprefix("SparseSegment").removesuffix("WithNumSegments")
        self.kind = name
        self.dtype = np.dtype(ctx.attrs["T"].as_numpy_dtype)

    def compute(self, ctx, data, indices, segment_ids, num_segments=None):
        data, indices, ids = np.asarray(data), np.asarray(indices), np.asarray(segment_ids)
        if len(indices) != len(ids):
            raise invalid_argument(f"segment_ids and indices should have same size. segment_ids "
                                   f"shape: [{len(ids)}] indices shape: [{len(indices)}]")
        rows = int(ids[-1]) + 1 if len(ids) else 0
        if num_segments is not None:
            if len(ids) and int(num_segments) < rows:
                raise invalid_argument("segment ids must be < num_segments")
            rows = int(num_segments)
        if rows < 0:
            raise invalid_argument("segment ids must be >= 0")
        if _first(np.diff(ids) < 0) is not None:
            raise invalid_argument("segment ids are not increasing")
        if len(ids) and ids[0] < 0:
            raise invalid_argument(f"Segment id {ids[0]} out of range [0, {rows}), possibly "
                                   "because 'segment_ids' input is not sorted.")
        _check_indices(indices, data.shape[0], "Bad: indices[{i}] == {v} out of range [0, {n})")
        out = np.zeros((rows,) + data.shape[1:], dtype=self.dtype)
        if len(ids) and out.size:
            scatter_rows(out, ids, data[indices], np.add)
        weights = _segment_weights(ids, rows, self.kind, self.dtype)
        if weights is not None:
            out *= _broadcast(weights, out)
        return out


class _SparseSegmentGradKernel:
    """SparseSegment{Sum,Mean,SqrtN}Grad: out[indices[i]] += grad[ids[i]] * weight[ids[i]]."""

    def __init__(self, ctx):
        self.kind = ctx.op_type.removeprefix("SparseSegment").removesuffix("Grad")
        self.dtype = np.dtype(ctx.attrs["T"].as_numpy_dtype)

    def compute(self, ctx, grad, indices, segment_ids, output_dim0):
        grad, indices, ids = np.asarray(grad), np.asarray(indices), np.asarray(segment_ids)
        if len(indices) != len(ids):
            raise invalid_argument("segment_ids and indices should have same size.")
        rows = int(output_dim0)
        _check_indices(ids, grad.shape[0], "Segment id {v} out of range [0, {n}).")
        _check_indices(indices, rows, "Index {v} out of range [0, {n}).")
        weights = _segment_weights(ids, grad.shape[0], self.kind, self.dtype)
        scaled = grad if weights is None else grad * _broadcast(weights, grad)
        out = np.zeros((rows,) + grad.shape[1:], dtype=self.dtype)
        if len(ids) and out.size:
            scatter_rows(out, indices, scaled[ids], np.add)
        return out


for _kind in _NORMS:
    _allowed = _dtypes.REAL_NUMERIC if _kind == "Sum" else _dtypes.FLOATING
    kernel([f"SparseSegment{_kind}", f"SparseSegment{_kind}WithNumSegments"],
           dtypes=_allowed)(_SparseSegmentKernel)
    kernel(f"SparseSegment{_kind}Grad", dtypes=_dtypes.FLOATING)(_SparseSegmentGradKernel)
