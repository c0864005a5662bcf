"""Kernels of ops/math_extra_ops.py: MulNoNan, NextAfter, LeftShift/RightShift, BesselI0/I1,
EuclideanNorm and CumulativeLogsumexp.

Shifts clamp the shift amount to [0, bits - 1] as TensorFlow's CPU functor does (NumPy's
result for out-of-range shifts is platform-defined). EuclideanNorm of integers truncates the
square root, as TensorFlow's does; its axes are checked like every reduction's.
"""
from __future__ import annotations

import numpy as np
import scipy  # scipy.special loads on first use (SciPy imports submodules lazily)

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.math_special import in_input_dtype
from tensorweave.kernels.reduction import axis_in_range, normalize_axes
from tensorweave.kernels.registry import kernel, register_pure


def _mul_no_nan(x, y):
    """x * y, and exactly 0 where y == 0 (so 0 * inf and 0 * NaN give 0)."""
    return np.where(y == 0, np.zeros((), x.dtype), x * y)


def _clamped(x, y):
    """The shift amounts clamped to [0, bits of x's dtype - 1]."""
    return np.clip(y, 0, x.dtype.itemsize * 8 - 1)


def _left_shift(x, y):
    """Shifts the unsigned bit pattern, so a signed x wraps like TensorFlow's (no UB)."""
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    shifted = np.left_shift(x.astype(unsigned), _clamped(x, y).astype(unsigned))
    return shifted.astype(x.dtype)


def _right_shift(x, y):
    return np.right_shift(x, _clamped(x, y).astype(x.dtype))


register_pure("MulNoNan", _mul_no_nan)
register_pure("NextAfter", np.nextafter)
register_pure("LeftShift", _left_shift)
register_pure("RightShift", _right_shift)
register_pure("BesselI0", in_input_dtype(lambda x: scipy.special.i0(x)), dtypes=_dtypes.FLOATING)
register_pure("BesselI1", in_input_dtype(lambda x: scipy.special.i1(x)), dtypes=_dtypes.FLOATING)


@kernel("EuclideanNorm")
class EuclideanNormKernel:
    """sqrt(sum(|x|^2)) over the axes, in x's dtype."""

    def __init__(self, ctx):
        self.keep = ctx.attrs["keep_dims"]

    def compute(self, ctx, x, axes):
        axes = normalize_axes(axes, x.ndim)
        squares = np.square(np.abs(x)) if x.dtype.kind == "c" else \
            np.square(x.astype(np.float64) if x.dtype.kind in "iu" else x)
        out = np.sqrt(np.sum(squares, axis=axes, keepdims=self.keep))
        return np.asarray(out).astype(x.dtype)


@kernel("CumulativeLogsumexp")
class CumulativeLogsumexpKernel:
    """log(cumsum(exp(x))) by np.logaddexp.accumulate; -inf (log 0) enters an exclusive scan."""

    def __init__(self, ctx):
        self.exclusive = ctx.attrs["exclusive"]
        self.reverse = ctx.attrs["reverse"]

    def compute(self, ctx, x, axis):
        if np.ndim(axis) != 0:
            raise invalid_argument("ScanOp: axis must be a scalar, not "
                                   f"{dims_text(np.shape(axis))}")
        a = axis_in_range(axis, x.ndim, "ScanOp: ", "scan axis")
        if self.reverse:
            x = np.flip(x, a)
        if x.shape[a] == 0:
            return np.array(x)
        out = np.logaddexp.accumulate(x, axis=a)
        if self.exclusive:
            head = np.full_like(np.take(x, [0], axis=a), -np.inf)
            out = np.concatenate([head, np.take(out, np.arange(x.shape[a] - 1), axis=a)], a)
        return np.flip(out, a) if self.reverse else out
