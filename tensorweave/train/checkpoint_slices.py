"""Geometry of checkpoint slices: boxes (start, shape) of a tensor, how TF prints them, and
how a requested box is cut from, or assembled out of, the disjoint pieces a checkpoint stores.

A partitioned variable is saved as slices of its full tensor; a restore may ask for any box
(another partitioning, or the whole tensor), which `covering` maps to the stored pieces it
needs and `assemble` builds from their values. Used by checkpoint_format.py (the file format)
and the save/restore kernels (messages).
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text


def slice_text(start, shape) -> str:
    """A slice as TensorFlow prints it: `start,length` per dimension, joined by ':'."""
    return ":".join(f"{lo},{n}" for lo, n in zip(start, shape))


def check_slice_bounds(full_shape, start, shape, spec: str | None = None) -> None:
    """Raises InternalError (TensorFlow's message) unless the slice lies inside full_shape."""
    spec = slice_text(start, shape) if spec is None else spec
    if len(start) != len(full_shape) or len(shape) != len(full_shape):
        raise errors.InternalError(
            None, None, f"Mismatching ranks: shape = {dims_text(full_shape)}, slice = {spec}")
    for d, (lo, n, full) in enumerate(zip(start, shape, full_shape)):
        if lo < 0 or n < 0 or lo + n > full:
            raise errors.InternalError(
                None, None, f"Extent in dimension {d} out of bounds: shape = "
                f"{dims_text(full_shape)}, slice = {spec}")


def intersection(start_a, shape_a, start_b, shape_b):
    """(start, shape) of the common part of two boxes, or None if they share no element."""
    lo = tuple(max(a, b) for a, b in zip(start_a, start_b))
    hi = tuple(min(a + m, b + n) for a, m, b, n in zip(start_a, shape_a, start_b, shape_b))
    if any(h <= low for low, h in zip(lo, hi)):
        return None
    return lo, tuple(h - low for low, h in zip(lo, hi))


def covering(entry, start, shape, whole: bool) -> list:
    """[(piece, (start, shape) of the part of the box it holds)]: the stored pieces a read of
    the box needs; one piece when it is exactly the box (read without a copy)."""
    pieces = entry.pieces()
    for piece in pieces:
        if (piece.start, piece.shape) == (start, shape):
            return [(piece, (start, shape))]
    found = []
    for piece in pieces:
        common = intersection(start, shape, piece.start, piece.shape)
        if common is not None:
            found.append((piece, common))
    # Pieces are disjoint, so their parts cover the box iff their sizes add up to it.
    if sum(math.prod(common[1]) for _, common in found) != math.prod(shape):
        spec = ":".join(["-"] * len(shape)) if whole else slice_text(start, shape)
        raise errors.InvalidArgumentError(
            None, None, f"Does not have sufficient slices for partitioned tensor {entry.name} "
            f"to restore in slice_spec: {spec}")
    return found


def assemble(entry, start, shape, found, read) -> np.ndarray:
    """The box's value from the pieces' values."""
    if len(found) == 1 and (found[0][0].start, found[0][0].shape) == (start, shape):
        return read[(entry.name, found[0][0])]
    dtype = object if entry.dtype == _dtypes.string else entry.dtype.as_numpy_dtype
    out = np.empty(shape, dtype=dtype)
    for piece, (lo, n) in found:
        out[box_index(lo, n, start)] = read[(entry.name, piece)][box_index(lo, n, piece.start)]
    return out


def box_index(lo, n, origin) -> tuple:
    """The index of the box (lo, n) in an array whose element 0 is at `origin`."""
    return tuple(slice(a - o, a - o + k) for a, k, o in zip(lo, n, origin))
