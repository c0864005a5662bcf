"""Kernels of FusedBatchNorm{,V2,V3}, their gradients, LRN and LRNGrad.

Batch norm works on a [rows, C] view (every row one pixel; channels-first inputs are
transposed to it, as TF's CPU kernels do), so each statistic is one NumPy reduction and the
normalization two in-place passes (y = (x - mean) * (scale / sqrt(var + eps)) + offset) over
one temporary. float16/bfloat16 inputs compute in the statistics' dtype U (float32).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel
from tensorweave.ops.nn_norm_ops import layout


class _Layout:
    """A [rows, C] view of x (channels first moved last, as TF's CPU kernels transpose NCHW
    and NCDHW to channels last: the same sums in the same order), and its inverse."""

    def __init__(self, ctx):
        try:
            self.rank, axis = layout(ctx.op_type, ctx.attrs)
        except ValueError as e:
            raise invalid_argument(str(e)) from None
        self.channels_first = axis == 1
        self.epsilon = float(ctx.attrs["epsilon"])
        self.training = bool(ctx.attrs["is_training"])

    def view(self, x: np.ndarray) -> np.ndarray:
        """[rows, C]: every row one pixel."""
        if x.ndim != self.rank:
            raise invalid_argument(f"input must be {self.rank}-dimensional{list(x.shape)}")
        if self.channels_first:
            x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        return x.reshape(-1, x.shape[-1])

    def unview(self, rows: np.ndarray, shape) -> np.ndarray:
        """The [rows, C] result back in x's layout and `shape`."""
        if not self.channels_first:
            return rows.reshape(shape)
        last = (shape[0], *shape[2:], shape[1])
        return np.ascontiguousarray(np.moveaxis(rows.reshape(last), -1, 1))

    axes = 0

    @staticmethod
    def per_channel(v: np.ndarray) -> np.ndarray:
        """A [C] vector, which broadcasts against `view` as it is."""
        return v

    @staticmethod
    def channel_sum(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
        """sum(a) or sum(a * b) per channel, without a product temporary."""
        if b is None:
            return a.sum(axis=0)
        return np.einsum("rc,rc->c", a, b)


def _check_vector(v, channels: int, what: str) -> None:
    if v.shape != (channels,):
        raise invalid_argument(f"{what} must have the same number of elements as the channels of "
                               f"x, got {v.shape[0] if v.ndim == 1 else list(v.shape)} and "
                               f"{channels}")


@kernel(("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"))
class FusedBatchNormKernel:
    """y, batch mean, batch (unbiased, or blended) variance, reserve spaces."""

    def __init__(self, ctx):
        self.lay = _Layout(ctx)
        self.factor = float(ctx.attrs["exponential_avg_factor"])
        self.reserve3 = ctx.op_type == "FusedBatchNormV3"
        self.stat_dtype = ctx.output_dtypes[1].as_numpy_dtype

    def compute(self, ctx, x, scale, offset, mean, variance):
        lay = self.lay
        xv = lay.view(x)
        channels = xv.shape[1]
        u = self.stat_dtype
        work = np.dtype(u if x.dtype == np.float16 else x.dtype).type
        _check_vector(scale, channels, "scale")
        _check_vector(offset, channels, "offset")
        uses_stats = not lay.training or self.factor != 1.0
        if uses_stats:
            _check_vector(mean, channels, "mean")
            _check_vector(variance, channels, "variance")
        xw = xv.astype(work, copy=False)
        extra = (np.zeros(0, u),) if self.reserve3 else ()
        if not lay.training:
            a = scale.astype(work) / np.sqrt(variance.astype(work) + work(lay.epsilon))
            b = offset - mean * a
            y = xw * lay.per_channel(a)
            y += lay.per_channel(b.astype(work))
            return (lay.unview(y, x.shape).astype(x.dtype, copy=False), np.array(mean, u),
                    np.array(variance, u), np.array(mean, u), np.array(variance, u), *extra)
        count = xv.size // max(channels, 1)
        if count == 0:
            nan = np.full(channels, np.nan, u)
            zero = np.zeros(channels, u)
            return (np.array(x), nan, nan.copy(), zero, zero.copy(), *extra)
        batch_mean = xw.mean(axis=lay.axes)
        centered = xw - lay.per_channel(batch_mean)
        batch_var = lay.channel_sum(centered, centered) / count
        a = scale.astype(work) / np.sqrt(batch_var + work(lay.epsilon))
        centered *= lay.per_channel(a)
        centered += lay.per_channel(offset.astype(work))
        unbiased = batch_var * (count / max(count - 1, 1))
        out_mean, out_var = batch_mean, unbiased
        if self.factor != 1.0:
            f = self.factor
            out_mean = (1 - f) * mean + f * batch_mean
            out_var = (1 - f) * variance + f * unbiased
        return (lay.unview(centered, x.shape).astype(x.dtype, copy=False), out_mean.astype(u),
                out_var.astype(u), batch_mean.astype(u), batch_var.astype(u), *extra)


@kernel(("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"))
class FusedBatchNormGradKernel:
    """x_backprop, scale_backprop, offset_backprop (and two empty reserve spaces)."""

    def __init__(self, ctx):
        self.lay = _Layout(ctx)
        self.stat_dtype = ctx.output_dtypes[1].as_numpy_dtype

    def compute(self, ctx, dy, x, scale, mean, variance, *unused_reserve):
        lay = self.lay
        xv, dyv = lay.view(x), lay.view(dy)
        if dy.shape != x.shape:
            raise invalid_argument(f"x and y_backprop must have same shape, but x has shape "
                                   f"{list(x.shape)} and y_backprop has shape {list(dy.shape)}")
        channels = xv.shape[1]
        u = self.stat_dtype
        work = np.dtype(u if x.dtype == np.float16 else x.dtype).type
        for v, what in ((scale, "scale"), (mean, "reserve_space_1"),
                        (variance, "reserve_space_2")):
            _check_vector(v, channels, what)
        xw, dyw = xv.astype(work, copy=False), dyv.astype(work, copy=False)
        inv = 1.0 / np.sqrt(variance.astype(work) + work(lay.epsilon))
        centered = xw - lay.per_channel(mean.astype(work))
        d_offset = lay.channel_sum(dyw)
        d_scale = lay.channel_sum(dyw, centered) * inv
        a = scale.astype(work) * inv
        if lay.training:
            count = max(xv.size // max(channels, 1), 1)
            # dx = scale * inv * (dy - mean(dy) - xhat * mean(dy * xhat))
            centered *= lay.per_channel(-(inv * d_scale / count))
            centered += dyw
            centered -= lay.per_channel(d_offset / count)
            centered *= lay.per_channel(a)
            dx = centered
        else:
            dx = dyw * lay.per_channel(a)
        empty = np.zeros(0, u)
        return (lay.unview(dx, x.shape).astype(x.dtype, copy=False), d_scale.astype(u),
                d_offset.astype(u), empty, empty.copy())


# --- LRN ----------------------------------------------------------------------------------------
class _LRNAttrs:
    def __init__(self, ctx):
        attrs = ctx.attrs
        self.radius = int(attrs["depth_radius"])
        self.bias = float(attrs["bias"])
        self.alpha = float(attrs["alpha"])
        self.beta = float(attrs["beta"])

    def window_sum(self, v: np.ndarray) -> np.ndarray:
        """Sum over channels d - radius .. d + radius (clipped), along the last axis."""
        c = v.shape[-1]
        r = min(self.radius, c - 1) if c else 0
        out = v.copy()
        for shift in range(1, r + 1):
            out[..., shift:] += v[..., :-shift]
            out[..., :-shift] += v[..., shift:]
        return out

    def norm(self, x: np.ndarray) -> np.ndarray:
        if x.ndim != 4:
            raise invalid_argument(f"input must be 4-dimensional, got shape {list(x.shape)}")
        n = self.window_sum(x * x)
        n *= self.alpha
        n += self.bias
        return n


def _work(x):
    return x.astype(np.float32) if x.dtype == np.float16 else x


@kernel("LRN")
class LRNKernel(_LRNAttrs):
    """output = input / (bias + alpha * window sum of squares) ** beta."""

    def compute(self, ctx, x):
        xw = _work(x)
        n = self.norm(xw)
        return (xw * np.power(n, -self.beta)).astype(x.dtype, copy=False)


@kernel("LRNGrad")
class LRNGradKernel(_LRNAttrs):
    """dx = dy * norm^-beta - 2 alpha beta x * window_sum(dy * y / norm)."""

    def compute(self, ctx, dy, x, y):
        if not dy.shape == x.shape == y.shape:
            raise invalid_argument("LRNGrad inputs must have the same shape, got "
                                   f"{list(dy.shape)}, {list(x.shape)} and {list(y.shape)}")
        dyw, xw, yw = _work(dy), _work(x), _work(y)
        n = self.norm(xw)
        inner = self.window_sum(dyw * yw / n)
        dx = dyw * np.power(n, -self.beta)
        dx -= (2.0 * self.alpha * self.beta) * xw * inner
        return dx.astype(dy.dtype, copy=False)
