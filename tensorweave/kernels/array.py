"""Kernels of identity, shape and shape-manipulation ops (ops/array_ops.py).

Reshape, ExpandDims, Squeeze, Transpose and ReverseV2 return views of their input (NumPy
reshape / transpose / negative-stride slicing) and are registered `returns_view`. The common
case runs straight into NumPy; TensorFlow's checks and messages are computed only when NumPy
refuses, or where NumPy is more permissive than TensorFlow.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel, register_pure

# --- Identity, IdentityN, StopGradient ----------------------------------------------------------
# Forwarding kernels: a variable read forwards the variable's storage, like TensorFlow; the
# executor copies a fetched value that may alias variable storage (see node_item.py).
register_pure("Identity", lambda x: x, returns_view=True)
register_pure("IdentityN", lambda *xs: xs, returns_view=True)
register_pure("StopGradient", lambda x: x, returns_view=True)


# --- Shape, ShapeN, Size, Rank ----------------------------------------------------------------
@kernel(("Shape", "ShapeN", "Size"))
class ShapeKernel:
    """Shapes and sizes as `out_type` values."""

    def __init__(self, ctx):
        self.dtype = ctx.attrs["out_type"].as_numpy_dtype
        self.xp = ctx.xp
        if ctx.op_type == "ShapeN":
            self.compute = self.shape_n
        elif ctx.op_type == "Size":
            self.compute = self.size

    def compute(self, ctx, x):
        return self.xp.asarray(x.shape, dtype=self.dtype)

    def shape_n(self, ctx, *xs):
        return tuple(self.xp.asarray(x.shape, dtype=self.dtype) for x in xs)

    def size(self, ctx, x):
        return self.dtype(x.size)


register_pure("Rank", lambda x: np.int32(x.ndim))


# --- Reshape, ExpandDims, Squeeze ---------------------------------------------------------------
def _reshape(tensor, shape):
    if shape.ndim > 1:
        raise invalid_argument(f"sizes input must be 1-D, not {dims_text(shape.shape)}")
    dims = shape.tolist() if shape.ndim else [int(shape)]
    if not dims or min(dims) >= -1:
        try:
            return tensor.reshape(dims)
        except ValueError:
            pass
    return tensor.reshape(_resolve_reshape(np.shape(tensor), dims))


def _resolve_reshape(in_shape, dims) -> list:
    """TF's rules for a shape NumPy refused: errors, and -1 next to zero-sized dimensions."""
    unknown = -1
    product, has_zero = 1, False
    for i, d in enumerate(dims):
        if d == -1:
            if unknown != -1:
                raise invalid_argument(f"Only one input size may be -1, not both {unknown} and {i}")
            unknown = i
        elif d < 0:
            raise invalid_argument(f"Size {i} must be non-negative, not {d}")
        elif d == 0:
            has_zero = True
        else:
            product *= d
    n = math.prod(in_shape)
    out = list(dims)
    if unknown != -1:
        # A zero-sized input dimension is left out of the count when the target has a zero
        # too, so the other dimensions can still be inferred (TensorFlow's rule).
        counted = math.prod(d for d in in_shape if d > 0 or not has_zero)
        input_has_zero = has_zero and 0 in in_shape
        missing = counted // product
        if not input_has_zero and product * missing != counted:
            raise invalid_argument(f"Input to reshape is a tensor with {counted} values, but the "
                                   f"requested shape requires a multiple of {product}")
        out[unknown] = missing
    if math.prod(out) != n:
        raise invalid_argument(f"Input to reshape is a tensor with {n} values, but the requested "
                               f"shape has {math.prod(out)}")
    return out


register_pure("Reshape", _reshape, returns_view=True)


def _expand_dims(x, dim):
    if np.size(dim) != 1:
        raise invalid_argument("'dim' must be a tensor with a single value")
    d, r = dim.item(), np.ndim(x)
    if not -1 - r <= d <= r:
        raise invalid_argument(f"Tried to expand dim index {d} for tensor with {r} dimensions.")
    if d < 0:
        d += r + 1
    shape = np.shape(x)
    return x.reshape(shape[:d] + (1,) + shape[d:])


register_pure("ExpandDims", _expand_dims, returns_view=True)


