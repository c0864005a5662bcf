"""Image measures: total_variation, image_gradients, sobel_edges, psnr and ssim.

All are compositions of differentiable ops (slices, reductions, a depthwise convolution with a
Gaussian window for SSIM), built as TensorFlow builds them, so their gradients follow.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.image.convert import convert_image_dtype
from tensorweave.ops.array_creation_ops import range as _range
from tensorweave.ops.array_creation_ops import zeros
from tensorweave.ops.array_join_ops import concat, stack, unstack
from tensorweave.ops.array_ops import identity, reshape, shape, shape_n, size
from tensorweave.ops.array_tile_pad_ops import pad, tile
from tensorweave.ops.constant_op import constant
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.math_ops import cast, equal, greater_equal, squared_difference, subtract
from tensorweave.ops.math_unary_ops import abs as _abs
from tensorweave.ops.math_unary_ops import log, square
from tensorweave.ops.nn_conv_ops import depthwise_conv2d
from tensorweave.ops.nn_softmax_ops import softmax
from tensorweave.ops.reduction_ops import reduce_all, reduce_mean, reduce_sum

__all__ = ["image_gradients", "psnr", "sobel_edges", "ssim", "total_variation"]


def total_variation(images, name=None):
    """The sum of absolute differences between neighbouring pixels, down and across (TF1's
    tf.image.total_variation).

    Args:
      images: a 3-D `[height, width, channels]` or 4-D `[batch, height, width, channels]`
        Tensor.
      name: a name scope (default "total_variation").

    Returns:
      A scalar for a 3-D image, a `[batch]` vector for a batch.

    Raises:
      ValueError: if the rank is not statically 3 or 4.
    """
    with name_scope(name, "total_variation"):
        ndims = images.shape.ndims
        if ndims == 3:
            down = images[1:, :, :] - images[:-1, :, :]
            across = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            down = images[:, 1:, :, :] - images[:, :-1, :, :]
            across = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return reduce_sum(_abs(down), axis=axis) + reduce_sum(_abs(across), axis=axis)


def image_gradients(image):
    """Forward differences (dy, dx) of a batch of images, zero in the last row / column (TF1's
    tf.image.image_gradients).

    Args:
      image: a 4-D Tensor `[batch, height, width, depth]`.

    Returns:
      (dy, dx), each shaped like `image`.

    Raises:
      ValueError: if `image` is not 4-D.
    """
    if image.shape.ndims != 4:
        raise ValueError("image_gradients expects a 4D tensor [batch_size, h, w, d], not "
                         f"{image.shape}.")
    image_shape = shape(image)
    batch_size, height, width, depth = unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = concat([dy, zeros(stack([batch_size, 1, width, depth]), image.dtype)], 1)
    dx = concat([dx, zeros(stack([batch_size, height, 1, depth]), image.dtype)], 2)
    return reshape(dy, image_shape), reshape(dx, image_shape)


def sobel_edges(image):
    """Sobel filter responses of each channel, vertical then horizontal, with reflected
    borders (TF1's tf.image.sobel_edges).

    Args:
      image: a 4-D float Tensor `[batch, height, width, depth]`.

    Returns:
      A `[batch, height, width, depth, 2]` Tensor.
    """
    static_shape = image.shape
    image_shape = shape(image)
    kernels = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                        [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])
    kernels = np.expand_dims(np.transpose(kernels, (1, 2, 0)), -2)
    filters = tile(constant(kernels, dtype=image.dtype), [1, 1, image_shape[-1], 1],
                   name="sobel_filters")
    padded = pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    output = reshape(output, concat([image_shape, [2]], 0))
    output.set_shape(static_shape.concatenate([2]))
    return output


def verify_compatible(img1, img2):
    """Static check that the last three dimensions agree and the leading ones broadcast; the
    Assert ops that check them at run time."""
    shape1 = img1.shape.with_rank_at_least(3)
    shape2 = img2.shape.with_rank_at_least(3)
    shape1[-3:].assert_is_compatible_with(shape2[-3:])
    if shape1.ndims is not None and shape2.ndims is not None:
        for d1, d2 in zip(reversed(shape1.as_list()[:-3]), reversed(shape2.as_list()[:-3])):
            if not (d1 == 1 or d2 == 1 or d1 is None or d2 is None or d1 == d2):
                raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    dyn1, dyn2 = shape_n([img1, img2])
    return [Assert(greater_equal(size(dyn1), 3), [dyn1, dyn2], summarize=10),
            Assert(reduce_all(equal(dyn1[-3:], dyn2[-3:])), [dyn1, dyn2], summarize=10)]


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio between images, in dB, over the last three dimensions
    (TF1's tf.image.psnr).

    Args:
      a: an image Tensor `[..., height, width, channels]`.
      b: an image Tensor of the same shape (leading dimensions broadcast).
      max_val: the dynamic range of the images (1.0 for float images in [0, 1], 255 ...).
      name: a name scope (default "PSNR").

    Returns:
      A float32 Tensor of the leading (batch) shape.

    Raises:
      ValueError: if the shapes are statically incompatible.
    """
    with name_scope(name, "PSNR", [a, b]):
        max_val = convert_image_dtype(cast(max_val, a.dtype), _dtypes.float32)
        a = convert_image_dtype(a, _dtypes.float32)
        b = convert_image_dtype(b, _dtypes.float32)
        mse = reduce_mean(squared_difference(a, b), [-3, -2, -1])
        value = subtract(20 * log(max_val) / log(10.0),
                         np.float32(10 / np.log(10)) * log(mse), name="psnr")
        with control_dependencies(verify_compatible(a, b)):
            return identity(value)


def _gaussian_window(size, sigma):
    """A [size, size, 1, 1] normalized Gaussian window (a softmax of -d^2 / (2 sigma^2))."""
    coords = cast(_range(size), sigma.dtype)
    coords -= cast(size - 1, sigma.dtype) / 2.0
    g = square(coords)
    g *= -0.5 / square(sigma)
    g = reshape(g, shape=[1, -1]) + reshape(g, shape=[-1, 1])
    g = softmax(reshape(g, shape=[1, -1]))
    return reshape(g, shape=[size, size, 1, 1])


def per_channel_ssim(img1, img2, max_val, filter_size, filter_sigma, k1, k2,
                     return_index_map):
    """SSIM (luminance * contrast-structure) and the contrast-structure term alone, per
    channel from Gaussian-weighted local statistics, averaged over the image unless
    `return_index_map` (TF builds both means; MS-SSIM would use the second)."""
    filter_size = constant(filter_size, dtype=_dtypes.int32)
    filter_sigma = constant(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = shape_n([img1, img2])
    checks = [Assert(reduce_all(greater_equal(shape1[-3:-1], filter_size)),
                     [shape1, filter_size], summarize=8),
              Assert(reduce_all(greater_equal(shape2[-3:-1], filter_size)),
                     [shape2, filter_size], summarize=8)]
    with control_dependencies(checks):
        img1 = identity(img1)
    kernel = tile(_gaussian_window(filter_size, filter_sigma), multiples=[1, 1, shape1[-1], 1])

    def reducer(x):
        x_shape = shape(x)
        x = reshape(x, shape=concat([[-1], x_shape[-3:]], 0))
        y = depthwise_conv2d(x, kernel, strides=[1, 1, 1, 1], padding="VALID")
        return reshape(y, concat([x_shape[:-3], shape(y)[1:]], 0))

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = square(mean0) + square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(square(img1) + square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if return_index_map:
        return luminance * cs, cs
    axes = constant([-3, -2], dtype=_dtypes.int32)
    return reduce_mean(luminance * cs, axes), reduce_mean(cs, axes)


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03,
         return_index_map=False):
    """Structural similarity between images, averaged over channels (TF1's tf.image.ssim):
    local means, variances and covariance under an 11x11 Gaussian window (sigma 1.5).

    Args:
      img1: an image Tensor `[..., height, width, channels]`, height and width >= filter_size.
      img2: an image Tensor of the same shape (leading dimensions broadcast).
      max_val: the dynamic range of the images.
      filter_size: the Gaussian window's size.
      filter_sigma: the Gaussian window's standard deviation.
      k1: the luminance stabilizer (c1 = (k1 * max_val)^2).
      k2: the contrast stabilizer (c2 = (k2 * max_val)^2).
      return_index_map: return the SSIM map per location instead of its mean.

    Returns:
      A float32 Tensor of the leading shape (or the map).

    Raises:
      ValueError: if the shapes are statically incompatible.
    """
    with name_scope(None, "SSIM", [img1, img2]):
        img1 = convert_to_tensor(img1, name="img1")
        img2 = convert_to_tensor(img2, name="img2")
        with control_dependencies(verify_compatible(img1, img2)):
            img1 = identity(img1)
        max_val = convert_image_dtype(cast(max_val, img1.dtype), _dtypes.float32)
        img1 = convert_image_dtype(img1, _dtypes.float32)
        img2 = convert_image_dtype(img2, _dtypes.float32)
        per_channel, _ = per_channel_ssim(img1, img2, max_val, filter_size, filter_sigma, k1,
                                          k2, return_index_map)
        return reduce_mean(per_channel, [-1])
