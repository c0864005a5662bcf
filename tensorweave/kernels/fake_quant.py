"""Kernels of the fake-quantization ops (ops/fake_quant_ops.py), bit-identical to TensorFlow's.

They compute in float32 with TensorFlow 2.21's operations in its order.

`nudge` is TensorFlow's: scale and its inverse are each computed from the range (the inverse
is not 1 / scale), and the zero point is rounded half away from zero. Forward:
floor((clamp(x) - nudged_min) * inv_scale - quant_zero + 0.5) * scale, where the ..._vars op
divides by scale instead of multiplying by its inverse, as TensorFlow's does. A min and max of
0 and 0 give zeros (and pass the whole gradient to the input). Per-channel ranges apply along
the last axis, with per-channel constants broadcast: each element gets the same operations.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_F32 = np.float32


def _text(value: float) -> str:
    """A float32 as TensorFlow's StrCat writes it: the shortest form that reads back."""
    return np.format_float_positional(_F32(value), trim="-")


def _integer_range(attrs) -> tuple:
    """(quant_min, quant_max) as float32 from num_bits and narrow_range, checked as TF does."""
    num_bits = attrs["num_bits"]
    if not 2 <= num_bits <= 16:
        raise invalid_argument("num_bits must be between 2 and 16, inclusive")
    return _F32(1 if attrs["narrow_range"] else 0), _F32((1 << num_bits) - 1)


def nudge(lo, hi, quant_min, quant_max) -> tuple:
    """TensorFlow's Nudge, elementwise on float32 arrays (or scalars) of range ends:
    (nudged_min, nudged_max, scale, inv_scale)."""
    lo, hi = np.asarray(lo, _F32), np.asarray(hi, _F32)
    with np.errstate(all="ignore"):   # a zero-width range: its lanes are replaced by zeros
        scale = (hi - lo) / (quant_max - quant_min)
        inv_scale = (quant_max - quant_min) / (hi - lo)
        from_min = quant_min - lo / scale
    rounded = np.floor(from_min + _F32(0.5))   # std::round; from_min >= quant_min >= 0 here
    zero_point = np.where(from_min < quant_min, quant_min,
                          np.where(from_min > quant_max, quant_max, rounded)).astype(_F32)
    return ((quant_min - zero_point) * scale, (quant_max - zero_point) * scale, scale,
            inv_scale)


def quantize(x, lo, hi, quant_min, quant_max, divide: bool = False) -> np.ndarray:
    """x rounded to the grid of each nudged range (lo and hi broadcast against x)."""
    nudged_min, nudged_max, scale, inv_scale = nudge(lo, hi, quant_min, quant_max)
    with np.errstate(all="ignore"):
        quant_zero = np.floor(-nudged_min * inv_scale + _F32(0.5))
        shifted = np.maximum(np.minimum(x, nudged_max), nudged_min) - nudged_min
        steps = shifted / scale if divide else shifted * inv_scale
        out = (np.floor(steps - quant_zero + _F32(0.5)) * scale).astype(_F32)
    zero = (np.asarray(lo) == 0) & (np.asarray(hi) == 0)
    if zero.any():
        out = np.where(zero, _F32(0), out).astype(_F32)
    return out


def backprops(gradients, x, lo, hi, quant_min, quant_max, axes) -> tuple:
    """(gradients inside each nudged range, sums over `axes` below it, sums above it); a
    zero-width range passes every gradient and sums to 0."""
    nudged_min, nudged_max, _, _ = nudge(lo, hi, quant_min, quant_max)
    zero = (np.asarray(lo) == 0) & (np.asarray(hi) == 0)
    inside = ((x >= nudged_min) & (x <= nudged_max)) | zero
    below = (x < nudged_min) & ~zero
    above = (x > nudged_max) & ~zero
    return (np.where(inside, gradients, _F32(0)).astype(_F32),
            np.where(below, gradients, _F32(0)).sum(axis=axes, dtype=_F32),
            np.where(above, gradients, _F32(0)).sum(axis=axes, dtype=_F32))


def _check_same_shape(gradients, x) -> None:
    if gradients.shape != x.shape:
        raise invalid_argument(f"gradients and inputs must be the same size: "
                               f"{dims_text(gradients.shape)} vs {dims_text(x.shape)}")


class _ArgsKernel:
    """The range from the node's min and max attrs, checked at construction as TF does."""

    def __init__(self, ctx):
        self.quant = _integer_range(ctx.attrs)
        self.lo, self.hi = _F32(ctx.attrs["min"]), _F32(ctx.attrs["max"])
        if not self.lo < self.hi:
            raise invalid_argument(f"min has to be smaller than max, was: {_text(self.lo)} >= "
                                   f"{_text(self.hi)}")


@kernel("FakeQuantWithMinMaxArgs")
class FakeQuantWithMinMaxArgsKernel(_ArgsKernel):
    def compute(self, ctx, x):
        return quantize(x, self.lo, self.hi, *self.quant)


@kernel("FakeQuantWithMinMaxArgsGradient")
class FakeQuantWithMinMaxArgsGradientKernel(_ArgsKernel):
    def compute(self, ctx, gradients, x):
        _check_same_shape(gradients, x)
        return backprops(gradients, x, self.lo, self.hi, *self.quant, None)[0]


def _scalar(name: str, value) -> None:
    if np.ndim(value):
        raise invalid_argument(f"`{name}` must be rank 0 but is rank {np.ndim(value)}")


def _vector(name: str, value, depth: int) -> None:
    if np.ndim(value) != 1 or np.shape(value)[0] != depth:
        raise invalid_argument(f"{name} has incorrect size, expected {depth} was "
                               f"{np.size(value)}")


class _VarsKernel:
    def __init__(self, ctx):
        self.quant = _integer_range(ctx.attrs)


@kernel("FakeQuantWithMinMaxVars")
class FakeQuantWithMinMaxVarsKernel(_VarsKernel):
    def compute(self, ctx, x, lo, hi):
        _scalar("min", lo)
        _scalar("max", hi)
        return quantize(x, lo, hi, *self.quant, divide=True)


@kernel("FakeQuantWithMinMaxVarsGradient")
class FakeQuantWithMinMaxVarsGradientKernel(_VarsKernel):
    def compute(self, ctx, gradients, x, lo, hi):
        _check_same_shape(gradients, x)
        _scalar("min", lo)
        _scalar("max", hi)
        return backprops(gradients, x, lo, hi, *self.quant, None)


def _check_channels(x, lo, hi) -> None:
    if x.ndim < 1:
        raise invalid_argument("inputs must be at least rank 1, was rank 0")
    _vector("min", lo, x.shape[-1])
    _vector("max", hi, x.shape[-1])


@kernel("FakeQuantWithMinMaxVarsPerChannel")
class FakeQuantWithMinMaxVarsPerChannelKernel(_VarsKernel):
    def compute(self, ctx, x, lo, hi):
        _check_channels(x, lo, hi)
        return quantize(x, lo, hi, *self.quant)


@kernel("FakeQuantWithMinMaxVarsPerChannelGradient")
class FakeQuantWithMinMaxVarsPerChannelGradientKernel(_VarsKernel):
    def compute(self, ctx, gradients, x, lo, hi):
        _check_same_shape(gradients, x)
        _check_channels(x, lo, hi)
        return backprops(gradients, x, lo, hi, *self.quant, tuple(range(x.ndim - 1)))
