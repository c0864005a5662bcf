"""Image codecs: DecodePng, DecodeJpeg, DecodeAndCropJpeg, DecodeGif, DecodeBmp, DecodeImage,
ExtractJpegShape, EncodePng, EncodeJpeg, EncodeJpegVariableQuality, and the wrappers
`tf.image.decode_*`, `encode_*`, `is_jpeg`, `extract_jpeg_shape`.

Like TensorFlow, every decode op sniffs the format from the magic bytes, so `decode_png` also
decodes a JPEG or a single-frame GIF; `decode_gif` returns `[frames, height, width, 3]`,
`decode_image` a 3-D image (or 4-D for a GIF while `expand_animations`). Corrupt or unknown
data is an InvalidArgumentError at run time with TF's message. None of these ops is
differentiable. Kernels (Pillow plus TF's own BMP and PNG-channel rules):
`kernels/image_codec.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.image_ops import check_choice, rank_at_least

__all__: list[str] = []

_d = _dtypes
_CHANNELS = Attr("channels", "int", 0)


def _channels_dim(ctx):
    channels = ctx.attr("channels")
    if channels < 0:
        raise ValueError(f"channels must be non-negative, got {channels}")
    return channels or None


def _decode_shape(ctx):
    """A scalar string in, `[height, width, channels]` out (channels known when requested)."""
    dims_with_rank(ctx.input_shape(0)._dims, 0)
    return _ts.TensorShape([None, None, _channels_dim(ctx)])


def _decode_gif_shape(ctx):
    dims_with_rank(ctx.input_shape(0)._dims, 0)
    return _ts.TensorShape([None, None, None, 3])


def _decode_image_shape(ctx):
    """3-D without `expand_animations`; else the rank depends on the data (a GIF is 4-D)."""
    dims_with_rank(ctx.input_shape(0)._dims, 0)
    channels = _channels_dim(ctx)
    return _ts.unknown_shape() if ctx.attr("expand_animations") else \
        _ts.TensorShape([None, None, channels])


def _decode_op(name, attrs, output="image: uint8", shape_fn=_decode_shape):
    return define_op(name, inputs=["contents: string"], outputs=[output], attrs=attrs,
                     shape_fn=shape_fn, not_differentiable=True)


DecodePng = _decode_op("DecodePng", [_CHANNELS, TypeAttr("dtype", (_d.uint8, _d.uint16),
                                                         _d.uint8)], "image: dtype")
_JPEG_DECODE_ATTRS = [
    _CHANNELS, Attr("ratio", "int", 1), Attr("fancy_upscaling", "bool", True),
    Attr("try_recover_truncated", "bool", False), Attr("acceptable_fraction", "float", 1.0),
    Attr("dct_method", "string", "")]
DecodeJpeg = _decode_op("DecodeJpeg", _JPEG_DECODE_ATTRS)
DecodeGif = _decode_op("DecodeGif", [], shape_fn=_decode_gif_shape)
DecodeBmp = _decode_op("DecodeBmp", [_CHANNELS])
DecodeImage = _decode_op("DecodeImage", [
    _CHANNELS, TypeAttr("dtype", (_d.uint8, _d.uint16, _d.float32), _d.uint8),
    Attr("expand_animations", "bool", True)], "image: dtype", _decode_image_shape)


def _encode_png_shape(ctx):
    """One string per image: the shape without the last three dimensions."""
    shape = rank_at_least(ctx.input_shape(0), 3)
    return shape if shape.ndims is None else _ts.TensorShape(shape.as_list()[:-3])


def _encode_jpeg_shape(ctx):
    dims_with_rank(ctx.input_shape(0)._dims, 3)
    return _ts.TensorShape([])


EncodePng = define_op(
    "EncodePng", inputs=["image: T"], outputs=["contents: string"],
    attrs=[Attr("compression", "int", -1), TypeAttr("T", (_d.uint8, _d.uint16), _d.uint8)],
    shape_fn=_encode_png_shape, not_differentiable=True)

_JPEG_FORMATS = ("", "grayscale", "rgb")
_DENSITY_UNITS = ("in", "cm")
EncodeJpeg = define_op(
    "EncodeJpeg", inputs=["image: uint8"], outputs=["contents: string"],
    attrs=[Attr("format", "string", ""), Attr("quality", "int", 95),
           Attr("progressive", "bool", False), Attr("optimize_size", "bool", False),
           Attr("chroma_downsampling", "bool", True), Attr("density_unit", "string", "in"),
           Attr("x_density", "int", 300), Attr("y_density", "int", 300),
           Attr("xmp_metadata", "string", "")],
    shape_fn=_encode_jpeg_shape, not_differentiable=True)

def _decode_and_crop_shape(ctx):
    """A scalar string and a crop window [y, x, height, width]: [height, width, channels]."""
    dims_with_rank(ctx.input_shape(0)._dims, 0)
    size = dims_with_rank(ctx.input_shape(1)._dims, 1)[0]
    if size is not None and size != 4:
        raise ValueError(f"Dimension must be 4 but is {size}")
    window = ctx.static_value(1)
    dims = [None, None] if window is None else [int(window[2]), int(window[3])]
    return _ts.TensorShape([*dims, _channels_dim(ctx)])


def _jpeg_shape_shape(ctx):
    dims_with_rank(ctx.input_shape(0)._dims, 0)
    return _ts.TensorShape([3])


DecodeAndCropJpeg = define_op(
    "DecodeAndCropJpeg", inputs=["contents: string", "crop_window: int32"],
    outputs=["image: uint8"], attrs=_JPEG_DECODE_ATTRS, shape_fn=_decode_and_crop_shape,
    not_differentiable=True, doc="A window of a decoded JPEG image.")
ExtractJpegShape = define_op(
    "ExtractJpegShape", inputs=["contents: string"], outputs=["image_shape: output_type"],
    attrs=[TypeAttr("output_type", (_d.int32, _d.int64), _d.int32)],
    shape_fn=_jpeg_shape_shape, not_differentiable=True,
    doc="[height, width, channels] of a JPEG image, read from its header.")
EncodeJpegVariableQuality = define_op(
    "EncodeJpegVariableQuality", inputs=["images: uint8", "quality: int32"],
    outputs=["contents: string"], shape_fn=_encode_jpeg_shape, not_differentiable=True,
    doc="A JPEG of a [height, width, 1 or 3] image at a quality given as a tensor.")


def decode_png(contents, channels=0, dtype=_d.uint8, name=None):
    """Decodes a PNG image (TF1's tf.image.decode_png); JPEG and single-frame GIF data are
    decoded too, as in TensorFlow.

    Channels are converted like TensorFlow's libpng setup: alpha is dropped for 1 or 3
    channels (not blended), added as opaque (or from tRNS) for 4, and RGB becomes gray as
    (9797 R + 19234 G + 3737 B) >> 15, in linear light when an 8-bit file has a gAMA or sRGB
    chunk (a 16-bit file with a gamma chunk is converted without it, unlike libpng). 16-bit
    data keeps its precision as uint16 and keeps its high byte as uint8; 8-bit data becomes
    uint16 as v * 257.

    Args:
      contents: a scalar string Tensor, the encoded image.
      channels: 0 (as stored), 1 (gray), 3 (RGB) or 4 (RGBA).
      dtype: uint8 or uint16.
      name: the op name (default "DecodePng").

    Returns:
      A `[height, width, channels]` Tensor of `dtype`.

    Raises:
      ValueError: if `contents` is not a scalar or `channels` is negative.
      InvalidArgumentError: (at run time) for empty, unknown or corrupt data, or a channel
        count the format does not support.
    """
    return apply_op(DecodePng, [contents], {"channels": channels, "dtype": dtype}, name=name)


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """Decodes a JPEG image (TF1's tf.image.decode_jpeg) with Pillow's libjpeg.

    Pixels can differ from TensorFlow's by the decoder's rounding (TF uses libjpeg-turbo's
    fast integer IDCT by default, Pillow the accurate one), typically by 1 or 2 levels.

    Args:
      contents: a scalar string Tensor, the encoded image (PNG and GIF data decode too).
      channels: 0 (as stored), 1 (gray: the luma channel) or 3 (RGB).
      ratio: downscaling while decoding: 1, 2, 4 or 8.
      fancy_upscaling: accepted for compatibility; chroma is always upsampled smoothly.
      try_recover_truncated: if True, a truncated image decodes with its missing blocks
        gray (as TF's libjpeg-turbo completes it); if False it is an error.
      acceptable_fraction: the fraction of rows TF requires of a truncated image; accepted
        for compatibility (the decoder completes every row, as in TF).
      dct_method: "", "INTEGER_FAST" or "INTEGER_ACCURATE" (validated; Pillow's IDCT is
        always the accurate one).
      name: the op name (default "DecodeJpeg").

    Returns:
      A `[height / ratio, width / ratio, channels]` uint8 Tensor.

    Raises:
      ValueError: if `contents` is not a scalar or `channels` is negative.
      InvalidArgumentError: (at run time) for empty, unknown or corrupt data, or a channel
        count the format does not support.
    """
    attrs = {"channels": channels, "ratio": ratio, "fancy_upscaling": fancy_upscaling,
             "try_recover_truncated": try_recover_truncated,
             "acceptable_fraction": acceptable_fraction, "dct_method": dct_method}
    return apply_op(DecodeJpeg, [contents], attrs, name=name)


def decode_gif(contents, name=None):
    """Decodes every frame of a GIF image (TF1's tf.image.decode_gif).

    Each frame is drawn over the previous one (TF's model: a frame's transparent pixels keep
    the previous frame's colour, black on the first frame; disposal methods are ignored).

    Args:
      contents: a scalar string Tensor, the encoded GIF (PNG and JPEG data decode as one
        frame).
      name: the op name (default "DecodeGif").

    Returns:
      A `[num_frames, height, width, 3]` uint8 Tensor.

    Raises:
      ValueError: if `contents` is not a scalar or `channels` is negative.
      InvalidArgumentError: (at run time) for empty, unknown or corrupt data, or a channel
        count the format does not support.
    """
    return apply_op(DecodeGif, [contents], name=name)


def decode_bmp(contents, channels=0, name=None):
    """Decodes an uncompressed 8-, 24- or 32-bit BMP image (TF1's tf.image.decode_bmp).

    Args:
      contents: a scalar string Tensor, the encoded BMP.
      channels: 0 (as stored), 3 (RGB) or 4 (RGBA; opaque alpha if the image has none).
      name: the op name (default "DecodeBmp").

    Returns:
      A `[height, width, channels]` uint8 Tensor.

    Raises:
      ValueError: if `contents` is not a scalar or `channels` is negative.
      InvalidArgumentError: (at run time) for empty, unknown or corrupt data, or a channel
        count the format does not support.
    """
    return apply_op(DecodeBmp, [contents], {"channels": channels}, name=name)


def decode_image(contents, channels=None, dtype=_d.uint8, name=None, expand_animations=True):
    """Decodes a BMP, GIF, JPEG or PNG image, detected from its first bytes (TF1's
    tf.image.decode_image).

    uint16 and float32 results come from the DecodeImage op (8-bit data as v * 256, or v / 255
    in float32; PNG as decode_png's uint16, / 65535 in float32); other dtypes are converted
    from uint16 with `convert_image_dtype`.

    Args:
      contents: a scalar string Tensor, the encoded image.
      channels: None or 0 (as stored), 1, 3 or 4.
      dtype: the result dtype (uint8, uint16, float32 directly; others converted).
      name: a name scope for the ops (default "decode_image").
      expand_animations: if True a GIF gives all its frames `[frames, height, width, 3]`, so
        the static rank is unknown; if False only the first frame, always 3-D.

    Returns:
      A Tensor of `dtype`: `[height, width, channels]`, or 4-D for a GIF while
      `expand_animations`.

    Raises:
      ValueError: if `contents` is not a scalar or `channels` is negative.
      InvalidArgumentError: (at run time) for empty, unknown or corrupt data, or a channel
        count the format does not support.
    """
    from tensorweave.image.convert import convert_image_dtype
    with name_scope(name, "decode_image"):
        channels = 0 if channels is None else channels
        dtype = _d.as_dtype(dtype)
        direct = dtype if dtype in (_d.float32, _d.uint8, _d.uint16) else _d.uint16
        image = apply_op(DecodeImage, [contents], {
            "channels": channels, "dtype": direct, "expand_animations": expand_animations})
        return image if direct == dtype else convert_image_dtype(image, dtype)


def encode_png(image, compression=-1, name=None):
    """Encodes images as PNG (TF1's tf.image.encode_png), byte for byte as TensorFlow does.

    Args:
      image: a uint8 or uint16 Tensor `[..., height, width, channels]`, 1 to 4 channels
        (gray, gray + alpha, RGB, RGBA).
      compression: the zlib level, -1 (default) or 0 to 9.
      name: the op name (default "EncodePng").

    Returns:
      A string Tensor with one PNG per image (a scalar for a 3-D image).

    Raises:
      ValueError: if the rank is below 3.
      TypeError: for a dtype other than uint8 and uint16.
      InvalidArgumentError: (at run time) for a bad channel count, an empty image or a
        compression outside [-1, 9].
    """
    return apply_op(EncodePng, [convert_to_tensor(image)], {"compression": compression},
                    name=name)


def encode_jpeg(image, format="", quality=95, progressive=False,  # noqa: A002 - TF's name
                optimize_size=False, chroma_downsampling=True, density_unit="in",
                x_density=300, y_density=300, xmp_metadata="", name=None):
    """Encodes an image as JPEG with Pillow's libjpeg (TF1's tf.image.encode_jpeg).

    Args:
      image: a uint8 Tensor `[height, width, channels]` with 1 or 3 channels.
      format: "" (from the channels), "grayscale" (1 channel) or "rgb" (3 channels).
      quality: 0 to 100.
      progressive: write a progressive JPEG.
      optimize_size: optimize the Huffman tables.
      chroma_downsampling: 4:2:0 chroma if True, 4:4:4 otherwise.
      density_unit: "in" or "cm", the unit of x_density and y_density (JFIF header).
      x_density: horizontal pixels per density unit.
      y_density: vertical pixels per density unit.
      xmp_metadata: XMP metadata to embed, if not empty.
      name: the op name (default "EncodeJpeg").

    Returns:
      A scalar string Tensor, the JPEG.

    Raises:
      ValueError: if the rank is not 3, or `format` / `density_unit` is not allowed.
      InvalidArgumentError: (at run time) for a bad channel count or quality.
      InternalError: (at run time) for an empty image, like TF's "JPEG encoding failed".
    """
    attrs = {"format": check_choice("EncodeJpeg", "format", format, _JPEG_FORMATS),
             "quality": quality,
             "progressive": progressive, "optimize_size": optimize_size,
             "chroma_downsampling": chroma_downsampling,
             "density_unit": check_choice("EncodeJpeg", "density_unit", density_unit,
                                          _DENSITY_UNITS),
             "x_density": x_density, "y_density": y_density, "xmp_metadata": xmp_metadata}
    return apply_op(EncodeJpeg, [image], attrs, name=name)


def is_jpeg(contents, name=None):
    r"""Whether each string starts with the JPEG magic bytes \xff\xd8\xff (TF1's
    tf.image.is_jpeg).

    Args:
      contents: a string Tensor of any shape.
      name: a name scope (default "is_jpeg"); the result is named after it.

    Returns:
      A bool Tensor shaped like `contents`.
    """
    from tensorweave.ops.math_ops import equal
    from tensorweave.ops.string_ops import substr
    with name_scope(name, "is_jpeg"):
        return equal(substr(contents, 0, 3), b"\xff\xd8\xff", name=name)


def decode_and_crop_jpeg(contents, crop_window, channels=0, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1, dct_method="",
                         name=None):
    """Decodes a window of a JPEG image (TF1's tf.image.decode_and_crop_jpeg and
    tf.io.decode_and_crop_jpeg): the image decoded as `decode_jpeg` does, then cut to the
    window, so pixels have decode_jpeg's rounding.

    Args:
      contents: a scalar string Tensor, a JPEG (other formats are an error).
      crop_window: a 1-D int32 Tensor `[y, x, height, width]` in the (downscaled) image.
      channels: 0 (as stored), 1 (gray) or 3 (RGB).
      ratio: downscaling while decoding: 1, 2, 4 or 8.
      fancy_upscaling: as in `decode_jpeg`.
      try_recover_truncated: as in `decode_jpeg`.
      acceptable_fraction: as in `decode_jpeg`.
      dct_method: as in `decode_jpeg`.
      name: the op name (default "DecodeAndCropJpeg").

    Returns:
      A `[height, width, channels]` uint8 Tensor.

    Raises:
      ValueError: if `contents` is not a scalar or `crop_window` not 4 values.
      InvalidArgumentError: (at run time) for data that is not a JPEG, corrupt data, or a
        window that is empty or leaves the image.
    """
    attrs = {"channels": channels, "ratio": ratio, "fancy_upscaling": fancy_upscaling,
             "try_recover_truncated": try_recover_truncated,
             "acceptable_fraction": acceptable_fraction, "dct_method": dct_method}
    return apply_op(DecodeAndCropJpeg, [contents, crop_window], attrs, name=name)


def extract_jpeg_shape(contents, output_type=_d.int32, name=None):
    """The shape of a JPEG image, read from its header without decoding it (TF1's
    tf.image.extract_jpeg_shape and tf.io.extract_jpeg_shape).

    Args:
      contents: a scalar string Tensor, a JPEG.
      output_type: int32 or int64.
      name: the op name (default "ExtractJpegShape").

    Returns:
      A 1-D Tensor `[height, width, channels]` of `output_type`.

    Raises:
      ValueError: if `contents` is not a scalar.
      TypeError: for another `output_type`.
      InvalidArgumentError: (at run time) if the data is not a readable JPEG.
    """
    return apply_op(ExtractJpegShape, [contents], {"output_type": output_type}, name=name)


def encode_jpeg_variable_quality(images, quality, name=None):
    """Encodes a `[height, width, 1 or 3]` uint8 image as JPEG at `quality` (a scalar int32
    Tensor, 0 to 100), with encode_jpeg's other defaults (the raw op of
    `adjust_jpeg_quality`).

    Args:
      images: a 3-D uint8 Tensor with 1 or 3 channels.
      quality: a scalar int32 Tensor.
      name: the op name (default "EncodeJpegVariableQuality").

    Returns:
      A scalar string Tensor, the JPEG.

    Raises:
      ValueError: if `images` is not 3-D.
      InvalidArgumentError: (at run time) for a quality that is not a scalar in [0, 100] or
        a bad channel count.
      InternalError: (at run time) for an empty image.
    """
    return apply_op(EncodeJpegVariableQuality, [images, quality], name=name)
