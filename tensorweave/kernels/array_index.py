"""Kernels for indexing and selection: GatherV2, GatherNd, ScatterNd, OneHot, Where, Select,
SelectV2, Unique.

Indices are checked like TensorFlow's CPU kernels: an index outside its dimension (negative
ones included) fails the step with InvalidArgumentError instead of wrapping around as NumPy
would. The checks cost one min/max pass; the error message is only built on failure.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel, register_pure


def _first_bad(bad: np.ndarray) -> str:
    """The position of the first true entry of `bad` as TF prints it: "[0,1]"."""
    return "[" + ",".join(map(str, np.argwhere(bad)[0])) + "]" if bad.ndim else ""


@kernel("GatherV2")
class GatherV2Kernel:
    """np.take along `axis`, with TF's bounds check and optional leading batch dimensions."""

    def __init__(self, ctx):
        self.batch_dims = ctx.attrs["batch_dims"]
        self.xp = ctx.xp

    def compute(self, ctx, params, indices, axis):
        rank = np.ndim(params)
        axis = int(axis)
        if not -rank <= axis < rank:
            raise invalid_argument(f"Expected axis in the range [{-rank}, {rank}), but got {axis}")
        return gather(self.xp, params, indices, axis % rank, self.batch_dims)


def gather(xp, params, indices, axis: int, batch_dims: int):
    """params gathered at `indices` along `axis` (in range) after `batch_dims` leading batch
    dimensions, with TensorFlow's bounds check and message; a new array. Shared by GatherV2
    and ResourceGather (kernels/state.py)."""
    limit = np.shape(params)[axis]
    if np.size(indices) and (indices.min() < 0 or indices.max() >= limit):
        bad = (indices < 0) | (indices >= limit)
        value = indices[tuple(np.argwhere(bad)[0])] if np.ndim(indices) else indices
        raise invalid_argument(f"indices{_first_bad(np.asarray(bad))} = {value} is not in "
                               f"[0, {limit})")
    batch = batch_dims + np.ndim(indices) if batch_dims < 0 else batch_dims
    if batch == 0:
        return xp.take(params, indices, axis=axis)
    return _batched_gather(xp, params, indices, axis, batch)


def _batched_gather(xp, params, indices, axis, batch):
    """Gathers each of the leading `batch` dimensions' entries separately."""
    lead = params.shape[:batch]
    out_shape = lead + params.shape[batch:axis] + indices.shape[batch:] + params.shape[axis + 1:]
    flat_p = params.reshape((-1,) + params.shape[batch:])
    flat_i = indices.reshape((-1,) + indices.shape[batch:])
    if not len(flat_p):
        return xp.empty(out_shape, params.dtype)
    parts = [xp.take(p, i, axis=axis - batch) for p, i in zip(flat_p, flat_i)]
    return xp.stack(parts).reshape(out_shape)


def index_rows(indices, shape, what: str):
    """indices reshaped to [N, K] after checking every row indexes into the first K dims of
    `shape`. The error names the last bad row and the whole shape, as TensorFlow's CPU loop
    does. Shared by GatherNd and the ScatterNd family (kernels/tensor_scatter.py)."""
    depth = indices.shape[-1]
    limits = shape[:depth]
    flat = indices.reshape(-1, depth)
    if flat.size and ((flat < 0).any() or (flat >= limits).any()):
        bad = ((flat < 0) | (flat >= limits)).any(axis=1)
        row = len(bad) - 1 - int(np.argmax(bad[::-1]))
        where = np.unravel_index(row, indices.shape[:-1]) if indices.ndim > 1 else ()
        pos = "[" + ",".join(map(str, where)) + "]"
        raise invalid_argument(f"indices{pos} = [{', '.join(map(str, flat[row]))}] does not index "
                               f"into {what} {dims_text(shape)}")
    return flat


def gather_nd(params, indices):
    """params[indices[..., 0], ..., indices[..., K-1]] for each leading position of indices."""
    depth = np.shape(indices)[-1]
    params = np.asarray(params)
    if depth > params.ndim:
        raise invalid_argument(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                               f"{dims_text(indices.shape)} and params shape: "
                               f"{dims_text(params.shape)}")
    lead = indices.shape[:-1]
    if depth == 0:
        return np.broadcast_to(params, lead + params.shape).copy()
    flat = index_rows(indices, params.shape, "param shape")
    return params[tuple(flat.T)].reshape(lead + params.shape[depth:])


