"""Dilation2D and its backprop kernels (NHWC input, [KH, KW, C] filter).

All three walk the KH*KW filter taps in scan order, each gathering the input rows and columns
that tap reads for every output (clipped, with out-of-input taps masked): the forward pass
keeps the running maximum of input + filter over the taps inside the input; the backprop ops
also keep the tap of the first maximum (a strictly greater value takes over, TF's rule) and
then add each output gradient, with one `np.add.at`, at that input element or filter tap. A
window whose values never exceed the dtype's lowest value routes to its clipped corner and tap
(0, 0), as TF's CPU kernel initializes them.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel
from tensorweave.ops.nn_morphology_ops import morphology_geometry, output_size


def _lowest(dtype):
    """Eigen's NumTraits<T>::lowest(): the most negative finite value (so a window of -inf
    gives it, as in TF)."""
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


class _MorphologyKernel:
    """Attrs parsed once; the shared scan over filter taps."""

    def __init__(self, ctx):
        self.error = None
        try:
            self.strides, self.rates, self.padding = morphology_geometry(ctx.op_type,
                                                                         ctx.attrs)
        except ValueError as e:
            self.error = invalid_argument(str(e))
        else:
            strides, rates = list(ctx.attrs["strides"]), list(ctx.attrs["rates"])
            if strides[0] != 1 or strides[3] != 1:
                self.error = errors.UnimplementedError(
                    None, None, "Stride is only supported across spatial dimensions.")
            elif rates[0] != 1 or rates[3] != 1:
                self.error = errors.UnimplementedError(
                    None, None, "Rate is only supported across spatial dimensions.")
        if self.error is not None:
            self.compute = self._fail

    def _fail(self, ctx, *inputs):
        raise self.error

    def scan(self, x, w, track: bool):
        """(maxima, tap index of each first maximum or -1, output sizes, window corners)."""
        if x.ndim != 4:
            raise invalid_argument(f"input must be 4-dimensional{list(x.shape)}")
        if w.ndim != 3:
            raise invalid_argument(f"filter must be 3-dimensional: {list(w.shape)}")
        if x.shape[3] != w.shape[2]:
            raise invalid_argument(f"input and filter must have the same depth: {x.shape[3]} vs "
                                   f"{w.shape[2]}")
        try:
            (oh, top), (ow, left) = (
                output_size(x.shape[1 + a], w.shape[a], self.strides[a], self.rates[a],
                            self.padding) for a in (0, 1))
        except ValueError as e:
            raise invalid_argument(str(e)) from None
        n, h, wd, c = x.shape
        rows0 = np.arange(oh) * self.strides[0] - top
        cols0 = np.arange(ow) * self.strides[1] - left
        best = np.full((n, oh, ow, c), _lowest(x.dtype), x.dtype)
        tap = np.full(best.shape, -1, np.int64) if track else None
        for t, (i, j) in enumerate(np.ndindex(w.shape[0], w.shape[1])):
            rows = rows0 + i * self.rates[0]
            cols = cols0 + j * self.rates[1]
            r_in, c_in = (rows >= 0) & (rows < h), (cols >= 0) & (cols < wd)
            if not r_in.any() or not c_in.any():
                continue
            values = x[:, np.clip(rows, 0, h - 1)][:, :, np.clip(cols, 0, wd - 1)] + w[i, j]
            take = (values > best) & (r_in[:, None] & c_in[None, :])[None, :, :, None]
            np.copyto(best, values, where=take)
            if track:
                tap[take] = t
        return best, tap, (rows0, cols0)

    def check_grad(self, dy, shape) -> None:
        if tuple(dy.shape) != tuple(shape):
            raise invalid_argument("out_backprop has incompatible size.")


@kernel("Dilation2D", expensive=True)
class Dilation2DKernel(_MorphologyKernel):
    """output = max over taps inside the input of input + filter."""

    def compute(self, ctx, x, w):
        return self.scan(x, w, track=False)[0]


def _routes(tap, corners, kw: int, rates, in_hw):
    """Input rows and columns each output's first maximum came from (the clipped window
    corner where no tap ever won)."""
    rows0, cols0 = corners
    won = tap >= 0
    ti, tj = np.where(won, tap // kw, 0), np.where(won, tap % kw, 0)
    rows = rows0[None, :, None, None] + ti * rates[0]
    cols = cols0[None, None, :, None] + tj * rates[1]
    rows = np.where(won, rows, np.clip(rows0[None, :, None, None], 0, in_hw[0] - 1))
    cols = np.where(won, cols, np.clip(cols0[None, None, :, None], 0, in_hw[1] - 1))
    return rows, cols, ti, tj


@kernel(("Dilation2DBackpropInput", "Dilation2DBackpropFilter"), expensive=True)
class Dilation2DBackpropKernel(_MorphologyKernel):
    """d input (each output gradient added at the input element of its maximum) or d filter
    (at the filter tap of its maximum), by op type."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.wrt_input = ctx.op_type == "Dilation2DBackpropInput"

    def compute(self, ctx, x, w, dy):
        best, tap, corners = self.scan(x, w, track=True)
        self.check_grad(dy, best.shape)
        grad = np.zeros(x.shape if self.wrt_input else w.shape, dy.dtype)
        if dy.size:
            rows, cols, ti, tj = _routes(tap, corners, w.shape[1], self.rates, x.shape[1:3])
            channels = np.arange(x.shape[3])
            if self.wrt_input:
                np.add.at(grad, (np.arange(x.shape[0])[:, None, None, None], rows, cols,
                                 channels), dy)
            else:
                np.add.at(grad, (ti, tj, channels), dy)
        return grad
