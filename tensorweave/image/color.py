"""Colour and value adjustments: grayscale conversions, brightness, contrast, gamma,
saturation, hue, their random variants, and per-image standardization.

The adjust functions work in float (float16/float32 images as they are, others through
`convert_image_dtype` to float32) and convert back to the image's dtype, saturating for
brightness, contrast and gamma, as TensorFlow does. The random variants draw one uniform
factor per call. Contrast, saturation and hue are the ops of ops/image_ops.py.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.image._checks import assert_at_least_3d, assert_grayscale, static_or_assert
from tensorweave.image.convert import convert_image_dtype
from tensorweave.ops.array_creation_ops import ones
from tensorweave.ops.array_join_ops import concat
from tensorweave.ops.array_ops import expand_dims, rank, shape
from tensorweave.ops.array_tile_pad_ops import tile
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.image_ops import AdjustContrastv2, AdjustHue, AdjustSaturation
from tensorweave.ops.linalg_ops import tensordot
from tensorweave.ops.math_ops import add, cast, divide, maximum, subtract
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import rsqrt, sqrt, square
from tensorweave.ops.random_ops import random_uniform
from tensorweave.ops.reduction_ops import reduce_mean, reduce_prod

__all__ = ["adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue",
           "adjust_saturation", "grayscale_to_rgb", "per_image_standardization",
           "random_brightness", "random_contrast", "random_hue", "random_saturation",
           "rgb_to_grayscale"]

_F16_F32 = (_dtypes.float16, _dtypes.float32)


def _as_float(image):
    """float16/float32 images as they are, others converted to float32."""
    return image if image.dtype.base_dtype in _F16_F32 else \
        convert_image_dtype(image, _dtypes.float32)


def adjust_brightness(image, delta):
    """Adds `delta` to every value of the images, in float (TF1's tf.image.adjust_brightness).

    Args:
      image: an image Tensor of any rank and a float or integer dtype.
      delta: a scalar added to the values in [0, 1] scale.

    Returns:
      The brightened image in its own dtype (integers saturate).
    """
    with name_scope(None, "adjust_brightness", [image, delta]) as name:
        image = convert_to_tensor(image, name="image")
        flt_image = _as_float(image)
        adjusted = add(flt_image, cast(delta, flt_image.dtype), name=name)
        return convert_image_dtype(adjusted, image.dtype.base_dtype, saturate=True)


def _adjusted(op_def, image, factor, scope_name, name=None, saturate=False, arg_name="image"):
    """Runs a float32 adjust op on the image in float and converts back."""
    with name_scope(name, scope_name, [image]) as name:
        image = convert_to_tensor(image, name=arg_name)
        op_name = name if op_def is AdjustContrastv2 else None
        adjusted = apply_op(op_def, [_as_float(image), factor], name=op_name)
        return convert_image_dtype(adjusted, image.dtype.base_dtype, saturate=saturate)


def adjust_contrast(images, contrast_factor):
    """Moves every value away from its image and channel mean by `contrast_factor`:
    (x - mean) * factor + mean (TF1's tf.image.adjust_contrast).

    Args:
      images: a Tensor of rank >= 3, `[..., height, width, channels]`.
      contrast_factor: a scalar float (or float32 Tensor).

    Returns:
      The adjusted images in their own dtype (integers saturate).

    Raises:
      ValueError: if the rank is statically below 3 or the factor is not a scalar.
    """
    return _adjusted(AdjustContrastv2, images, contrast_factor, "adjust_contrast",
                     saturate=True, arg_name="images")


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the saturation of RGB images (in HSV, clipped to [0, 1]) (TF1's
    tf.image.adjust_saturation).

    Args:
      image: a Tensor of rank >= 3 whose last dimension is 3.
      saturation_factor: a scalar float multiplier.
      name: a name scope (default "adjust_saturation").

    Returns:
      The adjusted RGB images in their own dtype.

    Raises:
      ValueError: if the rank is statically below 3.
    """
    return _adjusted(AdjustSaturation, image, saturation_factor, "adjust_saturation", name)


def adjust_hue(image, delta, name=None):
    """Rotates the hue of RGB images by `delta` of a full turn (TF1's tf.image.adjust_hue).

    Args:
      image: a Tensor of rank >= 3 whose last dimension is 3.
      delta: a scalar float in [-1, 1], the fraction of the hue circle to add.
      name: a name scope (default "adjust_hue").

    Returns:
      The adjusted RGB images in their own dtype.

    Raises:
      ValueError: if the rank is statically below 3.
    """
    return _adjusted(AdjustHue, image, delta, "adjust_hue", name)


def adjust_gamma(image, gamma=1, gain=1):
    """Gamma correction: gain * image ** gamma in [0, 1] scale (TF1's
    tf.image.adjust_gamma).

    Args:
      image: an image Tensor of a float or integer dtype.
      gamma: a non-negative scalar exponent (< 1 brightens, > 1 darkens).
      gain: a scalar multiplier.

    Returns:
      The corrected image in its own dtype (integers saturate).

    Raises:
      ValueError: if a Python `gamma` is negative (a Tensor is checked by an Assert).
    """
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        flt_image = _as_float(image)
        checks = static_or_assert(gamma >= 0, ValueError,
                                  "Gamma should be a non-negative real number.")
        if checks:
            gamma = with_dependencies(checks, gamma)
        adjusted = gain * flt_image ** gamma
        return convert_image_dtype(adjusted, image.dtype.base_dtype, saturate=True)


def _check_range(lower, upper) -> None:
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta uniform in [-max_delta, max_delta) (TF1's
    tf.image.random_brightness).

    Args:
      image: an image Tensor.
      max_delta: a non-negative float.
      seed: the op-level random seed.

    Returns:
      The brightness-adjusted image.

    Raises:
      ValueError: if `max_delta` is negative.
    """
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def _random_factor(adjust, image, lower, upper, seed):
    """`adjust(image, factor)` with a factor uniform in [lower, upper)."""
    _check_range(lower, upper)
    return adjust(image, random_uniform([], lower, upper, seed=seed))


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor uniform in [lower, upper) (TF1's
    tf.image.random_contrast).

    Args:
      image: an image Tensor of rank >= 3.
      lower: the smallest factor (>= 0).
      upper: the largest factor (> lower).
      seed: the op-level random seed.

    Returns:
      The contrast-adjusted image.

    Raises:
      ValueError: if upper <= lower or lower < 0.
    """
    return _random_factor(adjust_contrast, image, lower, upper, seed)


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor uniform in [lower, upper) (TF1's
    tf.image.random_saturation).

    Args:
      image: an RGB image Tensor of rank >= 3.
      lower: the smallest saturation factor (>= 0).
      upper: the largest saturation factor (> lower).
      seed: the op-level random seed.

    Returns:
      The saturation-adjusted RGB image.

    Raises:
      ValueError: if upper <= lower or lower < 0.
    """
    return _random_factor(adjust_saturation, image, lower, upper, seed)


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta uniform in [-max_delta, max_delta) (TF1's tf.image.random_hue).

    Args:
      image: an RGB image Tensor of rank >= 3.
      max_delta: a float in [0, 0.5].
      seed: the op-level random seed.

    Returns:
      The hue-adjusted image.

    Raises:
      ValueError: if `max_delta` is outside [0, 0.5].
    """
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def rgb_to_grayscale(images, name=None):
    """Converts RGB images to grayscale: 0.2989 R + 0.5870 G + 0.1140 B in float32 (TF1's
    tf.image.rgb_to_grayscale).

    Args:
      images: a Tensor whose last dimension is 3.
      name: a name scope (default "rgb_to_grayscale"); the result is named after it.

    Returns:
      The grayscale images, last dimension 1, in the input dtype.
    """
    with name_scope(name, "rgb_to_grayscale", [images]) as name:
        images = convert_to_tensor(images, name="images")
        flt_image = convert_image_dtype(images, _dtypes.float32)
        gray = tensordot(flt_image, [0.2989, 0.5870, 0.1140], [-1, -1])
        return convert_image_dtype(expand_dims(gray, -1), images.dtype.base_dtype, name=name)


def grayscale_to_rgb(images, name=None):
    """Repeats the single channel of grayscale images three times (TF1's
    tf.image.grayscale_to_rgb).

    Args:
      images: a Tensor of rank >= 2 whose last dimension is 1.
      name: a name scope (default "grayscale_to_rgb"); the Tile is named after it.

    Returns:
      The RGB images, last dimension 3.

    Raises:
      ValueError: if the last dimension is statically not 1 or the rank is below 2.
    """
    with name_scope(name, "grayscale_to_rgb", [images]) as name:
        images = assert_grayscale(convert_to_tensor(images, name="images"))
        rank_1 = expand_dims(rank(images) - 1, 0)
        multiples = concat([ones(rank_1, dtype=_dtypes.int32), expand_dims(3, 0)], 0)
        rgb = tile(images, multiples, name=name)
        rgb.set_shape(images.shape[:-1].concatenate([3]))
        return rgb


def per_image_standardization(image):
    """Scales each image to mean 0 and variance 1: (x - mean) / max(stddev, 1 / sqrt(N)) over
    its last three dimensions (TF1's tf.image.per_image_standardization).

    Args:
      image: a Tensor of rank >= 3, `[..., height, width, channels]`.

    Returns:
      The standardized float32 images.

    Raises:
      ValueError: if the rank is statically below 3 or an inner dimension is 0.
    """
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))
        image = cast(image, _dtypes.float32)
        num_pixels = reduce_prod(shape(image)[-3:])
        image_mean = reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = _reduce_std(image, [-1, -2, -3])
        adjusted_stddev = maximum(stddev, rsqrt(cast(num_pixels, _dtypes.float32)))
        return divide(subtract(image, image_mean), adjusted_stddev, name=scope)


def _reduce_std(x, axis):
    """TF's reduce_std: sqrt(mean(|x - mean|^2)), keeping the reduced dimensions."""
    with name_scope(None, "reduce_std", [x]):
        with name_scope(None, "reduce_variance", [x]):
            mean = reduce_mean(x, axis=axis, keepdims=True)
            variance = reduce_mean(square(_abs(subtract(x, mean))), axis=axis, keepdims=True)
        return sqrt(variance)
