"""JPEG artefacts as augmentation: tf.image.adjust_jpeg_quality and random_jpeg_quality.

The image is converted to uint8 (saturating), encoded as JPEG at the quality asked
(EncodeJpegVariableQuality), decoded again and converted back to its dtype, as TensorFlow
builds it. Pixels differ from TF's by the codecs' rounding (Pillow's libjpeg against TF's
libjpeg-turbo), as for `decode_jpeg`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.image.convert import convert_image_dtype
from tensorweave.ops.check_ops import is_tensor
from tensorweave.ops.image_codec_ops import decode_jpeg, encode_jpeg_variable_quality
from tensorweave.ops.random_ops import random_uniform

__all__ = ["adjust_jpeg_quality", "random_jpeg_quality"]


def adjust_jpeg_quality(image, jpeg_quality, dct_method="", name=None):
    """Re-encodes an image as JPEG at `jpeg_quality` and decodes it again (TF1's
    tf.image.adjust_jpeg_quality).

    Args:
      image: a 3-D image Tensor `[height, width, channels]` of any image dtype, 1 or 3
        channels (floats are taken in [0, 1] and clipped).
      jpeg_quality: a Python int or scalar int32 Tensor, 0 to 100.
      dct_method: the decoder's DCT method ("", "INTEGER_FAST" or "INTEGER_ACCURATE").
      name: a name scope (default "adjust_jpeg_quality").

    Returns:
      A Tensor of `image`'s dtype and shape.

    Raises:
      ValueError: if `image` is not 3-D.
      InvalidArgumentError: (at run time) for a quality outside [0, 100] or that is not a
        scalar, or a channel count other than 1 and 3.
    """
    with name_scope(name, "adjust_jpeg_quality", [image]):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1] if image.shape.ndims else None
        orig_dtype = image.dtype
        image = convert_image_dtype(image, _dtypes.uint8, saturate=True)
        if not is_tensor(jpeg_quality):
            jpeg_quality = convert_to_tensor(jpeg_quality, dtype=_dtypes.int32)
        image = encode_jpeg_variable_quality(image, jpeg_quality)
        image = decode_jpeg(image, channels=channels or 0, dct_method=dct_method)
        return convert_image_dtype(image, orig_dtype, saturate=True)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """`adjust_jpeg_quality` at a quality drawn uniformly from [min_jpeg_quality,
    max_jpeg_quality) at each run (TF1's tf.image.random_jpeg_quality).

    Args:
      image: a 3-D image Tensor with 1 or 3 channels.
      min_jpeg_quality: the lowest quality, 0 to 100.
      max_jpeg_quality: the bound of the qualities (excluded), 0 to 100.
      seed: the op-level random seed (see `tf.set_random_seed`).

    Returns:
      A Tensor of `image`'s dtype and shape.

    Raises:
      ValueError: if the qualities are outside [0, 100] or not increasing.
    """
    if (min_jpeg_quality < 0 or max_jpeg_quality < 0 or min_jpeg_quality > 100
            or max_jpeg_quality > 100):
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    jpeg_quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed,
                                  dtype=_dtypes.int32)
    return adjust_jpeg_quality(image, jpeg_quality)
