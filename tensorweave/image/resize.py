"""tf.image.resize_images (TF1's tf.image.resize), ResizeMethod and resize_image_with_pad.

`resize_images` takes 3-D or 4-D images (a 3-D image is resized as a batch of one), picks the
resize op by `method` (TF1's integer codes, or TF2's names), keeps TF1's legacy pixel centres
(`half_pixel_centers=False`), skips the op when the static size already matches, and can
preserve the aspect ratio. The ops are in ops/image_resize_ops.py.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_shape_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.image._checks import check_at_least_3d, image_dimensions, static_or_assert
from tensorweave.image.crop import pad_to_bounding_box
from tensorweave.ops.array_ops import expand_dims, squeeze
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.image_resize_ops import (
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_nearest_neighbor,
)
from tensorweave.ops.math_ops import cast, maximum, minimum
from tensorweave.ops.math_unary_ops import floor
from tensorweave.ops.math_unary_ops import round as _round

__all__ = ["ResizeMethod", "resize", "resize_image_with_pad", "resize_images"]


class ResizeMethod:
    """TF1's resize method codes (tf.image.ResizeMethod)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


# TF1 codes and TF2 names of each method, and its resize function.
_RESIZERS = {ResizeMethod.BILINEAR: resize_bilinear, "bilinear": resize_bilinear,
             ResizeMethod.NEAREST_NEIGHBOR: resize_nearest_neighbor,
             "nearest": resize_nearest_neighbor, ResizeMethod.BICUBIC: resize_bicubic,
             "bicubic": resize_bicubic, ResizeMethod.AREA: resize_area, "area": resize_area}


def _aspect_size(images, size):
    """The largest [height, width] within `size` with the images' aspect ratio (float32
    scale, rounded), as TensorFlow computes it."""
    _, height, width, _ = image_dimensions(images, 4)
    height, width = cast(height, _dtypes.float32), cast(width, _dtypes.float32)
    scale = minimum(cast(size[0], _dtypes.float32) / height,
                    cast(size[1], _dtypes.float32) / width)
    return convert_to_tensor([cast(_round(scale * height), _dtypes.int32),
                              cast(_round(scale * width), _dtypes.int32)], _dtypes.int32,
                             name="size")


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """Resizes images to `size` (TF1's tf.image.resize_images and tf.image.resize).

    Args:
      images: a 3-D `[height, width, channels]` or 4-D `[batch, height, width, channels]`
        Tensor of a real number type.
      size: a 1-D int32 Tensor (or list) of 2 elements `[new_height, new_width]`.
      method: a `ResizeMethod` code (BILINEAR 0, NEAREST_NEIGHBOR 1, BICUBIC 2, AREA 3) or
        TF2's name ("bilinear", "nearest", "bicubic", "area").
      align_corners: align the centres of the corner pixels (see resize_bilinear).
      preserve_aspect_ratio: fit the images inside `size` keeping their aspect ratio.
      name: a name scope (default "resize").

    Returns:
      The resized images, 3-D or 4-D like `images`: float32 except for nearest neighbour
      (which keeps the dtype); the images themselves when the static size already matches.

    Raises:
      ValueError: if the rank is unknown or not 3/4, `size` is not 2 int32 values, or the
        method is unknown.
    """
    resizer = _RESIZERS.get(method)

    def resize_fn(images_t, new_size):
        if resizer is None:
            raise ValueError(f"Resize method is not implemented: {method}")
        return resizer(images_t, new_size, align_corners=align_corners)
    with name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        is_batch = images.shape.ndims == 4
        if images.shape.ndims == 3:
            images = expand_dims(images, 0)
        elif not is_batch:
            raise ValueError("'images' must have either 3 or 4 dimensions.")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, _dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            size = _aspect_size(images, size)
        target = static_shape_value(size)
        new_height, new_width = (target.as_list() if target.ndims == 2 else [None, None])
        if None not in (new_height, new_width, height, width) and \
                (height, width) == (new_height, new_width):
            return images if is_batch else squeeze(images, axis=[0])
        images = resize_fn(images, size)
        images.set_shape([None, new_height, new_width, None])
        return images if is_batch else squeeze(images, axis=[0])


resize = resize_images


def resize_image_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                          align_corners=False):
    """Resizes images to fit `[target_height, target_width]` keeping the aspect ratio, then
    pads them with zeros (centred) to exactly that size (TF1's tf.image.resize_image_with_pad).

    Args:
      image: a 3-D or 4-D image Tensor.
      target_height: the height wanted (int or scalar Tensor, > 0).
      target_width: the width wanted (> 0).
      method: a `ResizeMethod` code or name, as for `resize_images`.
      align_corners: as for `resize_images`.

    Returns:
      A float32 Tensor `[..., target_height, target_width, channels]` (nearest neighbour keeps
      the dtype).

    Raises:
      ValueError: if the rank is not 3 or 4, or a static target is not positive.
    """
    with name_scope(None, "resize_image_with_pad", [image]):
        image = convert_to_tensor(image, name="image")
        ndims = image.shape.ndims
        is_batch = ndims == 4
        if ndims not in (None, 3, 4):
            raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 "
                             "dimensions.")
        if not is_batch:
            image = expand_dims(image, 0)
            if ndims is None:
                image.set_shape([None] * 4)
        checks = check_at_least_3d(image, require_static=False)
        checks += static_or_assert(target_width > 0, ValueError, "target_width must be > 0.")
        checks += static_or_assert(target_height > 0, ValueError,
                                   "target_height must be > 0.")
        image = with_dependencies(checks, image)
        _, height, width, _ = image_dimensions(image, 4)
        f_height, f_width = cast(height, _dtypes.float32), cast(width, _dtypes.float32)
        f_target_height = cast(target_height, _dtypes.float32)
        f_target_width = cast(target_width, _dtypes.float32)
        ratio = maximum(f_width / f_target_width, f_height / f_target_height)
        resized_height_float, resized_width_float = f_height / ratio, f_width / ratio
        new_size = [cast(floor(resized_height_float), _dtypes.int32),
                    cast(floor(resized_width_float), _dtypes.int32)]
        pad_height = maximum(0, cast(floor((f_target_height - resized_height_float) / 2),
                                     _dtypes.int32))
        pad_width = maximum(0, cast(floor((f_target_width - resized_width_float) / 2),
                                    _dtypes.int32))
        resized = resize_images(image, new_size, method, align_corners=align_corners)
        padded = pad_to_bounding_box(resized, pad_height, pad_width, target_height,
                                     target_width)
        if padded.shape.ndims is None:
            raise ValueError("padded contains no shape.")
        image_dimensions(padded, 4)
        return padded if is_batch else squeeze(padded, axis=[0])