@kernel("Squeeze", returns_view=True)
class SqueezeKernel:
    """Removes the listed size-1 dimensions (all size-1 dimensions when none are listed)."""

    def __init__(self, ctx):
        self.axes = tuple(ctx.attrs["squeeze_dims"]) or None

    def compute(self, ctx, x):
        try:
            return x.squeeze(self.axes)
        except ValueError:
            raise self._error(np.shape(x)) from None

    def _error(self, shape):
        r = len(shape)
        for d in self.axes:
            if not -r <= d < r:
                return invalid_argument(f"Tried to squeeze dim index {d} for tensor with {r} "
                                        "dimensions.")
            if shape[d % r] != 1:
                return invalid_argument(f"Can not squeeze dim[{d % r}], expected a dimension of 1, "
                                        f"got {shape[d % r]}")
        return invalid_argument(f"Invalid squeeze_dims {list(self.axes)} for shape "
                                f"{dims_text(shape)}")


# --- Transpose, ConjugateTranspose --------------------------------------------------------------
def _transpose(x, perm):
    axes = perm.tolist()
    try:
        return x.transpose(axes)
    except (ValueError, TypeError):
        raise _perm_error(np.ndim(x), axes) from None


def _perm_error(r: int, axes) -> errors.InvalidArgumentError:
    if not isinstance(axes, list) or len(axes) != r:
        size = len(axes) if isinstance(axes, list) else 0
        return invalid_argument(f"transpose expects a vector of size {r}. But input(1) is a vector "
                                f"of size {size}")
    for a in axes:
        if not -r <= a < r:
            return invalid_argument(f"{a} is out of range [0 .. {r})")
    present = {a % r for a in axes}
    missing = min(set(range(r)) - present)
    return invalid_argument(f"{missing} is missing from {{{','.join(str(a) for a in axes)}}}.")


def _conjugate_transpose(x, perm):
    return _transpose(x, perm).conj()


register_pure("Transpose", _transpose, returns_view=True)
register_pure("ConjugateTranspose", _conjugate_transpose, dtypes=_dtypes.COMPLEX)
register_pure("ConjugateTranspose", _transpose, returns_view=True)


# --- Tile --------------------------------------------------------------------------------------
@kernel("Tile")
def _tile(ctx, x, multiples):
    reps = multiples.tolist()
    if not isinstance(reps, list) or len(reps) != np.ndim(x):
        length = len(reps) if isinstance(reps, list) else 0
        raise invalid_argument(f"Expected multiples argument to be a vector of length {np.ndim(x)} "
                               f"but got length {length}")
    for i, m in enumerate(reps):
        if m < 0:
            raise invalid_argument(f"Expected multiples[{i}] >= 0, but got {m}")
    return ctx.xp.tile(x, reps)


# --- Pad, PadV2, MirrorPad ---------------------------------------------------------------------
@kernel(("Pad", "PadV2", "MirrorPad"))
class PadKernel:
    """Constant padding writes the input into a filled array; mirror modes use xp.pad."""

    def __init__(self, ctx):
        self.xp = ctx.xp
        dtype = ctx.attrs["T"]
        self.fill = b"" if dtype == _dtypes.string else dtype.as_numpy_dtype(0)
        self.mode = ctx.attrs.get("mode")
        if self.mode is not None:
            self.mode = self.mode.decode() if isinstance(self.mode, bytes) else self.mode
            # REFLECT must stay inside the dimension; SYMMETRIC may repeat the edge once.
            self.limit_slack = 0 if self.mode == "REFLECT" else 1
            self.np_mode = self.mode.lower()

    def compute(self, ctx, x, paddings, constant_values=None):
        pads = self._paddings(np.shape(x), paddings)
        if self.mode is not None:
            return self._mirror(x, pads)
        if constant_values is None:
            fill = self.fill
        elif np.ndim(constant_values) != 0:
            raise invalid_argument(f"constant_values must be a scalar. Got: "
                                   f"{dims_text(np.shape(constant_values))}")
        else:
            fill = constant_values
        shape = np.shape(x)
        out = self.xp.full([lo + d + hi for d, (lo, hi) in zip(shape, pads)], fill,
                           dtype=np.result_type(x))
        out[tuple(slice(lo, lo + d) for d, (lo, _) in zip(shape, pads))] = x
        return out

    @staticmethod
    def _paddings(shape, paddings) -> list:
        pshape = np.shape(paddings)
        if len(pshape) != 2 or pshape[1] != 2:
            raise invalid_argument(f"paddings must be a matrix with 2 columns: {dims_text(pshape)}")
        if pshape[0] != len(shape):
            raise invalid_argument(f"The first dimension of paddings must be the rank of inputs"
                                   f"{dims_text(pshape)} {dims_text(shape)}")
        pads = paddings.tolist()
        for lo, hi in pads:
            if lo < 0 or hi < 0:
                raise invalid_argument(f"Paddings must be non-negative: {lo} {hi}")
        return pads

    def _mirror(self, x, pads):
        for d, (lo, hi) in zip(np.shape(x), pads):
            if max(lo, hi) > d - 1 + self.limit_slack:
                if self.mode == "REFLECT":
                    raise invalid_argument(f"paddings must be less than the dimension size: {lo}, "
                                           f"{hi} not less than {d}")
                raise invalid_argument("paddings must be no greater than the dimension size: "
                                       f"{lo}, {hi} greater than {d}")
        return self.xp.pad(x, pads, mode=self.np_mode)


