"""Convolution kernels: im2col + one BLAS GEMM per block of output rows, or Winograd.

Strategy (each choice measured on this project's 2-core machine; see the report in
ARCHITECTURE.md):
  * Forward, NHWC: pad the input once, view its patches with `as_strided` as
    [N, OH, OW, KH, KW, C] (no copy), then per block of output rows copy the patch rows into a
    reused per-thread scratch buffer and multiply by the filter reshaped [KH*KW*C, OC]
    (`np.matmul` with `out=` straight into the output). Blocks keep the patch matrix in cache
    between the copy and the GEMM and never allocate (and page-fault) one huge patch matrix.
    The blocks are independent, so they run on `intra_op`'s threads (copy and GEMM both in
    parallel, BLAS single-threaded).
    With few input channels the patch rows are stored transposed ([K, rows]): the copy then
    moves long runs instead of C-element ones (5x faster for C = 1), and BLAS reads either.
  * 1x1 filters without padding are a plain matmul (strided inputs are subsampled first).
  * Stride-1 3x3 and 5x5 filters with enough channels and tiles: Winograd F(2x2, 3x3) and
    F(2x2, 5x5), for the filter gradient too (`conv_winograd`).
  * BackpropFilter: the same patch blocks, transposed, times the output gradient: one partial
    product per block, summed in block order (the same result on any number of threads).
  * BackpropInput: per block, output gradient times the filter transposed gives patch-shaped
    gradients, which a compiled loop adds into a padded input gradient (col2im), then the
    padding is cut off. Stride 1 with more input than output channels, Winograd's shapes or
    images too large for whole-image blocks runs instead as a forward convolution of the
    padded output gradient with the flipped, channel-swapped filter (im2col or Winograd).
  * NCHW is transposed to NHWC on the way in and back on the way out.
  * float16 computes in float32 (NumPy has no float16 GEMM); int32 uses NumPy's integer matmul.
Depthwise convolutions have no channel reduction to hand to BLAS: they loop over the KH*KW
filter offsets with broadcast multiply-adds over whole images.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels import conv_winograd, intra_op, linalg
from tensorweave.kernels.jit import compiled
from tensorweave.kernels.registry import kernel
from tensorweave.ops.nn_conv_ops import window_spec

# Patch rows per block: about this many bytes of patch matrix per GEMM, at least MIN_ROWS rows,
# and at least MIN_BLOCKS blocks while they have MIN_SPLIT_ROWS rows (work for every thread;
# VGG19's 14x14x512 layers as one 196-row block ran on one thread).
BLOCK_BYTES = 2 << 20
MIN_ROWS = 512
MIN_BLOCKS = 8
MIN_SPLIT_ROWS = 32
# Below this many input channels, patches are stored transposed (see fill_patches).
FEW_CHANNELS = 8

class Geometry:
    """The window attrs of one node, parsed once; plans per input size are cached."""

    def __init__(self, ctx, ksize: bool = False, paddings=("SAME", "VALID", "EXPLICIT"),
                 rank: int = 4, formats=("NHWC", "NCHW")):
        self.op_type = ctx.op_type
        self.error = None
        try:
            self.spec = window_spec(ctx.op_type, ctx.attrs, rank, formats, paddings, ksize)
        except ValueError as e:
            self.spec, self.error = None, invalid_argument(str(e))
            return
        spec = self.spec
        if spec.outer_strides != (1, 1):
            self.error = errors.UnimplementedError(
                None, None, "Current implementation does not yet support strides in the batch "
                "and depth dimensions.")
        elif ctx.attrs.get("dilations") and any(
                d != 1 for d in _outer_entries(ctx.attrs["dilations"], spec.channels_first)):
            self.error = errors.UnimplementedError(
                None, None, "Current implementation does not yet support dilations in the "
                "batch and depth dimensions.")
        self.channels_first = spec.channels_first
        self._plans: dict = {}

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    def plan(self, in_spatial: tuple, kernel_spatial: tuple):
        """(output spatial sizes, (before, after) pads per dim) for these sizes."""
        key = (in_spatial, kernel_spatial)
        plan = self._plans.get(key)
        if plan is None:
            try:
                plan = self.spec.output_dims(in_spatial, kernel_spatial)
            except ValueError as e:
                raise invalid_argument(str(e)) from None
            if len(self._plans) < 64:
                self._plans[key] = plan
        return plan


def _outer_entries(values, channels_first: bool):
    return (values[0], values[1]) if channels_first else (values[0], values[-1])


def to_channels_last(x: np.ndarray, channels_first: bool) -> np.ndarray:
    if not channels_first:
        return x
    return np.moveaxis(x, 1, -1)


def from_channels_last(y: np.ndarray, channels_first: bool) -> np.ndarray:
    if not channels_first:
        return y
    return np.ascontiguousarray(np.moveaxis(y, -1, 1))


def pad_spatial(x: np.ndarray, pads) -> np.ndarray:
    """x (N, spatial..., C) zero-padded by (before, after) per spatial dim; x itself if none."""
    if not any(b or a for b, a in pads):
        return x
    shape = (x.shape[0], *(s + b + a for s, (b, a) in zip(x.shape[1:-1], pads)), x.shape[-1])
    out = np.zeros(shape, x.dtype)
    out[(slice(None), *(slice(b, b + s) for s, (b, _) in zip(x.shape[1:-1], pads)))] = x
    return out


def patches(xp: np.ndarray, out_hw, k_hw, strides, dilations) -> np.ndarray:
    """Read-only [N, OH, OW, KH, KW, C] view of the patches of padded NHWC `xp`."""
    sn, sh, sw, sc = xp.strides
    return as_strided(xp, (xp.shape[0], *out_hw, *k_hw, xp.shape[3]),
                      (sn, sh * strides[0], sw * strides[1], sh * dilations[0],
                       sw * dilations[1], sc), writeable=False)


def row_blocks(n: int, oh: int, ow: int, rows: int):
    """(n0, n1, h0, h1) blocks of about `rows` output pixels, each contiguous in NHWC."""
    per_image = oh * ow
    if per_image <= rows:
        step = max(1, rows // max(per_image, 1))
        for n0 in range(0, n, step):
            yield n0, min(n, n0 + step), 0, oh
        return
    step = max(1, rows // max(ow, 1))
    for i in range(n):
        for h0 in range(0, oh, step):
            yield i, i + 1, h0, min(oh, h0 + step)


def block_rows(k: int, itemsize: int) -> int:
    """Output pixels per block: about BLOCK_BYTES of patches, but never a GEMM too thin for
    BLAS to run at speed."""
    return max(MIN_ROWS, BLOCK_BYTES // max(k * itemsize, 1))


def _block_plan(n: int, oh: int, ow: int, k: int, dtype) -> tuple[list, int]:
    """(row blocks, scratch elements one block needs): blocks of `block_rows`, smaller when
    that gives fewer than MIN_BLOCKS (so that the threads of `intra_op` share the work
    evenly), but not below MIN_SPLIT_ROWS. The plan depends only on the shapes, never on the
    thread count, so results are the same on any machine."""
    total = n * oh * ow
    rows = min(block_rows(k, dtype.itemsize), max(MIN_SPLIT_ROWS, -(-total // MIN_BLOCKS)))
    return list(row_blocks(n, oh, ow, rows)), min(rows + ow, total) * k


def fill_patches(buf: np.ndarray, block: np.ndarray) -> np.ndarray:
    """Copies a [n, h, w, KH, KW, C] patch view into `buf`; returns it as an [n*h*w, K] matrix.

    Few channels give inner runs too short for a fast row-major copy, so those patches are
    stored transposed ([K, rows], one long run per filter tap) and returned as a transposed
    view: BLAS reads either layout at the same speed."""
    n, h, w, kh, kw, c = block.shape
    m, k = n * h * w, kh * kw * c
    if c < FEW_CHANNELS:
        cols = buf[:m * k].reshape(kh, kw, c, n, h, w)
        np.copyto(cols, block.transpose(3, 4, 5, 0, 1, 2))
        return cols.reshape(k, m).T
    cols = buf[:m * k].reshape(block.shape)
    np.copyto(cols, block)
    return cols.reshape(m, k)


def _compute_dtype(dtype):
    """The dtype to compute in: float16 goes through float32 (no float16 GEMM in BLAS)."""
    return np.float32 if dtype == np.float16 else dtype


def _no_padding(pads) -> bool:
    return not any(b or a for b, a in pads)


# --- Conv2D and its backprops (NHWC, filter [KH, KW, C, OC]) -----------------------------------
def conv2d_nhwc(x, w, strides, dilations, out_hw, pads, epilogue=None):
    """Forward convolution of NHWC `x` with `w` (already checked and in the compute dtype).
    `epilogue(rows)`, if given, is applied in place to the output as [pixels, OC] matrices:
    block by block while each is in cache (a fused bias and activation), else at the end."""
    n = x.shape[0]
    kh, kw, c, oc = w.shape
    oh, ow = out_hw
    k = kh * kw * c
    if kh == kw == 1 and _no_padding(pads):
        xs = x[:, :(oh - 1) * strides[0] + 1:strides[0], :(ow - 1) * strides[1] + 1:strides[1]]
        out = linalg.matmul(xs.reshape(-1, c), w.reshape(c, oc))
        return _finished(out, epilogue).reshape(n, oh, ow, oc)
    if conv_winograd.applies(x.shape, w.shape, strides, dilations, out_hw, x.dtype):
        out = conv_winograd.conv2d(x, w, out_hw, pads, epilogue)
        if out is not None:   # (None: a NaN or infinity in the input, see conv_winograd)
            return out
    view = patches(pad_spatial(x, pads), out_hw, (kh, kw), strides, dilations)
    wmat = w.reshape(k, oc)
    out = np.empty((n, oh, ow, oc), x.dtype)
    blocks, size = _block_plan(n, oh, ow, k, x.dtype)

    def block(i):
        n0, n1, h0, h1 = blocks[i]
        cols = fill_patches(intra_op.scratch(size, x.dtype), view[n0:n1, h0:h1])
        rows = out[n0:n1, h0:h1].reshape(-1, oc)
        linalg.one_thread_product(cols, wmat, rows)
        if epilogue is not None:
            epilogue(rows)

    intra_op.parallel_for(len(blocks), block)
    return out


def _finished(rows, epilogue):
    """`rows` after `epilogue` (in place on a writeable array)."""
    if epilogue is None:
        return rows
    if not rows.flags.writeable:
        rows = rows.copy()
    epilogue(rows)
    return rows


def conv2d_backprop_filter_nhwc(x, dy, k_hw, strides, dilations, pads):
    """d filter [KH, KW, C, OC] = patches(x)^T @ dy: one partial product per row block, summed
    in block order (so the result does not depend on which thread ran which block)."""
    n, oh, ow, oc = dy.shape
    c = x.shape[3]
    kh, kw = k_hw
    k = kh * kw * c
    if kh == kw == 1 and _no_padding(pads):
        xs = x[:, :(oh - 1) * strides[0] + 1:strides[0], :(ow - 1) * strides[1] + 1:strides[1]]
        return linalg.matmul(xs.reshape(-1, c).T, dy.reshape(-1, oc)).reshape(1, 1, c, oc)
    if conv_winograd.applies(x.shape, (kh, kw, c, oc), strides, dilations, (oh, ow), x.dtype):
        dw = conv_winograd.filter_gradient(x, dy, kh, pads)
        if dw is not None:   # (None: a NaN or infinity in an input, see conv_winograd)
            return dw
    view = patches(pad_spatial(x, pads), (oh, ow), k_hw, strides, dilations)
    blocks, size = _block_plan(n, oh, ow, k, x.dtype)
    parts = np.empty((len(blocks), k, oc), x.dtype)

    def block(i):
        n0, n1, h0, h1 = blocks[i]
        cols = fill_patches(intra_op.scratch(size, x.dtype), view[n0:n1, h0:h1])
        linalg.one_thread_product(cols.T, dy[n0:n1, h0:h1].reshape(-1, oc), parts[i])

    intra_op.parallel_for(len(blocks), block)
    return np.add.reduce(parts, axis=0).reshape(kh, kw, c, oc)


def conv2d_backprop_input_nhwc(dy, w, in_shape, strides, dilations, pads):
    """d input (NHWC `in_shape`): col2im, or for stride 1 where it wins, a convolution.

    col2im: per block of output pixels, dy @ w^T ([pixels, OC] x [OC, KH*KW*C]) gives each
    pixel's patch-shaped gradient, which a compiled loop adds into the padded input gradient;
    then the padding is cut off. Blocks of whole images touch disjoint images and run on
    intra_op's threads; blocks that split an image run in order.
    Stride 1 with more input than output channels (or Winograd's shapes), or with images too
    large for whole-image blocks: the transposed convolution is itself a convolution, of the
    output gradient padded by (effective filter - 1 - pad) on each side with the filter
    flipped in space and its channel axes swapped, run as a forward conv (im2col or
    Winograd, parallel blocks). Its GEMM's output is only C wide, which BLAS runs slowly for
    few channels: MNIST conv2's input gradient (C = 32, OC = 64) took 10.8 ms that way and
    8.8 ms through col2im (medians, two intra-op threads)."""
    n, h, wd, c = in_shape
    _, oh, ow, oc = dy.shape
    kh, kw = w.shape[:2]
    k = kh * kw * c
    blocks, size = _block_plan(n, oh, ow, k, dy.dtype)
    whole_images = all(h0 == 0 and h1 == oh for _, _, h0, h1 in blocks)
    if strides == (1, 1):
        t_pads = tuple(((kk - 1) * d - before, (kk - 1) * d - after)
                       for kk, d, (before, after) in zip((kh, kw), dilations, pads))
        flipped_shape = (kh, kw, oc, c)
        if all(b >= 0 and a >= 0 for b, a in t_pads) and (
                c > oc or not whole_images or conv_winograd.applies(
                    dy.shape, flipped_shape, strides, dilations, (h, wd), dy.dtype)):
            flipped = np.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2))
            return conv2d_nhwc(dy, flipped, (1, 1), dilations, (h, wd), t_pads)
    (pt, pb), (pl, pr) = pads
    dxp = np.zeros((n, h + pt + pb, wd + pl + pr, c), dy.dtype)
    wmat_t = w.reshape(k, oc).T
    scatter = compiled(_col2im_loop)

    def block(i):
        n0, n1, h0, h1 = blocks[i]
        m = (n1 - n0) * (h1 - h0) * ow
        cols = intra_op.scratch(size, dy.dtype)[:m * k].reshape(m, k)
        linalg.one_thread_product(dy[n0:n1, h0:h1].reshape(m, oc), wmat_t, cols)
        scatter(cols, dxp, n0, n1, h0, h1, ow, kh, kw, *strides, *dilations)

    if whole_images:
        intra_op.parallel_for(len(blocks), block)
    else:
        for i in range(len(blocks)):
            block(i)
    if pt or pb or pl or pr:
        return dxp[:, pt:pt + h, pl:pl + wd]
    return dxp


def _col2im_loop(cols, dxp, n0, n1, h0, h1, ow, kh, kw, sh, sw, dh, dw):
    """dxp[n, h*sh + i*dh, w*sw + j*dw, :] += cols[p, (i, j, :)] for the block's output pixels
    p = (n, h, w), n in [n0, n1), h in [h0, h1), in that order (so the sums do not depend on
    which thread ran a block: blocks run in parallel only when they cover disjoint images)."""
    c = dxp.shape[3]
    p = 0
    for b in range(n0, n1):
        for oy in range(h0, h1):
            for ox in range(ow):
                base = 0
                for i in range(kh):
                    r = oy * sh + i * dh
                    for j in range(kw):
                        col = ox * sw + j * dw
                        for ch in range(c):
                            dxp[b, r, col, ch] += cols[p, base + ch]
                        base += c
                p += 1


class _ConvKernel:
    """Shared per-node setup of the conv kernels: geometry, layout, compute dtype."""

    def __init__(self, ctx):
        self.geo = Geometry(ctx)
        if self.geo.error is not None:
            self.compute = self._fail
            return
        spec = self.geo.spec
        self.cf = spec.channels_first
        self.strides = spec.strides
        self.dilations = spec.dilations
        self.depthwise = ctx.op_type.startswith("Depthwise")

    def _fail(self, ctx, *inputs):
        self.geo.check()

    def _spatial(self, dims) -> tuple:
        return (dims[2], dims[3]) if self.cf else (dims[1], dims[2])

    def _check_depth(self, in_depth: int, filter_depth: int) -> None:
        if in_depth == filter_depth:
            return
        if not self.depthwise and filter_depth and in_depth % filter_depth == 0:
            raise errors.UnimplementedError(
                None, None, "The Conv2D op currently does not support grouped convolutions on "
                "the CPU. A grouped convolution was attempted to be run because the input depth "
                f"of {in_depth} does not match the filter input depth of {filter_depth}")
        raise invalid_argument(f"input depth must be evenly divisible by filter depth: {in_depth} "
                               f"vs {filter_depth}")


def _rank4(value, what: str) -> None:
    if value.ndim != 4:
        raise invalid_argument(f"{what} must be 4-dimensional{value.shape}")


def _sizes(value, what: str) -> tuple:
    value = np.asarray(value)
    if value.shape != (4,):
        raise invalid_argument(f"{what} must be a 1-D tensor of 4 elements, got shape "
                               f"{value.shape}")
    if (value < 0).any():
        raise invalid_argument(f"{what} must be non-negative, got {value.tolist()}")
    return tuple(int(v) for v in value)


@kernel(("Conv2D", "DepthwiseConv2dNative"), expensive=True)
class ConvKernel(_ConvKernel):
    """output = conv(input, filter) (see the module docstring for the strategy)."""

    def compute(self, ctx, x, w, epilogue=None):
        """`epilogue(rows)`: see conv2d_nhwc (a fused kernel's bias and activation; NHWC
        Conv2D in its own dtype only, which is where the remapper fuses)."""
        _rank4(x, "input")
        _rank4(w, "filter")
        in_depth = x.shape[1 if self.cf else 3]
        self._check_depth(in_depth, w.shape[2])
        out_hw, pads = self.geo.plan(self._spatial(x.shape), w.shape[:2])
        dtype = x.dtype
        work = _compute_dtype(dtype)
        xl = to_channels_last(x, self.cf).astype(work, copy=False)
        wl = w.astype(work, copy=False)
        if self.depthwise:
            out = depthwise_nhwc(xl, wl, self.strides, self.dilations, out_hw, pads)
        else:
            if epilogue is not None and (self.cf or work != dtype):
                raise invalid_argument("a fused epilogue needs an NHWC convolution in its own "
                                       "dtype")
            out = conv2d_nhwc(xl, wl, self.strides, self.dilations, out_hw, pads, epilogue)
        return from_channels_last(out, self.cf).astype(dtype, copy=False)


@kernel(("Conv2DBackpropInput", "DepthwiseConv2dNativeBackpropInput"), expensive=True)
class ConvBackpropInputKernel(_ConvKernel):
    """d input of shape `input_sizes` from the filter and the output gradient."""

    def compute(self, ctx, input_sizes, w, dy):
        sizes = _sizes(input_sizes, "input_sizes")
        _rank4(w, "filter")
        _rank4(dy, "out_backprop")
        n, c = (sizes[0], sizes[1]) if self.cf else (sizes[0], sizes[3])
        self._check_depth(c, w.shape[2])
        in_hw = self._spatial(sizes)
        out_hw, pads = self.geo.plan(in_hw, w.shape[:2])
        out_depth = w.shape[2] * w.shape[3] if self.depthwise else w.shape[3]
        _check_out_backprop(ctx.op_type, dy.shape, self.cf, n, out_hw, out_depth, in_hw,
                            w.shape[:2], self.strides, self.dilations)
        dtype = dy.dtype
        work = _compute_dtype(dtype)
        dyl = to_channels_last(dy, self.cf).astype(work, copy=False)
        wl = w.astype(work, copy=False)
        in_shape = (n, *in_hw, c)
        if self.depthwise:
            dx = depthwise_backprop_input_nhwc(dyl, wl, in_shape, self.strides, self.dilations,
                                               pads)
        else:
            dx = conv2d_backprop_input_nhwc(dyl, wl, in_shape, self.strides, self.dilations,
                                            pads)
        return from_channels_last(dx, self.cf).astype(dtype, copy=False)


@kernel(("Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropFilter"), expensive=True)
class ConvBackpropFilterKernel(_ConvKernel):
    """d filter of shape `filter_sizes` from the input and the output gradient."""

    def compute(self, ctx, x, filter_sizes, dy):
        sizes = _sizes(filter_sizes, "filter_sizes")
        _rank4(x, "input")
        _rank4(dy, "out_backprop")
        in_depth = x.shape[1 if self.cf else 3]
        self._check_depth(in_depth, sizes[2])
        in_hw = self._spatial(x.shape)
        out_hw, pads = self.geo.plan(in_hw, sizes[:2])
        out_depth = sizes[2] * sizes[3] if self.depthwise else sizes[3]
        _check_out_backprop(ctx.op_type, dy.shape, self.cf, x.shape[0], out_hw, out_depth,
                            in_hw, sizes[:2], self.strides, self.dilations)
        dtype = x.dtype
        work = _compute_dtype(dtype)
        xl = to_channels_last(x, self.cf).astype(work, copy=False)
        dyl = to_channels_last(dy, self.cf).astype(work, copy=False)
        if self.depthwise:
            dw = depthwise_backprop_filter_nhwc(xl, dyl, sizes, self.strides, self.dilations,
                                                pads)
        else:
            dw = conv2d_backprop_filter_nhwc(xl, dyl, sizes[:2], self.strides, self.dilations,
                                             pads)
        return dw.astype(dtype, copy=False)


def _check_out_backprop(op_type, dy_shape, cf, n, out_hw, out_depth, in_hw, k_hw, strides,
                        dilations) -> None:
    """The output gradient must have exactly the forward output's shape."""
    got_n, got_c = (dy_shape[0], dy_shape[1]) if cf else (dy_shape[0], dy_shape[3])
    got_hw = (dy_shape[2], dy_shape[3]) if cf else (dy_shape[1], dy_shape[2])
    if got_n != n:
        raise invalid_argument(f"{op_type}: input and out_backprop must have the same batch size, "
                               f"input batch: {n} outbackprop batch: {got_n}")
    if got_c != out_depth:
        raise invalid_argument(f"{op_type}: filter and out_backprop must have the same out_depth, "
                               f"filter: {out_depth} out_backprop: {got_c}")
    for dim, (got, want) in enumerate(zip(got_hw, out_hw)):
        if got != want:
            raise invalid_argument(f"{op_type}: Size of out_backprop doesn't match computed: "
                                   f"actual = {got}, computed = {want} spatial_dim: {dim + 1} "
                                   f"input: {in_hw[dim]} filter: {k_hw[dim]} output: {got} stride: "
                                   f"{strides[dim]} dilation: {dilations[dim]}")


# --- depthwise (filter [KH, KW, C, M], output channel c * M + m) -------------------------------
def _offset_slices(kh_i, kw_j, out_hw, strides, dilations):
    """The padded-input rows/cols filter offset (i, j) reads for every output pixel."""
    r0, c0 = kh_i * dilations[0], kw_j * dilations[1]
    return (slice(r0, r0 + (out_hw[0] - 1) * strides[0] + 1, strides[0]),
            slice(c0, c0 + (out_hw[1] - 1) * strides[1] + 1, strides[1]))


def depthwise_nhwc(x, w, strides, dilations, out_hw, pads):
    """Sum over filter offsets of the shifted input times that offset's [C, M] weights."""
    n, c = x.shape[0], x.shape[3]
    kh, kw, _, mult = w.shape
    xp = pad_spatial(x, pads)
    out = np.zeros((n, *out_hw, c, mult), x.dtype)
    tmp = np.empty_like(out)
    for i in range(kh):
        for j in range(kw):
            rows, cols = _offset_slices(i, j, out_hw, strides, dilations)
            np.multiply(xp[:, rows, cols, :, None], w[i, j], out=tmp)
            out += tmp
    return out.reshape(n, *out_hw, c * mult)


def depthwise_backprop_input_nhwc(dy, w, in_shape, strides, dilations, pads):
    n, h, wd, c = in_shape
    kh, kw, _, mult = w.shape
    out_hw = dy.shape[1:3]
    dy5 = dy.reshape(n, *out_hw, c, mult)
    (pt, pb), (pl, pr) = pads
    dxp = np.zeros((n, h + pt + pb, wd + pl + pr, c), dy.dtype)
    for i in range(kh):
        for j in range(kw):
            rows, cols = _offset_slices(i, j, out_hw, strides, dilations)
            if mult == 1:
                dxp[:, rows, cols] += dy5[..., 0] * w[i, j, :, 0]
            else:
                dxp[:, rows, cols] += np.einsum("nhwcm,cm->nhwc", dy5, w[i, j])
    return dxp[:, pt:pt + h, pl:pl + wd]


def depthwise_backprop_filter_nhwc(x, dy, sizes, strides, dilations, pads):
    kh, kw, c, mult = sizes
    n = x.shape[0]
    out_hw = dy.shape[1:3]
    dy5 = dy.reshape(n, *out_hw, c, mult)
    xp = pad_spatial(x, pads)
    dw = np.empty((kh, kw, c, mult), x.dtype)
    for i in range(kh):
        for j in range(kw):
            rows, cols = _offset_slices(i, j, out_hw, strides, dilations)
            dw[i, j] = np.einsum("nhwc,nhwcm->cm", xp[:, rows, cols], dy5)
    return dw
