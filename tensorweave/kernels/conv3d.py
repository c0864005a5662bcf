"""Conv3D kernels: im2col + GEMM for the forward op and the filter gradient, a GEMM per filter
tap for the input gradient.

  * Forward: pad the input once, view its patches with `as_strided` as
    [N, OD, OH, OW, KD, KH, KW, C] (no copy); per block of whole images copy the patch rows
    into a [pixels, KD*KH*KW*C] matrix and multiply by the filter reshaped [K, OC]. Blocks
    hold about `conv.BLOCK_BYTES` of patches, so no huge patch matrix is ever allocated.
  * Conv3DBackpropFilterV2: the same patch blocks, transposed, times the output gradient,
    summed in block order.
  * Conv3DBackpropInputV2: for each of the KD*KH*KW filter taps, dy @ w[tap]^T ([pixels, OC] x
    [OC, C]) is added into the strided slice of the padded input gradient that tap read
    (col2im one tap at a time); then the padding is cut off.
  * NCDHW is transposed to NDHWC on the way in and back on the way out; float16 and
    bfloat16 compute in float32 (no half-precision GEMM in BLAS).
Geometry (attr checks, output sizes, pads) is `conv.Geometry` with rank 5.
"""
from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels import linalg
from tensorweave.kernels.conv import (
    Geometry,
    block_rows,
    from_channels_last,
    pad_spatial,
    to_channels_last,
)
from tensorweave.kernels.registry import kernel
from tensorweave.ops.nn_conv3d_ops import FORMATS, PADDINGS


def patches_nd(xp: np.ndarray, out_sp, k_sp, strides, dilations) -> np.ndarray:
    """Read-only [N, *out, *k, C] view of the patches of padded channels-last `xp`."""
    sn, *ss, sc = xp.strides
    shape = (xp.shape[0], *out_sp, *k_sp, xp.shape[-1])
    steps = (sn, *(s * st for s, st in zip(ss, strides)),
             *(s * d for s, d in zip(ss, dilations)), sc)
    return as_strided(xp, shape, steps, writeable=False)


def _image_blocks(n: int, per_image_rows: int, k: int, itemsize: int):
    """Slices of whole images holding about `block_rows` patch rows each."""
    step = max(1, block_rows(k, itemsize) // max(per_image_rows, 1))
    return [slice(i, min(n, i + step)) for i in range(0, n, step)]


def conv3d_ndhwc(x, w, strides, dilations, out_sp, pads) -> np.ndarray:
    """Forward convolution of channels-last `x` with `w` [*k, C, OC] (im2col + GEMM)."""
    n, c, oc = x.shape[0], w.shape[-2], w.shape[-1]
    k = int(np.prod(w.shape[:-1]))
    view = patches_nd(pad_spatial(x, pads), out_sp, w.shape[:-2], strides, dilations)
    out = np.empty((n, *out_sp, oc), x.dtype)
    if out.size == 0:
        return out
    if k == 0 or c == 0:
        out.fill(0)
        return out
    wmat = w.reshape(k, oc)
    for b in _image_blocks(n, int(np.prod(out_sp)), k, x.dtype.itemsize):
        out[b] = linalg.matmul(view[b].reshape(-1, k), wmat).reshape(out[b].shape)
    return out


def conv3d_backprop_filter_ndhwc(x, dy, k_sp, strides, dilations, pads) -> np.ndarray:
    """d filter [*k, C, OC] = patches(x)^T @ dy, one partial product per block of images."""
    n, oc, c = dy.shape[0], dy.shape[-1], x.shape[-1]
    out_sp = dy.shape[1:-1]
    k = int(np.prod(k_sp)) * c
    dw = np.zeros((k, oc), x.dtype)
    if dy.size and k:
        view = patches_nd(pad_spatial(x, pads), out_sp, k_sp, strides, dilations)
        for b in _image_blocks(n, int(np.prod(out_sp)), k, x.dtype.itemsize):
            dw += linalg.matmul(view[b].reshape(-1, k).T, dy[b].reshape(-1, oc))
    return dw.reshape(*k_sp, c, oc)


def conv3d_backprop_input_ndhwc(dy, w, in_shape, strides, dilations, pads) -> np.ndarray:
    """d input (channels-last `in_shape`): each filter tap's dy @ w[tap]^T added into the
    slice of the padded input gradient it read."""
    n, c = in_shape[0], in_shape[-1]
    oc = dy.shape[-1]
    out_sp = dy.shape[1:-1]
    padded = [s + b + a for s, (b, a) in zip(in_shape[1:-1], pads)]
    dxp = np.zeros((n, *padded, c), dy.dtype)
    if dy.size and dxp.size:
        rows = dy.reshape(-1, oc)
        for tap in itertools.product(*(range(k) for k in w.shape[:-2])):
            index = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                          for t, d, o, s in zip(tap, dilations, out_sp, strides))
            dxp[(slice(None), *index)] += linalg.matmul(rows, w[tap].T).reshape(
                n, *out_sp, c)
    return dxp[(slice(None), *(slice(b, b + s) for s, (b, _) in zip(in_shape[1:-1], pads)))]


def _work_dtype(dtype):
    """float16 / bfloat16 compute in float32."""
    return np.float32 if dtype.itemsize < 4 else dtype


