"""Pooling kernels (2-D and 3-D, any layout): one strided slice per window offset.

For a window of K elements, the padded input is read through K strided slices, each shaped
like the output (slice (a, a + (out - 1) * stride + 1, stride) along every spatial axis for
window offset a). Max pooling is K-1 `np.maximum(out=...)` calls, average pooling K-1 adds
and one multiply by the reciprocal window counts (padding is not counted; the counts depend
only on the shapes and are computed once per plan). When stride == ksize without padding
(the common 2x2 / 2 case) this touches each input once, like a reshape trick, but also serves
every other geometry. Gradients loop over the same slices: MaxPoolGrad routes each window's
gradient to its first maximum in scan order (TF's tie rule) by keeping a per-window
"not yet routed" mask (non-overlapping float NHWC windows take one compiled pass instead);
AvgPoolGrad adds grad / count to every slice. No layout transposes:
the slices index the spatial axes where the data format puts them.
"""
from __future__ import annotations

import itertools

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import intra_op
from tensorweave.kernels.conv import invalid
from tensorweave.kernels.jit import compiled
from tensorweave.kernels.nn import relu_grad_into
from tensorweave.kernels.registry import kernel
from tensorweave.ops.nn_pool_ops import pool_spec


class _Plan:
    """Everything that depends only on the input shape: slices, padding, window counts."""

    __slots__ = ("out_shape", "padded_shape", "center", "windows", "disjoint", "scale",
                 "window_steps", "pads_before", "covered")

    def __init__(self, spec, in_shape):
        axes = spec.spatial_axes
        try:
            out_sizes, pads = spec.output_dims([in_shape[a] for a in axes], spec.ksize)
        except ValueError as e:
            raise invalid(str(e)) from None
        self.out_shape = list(in_shape)
        self.padded_shape = list(in_shape)
        self.pads_before = tuple(before for before, _ in pads)
        center = [slice(None)] * len(in_shape)
        for a, o, (before, after) in zip(axes, out_sizes, pads):
            self.out_shape[a] = o
            self.padded_shape[a] = in_shape[a] + before + after
            center[a] = slice(before, before + in_shape[a])
        self.center = tuple(center) if any(b or a for b, a in pads) else None
        self.windows = []
        for offsets in itertools.product(*(range(k) for k in spec.ksize)):
            index = [slice(None)] * len(in_shape)
            for a, off, o, s in zip(axes, offsets, out_sizes, spec.strides):
                index[a] = slice(off, off + (o - 1) * s + 1, s)
            self.windows.append(tuple(index))
        self.disjoint = all(s >= k for s, k in zip(spec.strides, spec.ksize))
        # Per axis, the input extent one output step covers when windows tile it exactly.
        self.window_steps = [1] * len(in_shape)
        for a, s, k in zip(axes, spec.strides, spec.ksize):
            self.window_steps[a] = s if s == k else 0
        self.scale = self._inverse_counts(spec, in_shape, axes, out_sizes)
        # Every input element lies in some window (windows tile the unpadded input exactly).
        self.covered = self.center is None and all(
            o * s == n for o, s, n in zip(self.out_shape, self.window_steps, in_shape))

    def _inverse_counts(self, spec, in_shape, axes, out_sizes):
        """1 / (number of non-padding elements per window), broadcastable to the output."""
        if self.center is None:
            return 1.0 / int(np.prod(spec.ksize))
        inside = np.zeros([self.padded_shape[i] if i in axes else 1
                           for i in range(len(in_shape))])
        inside[self.center] = 1
        counts = sum(inside[w] for w in self.windows)
        return 1.0 / np.maximum(counts, 1)


class _PoolKernel:
    """Attr parsing and plan caching shared by the pooling kernels."""

    def __init__(self, ctx):
        self.error = None
        try:
            self.spec = pool_spec(ctx.op_type, ctx.attrs)
        except ValueError as e:
            self.error = invalid(str(e))
        else:
            if self.spec.outer_ksize[0] != 1 or self.spec.outer_strides[0] != 1:
                self.error = errors.UnimplementedError(
                    None, None, "Pooling is not yet supported on the batch dimension.")
            elif self.spec.outer_ksize[1] != 1 or self.spec.outer_strides[1] != 1:
                self.error = errors.UnimplementedError(
                    None, None, "Pooling over the depth dimension is not supported.")
        if self.error is not None:
            self.compute = self._fail
        self._plans: dict = {}

    def _fail(self, ctx, *inputs):
        raise self.error

    def plan(self, shape) -> _Plan:
        shape = tuple(shape)
        plan = self._plans.get(shape)
        if plan is None:
            if len(shape) != self.spec.rank:
                raise invalid(f"input must be {self.spec.rank}-dimensional, got shape {shape}")
            plan = _Plan(self.spec, shape)
            if len(self._plans) < 64:
                self._plans[shape] = plan
        return plan


