"""Pooling kernels (2-D and 3-D, any layout): one strided slice per window offset.

For a window of K elements, the padded input is read through K strided slices, each shaped
like the output (slice (a, a + (out - 1) * stride + 1, stride) along every spatial axis for
window offset a). Max pooling is K-1 `np.maximum(out=...)` calls, average pooling K-1 adds
and one multiply by the reciprocal window counts (padding is not counted; the counts depend
only on the shapes and are computed once per plan). When stride == ksize without padding
(the common 2x2 / 2 case) this touches each input once, like a reshape trick, but also serves
every other geometry. Gradients loop over the same slices: MaxPoolGrad routes each window's
gradient to its first maximum in scan order (TF's tie rule) by keeping a per-window
"not yet routed" mask. Float NHWC 2-D max pooling takes one compiled pass instead (its
gradient when windows do not overlap), and 2x2 windows at stride 2 (the common layer) a
vectorized one over whole rows;
AvgPoolGrad adds grad / count to every slice. No layout transposes:
the slices index the spatial axes where the data format puts them.
"""
from __future__ import annotations

import itertools

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels import intra_op
from tensorweave.kernels.jit import LOOP_DTYPES, compiled, loop_helper, loop_input
from tensorweave.kernels.nn import relu_grad_into
from tensorweave.kernels.registry import kernel
from tensorweave.ops.nn_pool_ops import pool_spec


class PoolPlan:
    """Everything that depends only on the input shape: slices, padding, window counts."""

    __slots__ = ("out_shape", "padded_shape", "center", "windows", "disjoint", "scale",
                 "window_steps", "pads_before", "covered")

    def __init__(self, spec, in_shape):
        axes = spec.spatial_axes
        try:
            out_sizes, pads = spec.output_dims([in_shape[a] for a in axes], spec.ksize)
        except ValueError as e:
            raise invalid_argument(str(e)) from None
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
            self.error = invalid_argument(str(e))
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

    def plan(self, shape) -> PoolPlan:
        shape = tuple(shape)
        plan = self._plans.get(shape)
        if plan is None:
            if len(shape) != self.spec.rank:
                raise invalid_argument(f"input must be {self.spec.rank}-dimensional, got shape "
                                       f"{shape}")
            plan = PoolPlan(self.spec, shape)
            if len(self._plans) < 64:
                self._plans[shape] = plan
        return plan


# The compiled MaxPool and MaxPoolGrad split inputs of at least PARALLEL_SIZE elements into
# POOL_CHUNKS chunks of the batch (images are independent).
PARALLEL_SIZE = 1 << 16
POOL_CHUNKS = 8


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _padded(x, plan: PoolPlan, fill):
    if plan.center is None:
        return x
    xp = np.full(plan.padded_shape, fill, x.dtype)
    xp[plan.center] = x
    return xp


def _window_max(xp, plan: PoolPlan):
    windows = plan.windows
    if len(windows) == 1:
        return np.array(xp[windows[0]])
    out = np.maximum(xp[windows[0]], xp[windows[1]])
    for w in windows[2:]:
        np.maximum(out, xp[w], out=out)
    return out


def _cropped(xp, plan: PoolPlan):
    return xp if plan.center is None else xp[plan.center]


@loop_helper
def _window_maximum(x, b, r0, c0, kh, kw, m, mb, mi, mj):
    """m[mb, mi, mj, :] = per channel, the maximum of NHWC `x`'s image b's elements in the
    kh x kw window at (r0, c0) that lie inside it: NaN wins, -inf if none does (padding never
    changes it). Elements are indexed directly: views per window and pixel (x[b],
    out[b, i, j]) made the passes slower (8 images of MNIST's first pooling layer: MaxPool
    105 -> 68 us, MaxPoolGrad 181 -> 153 us)."""
    h, w, c = x.shape[1], x.shape[2], x.shape[3]
    for ch in range(c):
        m[mb, mi, mj, ch] = -np.inf
    for dr in range(kh):
        r = r0 + dr
        if r < 0 or r >= h:
            continue
        for dc in range(kw):
            col = c0 + dc
            if col < 0 or col >= w:
                continue
            for ch in range(c):
                a, v = m[mb, mi, mj, ch], x[b, r, col, ch]
                m[mb, mi, mj, ch] = a if (a > v or a != a) else v


