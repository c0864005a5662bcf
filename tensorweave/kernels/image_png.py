"""PNG decoding for the codec kernels, with TensorFlow's libpng channel rules.

Pillow inflates, unfilters and de-interlaces the image data; the chunks are walked here (CRCs,
IHDR, PLTE, tRNS), so errors are classified as TF's ("Failed to initialize decoder" before the
image data, "Invalid PNG data" from there on) and 16-bit samples keep both bytes (Pillow's
16-bit RGB modes keep only the high byte, so the low byte comes from a second pass with the
little-endian raw mode). The channel conversions then follow TF's libpng setup in libpng's
transform order: palette/tRNS expansion, alpha stripping, RGB -> gray (libpng's integer
weights, in linear light for an 8-bit file with a gAMA or sRGB chunk), 16 -> 8 bits (high
byte), gray -> RGB, opaque alpha filler, 8 -> 16 bits (v * 257).
Encoding is kernels/png_writer.py: libpng's bytes.
"""
from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from tensorweave.kernels.png_writer import SIGNATURE

# libpng's png_set_rgb_to_gray(0.299, 0.587) as 15-bit fixed point (blue takes the rest).
_GRAY_WEIGHTS = (9797, 19234, 32768 - 9797 - 19234)
_NATIVE_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}


class PngError(ValueError):
    """Corrupt PNG data; `in_header` tells TF's two messages apart."""

    def __init__(self, in_header: bool):
        super().__init__("header" if in_header else "data")
        self.in_header = in_header


@dataclass
class PngInfo:
    """What the chunks say about the image."""

    width: int
    height: int
    bit_depth: int
    color_type: int
    palette: np.ndarray | None = None      # [n, 3] uint8
    trns: bytes | None = None
    gamma: int = 100000                    # the file's gamma, x 100000 (gAMA or sRGB)


