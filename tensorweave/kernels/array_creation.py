"""Kernels of the creation ops (ops/array_creation_ops.py): Fill, ZerosLike, OnesLike, Range,
LinSpace. Range and LinSpace compute their elements with the same functions the shape
functions and static values use, so all three agree."""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel
from tensorweave.ops.array_creation_ops import linspace_values, range_values


@kernel("Fill")
class FillKernel:
    """`value` broadcast to the shape `dims`."""

    def __init__(self, ctx):
        self.xp = ctx.xp
        self.dtype = ctx.attrs["T"].as_numpy_dtype

    def compute(self, ctx, dims, value):
        if dims.ndim != 1:
            raise invalid_argument(f"dims must be a vector, got shape {dims_text(dims.shape)}")
        if value.ndim != 0:
            raise invalid_argument("value must represent a scalar, got shape "
                                   f"{dims_text(value.shape)}")
        shape = dims.tolist()
        for d in shape:
            if d < 0:
                raise invalid_argument(f"Dimension {d} must be >= 0")
        return self.xp.full(shape, value, dtype=self.dtype)


@kernel(("ZerosLike", "OnesLike"))
class FilledLikeKernel:
    """Zeros (b"" for strings) or ones in the shape of the input."""

    def __init__(self, ctx):
        self.xp = ctx.xp
        dtype = ctx.attrs["T"]
        self.dtype = dtype.as_numpy_dtype
        if ctx.op_type == "OnesLike":
            self.value = 1
        else:
            self.value = b"" if dtype == _dtypes.string else 0

    def compute(self, ctx, x):
        return self.xp.full(x.shape, self.value, dtype=self.dtype)


def _scalars(*named):
    """The 0-d forms of named arguments; TensorFlow's kernels also take a 1-element vector (a
    legacy its shape functions reject, so only fed values reach it), else InvalidArgument."""
    out = []
    for arg_name, v in named:
        if v.ndim != 0 and v.shape != (1,):
            raise invalid_argument(f"{arg_name} must be a scalar, not shape "
                                   f"{dims_text(v.shape)}")
        out.append(v.reshape(()))
    return out


@kernel("Range")
class RangeKernel:
    """start, start + delta, ... up to (not including) limit, in Tidx."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["Tidx"].as_numpy_dtype

    def compute(self, ctx, start, limit, delta):
        start, limit, delta = _scalars(("start", start), ("limit", limit), ("delta", delta))
        try:
            return ctx.xp.asarray(range_values(start, limit, delta, self.dtype))
        except ValueError as e:
            raise invalid_argument(str(e)) from None


@kernel("LinSpace")
class LinSpaceKernel:
    """`num` evenly spaced values from start to stop inclusive, in T."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["T"].as_numpy_dtype

    def compute(self, ctx, start, stop, num):
        for arg_name, v in (("start", start), ("stop", stop), ("num", num)):
            if v.ndim != 0:
                raise invalid_argument(f"{arg_name} must be a scalar, not shape "
                                       f"{dims_text(v.shape)}")
        try:
            return ctx.xp.asarray(linspace_values(start, stop, num, self.dtype))
        except ValueError as e:
            raise invalid_argument(str(e)) from None
