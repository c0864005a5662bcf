"""SparseSlice(+Grad), SparseSplit and SparseConcat kernels.

Slicing keeps the entries inside the box in input order and shifts them by `start`; splitting
is slicing into `num_split` boxes along one axis (the first dim % num_split one longer);
concatenation shifts each input along the axis by the sizes before it, then sorts row-major.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.sparse_math import gather_found
from tensorweave.kernels.sparse_reshape import row_major_order


def _in_box(indices: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    return np.all((indices >= start) & (indices < stop), axis=1)


@kernel("SparseSlice")
def _sparse_slice(ctx, indices, values, shape, start, size):
    rank = len(shape)
    for what, vec in (("start", start), ("size", size)):
        if np.ndim(vec) != 1 or len(vec) != rank:
            raise invalid_argument(f"Expected {what} to be a vector of length {rank} but got "
                                   f"length {np.size(vec)}")
    if np.any(size < 0):
        raise invalid_argument(f"Expected a non-negative size, got {size[np.argmax(size < 0)]}")
    stop = np.minimum(start + size, shape)
    keep = _in_box(indices, start, stop)
    out_shape = np.maximum(stop - start, 0).astype(np.int64)
    return (indices[keep] - start).astype(np.int64), values[keep], out_shape


@kernel("SparseSliceGrad")
def _sparse_slice_grad(ctx, backprop_val_grad, input_indices, input_start, output_indices):
    """Input entry i gets the gradient of the output entry at input_indices[i] - start."""
    if len(output_indices) != len(backprop_val_grad):
        raise invalid_argument(f"backprop_val_grad and output_indices should have the same length: "
                               f"{len(backprop_val_grad)} vs. {len(output_indices)}")
    return gather_found(backprop_val_grad, input_indices - input_start, output_indices)


@kernel("SparseSplit")
class SparseSplitKernel:
    """num_split boxes along split_dim: sizes dim // n, the first dim % n one longer."""

    def __init__(self, ctx):
        self.num_split = ctx.attrs["num_split"]

    def compute(self, ctx, split_dim, indices, values, shape):
        rank, n = len(shape), self.num_split
        axis = int(split_dim)
        if not -rank <= axis < rank:
            raise invalid_argument(f"Input axis should be in range [{-rank}, {rank}), got {axis}")
        axis %= rank
        dim = int(shape[axis])
        if not 1 <= n <= dim:
            raise invalid_argument("Input num_split should be between 1 and the splitting "
                                   f"dimension size ({dim}), got {n}")
        base, residual = divmod(dim, n)
        starts = np.arange(n) * base + np.minimum(np.arange(n), residual)
        sizes = base + (np.arange(n) < residual)
        part = np.searchsorted(starts, indices[:, axis], side="right") - 1
        out_indices, out_values, out_shapes = [], [], []
        for p in range(n):   # num_split parts, each a vectorized selection
            keep = part == p
            moved = np.array(indices[keep], np.int64, copy=True)
            moved[:, axis] -= starts[p]
            shape_p = np.array(shape, np.int64, copy=True)
            shape_p[axis] = sizes[p]
            out_indices.append(moved)
            out_values.append(values[keep])
            out_shapes.append(shape_p)
        return tuple(out_indices + out_values + out_shapes)


@kernel("SparseConcat")
class SparseConcatKernel:
    """Shifts input k along concat_dim by the sizes of inputs 0..k-1, then sorts row-major."""

    def __init__(self, ctx):
        self.concat_dim = ctx.attrs["concat_dim"]
        self.n = ctx.attrs["N"]

    def compute(self, ctx, *inputs):
        n = self.n
        indices, values, shapes = inputs[:n], inputs[n:2 * n], inputs[2 * n:]
        rank = len(shapes[0])
        axis = self.concat_dim
        if not -rank <= axis < rank:
            raise invalid_argument(f"Concat dimension must be in range [{-rank}, {rank}), got "
                                   f"{axis}")
        axis %= rank
        for k, shape in enumerate(shapes[1:], start=1):
            if len(shape) != rank:
                raise invalid_argument(f"Ranks of all input tensors must match: expected {rank} "
                                       f"but got {len(shape)} at position {k}")
            for d in range(rank):   # a rank-sized check per input
                if d != axis and shape[d] != shapes[0][d]:
                    raise invalid_argument(f"Input shapes must match: expected {shapes[0][d]} for "
                                           f"dimension {d} but got {shape[d]} at position {k}")
        offsets = np.concatenate([[0], np.cumsum([int(s[axis]) for s in shapes])])
        shifted = []
        for k, ind in enumerate(indices):
            moved = np.array(ind, np.int64, copy=True).reshape(-1, rank)
            moved[:, axis] += offsets[k]
            shifted.append(moved)
        all_indices = np.concatenate(shifted)
        all_values = np.concatenate(values)
        order = row_major_order(all_indices)
        out_shape = np.array(shapes[0], np.int64, copy=True)
        out_shape[axis] = offsets[-1]
        return all_indices[order], all_values[order], out_shape