def read_chunks(data: bytes) -> PngInfo:
    """Walks every chunk, checking lengths and CRCs up to IEND; PngError on damage."""
    if not data.startswith(SIGNATURE):
        raise PngError(True)
    pos, info, seen_data = len(SIGNATURE), None, False
    while True:
        if pos + 8 > len(data):
            raise PngError(not seen_data)
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc = data[pos + 8 + length:pos + 12 + length]
        if len(body) < length or len(crc) < 4 or \
                struct.unpack(">I", crc)[0] != zlib.crc32(kind + body):
            raise PngError(not seen_data and kind != b"IDAT")
        pos += 12 + length
        if kind == b"IHDR" and length == 13:
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            info = PngInfo(width, height, depth, color)
        elif info is None:
            raise PngError(True)
        elif kind == b"PLTE":
            info.palette = np.frombuffer(body, np.uint8)[:length // 3 * 3].reshape(-1, 3)
        elif kind == b"tRNS":
            info.trns = body
        elif kind == b"gAMA" and length == 4 and not seen_data:
            gamma = struct.unpack(">I", body)[0]
            info.gamma = gamma if 16 <= gamma <= 625000000 else info.gamma   # libpng's range
        elif kind == b"sRGB" and not seen_data:
            info.gamma = 45455
        elif kind == b"IDAT":
            seen_data = True
        elif kind == b"IEND":
            if not seen_data or info.width <= 0 or info.height <= 0:
                raise PngError(not seen_data)
            return info


def _decode(data: bytes, rawmode: str | None = None) -> np.ndarray:
    """Pillow's pixels, optionally through another raw mode of the same bits per pixel."""
    from PIL import Image
    image = Image.open(io.BytesIO(data))
    if rawmode is not None:
        image.tile = [image.tile[0]._replace(args=rawmode)]
    image.load()
    pixels = np.asarray(image)
    return (pixels * np.uint8(255)).astype(np.uint8) if pixels.dtype == bool else pixels


def _joined(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    return (high.astype(np.uint16) << 8) | low


def native_pixels(data: bytes, info: PngInfo) -> np.ndarray:
    """[height, width, stored channels] at the stored depth (uint16 for 16 bits; gray below
    8 bits scaled to 8 like libpng's expand; a palette image as its indices)."""
    try:
        if info.bit_depth != 16:
            pixels = _decode(data)
        elif info.color_type == 0:
            pixels = _decode(data).astype(np.uint16)
        elif info.color_type == 4:   # gray + alpha: all 4 bytes through the 8-bit RGBA path
            raw = _decode(data, "RGBA")
            pixels = np.stack([_joined(raw[..., 0], raw[..., 1]),
                               _joined(raw[..., 2], raw[..., 3])], axis=-1)
        else:
            mode = "RGB" if info.color_type == 2 else "RGBA"
            pixels = _joined(_decode(data), _decode(data, f"{mode};16L"))
    except (OSError, SyntaxError, ValueError, zlib.error):
        raise PngError(False) from None
    return pixels.reshape(info.height, info.width, -1)


def _trns_alpha(info: PngInfo, pixels: np.ndarray, depth: int) -> np.ndarray:
    """Alpha from a tRNS chunk: per palette entry, or 0 where a gray / RGB pixel equals the
    transparent colour (scaled like libpng when gray is below 8 bits)."""
    top = (1 << depth) - 1
    if info.color_type == 3:
        table = np.full(256, 255, np.uint8)
        table[:len(info.trns)] = np.frombuffer(info.trns[:256], np.uint8)
        return table[pixels[..., 0]]
    key = np.frombuffer(info.trns, ">u2").astype(np.int64)
    if info.color_type == 0 and info.bit_depth < 8:
        key = key * (255 // ((1 << info.bit_depth) - 1))
    hidden = np.all(pixels == key[:pixels.shape[-1]], axis=-1)
    return np.where(hidden, 0, top).astype(pixels.dtype)


def convert(info: PngInfo, pixels: np.ndarray, channels: int, bits16: bool) -> np.ndarray:
    """TF's channel and depth conversion of the stored pixels (see the module docstring)."""
    color_type, trns = info.color_type, info.trns is not None
    if channels == 0:
        channels = (4 if trns else 3) if color_type == 3 else _NATIVE_CHANNELS[color_type]
    want_alpha, want_gray = channels % 2 == 0, channels < 3
    depth = 16 if pixels.dtype == np.uint16 else 8
    alpha = None
    if color_type in (4, 6):
        pixels, alpha = pixels[..., :-1], pixels[..., -1:]
    elif trns and want_alpha:
        alpha = _trns_alpha(info, pixels, depth)[..., None]
    if color_type == 3:
        if info.palette is None or int(pixels.max(initial=0)) >= len(info.palette):
            raise PngError(False)
        pixels = info.palette[pixels[..., 0]]
    if want_gray and pixels.shape[-1] == 3:
        pixels = _rgb_to_gray(pixels.astype(np.int64), depth, info.gamma).astype(pixels.dtype)
    if depth == 16 and not bits16:   # libpng's strip_16 keeps the high byte
        pixels = (pixels >> 8).astype(np.uint8)
        alpha = None if alpha is None else (alpha >> 8).astype(np.uint8)
    if not want_gray and pixels.shape[-1] == 1:
        pixels = np.repeat(pixels, 3, axis=-1)
    if want_alpha:
        if alpha is None:   # libpng's filler (1 << bit_depth) - 1, cut to the sample width
            filler = ((1 << info.bit_depth) - 1) & (0xFFFF if depth == 16 and bits16 else 0xFF)
            alpha = np.full(pixels.shape[:-1] + (1,), filler, pixels.dtype)
        pixels = np.concatenate([pixels, alpha], axis=-1)
    if bits16 and pixels.dtype == np.uint8:
        pixels = pixels.astype(np.uint16) * np.uint16(257)
    return np.ascontiguousarray(pixels)


def _reciprocal(fixed: int) -> int:
    """libpng's png_reciprocal of a x100000 fixed-point value."""
    return int(np.floor(1e10 / fixed + 0.5))


def _gamma_table(fixed: int) -> np.ndarray:
    """libpng's 8-bit gamma table: v -> round(255 (v / 255) ^ gamma), 0 and 255 kept."""
    v = np.arange(256)
    table = np.floor(255 * np.power(v / 255.0, fixed * 1e-5) + 0.5).astype(np.int64)
    table[[0, 255]] = [0, 255]
    return table


def _rgb_to_gray(rgb: np.ndarray, depth: int, gamma: int) -> np.ndarray:
    """libpng's integer conversion. 8 bits: a pixel with r == g == b stays; others truncate,
    or, when the file declares a gamma (gAMA, sRGB) more than 5% from 1, are weighed in
    linear light through libpng's tables and rounded. 16 bits round (the gamma path of
    16-bit data is not reproduced)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    linear = depth == 8 and abs(gamma - 100000) > 5000
    if linear:
        to_linear = _gamma_table(_reciprocal(gamma))
        r, g, b = to_linear[r], to_linear[g], to_linear[b]
    weighted = _GRAY_WEIGHTS[0] * r + _GRAY_WEIGHTS[1] * g + _GRAY_WEIGHTS[2] * b
    if depth == 16:
        return ((weighted + 16384) >> 15)[..., None]
    if linear:
        from_linear = _gamma_table(_reciprocal(_reciprocal(gamma)))
        gray = from_linear[(weighted + 16384) >> 15]
    else:
        gray = weighted >> 15
    same = (rgb[..., 0] == rgb[..., 1]) & (rgb[..., 0] == rgb[..., 2])
    return np.where(same, rgb[..., 0], gray)[..., None]
