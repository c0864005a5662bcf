"""Segment reduction kernels.

Rows are combined with the unbuffered `ufunc.at` on a flat view of the output: for ids of
shape [n] and rows of `inner` elements, element k of row j goes to flat position
id[j] * inner + k. That visits rows in order (TensorFlow's CPU loop order, so sums round the
same way) and is several times faster than `ufunc.at` on rows. Sorted segments use
`ufunc.reduceat` over runs of equal ids, except float sums, which add in TF's order
(kernels/segment_order.py).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.segment_order import segment_sums


def _extreme(dtype, ufunc):
    """The identity of max (the lowest value) or min (the highest) for `dtype`."""
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    return info.min if ufunc is np.maximum else info.max


def scatter_rows(out, ids, rows, ufunc) -> None:
    """out[ids[j]] = ufunc(out[ids[j]], rows[j]) for each j in order; `out` is modified."""
    if not out.flags.c_contiguous:  # a flat view would be a copy
        ufunc.at(out, ids, rows)
        return
    inner = int(np.prod(out.shape[1:], dtype=np.int64))
    flat_out = out.reshape(-1)
    if inner == 1:
        ufunc.at(flat_out, ids, rows.reshape(-1))
        return
    positions = ids.astype(np.int64)[:, None] * inner + np.arange(inner, dtype=np.int64)
    ufunc.at(flat_out, positions.reshape(-1), rows.reshape(-1))


class UnsortedSegmentKernel:
    """UnsortedSegmentSum/Max/Min: validates ids, drops negative ones, combines rows."""

    ufunc = np.add

    def __init__(self, ctx):
        self.dtype = np.dtype(ctx.attrs["T"].as_numpy_dtype)
        self.init = 0 if self.ufunc is np.add else _extreme(self.dtype, self.ufunc)

    def compute(self, ctx, data, segment_ids, num_segments):
        data, ids = np.asarray(data), np.asarray(segment_ids)
        if np.ndim(num_segments) != 0:
            raise invalid_argument(f"num_segments should be a scalar, not shape "
                                   f"{dims_text(np.shape(num_segments))}")
        num = int(num_segments)
        if data.shape[:ids.ndim] != ids.shape:
            raise invalid_argument(f"data.shape = {dims_text(data.shape)} does not start with "
                                   f"segment_ids.shape = {dims_text(ids.shape)}")
        if num < 0:
            raise invalid_argument(f"Input num_segments == {num} must not be negative.")
        out = np.full((num,) + data.shape[ids.ndim:], self.init, dtype=self.dtype)
        if ids.size == 0:
            return out
        rows = data.reshape((ids.size,) + data.shape[ids.ndim:])
        ids = ids.reshape(-1)
        too_big = ids >= num
        if too_big.any():
            j = int(np.argmax(too_big))
            raise invalid_argument(f"segment_ids[{j}] = {ids[j]} is out of range [0, {num})")
        if out.size == 0:
            return out
        keep = ids >= 0
        if not keep.all():
            ids, rows = ids[keep], rows[keep]
        scatter_rows(out, ids, rows, self.ufunc)
        return out


@kernel("UnsortedSegmentSum")
class UnsortedSegmentSumKernel(UnsortedSegmentKernel):
    ufunc = np.add


@kernel("UnsortedSegmentMax")
class UnsortedSegmentMaxKernel(UnsortedSegmentKernel):
    ufunc = np.maximum


@kernel("UnsortedSegmentMin")
class UnsortedSegmentMinKernel(UnsortedSegmentKernel):
    ufunc = np.minimum


class SegmentKernel:
    """SegmentSum/Mean/Max/Min over sorted ids: one reduceat over the runs of equal ids."""

    ufunc = np.add
    mean = False

    def __init__(self, ctx):
        self.dtype = np.dtype(ctx.attrs["T"].as_numpy_dtype)

    def compute(self, ctx, data, segment_ids):
        data, ids = np.asarray(data), np.asarray(segment_ids)
        if ids.ndim != 1:
            raise invalid_argument("segment_ids should be a vector.")
        if data.ndim < 1 or ids.shape[0] != data.shape[0]:
            raise invalid_argument("segment_ids should be the same size as dimension 0 of input.")
        if ids.size == 0:
            return np.zeros((0,) + data.shape[1:], dtype=self.dtype)
        num = int(ids[-1]) + 1
        if ids[0] < 0:
            raise invalid_argument(f"Segment id {ids[0]} out of range [0, {num}), possibly because "
                                   "'segment_ids' input is not sorted.")
        if (ids[1:] < ids[:-1]).any():
            raise invalid_argument("segment ids are not increasing")
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        if self.ufunc is np.add and self.dtype.kind in "fc":   # rounding depends on the order
            lengths = np.diff(np.append(starts, ids.size))
            reduced = segment_sums(data, starts, lengths, interleaved=not self.mean)
        else:
            reduced = self.ufunc.reduceat(data, starts, axis=0)
        if self.mean:
            counts = np.diff(np.append(starts, ids.size)).reshape((-1,) + (1,) * (data.ndim - 1))
            if self.dtype.kind in "iu":   # truncating integer division
                reduced = np.sign(reduced) * (np.abs(reduced) // counts)
            else:
                reduced = reduced / counts.astype(self.dtype)
        out = np.zeros((num,) + data.shape[1:], dtype=self.dtype)
        out[ids[starts]] = reduced
        return out


@kernel("SegmentSum")
class SegmentSumKernel(SegmentKernel):
    ufunc = np.add


@kernel("SegmentMean")
class SegmentMeanKernel(SegmentKernel):
    """Integer means truncate toward zero, like TensorFlow's."""

    ufunc = np.add
    mean = True


@kernel("SegmentMax")
class SegmentMaxKernel(SegmentKernel):
    ufunc = np.maximum


@kernel("SegmentMin")
class SegmentMinKernel(SegmentKernel):
    ufunc = np.minimum
