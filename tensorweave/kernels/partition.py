"""DynamicPartition and (Parallel)DynamicStitch kernels."""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel


@kernel("DynamicPartition")
class DynamicPartitionKernel:
    """One stable sort of the partition ids, then contiguous slices of the sorted rows."""

    def __init__(self, ctx):
        self.n = ctx.attrs["num_partitions"]

    def compute(self, ctx, data, partitions):
        data, parts = np.asarray(data), np.asarray(partitions)
        if data.shape[:parts.ndim] != parts.shape:
            raise errors.InvalidArgumentError(
                None, None, f"data.shape must start with partitions.shape, got data.shape = "
                f"{dims_text(data.shape)}, partitions.shape = {dims_text(parts.shape)}")
        flat = parts.reshape(-1)
        rows = data.reshape((flat.size,) + data.shape[parts.ndim:])
        bad = (flat < 0) | (flat >= self.n)
        if bad.any():
            i = int(np.argmax(bad))
            raise errors.InvalidArgumentError(
                None, None, f"partitions[{i}] = {flat[i]} is not in [0, {self.n})")
        order = np.argsort(flat, kind="stable")
        ends = np.cumsum(np.bincount(flat, minlength=self.n))
        sorted_rows = rows[order]
        starts = np.concatenate(([0], ends[:-1]))
        return tuple(sorted_rows[s:e] for s, e in zip(starts, ends))


class _StitchKernel:
    def __init__(self, ctx):
        self.n = ctx.attrs["N"]
        self.dtype = np.dtype(ctx.attrs["T"].as_numpy_dtype) if ctx.attrs["T"].name != \
            "string" else np.dtype(object)

    def compute(self, ctx, *inputs):
        indices = [np.asarray(i) for i in inputs[:self.n]]
        data = [np.asarray(d) for d in inputs[self.n:]]
        element = None
        for m, (ind, d) in enumerate(zip(indices, data)):
            if d.shape[:ind.ndim] != ind.shape:
                raise errors.InvalidArgumentError(
                    None, None, f"data[{m}].shape = {dims_text(d.shape)} does not start with "
                    f"indices[{m}].shape = {dims_text(ind.shape)}")
            sub = d.shape[ind.ndim:]
            if element is None:
                element = sub
            elif sub != element:
                raise errors.InvalidArgumentError(
                    None, None, f"Need data[0].shape[{indices[0].ndim}:] = data[{m}].shape"
                    f"[{ind.ndim}:], got data[0].shape = {dims_text(data[0].shape)}, "
                    f"data[{m}].shape = {dims_text(d.shape)}")
        rows = max((int(i.max()) + 1 for i in indices if i.size), default=0)
        if any(i.size and i.min() < 0 for i in indices):
            raise errors.InvalidArgumentError(None, None, "indices must be non-negative")
        merged = np.zeros((rows,) + element, dtype=self.dtype)
        for ind, d in zip(indices, data):
            if ind.size:
                merged[ind.reshape(-1)] = d.reshape((ind.size,) + element)
        return merged


kernel("DynamicStitch")(type("DynamicStitchKernel", (_StitchKernel,), {}))
kernel("ParallelDynamicStitch")(type("ParallelDynamicStitchKernel", (_StitchKernel,), {}))
