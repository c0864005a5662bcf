"""tf.image's linear colour spaces: rgb_to_yiq, yiq_to_rgb, rgb_to_yuv, yuv_to_rgb.

Each is one 3x3 matrix applied to the last (channel) axis with `tensordot`, as TensorFlow
builds it, so the gradient is the transposed matrix applied to the incoming gradient.
"""
from __future__ import annotations

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.linalg_ops import tensordot

__all__ = ["rgb_to_yiq", "rgb_to_yuv", "yiq_to_rgb", "yuv_to_rgb"]

# TensorFlow's matrices (image_ops_impl.py): output channel k is sum_c pixel[c] * M[c][k].
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _conversion(name: str, matrix, source: str, target: str, note: str):
    """The public function `name`: `images` ([..., 3], float) times `matrix` over the last
    axis, with its TF1-style docstring."""
    def convert(images):
        images = convert_to_tensor(images, name="images")
        kernel = convert_to_tensor(matrix, dtype=images.dtype, name="kernel")
        ndims = images.shape.ndims
        return tensordot(images, kernel, axes=[[ndims - 1], [0]])

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"""Converts {source} images to {target} (TF1's tf.image.{name}).

    Args:
      images: a float Tensor `[..., 3]` of {source} values.

    Returns:
      A Tensor of the same shape holding {target}{note}.

    Raises:
      ValueError: if the rank is unknown or the last dimension is not 3.
    """
    return convert


rgb_to_yiq = _conversion("rgb_to_yiq", _RGB_TO_YIQ, "RGB", "YIQ",
                         ": Y in [0, 1], I in [-0.5957, 0.5957], Q in [-0.5226, 0.5226] for "
                         "RGB in [0, 1]")
yiq_to_rgb = _conversion("yiq_to_rgb", _YIQ_TO_RGB, "YIQ", "RGB", " (inverts rgb_to_yiq)")
rgb_to_yuv = _conversion("rgb_to_yuv", _RGB_TO_YUV, "RGB", "YUV",
                         ": Y in [0, 1], U and V in [-0.5, 0.5] for RGB in [0, 1]")
yuv_to_rgb = _conversion("yuv_to_rgb", _YUV_TO_RGB, "YUV", "RGB", " (inverts rgb_to_yuv)")