register_pure("GatherNd", gather_nd)


def _scatter_nd(indices, updates, shape):
    """Zeros of `shape` with updates added at indices (duplicates sum, as in TF)."""
    shape = tuple(int(s) for s in shape)
    depth = indices.shape[-1]
    if depth > len(shape):
        raise invalid_argument(f"indices.shape[-1] must be <= rank of shape, got {depth} > "
                               f"{len(shape)}")
    flat = index_rows(indices, shape, "shape")
    slice_shape = shape[depth:]
    updates = np.asarray(updates)
    if updates.shape != indices.shape[:-1] + slice_shape:
        raise invalid_argument(f"updates.shape {dims_text(updates.shape)} must be "
                               "indices.shape[:-1] + shape[K:] = "
                               f"{dims_text(indices.shape[:-1] + slice_shape)}")
    out = np.zeros(shape, dtype=updates.dtype)
    rows = updates.reshape((len(flat),) + slice_shape)
    if depth == 0:
        out += rows.sum(axis=0, dtype=out.dtype)
    else:
        np.add.at(out, tuple(flat.T), rows)
    return out


register_pure("ScatterNd", _scatter_nd)


@kernel("OneHot")
class OneHotKernel:
    """Compares indices with arange(depth); indices out of range match nothing."""

    def __init__(self, ctx):
        self.axis = ctx.attrs["axis"]
        self.xp = ctx.xp

    def compute(self, ctx, indices, depth, on_value, off_value):
        xp = self.xp
        depth = int(depth)
        if depth < 0:
            raise invalid_argument(f"depth must be non-negative, got: {depth}")
        hot = xp.expand_dims(indices, -1) == xp.arange(depth)
        if self.axis != -1 and self.axis != np.ndim(indices):
            hot = xp.moveaxis(hot, -1, self.axis)
        return xp.where(hot, on_value, off_value)


def _where(condition):
    """Coordinates of the non-zero elements, int64 [num_true, rank]."""
    if np.ndim(condition) == 0:
        raise invalid_argument("WhereOp : Unhandled input dimensions: 0")
    return np.argwhere(condition).astype(np.int64, copy=False)


register_pure("Where", _where)


def _select(condition, t, e):
    """TF1 Select: a vector condition picks rows of higher-rank t and e."""
    t_shape, e_shape = np.shape(t), np.shape(e)
    if t_shape != e_shape:
        raise invalid_argument(f"'then' and 'else' must have the same size.  but received: "
                               f"{dims_text(t_shape)} vs. {dims_text(e_shape)}")
    c_shape = np.shape(condition)
    if len(c_shape) == 1 and len(t_shape) > 1:
        if c_shape[0] != t_shape[0]:
            raise invalid_argument("Number of batches of 'then' must match size of 'cond', but "
                                   f"saw: {t_shape[0]} vs. {c_shape[0]}")
        condition = condition.reshape(c_shape + (1,) * (len(t_shape) - 1))
    elif c_shape and c_shape != t_shape:
        raise invalid_argument(f"'cond' and 'then' must have the same size and shape.  Input 0: "
                               f"{dims_text(c_shape)} != input 1: {dims_text(t_shape)}")
    return np.where(condition, t, e)


register_pure("Select", _select)
register_pure("SelectV2", np.where)


@kernel("Unique")
class UniqueKernel:
    """Distinct values in order of first occurrence, and each element's position among them."""

    def __init__(self, ctx):
        self.idx_dtype = ctx.output_dtypes[1].as_numpy_dtype
        self.xp = ctx.xp

    def compute(self, ctx, x):
        xp = self.xp
        if np.ndim(x) != 1:
            raise invalid_argument("unique expects a 1D vector.")
        # NaN != NaN: each NaN is its own value, as in TensorFlow's hash-based Unique.
        _, first, inverse = xp.unique(x, return_index=True, return_inverse=True,
                                      equal_nan=False)
        order = xp.argsort(first, kind="stable")
        rank = xp.empty(len(order), dtype=self.idx_dtype)
        rank[order] = xp.arange(len(order), dtype=self.idx_dtype)
        return x[first[order]], rank[inverse.reshape(-1)]
