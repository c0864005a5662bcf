"""Kernels of reductions, ArgMax/ArgMin, Cumsum/Cumprod and TopKV2.

Every kernel returns exactly the dtype its OpDef declares: integer sums and products keep
their (wrapping) dtype, float16 reductions accumulate in float32 (scans in float16; a mean
rounds its sum to float16 before dividing), integer means truncate toward zero, and
reductions over no elements give the identity (or the dtype's extreme for Max/Min).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.jit import LOOP_DTYPES, compiled
from tensorweave.kernels.registry import kernel


def _accumulator(dtype: np.dtype) -> np.dtype:
    """float16 sums in float32 (like TF) so rounding does not compound; others keep theirs."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# The reducers call ufunc.reduce directly: np.sum and friends add a few microseconds of
# argument dispatch per call, which is most of the cost of a small reduction.

def _sum(xp, x, axes, keep):
    acc = _accumulator(x.dtype)
    out = xp.add.reduce(x, axis=axes, dtype=acc, keepdims=keep)
    return out if acc == x.dtype else out.astype(x.dtype)


def _prod(xp, x, axes, keep):
    acc = _accumulator(x.dtype)
    out = xp.multiply.reduce(x, axis=axes, dtype=acc, keepdims=keep)
    return out if acc == x.dtype else out.astype(x.dtype)


def _count(x, axes) -> int:
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _mean(xp, x, axes, keep):
    n = _count(x, axes)
    kind = x.dtype.kind
    if kind in "iu":
        # Sum in 64 bits (so int8 means do not wrap), then divide truncating toward zero.
        total = xp.add.reduce(x, axis=axes, dtype=np.int64 if kind == "i" else np.uint64,
                              keepdims=keep)
        if n == 0:
            return xp.zeros_like(total, dtype=x.dtype)[()]
        q = total // n
        if kind == "i":
            q = q + ((total % n != 0) & (total < 0))
        return q.astype(x.dtype)
    # TensorFlow rounds a float16 sum to float16 before dividing: a sum past 65504 makes the
    # mean inf (4096 float16 30s average to inf).
    total = xp.add.reduce(x, axis=axes, dtype=_accumulator(x.dtype), keepdims=keep)
    total = total.astype(x.dtype, copy=False)
    if n == 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (total / n).astype(x.dtype)
    out = total / n
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def _extreme(dtype: np.dtype, lowest: bool):
    if dtype.kind == "f":
        return -np.inf if lowest else np.inf
    info = np.iinfo(dtype)
    return info.min if lowest else info.max


def _max(xp, x, axes, keep):
    if x.size == 0:
        return xp.maximum.reduce(x, axis=axes, keepdims=keep, initial=_extreme(x.dtype, True))
    return xp.maximum.reduce(x, axis=axes, keepdims=keep)


def _min(xp, x, axes, keep):
    if x.size == 0:
        return xp.minimum.reduce(x, axis=axes, keepdims=keep, initial=_extreme(x.dtype, False))
    return xp.minimum.reduce(x, axis=axes, keepdims=keep)


def _all(xp, x, axes, keep):
    return xp.logical_and.reduce(x, axis=axes, keepdims=keep)


def _any(xp, x, axes, keep):
    return xp.logical_or.reduce(x, axis=axes, keepdims=keep)


REDUCERS = {"Sum": _sum, "Mean": _mean, "Prod": _prod, "Max": _max, "Min": _min,
            "All": _all, "Any": _any}


def normalize_axes(axes, ndim: int) -> tuple[int, ...]:
    """The reduction indices as distinct non-negative axes; InvalidArgumentError otherwise."""
    if np.ndim(axes) > 1:
        raise invalid_argument(f"reduction_indices must be a scalar or vector, got shape "
                               f"{dims_text(np.shape(axes))}")
    out = []
    for a in np.ravel(axes).tolist():
        if not -ndim <= a < ndim:
            raise invalid_argument(f"Invalid reduction dimension ({a} for input with {ndim} "
                                   "dimension(s)")
        a %= ndim
        if a in out:
            raise invalid_argument("Invalid reduction arguments: Axes contains duplicate "
                                   f"dimension: {a}")
        out.append(a)
    return tuple(out)


def reduce_values(op_type: str, x, axes, keep: bool):
    """NumPy reference of the reduction `op_type` (also the static-value rule of its op)."""
    x = np.asarray(x)
    return REDUCERS[op_type](np, x, normalize_axes(axes, x.ndim), keep)


def _sum_rows_loop(x, out):
    for c in range(x.shape[1]):
        out[c] = x[0, c]
    for r in range(1, x.shape[0]):
        for c in range(x.shape[1]):
            out[c] += x[r, c]


# A Sum over leading axes (bias gradients: all but the channel axis) of a large contiguous float
# array runs as a compiled loop adding row after row, which is the order NumPy's add.reduce
# uses when the kept trailing part is at least a few elements wide, so the bits are the same
# (measured: 1.4 -> 0.4 ms for a [64, 28, 28, 32] gradient; NumPy runs a short inner loop per
# row there). Compiled on the first such array, so programs with only small sums never load numba.
_ROWS_MIN_SIZE, ROWS_MIN_WIDTH = 1 << 16, 8


