"""Winograd F(2x2, 3x3) and F(2x2, 5x5): stride-1 convolutions and filter gradients.

Each 2x2 block of outputs ("tile") comes from the a x a input patch d around it (a = r + 1 for
an r x r filter) as A^T [(G g G^T) . (B^T d B)] A, with g the filter of one (input, output)
channel pair and "." elementwise (Lavin & Gray's minimal filtering; interpolation points 0, 1,
-1, infinity for r = 3, and 2, -2 too for r = 5). Summed over input channels the elementwise
products are a^2 GEMMs [tiles, C] @ [C, K], one per position of the transformed tile: 16/36 of
im2col's multiply-adds for 3x3 filters, 36/100 for 5x5. The filter gradient is the same
algorithm transposed: G^T [sum over tiles of (B^T d B) . (A dY A^T)] G, a^2 GEMMs
[C, tiles] @ [tiles, K]. The input gradient is a forward convolution with the flipped filter.

The transforms are compiled loops over a contiguous channel (or pixel-row) axis, one output row
per loop, so that LLVM vectorizes them: a loop that writes all a^2 values of a tile needs more
runtime alias checks than LLVM makes and stays scalar, and NumPy adds over strided views (this
module's first F(2x2, 3x3)) cost as much as the multiplications they save below 256 channels.
Work runs in bands of whole tile rows on `intra_op`'s threads; a band's transformed tiles stay
in cache between its transform, its GEMMs and its inverse transform. The filter gradient keeps
one partial sum per band and adds them in band order, so no result depends on the thread count.
Non-finite inputs run im2col: a NaN or infinity would spread through the transforms to its
whole tile, and inf - inf there makes NaN where direct convolution gives inf. The input
transforms check each input row once while it is in cache (VGG19 2.4% slower than unchecked; a
NumPy pass over each input first cost 5.7%), and the kernels return None for the caller to fall
back.
Rounding, relative to the largest output in float32: ~7e-7 for 3x3 (B and A are exact), ~4e-6
for 5x5 (G holds 1/6, 1/12 and 1/24), ~1e-5 for the 5x5 filter gradient, whose transformed tiles
reach ~100x the inputs before the sum over tiles.
"""
from __future__ import annotations

import functools

import numpy as np

from tensorweave.kernels import intra_op, linalg
from tensorweave.kernels.jit import LOOP_DTYPES, compiled, loop_helper

# Use Winograd from this many input and output channels and tiles: measured against im2col, it
# wins from 32 channels on every shape tried (VGG19's layers, MNIST's conv2 and its input
# gradient, CIFAR-sized batches), ties or loses at 16, and loses on 7x7 tile grids (14x14
# outputs of one image); see ARCHITECTURE.md.
MIN_CHANNELS = 32
MIN_TILES = 64
# A band's transformed tiles ([a^2, tiles, C + K]) fill about this many bytes, but a band has at
# least MIN_BAND_TILES tiles (fewer make GEMMs too thin for BLAS to run at speed).
BAND_BYTES = 2 << 20
MIN_BAND_TILES = 64

_MATRICES = {
    3: (np.array([[1, 1, 1, 0],
                  [0, 1, -1, -1]], dtype=np.float64),
        np.array([[1, 0, 0],
                  [1 / 2, 1 / 2, 1 / 2],
                  [1 / 2, -1 / 2, 1 / 2],
                  [0, 0, 1]]),
        np.array([[1, 0, -1, 0],
                  [0, 1, 1, 0],
                  [0, -1, 1, 0],
                  [0, 1, 0, -1]], dtype=np.float64)),
    5: (np.array([[1, 1, 1, 1, 1, 0],
                  [0, 1, -1, 2, -2, 1]], dtype=np.float64),
        np.array([[1 / 4, 0, 0, 0, 0],
                  [-1 / 6, -1 / 6, -1 / 6, -1 / 6, -1 / 6],
                  [-1 / 6, 1 / 6, -1 / 6, 1 / 6, -1 / 6],
                  [1 / 24, 1 / 12, 1 / 6, 1 / 3, 2 / 3],
                  [1 / 24, -1 / 12, 1 / 6, -1 / 3, 2 / 3],
                  [0, 0, 0, 0, 1]]),
        np.array([[4, 0, -5, 0, 1, 0],
                  [0, -4, -4, 1, 1, 0],
                  [0, 4, -4, -1, 1, 0],
                  [0, -2, -1, 2, 1, 0],
                  [0, 2, -1, -2, 1, 0],
                  [0, 4, 0, -5, 0, 1]], dtype=np.float64)),
}


def matrices(r: int) -> tuple:
    """(A^T [2, a], G [a, r], B^T [a, a]) of F(2, r)."""
    return _MATRICES[r]