class _Conv3DKernel:
    """Per-node setup: geometry parsed once, layout."""

    def __init__(self, ctx):
        self.geo = Geometry(ctx, paddings=PADDINGS, rank=5, formats=FORMATS)
        if self.geo.error is not None:
            self.compute = self._fail
            return
        self.op_type = ctx.op_type
        self.spec = self.geo.spec
        self.cf = self.spec.channels_first

    def _fail(self, ctx, *inputs):
        self.geo.check()

    def _split(self, dims) -> tuple:
        """(batch, channels, spatial tuple) of a 5-D shape in the node's layout."""
        c = dims[1] if self.cf else dims[4]
        return dims[0], c, tuple(dims[a] for a in self.spec.spatial_axes)

    def _sizes(self, value, what: str) -> tuple:
        value = np.asarray(value)
        if value.shape != (5,):
            raise invalid_argument(f"{self.op_type}: {what} must be a 1-D tensor of 5 elements, "
                                   f"got shape {value.shape}")
        if (value < 0).any():
            raise invalid_argument(f"{self.op_type}: {what} must be non-negative, got "
                                   f"{value.tolist()}")
        return tuple(int(v) for v in value)

    def _check_backprop(self, label, in_dims, k_sp, filter_in, out_depth, dy) -> tuple:
        """TF's checks of out_backprop against the forward geometry; returns the pads."""
        if dy.ndim != 5:
            raise invalid_argument(f"{label}: out_backprop must be 5-dimensional")
        n, c, in_sp = self._split(in_dims)
        g_n, g_c, g_sp = self._split(dy.shape)
        if g_c != out_depth:
            raise invalid_argument(f"out_backprop and filter_sizes must have the same number of "
                                   f"channels. Got {g_c} for out_backprop and {out_depth} for "
                                   f"filter_sizes")
        if c != filter_in:
            raise invalid_argument(f"{label}: input depth must be evenly divisible by filter "
                                   f"depth: {c} vs {filter_in}")
        if g_n != n:
            raise invalid_argument(f"{label}: input and out_backprop must have the same batch "
                                   f"size, input batch: {n} outbackprop batch: {g_n} batch_dim: 0")
        out_sp, pads = self.geo.plan(in_sp, tuple(k_sp))
        for i, (got, want) in enumerate(zip(g_sp, out_sp)):
            if got != want:
                raise invalid_argument(f"{label}: Size of out_backprop doesn't match computed: "
                                       f"actual = {got}, computed = {want} spatial_dim: "
                                       f"{self.spec.spatial_axes[i]} input: {in_sp[i]} filter: "
                                       f"{k_sp[i]} output: {got} stride: {self.spec.strides[i]} "
                                       f"dilation: {self.spec.dilations[i]}")
        return pads


@kernel("Conv3D", expensive=True)
class Conv3DKernel(_Conv3DKernel):
    """output = conv3d(input, filter)."""

    def compute(self, ctx, x, w):
        if x.ndim != 5:
            raise invalid_argument(f"input must be 5-dimensional{list(x.shape)}")
        if w.ndim != 5:
            raise invalid_argument(f"filter must be 5-dimensional{list(w.shape)}")
        _, c, in_sp = self._split(x.shape)
        if w.shape[3] == 0 or c % w.shape[3]:
            raise invalid_argument(f"Input depth must be evenly divisible by filter depth: {c} vs "
                                   f"{w.shape[3]}")
        if c != w.shape[3]:
            raise invalid_argument(f"Number of channels in filter ({w.shape[3]}) must match last "
                                   f"dimension of input ({c})")
        out_sp, pads = self.geo.plan(in_sp, w.shape[:3])
        work = _work_dtype(x.dtype)
        xl = to_channels_last(x, self.cf).astype(work, copy=False)
        out = conv3d_ndhwc(xl, w.astype(work, copy=False), self.spec.strides,
                           self.spec.dilations, out_sp, pads)
        return from_channels_last(out, self.cf).astype(x.dtype, copy=False)


@kernel("Conv3DBackpropInputV2", expensive=True)
class Conv3DBackpropInputKernel(_Conv3DKernel):
    """d input of shape `input_sizes` from the filter and the output gradient."""

    def compute(self, ctx, input_sizes, w, dy):
        sizes = self._sizes(input_sizes, "input_sizes")
        if w.ndim != 5:
            raise invalid_argument("Conv3DBackpropInputOp: filter must be 5-dimensional")
        pads = self._check_backprop("Conv3DBackpropInputOp", sizes, w.shape[:3], w.shape[3],
                                    w.shape[4], dy)
        n, c, in_sp = self._split(sizes)
        work = _work_dtype(dy.dtype)
        dyl = to_channels_last(dy, self.cf).astype(work, copy=False)
        dx = conv3d_backprop_input_ndhwc(dyl, w.astype(work, copy=False), (n, *in_sp, c),
                                         self.spec.strides, self.spec.dilations, pads)
        return from_channels_last(dx, self.cf).astype(dy.dtype, copy=False)


@kernel("Conv3DBackpropFilterV2", expensive=True)
class Conv3DBackpropFilterKernel(_Conv3DKernel):
    """d filter of shape `filter_sizes` from the input and the output gradient."""

    def compute(self, ctx, x, filter_sizes, dy):
        sizes = self._sizes(filter_sizes, "filter_sizes")
        if x.ndim != 5:
            raise invalid_argument("Conv3DBackpropFilterOp: input must be 5-dimensional")
        pads = self._check_backprop("Conv3DBackpropFilterOp", x.shape, sizes[:3], sizes[3],
                                    sizes[4], dy)
        work = _work_dtype(x.dtype)
        xl = to_channels_last(x, self.cf).astype(work, copy=False)
        dyl = to_channels_last(dy, self.cf).astype(work, copy=False)
        dw = conv3d_backprop_filter_ndhwc(xl, dyl, sizes[:3], self.spec.strides,
                                          self.spec.dilations, pads)
        return dw.astype(x.dtype, copy=False)