def _max_pool_nhwc(x, out, kh, kw, sh, sw, pad_top, pad_left):
    """Compiled MaxPool for NHWC float windows (any stride): the maximum of each window's
    elements inside the input (NaN wins, -inf if none is inside), vectorized over channels,
    in one pass over the input. The values are `_window_max`'s; only the sign of a zero
    maximum reached by both 0.0 and -0.0 may differ (NumPy's maximum itself picks either,
    by its SIMD or scalar path)."""
    for b in range(x.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                _window_maximum(x, b, i * sh - pad_top, j * sw - pad_left, kh, kw, out, b, i, j)


def _max_pool_2x2_nhwc(x, out):
    """_max_pool_nhwc for 2x2 windows at stride 2 that lie inside the input (the common
    pooling layer), the same comparisons in the same order, written over whole rows so that
    LLVM vectorizes it (64x28x28x32 on one thread: 357 -> 86 us)."""
    n, h, w, c = x.shape
    oh, ow = out.shape[1], out.shape[2]
    rows = x.reshape(n * h, w * c)
    out_rows = out.reshape(n * oh, ow * c)
    for b in range(n):
        for i in range(oh):
            top, bottom, o = rows[b * h + 2 * i], rows[b * h + 2 * i + 1], out_rows[b * oh + i]
            for j in range(ow):
                left = 2 * j * c
                for ch in range(c):
                    o[j * c + ch] = _max4(top[left + ch], top[left + c + ch],
                                          bottom[left + ch], bottom[left + c + ch])


@loop_helper
def _max4(a0, a1, a2, a3):
    """The maximum of a 2x2 window in scan order, as _window_maximum takes it (NaN wins)."""
    m = a0 if (a0 > a1) | (a0 != a0) else a1
    m = m if (m > a2) | (m != m) else a2
    return m if (m > a3) | (m != m) else a3


def _max_pool_grad_2x2_nhwc(x, dy, dx, relu):
    """_max_pool_grad_nhwc for 2x2 windows at stride 2 that lie inside the input: the same
    routing (first maximum in scan order, none for a NaN window), written as selects over
    whole rows, one output row per loop, so that LLVM vectorizes it (64x28x28x32 on one
    thread: 760 -> 270 us)."""
    n, h, w, c = x.shape
    oh, ow = dy.shape[1], dy.shape[2]
    rows = x.reshape(n * h, w * c)
    grad_rows = dx.reshape(n * h, w * c)
    dy_rows = dy.reshape(n * oh, ow * c)
    for b in range(n):
        for i in range(oh):
            top, bottom = rows[b * h + 2 * i], rows[b * h + 2 * i + 1]
            d_top, d_bottom = grad_rows[b * h + 2 * i], grad_rows[b * h + 2 * i + 1]
            g = dy_rows[b * oh + i]
            for j in range(ow):
                left = 2 * j * c
                for ch in range(c):
                    a0, a1 = top[left + ch], top[left + c + ch]
                    m = _max4(a0, a1, bottom[left + ch], bottom[left + c + ch])
                    r = _routed(g[j * c + ch], m, relu)
                    first = a0 == m
                    d_top[left + ch] = r if first else 0
                    d_top[left + c + ch] = r if (a1 == m) > first else 0
                for ch in range(c):
                    a2, a3 = bottom[left + ch], bottom[left + c + ch]
                    m = _max4(top[left + ch], top[left + c + ch], a2, a3)
                    r = _routed(g[j * c + ch], m, relu)
                    above = (top[left + ch] == m) | (top[left + c + ch] == m)
                    d_bottom[left + ch] = r if (a2 == m) > above else 0
                    d_bottom[left + c + ch] = r if (a3 == m) > (above | (a2 == m)) else 0


@loop_helper
def _routed(g, m, relu):
    """The gradient a window routes: g, or with `relu` g * 0 unless its maximum is positive."""
    return g if (m > 0) | (not relu) else g * 0


def _tiles_2x2(spec, plan: PoolPlan, shape) -> bool:
    """Whether the windows are 2x2 at stride 2 and all inside the input (no padding reached):
    what the vectorized 2x2 loops take."""
    return tuple(spec.ksize) == (2, 2) and tuple(spec.strides) == (2, 2) and \
        plan.pads_before == (0, 0) and 2 * plan.out_shape[1] <= shape[1] and \
        2 * plan.out_shape[2] <= shape[2]


def _over_batch(x, run) -> None:
    """run(batch slice) over all of x's images: in chunks on intra_op's threads when large."""
    n = x.shape[0]
    step = -(-n // POOL_CHUNKS) if x.size >= PARALLEL_SIZE else max(n, 1)
    intra_op.parallel_for(-(-n // step), lambda i: run(slice(i * step, (i + 1) * step)))


def splits_over_batch(op_type: str, node) -> bool:
    """Whether a MaxPool / MaxPoolGrad (`op_type`) node runs the compiled NHWC pass on an input
    large enough for `_over_batch` to split: known from its attrs and static input shape."""
    try:
        spec = pool_spec(op_type, node.attrs)
    except (KeyError, ValueError):
        return False
    return spec.rank == 4 and not spec.channels_first and loop_input(node, PARALLEL_SIZE) and \
        (op_type == "MaxPool" or all(s >= k for s, k in zip(spec.strides, spec.ksize)))


@kernel(("MaxPool", "MaxPool3D"), expensive=True)
class MaxPoolKernel(_PoolKernel):
    """Each output is the maximum of its window (padding never wins). Float NHWC 2-D
    windows run as one compiled pass (measured on MNIST's first pooling layer, 64x28x28x32:
    0.92-1.27 ms through slices, 0.43-0.65 ms compiled on one thread)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.loop = self.loop_2x2 = None
        if self.error is None and self.spec.rank == 4 and not self.spec.channels_first:
            self.loop = compiled(_max_pool_nhwc)
            self.loop_2x2 = compiled(_max_pool_2x2_nhwc)

    @staticmethod
    def splits_work(node) -> bool:
        """Read by the cost model: a split pass runs inline, like a BLAS kernel."""
        return splits_over_batch(node.op, node)

    def compute(self, ctx, x):
        plan = self.plan(x.shape)
        if self.loop is not None and x.dtype in LOOP_DTYPES:
            x = np.ascontiguousarray(x)
            out = np.empty(plan.out_shape, x.dtype)
            if _tiles_2x2(self.spec, plan, x.shape):
                _over_batch(x, lambda b: self.loop_2x2(x[b], out[b]))
                return out
            args = (*self.spec.ksize, *self.spec.strides, *plan.pads_before)
            _over_batch(x, lambda b: self.loop(x[b], out[b], *args))
            return out
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


def _route(xp, m, plan: PoolPlan):
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
    only a positive maximum gets it (ReluGrad of the result, x being the ReLU's output).
    Two passes per window, vectorized over channels: the maximum (as the forward pass takes
    it), then each element in scan order takes the gradient if it equals the maximum and no
    earlier one did."""
    n, h, w, c = x.shape
    lowest = -np.inf
    best = np.empty((1, 1, 1, c), x.dtype)   # the window's maximum, as _window_maximum writes it
    routed = np.empty(c, dy.dtype)
    unrouted = np.empty(c, np.bool_)
    for b in range(n):
        for i in range(dy.shape[1]):
            r0 = i * sh - pad_top
            for j in range(dy.shape[2]):
                c0 = j * sw - pad_left
                padded = r0 < 0 or c0 < 0 or r0 + kh > h or c0 + kw > w
                _window_maximum(x, b, r0, c0, kh, kw, best, 0, 0, 0)
                for ch in range(c):
                    g = dy[b, i, j, ch]
                    routed[ch] = g if best[0, 0, 0, ch] > 0 or not relu else g * 0
                    unrouted[ch] = True
                for dr in range(kh):
                    r = r0 + dr
                    for dc in range(kw):
                        col = c0 + dc
                        if padded and (r < 0 or r >= h or col < 0 or col >= w):
                            for ch in range(c):   # a -inf maximum may go to the padding
                                unrouted[ch] = unrouted[ch] and best[0, 0, 0, ch] != lowest
                            continue
                        for ch in range(c):
                            hit = unrouted[ch] and x[b, r, col, ch] == best[0, 0, 0, ch]
                            dx[b, r, col, ch] = routed[ch] if hit else 0
                            unrouted[ch] = unrouted[ch] and not hit


@kernel(("MaxPoolGrad", "MaxPool3DGrad"), expensive=True)
class MaxPoolGradKernel(_PoolKernel):
    """d input: each window's gradient goes to its first maximum (recomputed from the input,
    as TF's CPU kernel does). Float NHWC 2-D windows that do not overlap (2x2 / 2, the common
    case) run as one compiled pass (measured: 8.6 -> 1.6 ms on MNIST's first pooling layer)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.loop = self.loop_2x2 = None
        if self.error is None and self.spec.rank == 4 and not self.spec.channels_first:
            self.loop = compiled(_max_pool_grad_nhwc)
            self.loop_2x2 = compiled(_max_pool_grad_2x2_nhwc)

    @staticmethod
    def splits_work(node) -> bool:
        """Read by the cost model: a split pass runs inline, like a BLAS kernel."""
        return splits_over_batch(node.op, node)

    def compute(self, ctx, x, y, dy):
        return self.route(x, dy, relu=False)

    def route(self, x, dy, relu: bool):
        """d input; with `relu`, times (x > 0) as ReluGrad would make it."""
        plan = self.plan(x.shape)
        if tuple(dy.shape) != tuple(plan.out_shape):
            raise invalid_argument(f"Expected grad shape to be {plan.out_shape}, but got "
                                   f"{dy.shape}")
        if self.loop is not None and plan.disjoint and x.dtype in LOOP_DTYPES \
                and dy.dtype == x.dtype:
            dx = (np.empty if plan.covered else np.zeros)(x.shape, x.dtype)
            x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
            if _tiles_2x2(self.spec, plan, x.shape):
                _over_batch(x, lambda b: self.loop_2x2(x[b], dy[b], dx[b], relu))
                return dx
            args = (*self.spec.ksize, *self.spec.strides, *plan.pads_before, relu)
            _over_batch(x, lambda b: self.loop(x[b], dy[b], dx[b], *args))
            return dx
        dx = self._sliced(x, dy, plan)
        return relu_grad_into(dx, x, out=dx) if relu else dx

    @staticmethod
    def _sliced(x, dy, plan: PoolPlan):
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
            raise invalid_argument(f"Expected grad shape to be {x.shape}, but got {g.shape}")
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
            raise invalid_argument(f"Expected grad shape to be {plan.out_shape}, but got "
                                   f"{dy.shape}")
        work = np.float32 if dy.dtype == np.float16 else dy.dtype
        share = (dy * plan.scale).astype(work, copy=False)
        dxp = np.zeros(plan.padded_shape, work)
        for w in plan.windows:
            if plan.disjoint:
                dxp[w] = share
            else:
                dxp[w] += share
        return _cropped(dxp, plan).astype(dy.dtype, copy=False)