def applies(x_shape, w_shape, strides, dilations, out_hw, dtype) -> bool:
    """Whether this convolution is one Winograd handles and wins on."""
    r = w_shape[0]
    if r not in _MATRICES or w_shape[1] != r or tuple(strides) != (1, 1) or \
            tuple(dilations) != (1, 1) or np.dtype(dtype) not in LOOP_DTYPES:
        return False
    tiles = x_shape[0] * ((out_hw[0] + 1) // 2) * ((out_hw[1] + 1) // 2)
    return tiles >= MIN_TILES and min(w_shape[2], w_shape[3]) >= MIN_CHANNELS


def _finite(w) -> bool:
    """Whether every element of the (small) filter is finite; a sum too large for the dtype
    also says no, and that convolution runs im2col, just slower."""
    return bool(np.isfinite(np.add.reduce(w, axis=None)))


@loop_helper
def _finite_rows(src, s0, count, n) -> bool:
    """Whether rows s0 .. s0 + count - 1 of src hold only finite values (v - v is 0 exactly
    for those): an OR over the rows that LLVM vectorizes, run while they are in cache."""
    bad = False
    for row in range(s0, s0 + count):
        for c in range(n):
            v = src[row, c]
            bad |= (v - v) != 0
    return not bad


# --- the transforms: one loop per output row, rows addressed by (first, step) ------------------
@loop_helper
def _bt_rows(r, dst, d0, dstep, src, s0, sstep, n, k):
    """dst rows d0 + i*dstep (i < a) = B^T times src rows s0 + j*sstep (j < a), n columns
    each; k holds 2, 4 and 5 in the arrays' dtype."""
    s1, s2, s3 = s0 + sstep, s0 + 2 * sstep, s0 + 3 * sstep
    if r == 3:
        for c in range(n):
            dst[d0, c] = src[s0, c] - src[s2, c]
        d = d0 + dstep
        for c in range(n):
            dst[d, c] = src[s1, c] + src[s2, c]
        d += dstep
        for c in range(n):
            dst[d, c] = src[s2, c] - src[s1, c]
        d += dstep
        for c in range(n):
            dst[d, c] = src[s1, c] - src[s3, c]
        return
    two, four, five = k[0], k[1], k[2]
    s4, s5 = s0 + 4 * sstep, s0 + 5 * sstep
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
def _at_rows(r, dst, d0, dstep, src, s0, sstep, n, two):
    """dst rows d0, d0 + dstep = A^T times src rows s0 + j*sstep (j < a)."""
    s1, s2, s3 = s0 + sstep, s0 + 2 * sstep, s0 + 3 * sstep
    d1 = d0 + dstep
    if r == 3:
        for c in range(n):
            dst[d0, c] = src[s0, c] + src[s1, c] + src[s2, c]
        for c in range(n):
            dst[d1, c] = src[s1, c] - src[s2, c] - src[s3, c]
        return
    s4, s5 = s0 + 4 * sstep, s0 + 5 * sstep
    for c in range(n):
        dst[d0, c] = src[s0, c] + src[s1, c] + src[s2, c] + src[s3, c] + src[s4, c]
    for c in range(n):
        dst[d1, c] = src[s1, c] - src[s2, c] + two * (src[s3, c] - src[s4, c]) + src[s5, c]


@loop_helper
def _a_rows(r, dst, d0, dstep, src, s0, sstep, n, two):
    """dst rows d0 + i*dstep (i < a) = A times src rows s0, s0 + sstep (A = A^T transposed)."""
    s1 = s0 + sstep
    for c in range(n):
        dst[d0, c] = src[s0, c]
    d = d0 + dstep
    for c in range(n):
        dst[d, c] = src[s0, c] + src[s1, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s0, c] - src[s1, c]
    d += dstep
    if r == 3:
        for c in range(n):
            dst[d, c] = -src[s1, c]
        return
    for c in range(n):
        dst[d, c] = src[s0, c] + two * src[s1, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s0, c] - two * src[s1, c]
    d += dstep
    for c in range(n):
        dst[d, c] = src[s1, c]


def _input_loop(r, xp, v, ta, r0, r1, th, tw, k):
    """v [a^2 * tiles, C], position-major = B^T d B of the tiles of tile rows r0..r1 (counted
    over images: row i is tile row i % th of image i // th) of padded NHWC `xp`; ta [a * Wp, C]
    holds one tile row's vertical transform. Returns whether every input it read was finite."""
    nb, hp, wp, c = xp.shape
    a = r + 1
    rows = xp.reshape(nb * hp, wp * c)
    ta_rows = ta.reshape(a, wp * c)
    tiles = (r1 - r0) * tw
    t = 0
    finite = True
    for row in range(r0, r1):
        first = (row // th) * hp + 2 * (row % th)
        # Each input row once: a tile row's first two, and the rest at an image's last.
        finite &= _finite_rows(rows, first, a if row % th == th - 1 else 2, wp * c)
        _bt_rows(r, ta_rows, 0, 1, rows, first, 1, wp * c, k)
        for tj in range(tw):
            for i in range(a):
                _bt_rows(r, v, i * a * tiles + t, tiles, ta, i * wp + 2 * tj, 1, c, k)
            t += 1
    return finite


def _output_loop(r, m, out, s, edge, r0, r1, th, tw, two):
    """out's 2x2 tiles of tile rows r0..r1 = A^T M A from m [a^2 * tiles, K] (position-major);
    s [2a, K] and edge [4, K] are scratch (edge: a tile cut by the output's border)."""
    nb, oh, ow, k = out.shape
    a = r + 1
    o2 = out.reshape(nb * oh * ow, k)
    tiles = (r1 - r0) * tw
    t = 0
    for row in range(r0, r1):
        b, y = row // th, 2 * (row % th)
        for tj in range(tw):
            x = 2 * tj
            for j in range(a):
                _at_rows(r, s, j, a, m, j * tiles + t, a * tiles, k, two)
            if y + 1 < oh and x + 1 < ow:
                p = (b * oh + y) * ow + x
                _at_rows(r, o2, p, 1, s, 0, 1, k, two)
                _at_rows(r, o2, p + ow, 1, s, a, 1, k, two)
            else:
                _at_rows(r, edge, 0, 1, s, 0, 1, k, two)
                _at_rows(r, edge, 2, 1, s, a, 1, k, two)
                for i in range(2):
                    for j in range(2):
                        if y + i < oh and x + j < ow:
                            p = (b * oh + y + i) * ow + x + j
                            for ch in range(k):
                                o2[p, ch] = edge[2 * i + j, ch]
            t += 1


def _gradient_loop(r, dyp, yhat, e, r0, r1, th, tw, two):
    """yhat [a^2 * tiles, K], position-major = A dY A^T of the tiles of tile rows r0..r1 of the
    output gradient `dyp` (NHWC, zero-padded to even sizes); e [2a, K] is scratch. Returns
    whether every gradient it read was finite."""
    nb, hp, wp, k = dyp.shape
    a = r + 1
    d2 = dyp.reshape(nb * hp * wp, k)
    tiles = (r1 - r0) * tw
    t = 0
    finite = True
    for row in range(r0, r1):
        p0 = ((row // th) * hp + 2 * (row % th)) * wp
        finite &= _finite_rows(d2, p0, 2 * wp, k)
        for tj in range(tw):
            for j in range(2):
                _a_rows(r, e, j, 2, d2, p0 + 2 * tj + j, wp, k, two)
            for i in range(a):
                _a_rows(r, yhat, i * a * tiles + t, tiles, e, 2 * i, 1, k, two)
            t += 1
    return finite


# --- the kernels ---------------------------------------------------------------------------------
class _Tiling:
    """The 2x2 output tiles of one convolution of NHWC `x` by an r x r filter to an output of
    `out_hw` with `k` channels: the input padded so every tile's patch exists, the bands of tile
    rows (counted over images), and each band's buffers and input transform."""

    def __init__(self, x, r: int, out_hw, pads, k: int):
        n, h, wd, self.c = x.shape
        self.r, self.a, self.k = r, r + 1, k
        self.th, self.tw = th, tw = (out_hw[0] + 1) // 2, (out_hw[1] + 1) // 2
        (pt, _), (pl, _) = pads
        # Rows and columns past the real padding are zeros that only feed cut-off outputs.
        self.xp = np.zeros((n, 2 * th + r - 1, 2 * tw + r - 1, self.c), x.dtype)
        rows, cols = min(h, 2 * th + r - 1 - pt), min(wd, 2 * tw + r - 1 - pl)
        self.xp[:, pt:pt + rows, pl:pl + cols] = x[:, :rows, :cols]
        per_tile = self.a * self.a * (self.c + k) * x.itemsize
        per = max(1, max(MIN_BAND_TILES, BAND_BYTES // per_tile) // tw)
        self.bands = [(i, min(n * th, i + per)) for i in range(0, n * th, per)]
        self._most = min(per, n * th) * tw   # tiles in the largest band
        self.consts = np.array([2, 4, 5], x.dtype)
        self._transform = compiled(_input_loop)
        self.nonfinite: list[int] = []   # bands whose inputs held a NaN or infinity

    def buffers(self, i: int, extra_rows: int):
        """Band i's (first row, last + 1, transformed input [a^2, tiles, C], [a^2, tiles, K]
        for the other operand, [extra_rows, K] of scratch), all in the thread's scratch buffer,
        with the input already transformed; a band whose input holds a NaN or infinity is
        recorded in `nonfinite`."""
        r0, r1 = self.bands[i]
        a2, c, k, tw, wp = self.a * self.a, self.c, self.k, self.tw, self.xp.shape[2]
        tiles, most = (r1 - r0) * tw, self._most
        buf = intra_op.scratch(a2 * most * (c + k) + self.a * wp * c + extra_rows * k,
                               self.xp.dtype)
        v = buf[:a2 * tiles * c].reshape(a2, tiles, c)
        other = buf[a2 * most * c:a2 * most * c + a2 * tiles * k].reshape(a2, tiles, k)
        rest = buf[a2 * most * (c + k):]
        vertical = rest[:self.a * wp * c].reshape(self.a * wp, c)
        if not self._transform(self.r, self.xp, v.reshape(a2 * tiles, c), vertical, r0, r1,
                               self.th, tw, self.consts):
            self.nonfinite.append(i)
        return r0, r1, v, other, rest[self.a * wp * c:].reshape(extra_rows, k)


@functools.cache
def _filter_transform(r: int, dtype: np.dtype) -> np.ndarray:
    """[a^2, r^2]: vec(G g G^T) = kron(G, G) vec(g); built once per filter size and dtype."""
    g = matrices(r)[1]
    kron = np.kron(g, g).astype(dtype)
    kron.flags.writeable = False
    return kron


def conv2d(x, w, out_hw, pads, epilogue=None) -> np.ndarray | None:
    """Stride-1 convolution of NHWC `x` by an r x r filter (pads: ((top, bottom), (left,
    right))), or None when an input holds a NaN or infinity (see the module docstring).
    `epilogue(rows)` runs on each band's output rows [pixels, K] while they are in cache, when
    tile rows are whole output rows (an even output height), else once at the end."""
    n, c = x.shape[0], x.shape[3]
    r, k = w.shape[0], w.shape[3]
    if not _finite(w):
        return None
    tiling = _Tiling(x, r, out_hw, pads, k)
    th, tw, a = tiling.th, tiling.tw, tiling.a
    u = linalg.matmul(_filter_transform(r, x.dtype), w.reshape(r * r, c * k))
    u = u.reshape(a * a, c, k)
    out = np.empty((n, *out_hw, k), x.dtype)
    transform_out = compiled(_output_loop)
    banded = epilogue is not None and out_hw[0] == 2 * th

    def band(i):
        r0, r1, v, m, scratch = tiling.buffers(i, 2 * a + 4)
        if tiling.nonfinite:
            return
        np.matmul(v, u, out=m)
        transform_out(r, m.reshape(-1, k), out, scratch[:2 * a], scratch[2 * a:], r0, r1, th,
                      tw, tiling.consts[0])
        if banded:
            epilogue(out.reshape(n * th, -1)[r0:r1].reshape(-1, k))

    intra_op.parallel_for(len(tiling.bands), band)
    if tiling.nonfinite:
        return None
    if epilogue is not None and not banded:
        epilogue(out.reshape(-1, k))
    return out


def filter_gradient(x, dy, r: int, pads) -> np.ndarray | None:
    """d filter [r, r, C, K] of the stride-1 convolution of NHWC `x` whose output gradient is
    `dy`: one partial [a^2, C, K] per band, summed in band order. None when an input holds a
    NaN or infinity (see the module docstring)."""
    n, oh, ow, k = dy.shape
    c = x.shape[3]
    tiling = _Tiling(x, r, (oh, ow), pads, k)
    th, tw, a = tiling.th, tiling.tw, tiling.a
    dyp = dy
    if (oh, ow) != (2 * th, 2 * tw) or not dy.flags.c_contiguous:
        dyp = np.zeros((n, 2 * th, 2 * tw, k), dy.dtype)
        dyp[:, :oh, :ow] = dy
    parts = np.empty((len(tiling.bands), a * a, c, k), x.dtype)
    transform_dy = compiled(_gradient_loop)

    def band(i):
        r0, r1, v, yhat, scratch = tiling.buffers(i, 2 * a)
        if not transform_dy(r, dyp, yhat.reshape(-1, k), scratch, r0, r1, th, tw,
                            tiling.consts[0]):
            tiling.nonfinite.append(i)
        if tiling.nonfinite:
            return
        np.matmul(v.transpose(0, 2, 1), yhat, out=parts[i])

    intra_op.parallel_for(len(tiling.bands), band)
    if tiling.nonfinite:
        return None
    du = np.add.reduce(parts, axis=0)
    return linalg.matmul(_filter_transform(r, x.dtype).T, du.reshape(a * a, c * k)).reshape(
        r, r, c, k)
