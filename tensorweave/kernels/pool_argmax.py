"""MaxPoolWithArgmax and MaxPoolGradWithArgmax kernels (NHWC).

The forward pass walks the window offsets in scan order (one strided slice of the padded input
per offset, as `kernels/pool.py` does): an element takes over a window's maximum when it is
greater, or when the window has none yet and the element lies inside the input, TF's CPU rule
(so a window of -inf or NaN points at its first element; padding never wins). Its flat index
comes from broadcast row, column and channel index grids. The gradient is one
`np.add.at` of the output gradient at the argmax positions.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.pool import PoolPlan
from tensorweave.kernels.registry import kernel
from tensorweave.ops.nn_pool_argmax_ops import argmax_pool_spec


class _ArgmaxKernel:
    """Attrs parsed once; shape plans (pool.py's PoolPlan) cached per input shape."""

    def __init__(self, ctx):
        self.error = None
        try:
            self.spec = argmax_pool_spec(ctx.op_type, ctx.attrs)
        except ValueError as e:
            self.error = invalid_argument(str(e))
        else:
            if self.spec.outer_ksize != (1, 1) or self.spec.outer_strides != (1, 1):
                self.error = errors.UnimplementedError(
                    None, None, "MaxPooling supports exactly one of pooling across depth or "
                    "pooling across width/height.")
        if self.error is not None:
            self.compute = self._fail
        self.include_batch = bool(ctx.attrs.get("include_batch_in_index", False))
        self._plans: dict = {}

    def _fail(self, ctx, *inputs):
        raise self.error

    def plan(self, shape) -> PoolPlan:
        shape = tuple(shape)
        if len(shape) != 4:
            raise invalid_argument(f"tensor_in must be 4-dimensional, got shape {list(shape)}")
        plan = self._plans.get(shape)
        if plan is None:
            plan = PoolPlan(self.spec, shape)
            if len(self._plans) < 64:
                self._plans[shape] = plan
        return plan


@kernel("MaxPoolWithArgmax", expensive=True)
class MaxPoolWithArgmaxKernel(_ArgmaxKernel):
    """(window maxima, flat index of each window's first maximum)."""

    def compute(self, ctx, x):
        plan = self.plan(x.shape)
        n, h, w, c = x.shape
        _, oh, ow, _ = plan.out_shape
        top, left = plan.pads_before
        lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        best = np.full(plan.out_shape, lowest, x.dtype)
        index = np.full(plan.out_shape, -1, np.int64)
        rows0 = np.arange(oh)[:, None] * self.spec.strides[0] - top
        cols0 = np.arange(ow)[None, :] * self.spec.strides[1] - left
        channels = np.arange(c)
        offsets = [(i, j) for i in range(self.spec.ksize[0]) for j in range(self.spec.ksize[1])]
        padded = np.full(plan.padded_shape, lowest, x.dtype)
        padded[plan.center or slice(None)] = x
        for (i, j), window in zip(offsets, plan.windows):
            rows, cols = rows0 + i, cols0 + j
            inside = ((rows >= 0) & (rows < h) & (cols >= 0) & (cols < w))[None, :, :, None]
            values = padded[window]
            take = (values > best) | ((index < 0) & inside)
            best = np.where(take, values, best)
            flat = ((rows * w + cols)[None, :, :, None] * c + channels)
            index = np.where(take, flat, index)
        if self.include_batch and n:
            index = index + (np.arange(n) * (h * w * c))[:, None, None, None]
        return best, index.astype(ctx.attrs["Targmax"].as_numpy_dtype, copy=False)


@kernel("MaxPoolGradWithArgmax", expensive=True)
class MaxPoolGradWithArgmaxKernel(_ArgmaxKernel):
    """d input: each output gradient added at the input element its argmax names."""

    def compute(self, ctx, x, dy, argmax):
        plan = self.plan(x.shape)
        want = list(plan.out_shape)
        if list(dy.shape) != want:
            raise invalid_argument(f"Expected grad shape to be {dims_text(want)}, but got "
                                   f"{dims_text(dy.shape)}")
        if list(argmax.shape) != want:
            raise invalid_argument(f"Expected argmax shape to be {dims_text(want)}, but got "
                                   f"{dims_text(argmax.shape)}")
        n = x.shape[0]
        per_image = x.size // n if n else 0
        flat = argmax.reshape(n, -1).astype(np.int64)
        if not self.include_batch:
            flat = flat + (np.arange(n) * per_image)[:, None]
        bad = (flat < 0) | (flat >= x.size)
        if bad.any():
            raise invalid_argument(f"Invalid output gradient index: {int(flat[bad][0])}, 0, "
                                   f"{x.size}")
        dx = np.zeros(x.size, dy.dtype)
        np.add.at(dx, flat.ravel(), dy.ravel())
        return dx.reshape(x.shape)