_LOOP_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# The compiled MaxPoolGrad splits inputs of at least PARALLEL_SIZE elements into POOL_CHUNKS
# chunks of the batch.
PARALLEL_SIZE = 1 << 16
POOL_CHUNKS = 8


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _padded(x, plan: _Plan, fill):
    if plan.center is None:
        return x
    xp = np.full(plan.padded_shape, fill, x.dtype)
    xp[plan.center] = x
    return xp


def _window_max(xp, plan: _Plan):
    windows = plan.windows
    if len(windows) == 1:
        return np.array(xp[windows[0]])
    out = np.maximum(xp[windows[0]], xp[windows[1]])
    for w in windows[2:]:
        np.maximum(out, xp[w], out=out)
    return out


def _cropped(xp, plan: _Plan):
    return xp if plan.center is None else xp[plan.center]


@kernel(("MaxPool", "MaxPool3D"), expensive=True)
class MaxPoolKernel(_PoolKernel):
    """Each output is the maximum of its window (padding never wins)."""

    def compute(self, ctx, x):
        plan = self.plan(x.shape)
        return _window_max(_padded(x, plan, _lowest(x.dtype)), plan)


@kernel(("AvgPool", "AvgPool3D"), expensive=True)
class AvgPoolKernel(_PoolKernel):
    """Each output is the mean of its window's elements inside the input."""

    def compute(self, ctx, x):
        plan = self.plan(x.shape)
        work = np.float32 if x.dtype == np.float16 else x.dtype
        xp = _padded(x, plan, 0).astype(work, copy=False)
        windows = plan.windows
        out = np.array(xp[windows[0]])
        for w in windows[1:]:
            out += xp[w]
        out *= plan.scale if np.ndim(plan.scale) == 0 else plan.scale.astype(work)
        return out.astype(x.dtype, copy=False)


def _route(xp, m, plan: _Plan):
    """Yields (window slice, mask) where the mask marks, per output, whether this window
    offset is the first in scan order that holds the window's maximum."""
    remaining = None
    hit = np.empty(m.shape, bool)
    for w in plan.windows:
        np.equal(xp[w], m, out=hit)
        if remaining is None:
            remaining = ~hit
        else:
            hit &= remaining
            remaining ^= hit
        yield w, hit


def _max_pool_grad_nhwc(x, dy, dx, kh, kw, sh, sw, pad_top, pad_left, relu):
    """Compiled MaxPoolGrad for NHWC windows that do not overlap: per window and channel,
    dy goes to the first maximum in scan order (a padding position counts as -inf, and a
    window holding a NaN routes nowhere, as with the slice formulation). Writes every input
    element a window covers; the caller zeroes dx when some are covered by none. `relu`:
    only a positive maximum gets it (ReluGrad of the result, x being the ReLU's output)."""
    n, h, w, c = x.shape
    best = np.empty(c, x.dtype)
    arg = np.empty(c, np.int64)
    nan = np.empty(c, np.bool_)
    routed = np.empty(c, dy.dtype)
    for b in range(n):
        for i in range(dy.shape[1]):
            for j in range(dy.shape[2]):
                r0, c0 = i * sh - pad_top, j * sw - pad_left
                best[:] = -np.inf
                arg[:] = -1
                nan[:] = False
                for k in range(kh * kw):
                    r, col = r0 + k // kw, c0 + k % kw
                    if 0 <= r < h and 0 <= col < w:
                        xs = x[b, r, col]
                        if k == 0:   # (a NaN here is caught by `nan`)
                            for ch in range(c):
                                best[ch], arg[ch], nan[ch] = xs[ch], 0, xs[ch] != xs[ch]
                        else:        # branch-free, so LLVM vectorizes over channels
                            for ch in range(c):
                                v = xs[ch]
                                better = v > best[ch]
                                best[ch] = v if better else best[ch]
                                arg[ch] = k if better else arg[ch]
                                nan[ch] |= v != v
                g = dy[b, i, j]
                for ch in range(c):   # ReluGrad: g * [maximum > 0], NaN and -0.0 as NumPy's
                    routed[ch] = g[ch] if best[ch] > 0 or not relu else g[ch] * 0
                for k in range(kh * kw):
                    r, col = r0 + k // kw, c0 + k % kw
                    if 0 <= r < h and 0 <= col < w:
                        out = dx[b, r, col]
                        for ch in range(c):
                            out[ch] = routed[ch] if (arg[ch] == k) & ~nan[ch] else 0


