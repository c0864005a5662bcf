"""Kernels of the image codec ops (ops/image_codec_ops.py).

One decode kernel serves DecodePng, DecodeJpeg, DecodeGif, DecodeBmp and DecodeImage, as
TensorFlow's DecodeImageV2Op does: the format comes from the magic bytes, the op type decides
the result's rank and which formats are refused, and the checks and messages are TF's. PNG
goes through `image_png` (TF's libpng channel rules, exact), JPEG and GIF through Pillow, BMP
through TF's own reader re-done with NumPy; DecodeAndCropJpeg decodes like DecodeJpeg and
cuts the window out. ExtractJpegShape reads the JPEG header. Encoding: PNG by `png_writer`,
JPEG (EncodeJpeg, EncodeJpegVariableQuality) by Pillow.
"""
from __future__ import annotations

import io

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import image_png, png_writer
from tensorweave.kernels.registry import kernel

_FORMATS = ((b"\xff\xd8\xff", "jpeg"), (b"\x89PNG\r\n\x1a\n", "png"), (b"GIF8", "gif"),
            (b"BM", "bmp"))
_NAMES = {"jpeg": "JPEG", "png": "PNG", "gif": "GIF"}




def classify(data: bytes) -> str | None:
    return next((name for magic, name in _FORMATS if data.startswith(magic)), None)


