"""Kernels for joining, splitting and slicing: ConcatV2, ConcatOffset, Pack, Unpack, Split,
SplitV, Slice, StridedSlice, StridedSliceGrad.

Splits, unpacks and slices return NumPy views of their input (`returns_view=True`). The slicing
kernels turn (begin, end, strides) into a NumPy index once per distinct value, caching it by
the index arrays' bytes and the input shape, so a constant slice spec costs a dict lookup.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel, register_pure
from tensorweave.ops.array_join_ops import resolve_split_sizes
from tensorweave.ops.array_slicing_ops import slice_index, strided_slice_plan

_CACHE_LIMIT = 256  # distinct slice specs remembered per node (fed indices vary)


def _check_axis(axis, rank: int, what: str) -> int:
    axis = int(axis)
    if not -rank <= axis < rank:
        raise invalid_argument(f"{what}Expected {'concatenating ' if what else ''}dimensions in "
                               f"the range [{-rank}, {rank}), but got {axis}")
    return axis % rank


def _concat_v2(*args):
    """ConcatV2(values..., axis)."""
    values = args[:-1]
    rank = np.ndim(values[0])
    axis = _check_axis(args[-1], rank, "ConcatOp : ")
    try:
        return np.concatenate(values, axis=axis)
    except ValueError:
        first = np.shape(values[0])
        for i, v in enumerate(values[1:], 1):
            shape = np.shape(v)
            for d, (a, b) in enumerate(zip(first, shape)):
                if d != axis and a != b or len(shape) != len(first):
                    raise invalid_argument(f"ConcatOp : Dimension {d} in both shapes must be "
                                           f"equal: shape[0] = {dims_text(first)} vs. shape[{i}] = "
                                           f"{dims_text(shape)}") from None
        raise


register_pure("ConcatV2", _concat_v2)


def _summarize(v) -> str:
    """A shape vector as TF's SummarizeValue(10) prints it: "[2 3 5]"."""
    items = [str(x) for x in v.tolist()]
    return " ".join(items[:10]) + (" ..." if len(items) > 10 else "")


def _concat_offset(concat_dim, *shapes):
    """ConcatOffset(concat_dim, shapes...): input i starts at the sum of the earlier inputs'
    sizes along the axis, 0 elsewhere; every other dim must match input 0's."""
    if np.ndim(concat_dim) != 0:
        raise invalid_argument("Concat dim tensor should be a scalar integer, but got shape "
                               f"{dims_text(np.shape(concat_dim))}")
    for i, s in enumerate(shapes, 1):
        if np.ndim(s) != 1:
            raise invalid_argument(f"input {i} should be a vector, but got shape "
                                   f"{dims_text(np.shape(s))}")
    shapes = [np.asarray(s) for s in shapes]
    first, dims, cdim = shapes[0], len(shapes[0]), int(concat_dim)
    axis = cdim + dims if cdim < 0 else cdim
    if not 0 <= axis < dims:
        raise invalid_argument(f"Concat dim is out of range: {cdim} vs. {dims}")
    offsets, offset = [], 0
    for i, s in enumerate(shapes):
        if len(s) != dims:
            raise invalid_argument(f"input {i} should contain {dims} elements, but got "
                                   f"{len(s)}")
        others = np.arange(dims) != axis
        if (s[others] != first[others]).any():
            raise invalid_argument(f"All dimensions except {axis} must match. Input {i} has "
                                   f"shape [{_summarize(s)}] and doesn't match input 0 with "
                                   f"shape [{_summarize(first)}].")
        out = np.zeros(dims, s.dtype)
        out[axis] = offset
        offset += int(s[axis])
        offsets.append(out)
    return tuple(offsets)


register_pure("ConcatOffset", _concat_offset)


@kernel("Pack")
class PackKernel:
    """Stacks its inputs on the `axis` attr."""

    def __init__(self, ctx):
        self.axis = ctx.attrs["axis"]
        self.xp = ctx.xp

    def compute(self, ctx, *values):
        try:
            return self.xp.stack(values, axis=self.axis)
        except ValueError:
            first = np.shape(values[0])
            for i, v in enumerate(values):
                if np.shape(v) != first:
                    raise invalid_argument(f"Shapes of all inputs must match: values[0].shape = "
                                           f"{dims_text(first)} != values[{i}].shape = "
                                           f"{dims_text(np.shape(v))}") from None
            raise


@kernel("Unpack", returns_view=True)
class UnpackKernel:
    """Views of the input along the `axis` attr, one per output."""

    def __init__(self, ctx):
        self.axis = ctx.attrs["axis"]
        self.num = ctx.attrs["num"]
        self.xp = ctx.xp

    def compute(self, ctx, value):
        shape = np.shape(value)
        axis = self.axis % len(shape) if shape else self.axis
        if not shape or shape[axis] != self.num:
            raise invalid_argument(f"Input shape axis {self.axis} must equal {self.num}, got shape "
                                   f"{dims_text(shape)}")
        parts = tuple(self.xp.moveaxis(value, axis, 0))
        return parts[0] if self.num == 1 else parts