@kernel(list(REDUCERS))
class ReductionKernel:
    """Sum/Mean/Prod/Max/Min/All/Any; the axes are normalized once per distinct value."""

    def __init__(self, ctx):
        self.reduce = REDUCERS[ctx.op_type]
        self.keep = ctx.attrs["keep_dims"]
        self.xp = ctx.xp
        self._axes: dict = {}
        self.leading_sum = ctx.op_type == "Sum"

    def compute(self, ctx, x, axes):
        key = (axes.tobytes(), axes.ndim, x.ndim)
        norm = self._axes.get(key)
        if norm is None:
            norm = normalize_axes(axes, x.ndim)
            if len(self._axes) < 64:
                self._axes[key] = norm
        if self.leading_sum and x.__class__ is np.ndarray and \
                x.size >= _ROWS_MIN_SIZE and x.dtype in LOOP_DTYPES and x.flags.c_contiguous \
                and 0 < len(norm) < x.ndim and sorted(norm) == list(range(len(norm))):
            kept = x.shape[len(norm):]
            width = int(np.prod(kept))
            if width >= ROWS_MIN_WIDTH:
                out = np.empty(kept, x.dtype)
                compiled(_sum_rows_loop)(x.reshape(-1, width), out.reshape(-1))
                return out.reshape((1,) * len(norm) + kept) if self.keep else out
        return self.reduce(self.xp, x, norm, self.keep)


def axis_in_range(axis, ndim: int, prefix: str, what: str) -> int:
    """A scalar axis in [-ndim, ndim) made non-negative; InvalidArgumentError otherwise."""
    if np.ndim(axis) != 0:
        raise invalid_argument(f"{prefix}{what} must be a scalar, not {dims_text(np.shape(axis))}")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise invalid_argument(f"{prefix}Expected {what} in the range [{-ndim}, {ndim}), but got "
                               f"{a}")
    return a % ndim


def _has_nan(x) -> bool:
    """Whether a float array holds a NaN: one reduction (min propagates NaN), no mask."""
    return x.dtype.kind == "f" and x.size > 0 and bool(np.isnan(np.min(x)))


@kernel(["ArgMax", "ArgMin"])
class ArgReductionKernel:
    """Index of the first extreme value along one axis, in `output_type`."""

    def __init__(self, ctx):
        self.is_max = ctx.op_type == "ArgMax"
        self.fn = ctx.xp.argmax if self.is_max else ctx.xp.argmin
        self.out = ctx.attrs["output_type"].as_numpy_dtype

    def compute(self, ctx, x, dimension):
        axis = axis_in_range(dimension, x.ndim, "", "dimension")
        if x.shape[axis] == 0:
            raise invalid_argument(f"Reduction axis {axis} is empty in shape {dims_text(x.shape)}")
        if _has_nan(x):
            # TensorFlow compares with `>` / `<` from the first element: a NaN never wins
            # (an all-NaN row gives index 0), unlike NumPy, which returns the first NaN.
            x = np.where(np.isnan(x), -np.inf if self.is_max else np.inf, x)
        return self.fn(x, axis=axis).astype(self.out, copy=False)


@kernel(["Cumsum", "Cumprod"])
class ScanKernel:
    """Inclusive or exclusive, forward or reverse cumulative sums and products."""

    def __init__(self, ctx):
        self.xp = ctx.xp
        self.is_sum = ctx.op_type == "Cumsum"
        self.exclusive = ctx.attrs["exclusive"]
        self.reverse = ctx.attrs["reverse"]

    def compute(self, ctx, x, axis):
        xp = self.xp
        a = axis_in_range(axis, x.ndim, "ScanOp: ", "scan axis")
        if self.reverse:
            x = xp.flip(x, a)
        if self.exclusive and x.shape[a] > 0:
            # Shift by one along the axis, entering the identity: [a, b, c] -> [0, a, b].
            head_shape = list(x.shape)
            head_shape[a] = 1
            head = xp.full(head_shape, 0 if self.is_sum else 1, dtype=x.dtype)
            body = x[(slice(None),) * a + (slice(0, -1),)]
            x = xp.concatenate([head, body], axis=a)
        # Unlike the reductions, TensorFlow's scans accumulate in the input dtype, float16
        # included: each partial sum is rounded (3000 float16 ones sum to 2048).
        scan = xp.cumsum if self.is_sum else xp.cumprod
        out = scan(x, axis=a, dtype=x.dtype)
        return xp.flip(out, a) if self.reverse else out


@kernel("TopKV2")
class TopKKernel:
    """The k largest entries of each last-axis row; ties keep the lower index first."""

    def __init__(self, ctx):
        self.xp = ctx.xp
        self.index_type = ctx.attrs["index_type"].as_numpy_dtype

    def compute(self, ctx, x, k):
        xp = self.xp
        k = int(k)
        if k < 0:
            raise invalid_argument(f"Need k >= 0, got {k}")
        if x.ndim < 1:
            raise invalid_argument(f"input must be >= 1-D, got shape {dims_text(x.shape)}")
        if x.shape[-1] < k:
            raise invalid_argument(f"input must have at least k columns. Had {x.shape[-1]}, needed "
                                   f"{k}")
        # A stable ascending sort of an order-reversing key: -x for floats, with NaN first
        # (TensorFlow ranks NaN above every number), ~x for integers (no overflow at the
        # minimum, unlike -x).
        if x.dtype.kind == "f":
            key = -x
            if _has_nan(x):
                key[xp.isnan(x)] = -xp.inf
        else:
            key = ~x
        indices = xp.argsort(key, axis=-1, kind="stable")[..., :k]
        values = xp.take_along_axis(x, indices, axis=-1)
        return values, indices.astype(self.index_type, copy=False)