@kernel(("DecodePng", "DecodeJpeg", "DecodeGif", "DecodeBmp", "DecodeImage"))
class DecodeImageKernel:
    """TF's DecodeImageV2Op: attrs read once, validated when the node runs (as TF's
    construction errors surface)."""

    def __init__(self, ctx):
        attrs = ctx.attrs
        self.op = ctx.op_type
        self.channels = 3 if self.op == "DecodeGif" else attrs.get("channels", 0)
        self.dtype = attrs.get("dtype", _dtypes.uint8)
        self.expand = attrs.get("expand_animations", True)
        self.ratio = attrs.get("ratio", 1)
        self.dct_method = attrs.get("dct_method", "")
        self.recover = attrs.get("try_recover_truncated", False)

    def _check_attrs(self) -> None:
        if self.op in ("DecodeJpeg", "DecodeAndCropJpeg"):
            if self.ratio not in (1, 2, 4, 8):
                raise invalid_argument(f"ratio must be 1, 2, 4, or 8, got {self.ratio}")
            if self.dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
                raise invalid_argument("dct_method must be one of {'', 'INTEGER_FAST', "
                               "'INTEGER_ACCURATE'}")
        if self.channels not in (0, 1, 3, 4):
            raise invalid_argument(f"`channels` must be 0, 1, 3 or 4 but got {self.channels}")

    def _sniff(self, contents) -> tuple[bytes, str]:
        """The encoded bytes and their format, after TF's checks of the contents."""
        self._check_attrs()
        if np.ndim(contents):
            raise invalid_argument(f"`contents` must be scalar but got shape"
                           f"{dims_text(np.shape(contents))}")
        data = contents.item() if isinstance(contents, np.ndarray) else contents
        if not data:
            raise invalid_argument("Input is empty.")
        kind = classify(data)
        if kind is None:
            raise invalid_argument("Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, "
                                   "BMP, WebP required.")
        return data, kind

    def compute(self, ctx, contents):
        data, kind = self._sniff(contents)
        if kind == "bmp":
            return self._scaled(self._bmp(data))
        if kind == "png":
            return self._png(data)
        frames = self._gif(data) if kind == "gif" else self._jpeg(data)[None]
        return self._scaled(self._frames(frames, kind == "gif"))

    def _refuse_in_bmp_op(self, kind: str) -> None:
        """DecodeBmp decodes BMP only; TF says so where each format's checks reach it."""
        if self.op == "DecodeBmp":
            raise invalid_argument(f"Trying to decode {_NAMES[kind]} format using DecodeBmp op. "
                                   f"Use `decode_{kind}` or `decode_image` instead.")

    def _frames(self, frames: np.ndarray, animated: bool) -> np.ndarray:
        """4-D for DecodeGif (and DecodeImage expanding a GIF), else the single frame."""
        if self.op == "DecodeGif" or (self.op == "DecodeImage" and animated and self.expand):
            return frames
        if len(frames) != 1 and self.op != "DecodeImage":
            raise invalid_argument(f"Got {len(frames)} frames, but animated gifs can only be "
                                   "decoded by tf.io.decode_gif or tf.io.decode_image")
        return frames[0]

    def _scaled(self, pixels: np.ndarray) -> np.ndarray:
        """8-bit pixels in the op's dtype: uint16 as v * 256, float32 as v * (1 / 255)."""
        if self.dtype == _dtypes.uint16:
            return pixels.astype(np.uint16) * np.uint16(256)
        if self.dtype == _dtypes.float32:
            return pixels.astype(np.float32) * np.float32(1.0 / 255)
        return pixels

    def _png(self, data: bytes) -> np.ndarray:
        """Header damage fails before DecodeBmp's refusal, image data damage after it."""
        data_error = invalid_argument(f"Invalid PNG data, size {len(data)}")
        try:
            info = image_png.read_chunks(data)
        except image_png.PngError as e:
            if e.in_header:
                raise invalid_argument("Invalid PNG. Failed to initialize decoder.") from None
            info = None
        self._refuse_in_bmp_op("png")
        if info is None:
            raise data_error
        try:
            pixels = image_png.convert(info, image_png.native_pixels(data, info),
                                       self.channels, self.dtype != _dtypes.uint8)
        except image_png.PngError:
            raise data_error from None
        if self.dtype == _dtypes.float32:
            pixels = pixels.astype(np.float32) * np.float32(1.0 / 65535)
        return pixels[None] if self.op == "DecodeGif" else pixels

    def _jpeg(self, data: bytes) -> np.ndarray:
        """Pillow's libjpeg: 1 channel is the luma plane, `ratio` its DCT scaling."""
        if self.channels == 4:
            raise invalid_argument("JPEG does not support 4 channels")
        self._refuse_in_bmp_op("jpeg")
        # Like TF's libjpeg-turbo when recovering, a truncated stream decodes to the end with
        # its missing blocks gray: an end-of-image marker makes libjpeg finish it.
        attempts = (data, data + b"\xff\xd9") if self.recover else (data,)
        for attempt in attempts:
            try:
                pixels = self._jpeg_pixels(attempt)
                break
            except (OSError, SyntaxError, ValueError):
                continue
        else:
            raise invalid_argument("jpeg::Uncompress failed. Invalid JPEG data or crop window.")
        if pixels.ndim == 2:
            pixels = pixels[..., None]
        return np.repeat(pixels, 3, axis=-1) if self.channels == 3 and pixels.shape[-1] == 1 \
            else pixels

    def _jpeg_pixels(self, data: bytes) -> np.ndarray:
        from PIL import Image
        image = Image.open(io.BytesIO(data))
        mode = "L" if self.channels == 1 else image.mode if self.channels == 0 else "RGB"
        mode = mode if mode in ("L", "RGB") else "RGB"
        if self.ratio > 1:
            width, height = image.size
            image.draft(mode, (max(1, width // self.ratio), max(1, height // self.ratio)))
        image.load()
        return np.asarray(image.convert(mode))

    def _gif(self, data: bytes) -> np.ndarray:
        """Every frame composited as TF does (see decode_gif); Pillow composites disposal
        methods 0 and 1 the same way, and a pixel no frame has painted yet is black."""
        from PIL import Image, ImageSequence
        if self.channels not in (0, 3):
            raise invalid_argument(f"channels must be 0 or 3 for GIF, got {self.channels}")
        self._refuse_in_bmp_op("gif")
        try:
            image = Image.open(io.BytesIO(data))
            frames = [np.asarray(f.convert("RGBA")) for f in ImageSequence.Iterator(image)]
        except (OSError, SyntaxError, ValueError, EOFError) as e:
            raise invalid_argument(f"Invalid GIF data (size {len(data)}), {e}") from None
        if not self.expand and self.op == "DecodeImage":
            frames = frames[:1]
        rgba = np.stack(frames)
        return np.where(rgba[..., 3:] == 0, np.uint8(0), rgba[..., :3])

    def _bmp(self, data: bytes) -> np.ndarray:
        """TF's BMP reader: 8/24/32 bits per pixel, rows bottom-up unless the height is
        negative, BGR(A) to RGB(A), gray replicated, opaque alpha added when asked."""
        if self.channels == 1:
            raise invalid_argument(f"`channels` must be 0, 3 or 4 for BMP, but got {self.channels}")
        if self.op not in ("DecodeBmp", "DecodeImage"):
            raise invalid_argument("Trying to decode BMP format using a wrong op. Use `decode_bmp` "
                                   f"or `decode_image` instead. Op used: {self.op}")
        if len(data) < 32:
            raise invalid_argument("Incomplete bmp content, requires at least 32 bytes to find the "
                           f"header size, width, height, and bpp, got {len(data)} bytes")
        header_size, width, height = np.frombuffer(data, "<i4", 1, 10)[0], \
            *np.frombuffer(data, "<i4", 2, 18)
        stored = int(np.frombuffer(data, "<i2", 1, 28)[0]) // 8
        if stored not in (1, 3, 4):
            raise invalid_argument("Number of channels inherent in the image must be 1, 3 or 4, "
                                   f"was {stored}")
        channels = self.channels or stored
        if width <= 0:
            raise invalid_argument("Width must be positive")
        if height == 0:
            raise invalid_argument("Height must be nonzero")
        if header_size < 0:
            raise invalid_argument("header size must be nonnegative")
        rows = abs(int(height))
        row_size = (stored * int(width) + 3) // 4 * 4
        size_diff = len(data) - int(header_size) - row_size * rows
        if size_diff:
            raise invalid_argument("Input size should match (header_size + row_size * abs_height) "
                                   f"but they differ by {size_diff}")
        pixels = np.frombuffer(data, np.uint8, row_size * rows, int(header_size))
        pixels = pixels.reshape(rows, row_size)[:, :stored * width].reshape(rows, width, stored)
        if height > 0:
            pixels = pixels[::-1]
        if stored == 1:
            pixels = np.repeat(pixels, 3 if channels >= 3 else 1, axis=-1)
        else:
            pixels = pixels[..., [2, 1, 0, 3][:stored]]
        if channels == 4 and pixels.shape[-1] == 3:
            pixels = np.concatenate([pixels, np.full((rows, width, 1), 255, np.uint8)], -1)
        return np.ascontiguousarray(pixels[..., :channels])


@kernel("DecodeAndCropJpeg")
class DecodeAndCropJpegKernel(DecodeImageKernel):
    """DecodeJpeg's decoding, then the window [y, x, height, width] of the result (which TF's
    libjpeg decodes alone, to the same pixels)."""

    def compute(self, ctx, contents, crop_window):
        data, kind = self._sniff(contents)
        if kind != "jpeg":
            raise invalid_argument("DecodeAndCropJpeg operation can run on JPEG only, but detected "
                                   f"{_NAMES.get(kind, 'BMP')}.")
        if crop_window.ndim != 1:
            raise invalid_argument("crop_window must be 1-D, got shape "
                                   f"{dims_text(crop_window.shape)}")
        if crop_window.shape[0] != 4:
            raise invalid_argument("crop_size must have four elements "
                                   f"{dims_text(crop_window.shape)}")
        pixels = self._jpeg(data)
        y, x, height, width = (int(v) for v in crop_window)
        if y < 0 or x < 0 or height <= 0 or width <= 0 or y + height > pixels.shape[0] or \
                x + width > pixels.shape[1]:
            raise invalid_argument("jpeg::Uncompress failed. Invalid JPEG data or crop window.")
        return np.ascontiguousarray(pixels[y:y + height, x:x + width])


@kernel("ExtractJpegShape")
def _extract_jpeg_shape(ctx, contents):
    """Height, width and components from the JPEG header (Pillow reads only the header)."""
    from PIL import Image
    if np.ndim(contents):
        raise invalid_argument("contents must be scalar, got shape "
                               f"{dims_text(np.shape(contents))}")
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    try:
        image = Image.open(io.BytesIO(data), formats=["JPEG"])
    except (OSError, SyntaxError, ValueError):
        raise invalid_argument(f"Invalid JPEG data, size {len(data)}") from None
    width, height = image.size
    channels = {"L": 1, "CMYK": 4}.get(image.mode, 3)
    return np.array([height, width, channels], ctx.attrs["output_type"].as_numpy_dtype)


@kernel("EncodePng")
class EncodePngKernel:
    """One PNG per image of a [..., height, width, channels] batch."""

    def __init__(self, ctx):
        self.compression = ctx.attrs["compression"]

    def compute(self, ctx, images):
        if images.ndim < 3:
            raise invalid_argument(f"images must be at least rank 3{dims_text(images.shape)}")
        channels = images.shape[-1]
        if channels not in (1, 2, 3, 4):
            raise invalid_argument(f"image must have 1, 2, 3, or 4 channels, got {channels}")
        if not -1 <= self.compression <= 9:
            raise invalid_argument(f"compression should be in [-1,9], got {self.compression}")
        if not images.shape[-3] or not images.shape[-2]:
            raise invalid_argument(f"Invalid image size {dims_text(images.shape)}: PNG encoding "
                           "needs a non-empty image")
        batch = images.reshape((-1,) + images.shape[-3:])
        out = np.empty(len(batch), dtype=object)
        out[:] = [png_writer.encode(image, self.compression) for image in batch]
        return out.reshape(images.shape[:-3])


@kernel("EncodeJpeg")
class EncodeJpegKernel:
    """Pillow's JPEG writer with TF's options; the JFIF density unit is patched in."""

    def __init__(self, ctx):
        self.attrs = dict(ctx.attrs)

    def compute(self, ctx, image):
        return encode_jpeg(image, self.attrs)


# EncodeJpegVariableQuality: EncodeJpeg's defaults, the format from the channels.
_DEFAULT_JPEG = {"format": "", "progressive": False, "optimize_size": False,
                 "chroma_downsampling": True, "density_unit": "in", "x_density": 300,
                 "y_density": 300, "xmp_metadata": ""}


@kernel("EncodeJpegVariableQuality")
def _encode_jpeg_variable_quality(ctx, image, quality):
    if image.ndim != 3:
        raise invalid_argument(f"image must be 3-dimensional{dims_text(image.shape)}")
    if np.ndim(quality):
        raise invalid_argument(f"quality must be scalar: {dims_text(np.shape(quality))}")
    return encode_jpeg(image, {**_DEFAULT_JPEG, "quality": int(quality)})


def encode_jpeg(image, a: dict) -> np.ndarray:
    """A scalar object array holding the JPEG of `image` with TF's encode attrs `a`."""
    from PIL import Image
    if image.ndim != 3:
        raise invalid_argument(f"image must be 3-dimensional{dims_text(image.shape)}")
    channels = image.shape[-1]
    want = {"grayscale": 1, "rgb": 3}.get(a["format"])
    if not 0 <= a["quality"] <= 100:
        raise invalid_argument(f"quality must be in [0,100], got {a['quality']}")
    if want is None and channels not in (1, 3):
        raise invalid_argument(f"image must have 1 or 3 channels, got {dims_text(image.shape)}")
    if want is not None and channels != want:
        raise invalid_argument(f"format {a['format']} expects {want} channels, got "
                               f"{dims_text(image.shape)}")
    if not image.size:
        raise errors.InternalError(None, None, "JPEG encoding failed")
    pil = Image.fromarray(np.ascontiguousarray(image[..., 0] if channels == 1 else image))
    options = {"quality": a["quality"], "progressive": a["progressive"],
               "optimize": a["optimize_size"], "dpi": (a["x_density"], a["y_density"]),
               "subsampling": 2 if a["chroma_downsampling"] else 0}
    if a["xmp_metadata"]:
        options["xmp"] = a["xmp_metadata"].encode()
    buffer = io.BytesIO()
    pil.save(buffer, "JPEG", **options)
    result = np.empty((), dtype=object)
    result[()] = _with_density_unit(buffer.getvalue(), 2 if a["density_unit"] == "cm" else 1)
    return result


def _with_density_unit(jpeg: bytes, unit: int) -> bytes:
    """Sets the units byte of the JFIF APP0 segment (offset 13: after SOI, marker, length and
    'JFIF\\0' and the version) to 1 (dots per inch) or 2 (per cm)."""
    if jpeg[6:11] != b"JFIF\x00":
        return jpeg
    return jpeg[:13] + bytes([unit]) + jpeg[14:]
