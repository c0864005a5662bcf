"""Winograd F(2x2, 5x5): 5x5 stride-1 convolutions and filter gradients, compiled transforms.

Each 2x2 block of outputs ("tile") comes from the 6x6 input patch d around it as
A^T [(G g G^T) . (B^T d B)] A, with g the 5x5 filter of one (input, output) channel pair and "."
elementwise (Lavin & Gray's minimal filtering, interpolation points 0, 1, -1, 2, -2 and infinity).
Summed over input channels the elementwise products are 36 GEMMs [tiles, C] @ [C, K], one per
position of the 6x6 transformed tile: 36/100 of im2col's [4 * tiles, 25C] @ [25C, K]. The filter
gradient is the same algorithm transposed: G^T [sum over tiles of (B^T d B) . (A dY A^T)] G, 36
GEMMs [C, tiles] @ [tiles, K].

Why compiled transforms: B^T has coefficients 4, 5 and 2, and NumPy's adds over strided views
(the F(2x2, 3x3) module's approach) cost as much as the multiplications saved. Each transform here
is a few loops over a contiguous channel (or pixel-row) axis, one output row per loop, so LLVM
vectorizes them (a loop writing many rows at once needs more runtime alias checks than it will
make, and stays scalar). Measured on MNIST conv2's shapes (64x14x14, 32 -> 64 channels, one
thread): transforms ~3 ms and GEMMs ~4 ms, against im2col's 2 ms of copies and 10 ms of GEMM.

Work runs in bands of whole tile rows on `intra_op`'s threads; a band's transformed tiles stay
in cache between its transform, its GEMMs and its inverse transform. The filter gradient keeps
one partial sum per band and adds them in band order, so no result depends on the thread count.
Rounding: relative error ~4e-6 of the largest output in float32 (im2col's: ~7e-7); G's entries
1/6, 1/12, 1/24 and 1/3 are not exact in binary.
"""
from __future__ import annotations

import numpy as np

from tensorweave.kernels import intra_op, linalg
from tensorweave.kernels.jit import LOOP_DTYPES, compiled, loop_helper

# Use F(2x2, 5x5) from this many input and output channels and tiles: MNIST conv2 (32 -> 64 on
# 3136 tiles) and its input gradient (64 -> 32) win; one input channel (conv1) has nothing for
# a GEMM to save.
MIN_CHANNELS = 16
MIN_TILES = 64
# Tiles per band: enough for the 36 GEMMs of a band to run at BLAS speed, few enough for the
# band's transformed tiles ([36, tiles, C + K]) to stay in the core's cache.
BAND_TILES = 196

AT = np.array([[1, 1, 1, 1, 1, 0],
               [0, 1, -1, 2, -2, 1]], dtype=np.float64)
G = np.array([[1 / 4, 0, 0, 0, 0],
              [-1 / 6, -1 / 6, -1 / 6, -1 / 6, -1 / 6],
              [-1 / 6, 1 / 6, -1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6, 1 / 3, 2 / 3],
              [1 / 24, -1 / 12, 1 / 6, -1 / 3, 2 / 3],
              [0, 0, 0, 0, 1]])
BT = np.array([[4, 0, -5, 0, 1, 0],
               [0, -4, -4, 1, 1, 0],
               [0, 4, -4, -1, 1, 0],
               [0, -2, -1, 2, 1, 0],
               [0, 2, -1, -2, 1, 0],
               [0, 4, 0, -5, 0, 1]], dtype=np.float64)
_GG = np.kron(G, G)   # [36, 25]: vec(G g G^T) = kron(G, G) vec(g)