def _views(value, axis: int, bounds) -> tuple:
    """The pieces of `value` between consecutive `bounds` along `axis`, as basic slices (views;
    np.split's general machinery costs ~20 us a call, a towers step makes several)."""
    lead = (slice(None),) * axis
    return tuple(value[lead + (slice(a, b),)] for a, b in zip(bounds, bounds[1:]))


@kernel("Split", returns_view=True)
class SplitKernel:
    """`num_split` equal views of the input along `split_dim`."""

    def __init__(self, ctx):
        self.n = ctx.attrs["num_split"]

    def compute(self, ctx, split_dim, value):
        shape = np.shape(value)
        axis = _check_axis(split_dim, len(shape), "")
        if self.n == 1:
            return value
        if shape[axis] % self.n:
            raise invalid_argument("Number of ways to split should evenly divide the split "
                                   f"dimension, but got split_dim {axis} (size = {shape[axis]}) "
                                   f"and num_split {self.n}")
        size = shape[axis] // self.n
        return _views(value, axis, [i * size for i in range(self.n + 1)])


@kernel("SplitV", returns_view=True)
class SplitVKernel:
    """Views of the input of the given sizes (one -1 takes the rest) along `split_dim`."""

    def __init__(self, ctx):
        self.n = ctx.attrs["num_split"]

    def compute(self, ctx, value, size_splits, split_dim):
        shape = np.shape(value)
        axis = _check_axis(split_dim, len(shape), "")
        if len(size_splits) != self.n:
            raise invalid_argument(f"Expected {self.n} split sizes, got {len(size_splits)}")
        try:
            sizes = resolve_split_sizes(size_splits, shape[axis])
        except ValueError:
            raise invalid_argument(
                "Determined shape must either match input shape along split_dim exactly if "
                "fully specified, or be less than the size of the input along split_dim if "
                f"not fully specified.  Got: {int(np.sum(size_splits))}") from None
        if self.n == 1:
            return value
        return _views(value, axis, [0, *np.cumsum(sizes).tolist()])


class CachedIndexKernel:
    """Base of the slicing kernels: memoizes the NumPy index per (shape, spec bytes)."""

    def __init__(self, ctx):
        self.cache: dict = {}

    def index_for(self, key, make):
        index = self.cache.get(key)
        if index is None:
            try:
                index = make()
            except ValueError as e:
                raise invalid_argument(str(e)) from None
            if len(self.cache) >= _CACHE_LIMIT:
                self.cache.clear()
            self.cache[key] = index
        return index


@kernel("Slice", returns_view=True)
class SliceKernel(CachedIndexKernel):
    """input[begin[i]:begin[i] + size[i], ...] as a view."""

    def compute(self, ctx, x, begin, size):
        shape = np.shape(x)
        key = (shape, begin.tobytes(), size.tobytes())
        return x[self.index_for(key, lambda: slice_index(shape, begin, size))]


@kernel("StridedSlice", returns_view=True)
class StridedSliceKernel(CachedIndexKernel):
    """StridedSlice through `strided_slice_plan`; the masks are parsed once here."""

    def __init__(self, ctx):
        super().__init__(ctx)
        a = ctx.attrs
        self.masks = (a["begin_mask"], a["end_mask"], a["ellipsis_mask"], a["new_axis_mask"],
                      a["shrink_axis_mask"])

    def compute(self, ctx, x, begin, end, strides):
        shape = np.shape(x)
        key = (shape, begin.tobytes(), end.tobytes(), strides.tobytes())
        index = self.index_for(
            key, lambda: strided_slice_plan(shape, begin, end, strides, *self.masks)[0])
        return x[index]


@kernel("StridedSliceGrad")
class StridedSliceGradKernel(CachedIndexKernel):
    """Zeros of the given shape with dy written at the StridedSlice index (a strided slice
    names each position at most once, so writing is adding)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        a = ctx.attrs
        self.masks = (a["begin_mask"], a["end_mask"], a["ellipsis_mask"], a["new_axis_mask"],
                      a["shrink_axis_mask"])

    def compute(self, ctx, shape, begin, end, strides, dy):
        dims = tuple(int(d) for d in np.ravel(shape))
        key = (dims, begin.tobytes(), end.tobytes(), strides.tobytes())
        index = self.index_for(
            key, lambda: strided_slice_plan(dims, begin, end, strides, *self.masks)[0])
        out = np.zeros(dims, dtype=np.result_type(dy))
        target = out[index]
        if np.shape(target) != np.shape(dy):
            raise invalid_argument(f"shape of dy was {dims_text(np.shape(dy))} instead of "
                                   f"{dims_text(np.shape(target))}")
        out[index] = dy
        return out