@kernel(("MaxPoolGrad", "MaxPool3DGrad"), expensive=True)
class MaxPoolGradKernel(_PoolKernel):
    """d input: each window's gradient goes to its first maximum (recomputed from the input,
    as TF's CPU kernel does). Float NHWC 2-D windows that do not overlap (2x2 / 2, the common
    case) run as one compiled pass (measured: 8.6 -> 1.6 ms on MNIST's first pooling layer)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.loop = None
        if self.error is None and self.spec.rank == 4 and not self.spec.channels_first:
            self.loop = compiled(_max_pool_grad_nhwc)

    def compute(self, ctx, x, y, dy):
        return self.route(x, dy, relu=False)

    def route(self, x, dy, relu: bool):
        """d input; with `relu`, times (x > 0) as ReluGrad would make it."""
        plan = self.plan(x.shape)
        if tuple(dy.shape) != tuple(plan.out_shape):
            raise invalid(f"Expected grad shape to be {plan.out_shape}, but got {dy.shape}")
        if self.loop is not None and plan.disjoint and x.dtype in _LOOP_DTYPES \
                and dy.dtype == x.dtype:
            dx = (np.empty if plan.covered else np.zeros)(x.shape, x.dtype)
            x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
            args = (*self.spec.ksize, *self.spec.strides, *plan.pads_before, relu)
            # Images are independent: chunks of the batch run on intra_op's threads.
            step = max(1, -(-x.shape[0] // POOL_CHUNKS)) if x.size >= PARALLEL_SIZE else \
                x.shape[0]

            def chunk(i):
                b = slice(i * step, (i + 1) * step)
                self.loop(x[b], dy[b], dx[b], *args)

            intra_op.parallel_for(-(-x.shape[0] // step), chunk)
            return dx
        dx = self._sliced(x, dy, plan)
        return relu_grad_into(dx, x, out=dx) if relu else dx

    @staticmethod
    def _sliced(x, dy, plan: _Plan):
        """MaxPoolGrad through the window slices (any layout, overlapping windows)."""
        xp = _padded(x, plan, _lowest(x.dtype))
        m = _window_max(xp, plan)
        if plan.disjoint:
            # Each input element is in at most one window: write each offset's share straight
            # into its slice; only elements outside every window need zeros.
            dxp = np.empty(plan.padded_shape, dy.dtype) if plan.covered else \
                np.zeros(plan.padded_shape, dy.dtype)
            for w, hit in _route(xp, m, plan):
                np.multiply(dy, hit, out=dxp[w])
        else:
            dxp = np.zeros(plan.padded_shape, dy.dtype)
            part = np.empty(dy.shape, dy.dtype)
            for w, hit in _route(xp, m, plan):
                np.multiply(dy, hit, out=part)
                dxp[w] += part
        return _cropped(dxp, plan)


@kernel(("MaxPoolGradGrad", "MaxPool3DGradGrad"), expensive=True)
class MaxPoolGradGradKernel(_PoolKernel):
    """Output-shaped: each window takes the incoming (input-shaped) gradient at its maximum."""

    def compute(self, ctx, x, y, g):
        plan = self.plan(x.shape)
        if g.shape != x.shape:
            raise invalid(f"Expected grad shape to be {x.shape}, but got {g.shape}")
        xp = _padded(x, plan, _lowest(x.dtype))
        gp = _padded(g, plan, 0)
        m = _window_max(xp, plan)
        out = np.zeros(m.shape, g.dtype)
        for w, hit in _route(xp, m, plan):
            out += gp[w] * hit
        return out


@kernel(("AvgPoolGrad", "AvgPool3DGrad"), expensive=True)
class AvgPoolGradKernel(_PoolKernel):
    """d input: every window spreads grad / count over its elements."""

    def compute(self, ctx, orig_input_shape, dy):
        shape = tuple(int(d) for d in np.asarray(orig_input_shape).reshape(-1))
        plan = self.plan(shape)
        if tuple(dy.shape) != tuple(plan.out_shape):
            raise invalid(f"Expected grad shape to be {plan.out_shape}, but got {dy.shape}")
        work = np.float32 if dy.dtype == np.float16 else dy.dtype
        share = (dy * plan.scale).astype(work, copy=False)
        dxp = np.zeros(plan.padded_shape, work)
        for w in plan.windows:
            if plan.disjoint:
                dxp[w] = share
            else:
                dxp[w] += share
        return _cropped(dxp, plan).astype(dy.dtype, copy=False)