def applies(x_shape, w_shape, strides, dilations, out_hw, dtype) -> bool:
    """Whether this convolution is one F(2x2, 5x5) handles and wins on."""
    if tuple(w_shape[:2]) != (5, 5) or tuple(strides) != (1, 1) or \
            tuple(dilations) != (1, 1) or np.dtype(dtype) not in LOOP_DTYPES:
        return False
    tiles = x_shape[0] * ((out_hw[0] + 1) // 2) * ((out_hw[1] + 1) // 2)
    return tiles >= MIN_TILES and min(w_shape[2], w_shape[3]) >= MIN_CHANNELS


# --- the transforms: one loop per output row, rows addressed by (first, step) ------------------
@loop_helper
def _bt_rows(dst, d0, dstep, src, s0, sstep, n, k):
    """dst rows d0 + i*dstep (i < 6) = B^T times src rows s0 + j*sstep (j < 6), n columns each;
    k holds 2, 4 and 5 in the arrays' dtype."""
    two, four, five = k[0], k[1], k[2]
    s1, s2, s3, s4, s5 = s0 + sstep, s0 + 2 * sstep, s0 + 3 * sstep, s0 + 4 * sstep, \
        s0 + 5 * sstep
    for c in range(n):
        dst[d0, c] = four * src[s0, c] - five * src[s2, c] + src[s4, c]
    d = d0 + dstep
    for c in range(n):
        dst[d, c] = src[s3, c] + src[s4, c] - four * (src[s1, c] + src[s2, c])
    d += dstep
    for c in range(n):
        dst[d, c] = four * (src[s1, c] - src[s2, c]) - src[s3, c] + src[s4, c]
    d += dstep
    for c in range(n):
        dst[d, c] = two * (src[s3, c] - src[s1, c]) - src[s2, c] + src[s4, c]
    d += dstep
    for c in range(n):
        dst[d, c] = two * (src[s1, c] - src[s3, c]) - src[s2, c] + src[s4, c]
    d += dstep
    for c in range(n):
        dst[d, c] = four * src[s1, c] - five * src[s3, c] + src[s5, c]


@loop_helper
def _at_rows(dst, d0, dstep, src, s0, sstep, n, two):
    """dst rows d0, d0 + dstep = A^T times src rows s0 + j*sstep (j < 6)."""
    s1, s2, s3, s4, s5 = s0 + sstep, s0 + 2 * sstep, s0 + 3 * sstep, s0 + 4 * sstep, \
        s0 + 5 * sstep
    for c in range(n):
        dst[d0, c] = src[s0, c] + src[s1, c] + src[s2, c] + src[s3, c] + src[s4, c]
    d = d0 + dstep
    for c in range(n):
        dst[d, c] = src[s1, c] - src[s2, c] + two * (src[s3, c] - src[s4, c]) + src[s5, c]


@loop_helper
def _a_rows(dst, d0, dstep, src, s0, sstep, n, two):
    """dst rows d0 + i*dstep (i < 6) = A times src rows s0, s0 + sstep (A = AT transposed)."""
    s1 = s0 + sstep
    d = d0
    for c in range(n):
        dst[d, c] = src[s0, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s0, c] + src[s1, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s0, c] - src[s1, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s0, c] + two * src[s1, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s0, c] - two * src[s1, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s1, c]


def _input_loop(xp, v, ta, r0, r1, th, tw, k):
    """v [36 * tiles, C], position-major = B^T d B of the tiles of tile rows r0..r1 (counted
    over images: row r is tile row r % th of image r // th) of padded NHWC `xp`; ta [6 * Wp, C]
    holds one tile row's vertical transform."""
    nb, hp, wp, c = xp.shape
    rows = xp.reshape(nb * hp, wp * c)
    ta_rows = ta.reshape(6, wp * c)
    tiles = (r1 - r0) * tw
    t = 0
    for r in range(r0, r1):
        _bt_rows(ta_rows, 0, 1, rows, (r // th) * hp + 2 * (r % th), 1, wp * c, k)
        for tj in range(tw):
            for a in range(6):
                _bt_rows(v, a * 6 * tiles + t, tiles, ta, a * wp + 2 * tj, 1, c, k)
            t += 1


def _output_loop(m, out, s, edge, r0, r1, th, tw, two):
    """out's 2x2 tiles of tile rows r0..r1 = A^T M A from m [36 * tiles, K] (position-major);
    s [12, K] and edge [4, K] are scratch (edge: a tile cut by the output's border)."""
    nb, oh, ow, k = out.shape
    o2 = out.reshape(nb * oh * ow, k)
    tiles = (r1 - r0) * tw
    t = 0
    for r in range(r0, r1):
        b, y = r // th, 2 * (r % th)
        for tj in range(tw):
            x = 2 * tj
            for j in range(6):
                _at_rows(s, j, 6, m, j * tiles + t, 6 * tiles, k, two)
            if y + 1 < oh and x + 1 < ow:
                p = (b * oh + y) * ow + x
                _at_rows(o2, p, 1, s, 0, 1, k, two)
                _at_rows(o2, p + ow, 1, s, 6, 1, k, two)
            else:
                _at_rows(edge, 0, 1, s, 0, 1, k, two)
                _at_rows(edge, 2, 1, s, 6, 1, k, two)
                for i in range(2):
                    for j in range(2):
                        if y + i < oh and x + j < ow:
                            p = (b * oh + y + i) * ow + x + j
                            for ch in range(k):
                                o2[p, ch] = edge[2 * i + j, ch]
            t += 1


def _gradient_loop(dyp, yhat, e, r0, r1, th, tw, two):
    """yhat [36 * tiles, K], position-major = A dY A^T of the tiles of tile rows r0..r1 of the
    output gradient `dyp` (NHWC, zero-padded to even sizes); e [12, K] is scratch."""
    nb, hp, wp, k = dyp.shape
    d2 = dyp.reshape(nb * hp * wp, k)
    tiles = (r1 - r0) * tw
    t = 0
    for r in range(r0, r1):
        p0 = ((r // th) * hp + 2 * (r % th)) * wp
        for tj in range(tw):
            for j in range(2):
                _a_rows(e, j, 2, d2, p0 + 2 * tj + j, wp, k, two)
            for a in range(6):
                _a_rows(yhat, a * 6 * tiles + t, tiles, e, 2 * a, 1, k, two)
            t += 1


# --- the kernels ---------------------------------------------------------------------------------
class _Tiling:
    """The 2x2 output tiles of one convolution of NHWC `x` to an output of `out_hw` with `k`
    channels: the input padded so every tile's 6x6 patch exists, the bands of tile rows
    (counted over images: row r is tile row r % th of image r // th), and each band's buffers
    and input transform."""

    def __init__(self, x, out_hw, pads, k: int):
        n, h, wd, self.c = x.shape
        self.k = k
        self.th, self.tw = th, tw = (out_hw[0] + 1) // 2, (out_hw[1] + 1) // 2
        (pt, _), (pl, _) = pads
        # Rows and columns past the real padding are zeros that only feed cut-off outputs.
        self.xp = np.zeros((n, 2 * th + 4, 2 * tw + 4, self.c), x.dtype)
        rows, cols = min(h, 2 * th + 4 - pt), min(wd, 2 * tw + 4 - pl)
        self.xp[:, pt:pt + rows, pl:pl + cols] = x[:, :rows, :cols]
        per = max(1, BAND_TILES // tw)
        self.bands = [(r, min(n * th, r + per)) for r in range(0, n * th, per)]
        self.consts = np.array([2, 4, 5], x.dtype)
        self._transform = compiled(_input_loop)

    def buffers(self, i: int, extra_rows: int):
        """Band i's (first row, last + 1, transformed input [36, tiles, C], [36, tiles, K] for
        the other operand, [extra_rows, K] of scratch), all in the thread's scratch buffer,
        with the input already transformed."""
        r0, r1 = self.bands[i]
        c, k, tw, wp = self.c, self.k, self.tw, self.xp.shape[2]
        tiles = (r1 - r0) * tw
        most = max(b1 - b0 for b0, b1 in self.bands) * tw
        buf = intra_op.scratch(36 * most * (c + k) + 6 * wp * c + extra_rows * k, self.xp.dtype)
        v = buf[:36 * tiles * c].reshape(36, tiles, c)
        other = buf[36 * most * c:36 * most * c + 36 * tiles * k].reshape(36, tiles, k)
        rest = buf[36 * most * (c + k):]
        vertical = rest[:6 * wp * c].reshape(6 * wp, c)
        self._transform(self.xp, v.reshape(36 * tiles, c), vertical, r0, r1, self.th, tw,
                        self.consts)
        return r0, r1, v, other, rest[6 * wp * c:].reshape(extra_rows, k)


def conv5x5(x, w, out_hw, pads, epilogue=None) -> np.ndarray:
    """Stride-1 5x5 convolution of NHWC `x` (pads: ((top, bottom), (left, right))).
    `epilogue(rows)` runs on each band's output rows [pixels, K] while they are in cache, when
    tile rows are whole output rows (an even output height), else once at the end."""
    n, c, k = x.shape[0], x.shape[3], w.shape[3]
    tiling = _Tiling(x, out_hw, pads, k)
    th, tw = tiling.th, tiling.tw
    u = linalg.matmul(_GG.astype(x.dtype), w.reshape(25, c * k)).reshape(36, c, k)
    out = np.empty((n, *out_hw, k), x.dtype)
    transform_out = compiled(_output_loop)
    banded = epilogue is not None and out_hw[0] == 2 * th

    def band(i):
        r0, r1, v, m, scratch = tiling.buffers(i, 16)
        np.matmul(v, u, out=m)
        transform_out(m.reshape(-1, k), out, scratch[:12], scratch[12:], r0, r1, th, tw,
                      tiling.consts[0])
        if banded:
            epilogue(out.reshape(n * th, -1)[r0:r1].reshape(-1, k))

    intra_op.parallel_for(len(tiling.bands), band)
    if epilogue is not None and not banded:
        epilogue(out.reshape(-1, k))
    return out


def filter_gradient5x5(x, dy, pads) -> np.ndarray:
    """d filter [5, 5, C, K] of the stride-1 5x5 convolution of NHWC `x` whose output gradient
    is `dy`: one partial [36, C, K] per band, summed in band order."""
    n, oh, ow, k = dy.shape
    c = x.shape[3]
    tiling = _Tiling(x, (oh, ow), pads, k)
    th, tw = tiling.th, tiling.tw
    dyp = dy
    if (oh, ow) != (2 * th, 2 * tw) or not dy.flags.c_contiguous:
        dyp = np.zeros((n, 2 * th, 2 * tw, k), dy.dtype)
        dyp[:, :oh, :ow] = dy
    parts = np.empty((len(tiling.bands), 36, c, k), x.dtype)
    transform_dy = compiled(_gradient_loop)

    def band(i):
        r0, r1, v, yhat, scratch = tiling.buffers(i, 12)
        transform_dy(dyp, yhat.reshape(-1, k), scratch, r0, r1, th, tw, tiling.consts[0])
        np.matmul(v.transpose(0, 2, 1), yhat, out=parts[i])

    intra_op.parallel_for(len(tiling.bands), band)
    du = np.add.reduce(parts, axis=0)
    return linalg.matmul(_GG.T.astype(x.dtype), du.reshape(36, c * k)).reshape(5, 5, c, k)
