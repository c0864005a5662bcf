"""Winograd F(2x2, 3x3): 3x3 stride-1 convolutions with 2.25x fewer multiplications than im2col.

Each 2x2 block of outputs ("tile") is computed from the 4x4 input patch d around it as
A^T [(G g G^T) . (B^T d B)] A, where g is the 3x3 filter of one (input, output) channel pair and
"." is elementwise. Summed over input channels, the elementwise products become 16 GEMMs
[tiles, C] @ [C, K] (one per position in the 4x4 transformed tile) instead of im2col's one GEMM
[4 * tiles, 9C] @ [9C, K]: 16 / 36 of the multiply-adds. The input and output transforms have
only 0/±1 coefficients, so they are adds of strided views (B^T d B as 4 + 16 adds per band of
tile rows, A^T M A as 4 + 8); the filter transform is one GEMM with kron(G, G).

The transforms cost memory traffic proportional to pixels x (C + K) while the GEMM saving is
proportional to pixels x C x K, so this pays only with many channels and enough tiles (VGG19's
blocks 3 and 4: 15-25% faster per layer, 13-16% on the whole network's CPU time) and ties or
loses elsewhere, where `applies` keeps im2col. Bands of tile rows keep the transformed tiles
in cache.
Rounding: relative error ~1e-6 in float32, like im2col's (the transforms are exact in binary
except G's halves, which are exact too).
"""
from __future__ import annotations

import numpy as np

from tensorweave.kernels import intra_op, linalg

# Use Winograd only with at least this many tiles and input/output channels: measured against
# im2col on VGG19's layers (single thread, CPU time, interleaved runs), it wins by 15-25% from
# 256 channels and 14x14 tiles (28x28 outputs) up, ties at 128 and loses at 64 (there the
# transforms cost as much as the multiplications they save).
MIN_TILES = 128
MIN_CHANNELS = 256
# Transformed tiles (input + output) per band, and the fewest tiles a band's GEMMs get.
BAND_BYTES = 512 << 10
MIN_BAND_TILES = 512

_G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])
_GG = np.kron(_G, _G)   # [16, 9]: vec(G g G^T) = kron(G, G) vec(g)


def applies(x_shape, w_shape, strides, dilations, out_hw, dtype) -> bool:
    """Whether this convolution is one Winograd F(2x2, 3x3) handles and wins on."""
    if tuple(w_shape[:2]) != (3, 3) or tuple(strides) != (1, 1) or \
            tuple(dilations) != (1, 1) or dtype.kind != "f":
        return False
    tiles = x_shape[0] * ((out_hw[0] + 1) // 2) * ((out_hw[1] + 1) // 2)
    return tiles >= MIN_TILES and min(w_shape[2], w_shape[3]) >= MIN_CHANNELS


def filter_transform(w: np.ndarray) -> np.ndarray:
    """[16, C, K]: G g G^T for every channel pair, position-major."""
    c, k = w.shape[2:]
    return linalg.matmul(_GG.astype(w.dtype), w.reshape(9, c * k)).reshape(16, c, k)


def conv3x3(x: np.ndarray, w: np.ndarray, out_hw, pads) -> np.ndarray:
    """Stride-1 3x3 convolution of NHWC `x` (pads: ((top, bottom), (left, right)))."""
    n, h, wd, c = x.shape
    k = w.shape[3]
    oh, ow = out_hw
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    (pt, _), (pl, _) = pads
    # Padded so every tile's 4x4 patch exists; rows/cols past the real padding are zeros and
    # only feed outputs that are cut off at the end.
    xp = np.zeros((n, 2 * th + 2, 2 * tw + 2, c), x.dtype)
    rows_in = min(h, 2 * th + 2 - pt)
    cols_in = min(wd, 2 * tw + 2 - pl)
    xp[:, pt:pt + rows_in, pl:pl + cols_in] = x[:, :rows_in, :cols_in]
    u = filter_transform(w)
    out = np.empty((n, 2 * th, 2 * tw, k), x.dtype)
    per_row = n * tw
    rows = max(-(-MIN_BAND_TILES // per_row),
               BAND_BYTES // max(per_row * 16 * (c + k) * x.itemsize, 1), 1)
    rows = min(rows, th)
    v = np.empty((16, rows * per_row, c), x.dtype)
    t = np.empty((4, n, rows, 2 * tw + 2, c), x.dtype)
    m = np.empty((16, rows * per_row, k), x.dtype)
    s = np.empty((8, n, rows, tw, k), x.dtype)
    for r0 in range(0, th, rows):
        nr = min(rows, th - r0)
        tiles = nr * per_row
        _input_transform(xp, r0, nr, t[:, :, :nr], _view(v[:, :tiles], (4, 4, n, nr, tw, c)))
        _products(v[:, :tiles], u, m[:, :tiles])
        _output_transform(_view(m[:, :tiles], (4, 4, n, nr, tw, k)),
                          _view(s[:, :, :nr], (2, 4, n, nr, tw, k)),
                          out[:, 2 * r0:2 * r0 + 2 * nr])
    if (2 * th, 2 * tw) != (oh, ow):
        return out[:, :oh, :ow]
    return out


def _products(v, u, m) -> None:
    """m[p] = v[p] @ u[p] for the 16 tile positions, spread over `intra_op`'s threads."""
    def position(p):
        np.matmul(v[p], u[p], out=m[p])

    intra_op.parallel_for(16, position)


def _view(a: np.ndarray, shape) -> np.ndarray:
    """`a` reshaped without copying (results are written through it); error if impossible."""
    b = a.view()
    b.shape = shape
    return b


def _input_transform(xp, r0: int, nr: int, t, v) -> None:
    """v[a, b] = (B^T d B)[a, b] for the tile rows r0 .. r0 + nr, via row then column adds.

    B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]."""
    d = [xp[:, 2 * r0 + i:2 * r0 + i + 2 * nr:2] for i in range(4)]
    _bt(d, t)
    tw = v.shape[4]
    for a in range(4):
        e = [t[a][:, :, j:j + 2 * tw:2] for j in range(4)]
        _bt(e, v[a])


def _bt(d, out) -> None:
    np.subtract(d[0], d[2], out=out[0])
    np.add(d[1], d[2], out=out[1])
    np.subtract(d[2], d[1], out=out[2])
    np.subtract(d[1], d[3], out=out[3])


def _output_transform(m, s, out) -> None:
    """out tile = A^T M A, A^T = [[1, 1, 1, 0], [0, 1, -1, -1]], rows then columns."""
    _at(m, s)
    for a in range(2):
        sa = s[a]
        _at(sa, (out[:, a::2, 0::2], out[:, a::2, 1::2]))


def _at(m, out) -> None:
    np.add(m[0], m[1], out=out[0])
    np.add(out[0], m[2], out=out[0])
    np.subtract(m[1], m[2], out=out[1])
    np.subtract(out[1], m[3], out=out[1])
