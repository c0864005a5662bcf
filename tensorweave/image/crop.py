"""Cropping and padding images to a box: crop_to_bounding_box, pad_to_bounding_box,
resize_image_with_crop_or_pad, central_crop.

Offsets and sizes may be Python ints (checked while the graph is built, ValueError) or scalar
Tensors (checked by Assert ops at run time), as in TensorFlow. 3-D images are handled as a
batch of one; the work is one Slice or one Pad, whose gradients are registered.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.image._checks import (
    assert_at_least_3d,
    check_at_least_3d,
    image_dimensions,
    static_or_assert,
)
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.array_ops import expand_dims, reshape, shape, squeeze
from tensorweave.ops.array_slicing_ops import slice as _slice
from tensorweave.ops.array_tile_pad_ops import pad
from tensorweave.ops.check_ops import is_tensor
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.math_ops import cast, equal, logical_or, maximum, minimum

__all__ = ["central_crop", "crop_to_bounding_box", "pad_to_bounding_box",
           "resize_image_with_crop_or_pad", "resize_with_crop_or_pad"]


def _as_batch(image):
    """(4-D image, whether it was a batch): a 3-D or unknown-rank image gets a batch of 1."""
    ndims = image.shape.ndims
    if ndims == 4:
        return image, True
    if ndims not in (None, 3):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    batched = expand_dims(image, 0)
    if ndims is None:
        batched.set_shape([None] * 4)
    return batched, False


def _unbatched(image, is_batch: bool):
    return image if is_batch else squeeze(image, axis=[0])


def _static_dims(*dims) -> list:
    return [None if is_tensor(d) else d for d in dims]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Pads images with zeros to `[target_height, target_width]`, the image's top-left corner
    at (offset_height, offset_width) (TF1's tf.image.pad_to_bounding_box).

    Args:
      image: a 3-D `[height, width, channels]` or 4-D `[batch, height, width, channels]`
        Tensor.
      offset_height: rows of zeros above the image (int or scalar Tensor, >= 0).
      offset_width: columns of zeros left of the image (>= 0).
      target_height: the padded height (>= offset_height + height).
      target_width: the padded width (>= offset_width + width).

    Returns:
      The padded Tensor, 3-D or 4-D like `image`.

    Raises:
      ValueError: if the rank is not 3 or 4, or a static offset or target is out of range.
    """
    with name_scope(None, "pad_to_bounding_box", [image]):
        image, is_batch = _as_batch(convert_to_tensor(image, name="image"))
        batch, height, width, depth = image_dimensions(image, 4)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        checks = check_at_least_3d(image, require_static=False)
        checks += static_or_assert(offset_height >= 0, ValueError, "offset_height must be >= 0")
        checks += static_or_assert(offset_width >= 0, ValueError, "offset_width must be >= 0")
        checks += static_or_assert(after_width >= 0, ValueError,
                                   "width must be <= target - offset")
        checks += static_or_assert(after_height >= 0, ValueError,
                                   "height must be <= target - offset")
        image = with_dependencies(checks, image)
        paddings = reshape(stack([0, 0, offset_height, after_height, offset_width, after_width,
                                  0, 0]), [4, 2])
        padded = pad(image, paddings)
        padded.set_shape(_static_dims(batch, target_height, target_width, depth))
        return _unbatched(padded, is_batch)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Crops images to the box with top-left corner (offset_height, offset_width) and size
    `[target_height, target_width]` (TF1's tf.image.crop_to_bounding_box).

    Args:
      image: a 3-D or 4-D image Tensor.
      offset_height: the box's first row (int or scalar Tensor, >= 0).
      offset_width: the box's first column (>= 0).
      target_height: the box's height (> 0, offset_height + target_height <= height).
      target_width: the box's width (> 0, offset_width + target_width <= width).

    Returns:
      The cropped Tensor, 3-D or 4-D like `image`.

    Raises:
      ValueError: if the rank is not 3 or 4, or a static offset or size is out of range.
    """
    with name_scope(None, "crop_to_bounding_box", [image]):
        image, is_batch = _as_batch(convert_to_tensor(image, name="image"))
        checks = check_at_least_3d(image, require_static=False)
        batch, height, width, depth = image_dimensions(image, 4)
        checks += static_or_assert(offset_width >= 0, ValueError, "offset_width must be >= 0.")
        checks += static_or_assert(offset_height >= 0, ValueError,
                                   "offset_height must be >= 0.")
        checks += static_or_assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += static_or_assert(target_height > 0, ValueError,
                                   "target_height must be > 0.")
        checks += static_or_assert(width >= (target_width + offset_width), ValueError,
                                   "width must be >= target + offset.")
        checks += static_or_assert(height >= (target_height + offset_height), ValueError,
                                   "height must be >= target + offset.")
        image = with_dependencies(checks, image)
        cropped = _slice(image, stack([0, offset_height, offset_width, 0]),
                         stack([shape(image)[0], target_height, target_width,
                                shape(image)[3]]))
        cropped.set_shape(_static_dims(batch, target_height, target_width, depth))
        return _unbatched(cropped, is_batch)


def _pick(tensor_fn, python_fn):
    def op(x, y):
        return tensor_fn(x, y) if is_tensor(x) or is_tensor(y) else python_fn(x, y)
    return op


_max, _min = _pick(maximum, max), _pick(minimum, min)
_equal = _pick(equal, lambda x, y: x == y)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Crops (centrally) or zero-pads (evenly) images to `[target_height, target_width]`
    (TF1's tf.image.resize_image_with_crop_or_pad / resize_with_crop_or_pad).

    Args:
      image: a 3-D or 4-D image Tensor.
      target_height: the height wanted (int or scalar Tensor, > 0).
      target_width: the width wanted (> 0).

    Returns:
      The cropped and/or padded Tensor, 3-D or 4-D like `image`.

    Raises:
      ValueError: if the rank is not 3 or 4, or a static target is not positive.
    """
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image, is_batch = _as_batch(convert_to_tensor(image, name="image"))
        checks = check_at_least_3d(image, require_static=False)
        checks += static_or_assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += static_or_assert(target_height > 0, ValueError,
                                   "target_height must be > 0.")
        image = with_dependencies(checks, image)
        if is_tensor(target_height):
            target_height = with_dependencies(checks, target_height)
        if is_tensor(target_width):
            target_width = with_dependencies(checks, target_width)
        _, height, width, _ = image_dimensions(image, 4)
        width_diff, height_diff = target_width - width, target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0),
                                       _max(-width_diff // 2, 0), _min(target_height, height),
                                       _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0),
                                      _max(width_diff // 2, 0), target_height, target_width)
        if resized.shape.ndims is None:
            raise ValueError("resized contains no shape.")
        _, resized_height, resized_width, _ = image_dimensions(resized, 4)
        checks = static_or_assert(_equal(resized_height, target_height), ValueError,
                                  "resized height is not correct.")
        checks += static_or_assert(_equal(resized_width, target_width), ValueError,
                                   "resized width is not correct.")
        return _unbatched(with_dependencies(checks, resized), is_batch)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def _bbox_start(size, fraction, static_fraction):
    """The first row/column kept: int((size - size * fraction) / 2), in float64."""
    if is_tensor(size) or static_fraction is None:
        size = cast(size, _dtypes.float64)
        return cast((size - size * cast(fraction, _dtypes.float64)) / 2, _dtypes.int32)
    return int((float(size) - float(size) * static_fraction) / 2)


def central_crop(image, central_fraction):
    """Keeps the central `central_fraction` of the height and width of images (TF1's
    tf.image.central_crop).

    Args:
      image: a 3-D or 4-D image Tensor.
      central_fraction: a float (or scalar Tensor) in (0, 1]; 1 returns `image` itself.

    Returns:
      The cropped Tensor, 3-D or 4-D like `image`.

    Raises:
      ValueError: if a static fraction is outside (0, 1], or the rank is not 3 or 4.
    """
    with name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        fraction = static_value(central_fraction) if is_tensor(central_fraction) else \
            central_fraction
        if fraction is not None:
            fraction = float(fraction)
            if fraction <= 0.0 or fraction > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction == 1.0:
                return image
        else:
            checks = static_or_assert(
                logical_or(central_fraction > 0.0, central_fraction <= 1.0), ValueError,
                "central_fraction must be within (0, 1]")
            image = with_dependencies(checks, image)
        assert_at_least_3d(image)
        ndims = image.shape.ndims
        if ndims not in (3, 4):
            raise ValueError("`image` should either be a Tensor with rank = 3 or rank = 4. Had "
                             f"rank = {ndims}.")
        offset = ndims - 3
        dims = image.shape.as_list()
        static_hw = [dims[offset + i] for i in (0, 1)]
        sizes = [d if d is not None else shape(image)[offset + i]
                 for i, d in enumerate(static_hw)]
        starts = [_bbox_start(s, central_fraction, fraction) for s in sizes]
        lengths = [s - 2 * b for s, b in zip(sizes, starts)]
        begin = stack([0] * offset + starts + [0])
        size = stack([-1] * offset + lengths + [-1])
        cropped = _slice(image, begin, size)
        dynamic = [d is None or fraction is None for d in static_hw]
        cropped.set_shape(dims[:offset] + [None if dyn else n for dyn, n in zip(dynamic, lengths)]
                          + [dims[-1]])
        return cropped
