"""tf.image.convert_image_dtype: images between integer and float representations.

Floats represent [0, 1], integers [0, MAX]. Integer -> integer shifts by the ratio of the
ranges, (MAX_in + 1) // (MAX_out + 1) or its inverse (uint8 -> uint16 is v * 256, not
v * 257); integer -> float multiplies by 1 / MAX_in; float -> integer multiplies by
MAX_out + 0.5 and casts (saturating if asked); float -> float is a cast. The same dtype is an
Identity. These are TensorFlow's rules, op by op.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_ops import identity
from tensorweave.ops.math_ops import cast, floordiv, multiply, saturate_cast

__all__ = ["convert_image_dtype"]


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts an image to `dtype`, rescaling its values (TF1's tf.image.convert_image_dtype).

    Args:
      image: a Tensor of a float or integer dtype.
      dtype: the float or integer dtype wanted.
      saturate: clip to `dtype`'s range before casting, so out-of-range floats (or a larger
        integer type's values) do not wrap around.
      name: a name scope (default "convert_image"); the result op is named after it.

    Returns:
      `image` as `dtype`.

    Raises:
      AttributeError: if `dtype` or the image's dtype is neither float nor integer (as TF).
    """
    image = convert_to_tensor(image, name="image")
    dtype = _dtypes.as_dtype(dtype)
    source = image.dtype.base_dtype
    if not dtype.is_floating and not dtype.is_integer:
        raise AttributeError("dtype must be either floating point or integer")
    if not source.is_floating and not source.is_integer:
        raise AttributeError("image dtype must be either floating point or integer")
    if dtype == source:
        return identity(image, name=name)
    to_dtype = saturate_cast if saturate else cast
    with name_scope(name, "convert_image", [image]) as name:
        if source.is_integer and dtype.is_integer:
            scale_in, scale_out = source.max, dtype.max
            if scale_in > scale_out:
                scaled = floordiv(image, (scale_in + 1) // (scale_out + 1))
                return to_dtype(scaled, dtype, name=name)
            return multiply(to_dtype(image, dtype), (scale_out + 1) // (scale_in + 1),
                            name=name)
        if source.is_floating and dtype.is_floating:
            return cast(image, dtype, name=name)
        if source.is_integer:
            return multiply(cast(image, dtype), 1.0 / source.max, name=name)
        # + 0.5 so that 1.0 maps to MAX, not below it, after the truncating cast.
        return to_dtype(multiply(image, dtype.max + 0.5), dtype, name=name)
