"""PNG files byte for byte as TensorFlow writes them through libpng (EncodePng, image summaries).

TF's png::WriteImageToBuffer leaves libpng's defaults: each row gets the adaptive filter of
least "sum of absolute differences", zlib runs with memLevel 9, the Z_FILTERED strategy and a
window fitted to the image (its header rewritten to the smallest window that holds it), and the
compressed stream is cut into IDAT chunks of 8192 bytes. One known difference: at level 0
(stored, no compression) an image of more than 64 KB gets other stored-block boundaries, which
zlib sets by libpng's row-by-row calls.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}   # channels -> gray, gray + alpha, RGB, RGBA
_CHUNK_BYTES = 8192   # libpng's zlib output buffer: one IDAT chunk per full buffer
_SMALL_IMAGE_BYTES = 16384   # up to here libpng fits zlib's window to the image


def encode(image: np.ndarray, compression: int = -1) -> bytes:
    """The PNG of a [height, width, channels] uint8 or uint16 image (1 to 4 channels) at zlib
    `compression` level (-1: zlib's default)."""
    height, width, channels = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    rows = np.ascontiguousarray(image, ">u2" if depth == 16 else np.uint8)
    rows = rows.reshape(height, -1).view(np.uint8)
    filtered = _filter_rows(rows, channels * depth // 8).tobytes()
    compressor = zlib.compressobj(compression, zlib.DEFLATED, _window_bits(len(filtered)), 9,
                                  zlib.Z_FILTERED)
    stream = _fitted_header(compressor.compress(filtered) + compressor.flush(), len(filtered))
    header = struct.pack(">IIBBBBB", width, height, depth, COLOR_TYPES[channels], 0, 0, 0)
    idat = [chunk(b"IDAT", stream[i:i + _CHUNK_BYTES])
            for i in range(0, len(stream), _CHUNK_BYTES)]
    return b"".join([SIGNATURE, chunk(b"IHDR", header), *idat, chunk(b"IEND", b"")])


def chunk(kind: bytes, body: bytes) -> bytes:
    """A PNG chunk: length, type, body, CRC-32 of type and body."""
    return struct.pack(">I", len(body)) + kind + body + \
        struct.pack(">I", zlib.crc32(body, zlib.crc32(kind)) & 0xFFFFFFFF)


def _filter_rows(rows: np.ndarray, bpp: int) -> np.ndarray:
    """Each row with its filter byte in front: of None, Sub, Up, Average and Paeth, the one
    whose filtered bytes, read as signed, have the smallest sum of magnitudes (|v| for
    v < 128, else 256 - v); the earlier filter wins a tie. `bpp` is bytes per pixel."""
    x = rows.astype(np.int16)
    up = np.zeros_like(x)
    up[1:] = x[:-1]
    left = np.zeros_like(x)
    left[:, bpp:] = x[:, :-bpp]
    up_left = np.zeros_like(x)
    up_left[1:, bpp:] = x[:-1, :-bpp]
    p = left + up - up_left   # Paeth: the neighbour closest to p, ties in order a, b, c
    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - up_left)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, up_left))
    candidates = np.stack([x, x - left, x - up, x - (left + up) // 2, x - paeth]) & 0xFF
    cost = np.minimum(candidates, 256 - candidates).sum(axis=2)
    choice = np.argmin(cost, axis=0)
    out = np.empty((rows.shape[0], rows.shape[1] + 1), np.uint8)
    out[:, 0] = choice
    out[:, 1:] = candidates[choice, np.arange(rows.shape[0])]
    return out


def _window_bits(data_size: int) -> int:
    """libpng's zlib window for `data_size` bytes of filtered image: the smallest power of
    two (at least 2^9) holding it and zlib's 262-byte lookahead, up to 2^15."""
    bits = 15
    if data_size <= _SMALL_IMAGE_BYTES:
        while data_size + 262 <= 1 << (bits - 1):   # stops at 9: 262 > 2^8
            bits -= 1
    return bits


def _fitted_header(stream: bytes, data_size: int) -> bytes:
    """libpng's rewrite of the zlib header: its window field names the smallest window that
    holds `data_size` bytes (enough for inflate, which needs no lookahead)."""
    cmf = stream[0]
    if data_size > _SMALL_IMAGE_BYTES or cmf & 0x0F != 8 or cmf & 0xF0 > 0x70:
        return stream
    cinfo = cmf >> 4
    half_window = 1 << (cinfo + 7)
    if data_size > half_window:
        return stream
    while True:
        half_window >>= 1
        cinfo -= 1
        if not (cinfo > 0 and data_size <= half_window):
            break
    cmf = (cmf & 0x0F) | (cinfo << 4)
    flg = stream[1] & 0xE0
    flg += 0x1F - ((cmf << 8) + flg) % 0x1F
    return bytes((cmf, flg)) + stream[2:]