@kernel("MirrorPadGrad")
class MirrorPadGradKernel:
    """MirrorPad's adjoint: per dimension, the border entries are added onto the entries they
    mirror (REFLECT skips the edge, SYMMETRIC includes it), then the border is dropped."""

    def __init__(self, ctx):
        mode = ctx.attrs["mode"]
        mode = mode.decode() if isinstance(mode, bytes) else mode
        self.edge = 0 if mode == "SYMMETRIC" else 1  # REFLECT's mirror excludes the edge

    def compute(self, ctx, grad, paddings):
        pads = PadKernel._paddings(np.shape(grad), paddings)
        out = np.array(grad, copy=True)
        e = self.edge
        for axis, (lo, hi) in enumerate(pads):
            n = out.shape[axis] - lo - hi
            if n < 0 or max(lo, hi) > n - e:
                raise invalid_argument(f"paddings {lo}, {hi} are too large for the dimension size "
                                       f"{max(n, 0)}")
            core = np.moveaxis(out, axis, 0)[lo:lo + n].copy()
            moved = np.moveaxis(out, axis, 0)
            if lo:
                core[e:e + lo] += moved[:lo][::-1]
            if hi:
                core[n - e - hi:n - e] += moved[lo + n:][::-1]
            out = np.moveaxis(core, 0, axis)
        return np.ascontiguousarray(out)


# --- ReverseV2 ---------------------------------------------------------------------------------
def reverse_axes(x, axis):
    r = np.ndim(x)
    index = [_ALL] * r
    for i, a in enumerate(axis.tolist()):
        if not -r <= a < r:
            raise invalid_argument(f"'axis'[{i}] = {a} is out of valid range [0, {r - 1}")
        if index[a % r] is _BACKWARD:
            raise invalid_argument(f"axis {a % r} specified more than once.")
        index[a % r] = _BACKWARD
    return x[tuple(index)] if r else x


_ALL = slice(None)
_BACKWARD = slice(None, None, -1)
register_pure("ReverseV2", reverse_axes, returns_view=True)


# --- ReverseSequence ---------------------------------------------------------------------------
@kernel("ReverseSequence")
class ReverseSequenceKernel:
    """Per batch entry, the first `len` entries along seq_dim are read back to front."""

    def __init__(self, ctx):
        self.seq_dim = ctx.attrs["seq_dim"]
        self.batch_dim = ctx.attrs["batch_dim"]

    def compute(self, ctx, x, lengths):
        seq_dim, batch_dim = self.seq_dim, self.batch_dim
        if seq_dim == batch_dim:
            raise invalid_argument(f"seq_dim == batch_dim == {seq_dim}")
        if len(lengths) != x.shape[batch_dim]:
            raise invalid_argument(f"Length of seq_lengths != input.dims({batch_dim}), "
                                   f"({len(lengths)} vs. {x.shape[batch_dim]})")
        steps = x.shape[seq_dim]
        for b, n in enumerate(lengths.tolist()):
            if n < 0:
                raise invalid_argument(f"seq_lens({b}) < 0")
            if n > steps:
                raise invalid_argument(f"seq_lens({b}) > input.dims({seq_dim})")
        # Gather along seq_dim with a per-batch index: t -> len-1-t below len, t otherwise.
        t = np.arange(steps)
        index = np.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)
        shape = [1] * x.ndim
        shape[batch_dim], shape[seq_dim] = len(lengths), steps
        if batch_dim > seq_dim:
            index = index.T
        return np.take_along_axis(x, index.reshape(shape), axis=seq_dim)
