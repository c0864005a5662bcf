"""Flips, rotations and transposes of images (tf.image.flip_left_right, rot90, transpose, ...).

An image is 3-D `[height, width, channels]` or a 4-D batch; with unknown rank the choice is a
`cond` on the run-time rank, as in TensorFlow. The ops are ReverseV2 and Transpose under a name
scope of the function's name, so gradients come from those ops.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.image._checks import assert_at_least_3d, fix_flip_shape, three_or_four
from tensorweave.ops.array_ops import rank, reshape, shape
from tensorweave.ops.array_ops import transpose as _transpose
from tensorweave.ops.array_tile_pad_ops import reverse
from tensorweave.ops.cond import case, cond
from tensorweave.ops.math_ops import cast, equal, less, mod
from tensorweave.ops.math_unary_ops import round as _round
from tensorweave.ops.random_ops import random_uniform

__all__ = ["flip_left_right", "flip_up_down", "random_flip_left_right", "random_flip_up_down",
           "rot90", "transpose", "transpose_image"]


def _by_rank(image, rank3, rank4, scope_name: str, gap: str = " "):
    """`rank3()` or `rank4()` by the static rank, or a cond on the run-time rank."""
    ndims = three_or_four(image, gap)
    if ndims is None:
        return cond(equal(rank(image), 3), rank3, rank4, name=scope_name)
    return rank3() if ndims == 3 else rank4()


def _flip(image, axis: int, scope_name: str):
    with name_scope(None, scope_name, [image]):
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))
        return _by_rank(image, lambda: fix_flip_shape(image, reverse(image, [axis])),
                        lambda: reverse(image, [axis + 1]), None, gap="")


def _flip_doc(summary: str, random: bool = False) -> str:
    """The docstring shared by the four flips."""
    seed = "\n      seed: the op-level random seed (see `tf.set_random_seed`)." if random else ""
    return f"""{summary}

    Args:
      image: a 3-D `[height, width, channels]` or 4-D `[batch, height, width, channels]`
        Tensor.{seed}

    Returns:
      A Tensor of the same shape and dtype.

    Raises:
      ValueError: if the rank is statically not 3 or 4, or an inner dimension is 0.
    """


def flip_left_right(image):
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    return _flip(image, 0, "flip_up_down")


flip_left_right.__doc__ = _flip_doc(
    "Mirrors images horizontally: the width axis reversed (TF1's tf.image.flip_left_right).")
flip_up_down.__doc__ = _flip_doc(
    "Mirrors images vertically: the height axis reversed (TF1's tf.image.flip_up_down).")


def _random_flip(image, axis: int, seed, scope_name: str):
    """A 3-D image is flipped when a uniform draw is < 0.5 (a cond); each image of a batch by
    its own draw, blended as `flip * flipped + (1 - flip) * image`, as TensorFlow does."""
    with name_scope(None, scope_name, [image]) as scope:
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))

        def rank3():
            flip = less(random_uniform([], 0, 1.0, seed=seed), 0.5)
            result = cond(flip, lambda: reverse(image, [axis]), lambda: image, name=scope)
            return fix_flip_shape(image, result)

        def rank4():
            batch = shape(image)[0]
            draws = random_uniform([batch], 0, 1.0, seed=seed)
            flips = cast(_round(reshape(draws, [batch, 1, 1, 1])), image.dtype)
            return flips * reverse(image, [axis + 1]) + (1 - flips) * image
        return _by_rank(image, rank3, rank4, None)


def random_flip_left_right(image, seed=None):
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    return _random_flip(image, 0, seed, "random_flip_up_down")


random_flip_left_right.__doc__ = _flip_doc(
    "Flips an image horizontally with probability 1/2 (TF1's tf.image.random_flip_left_right);\n"
    "    each image of a 4-D batch independently.", random=True)
random_flip_up_down.__doc__ = _flip_doc(
    "Flips an image vertically with probability 1/2 (TF1's tf.image.random_flip_up_down);\n"
    "    each image of a 4-D batch independently.", random=True)


def _rotations(image, k, offset: int, scope_name: str):
    """The k-th rotation (k in 0..3, a Tensor) as TF's `case` over ReverseV2/Transpose; the
    spatial axes are `offset` and `offset + 1`."""
    h, w = offset, offset + 1
    perm = list(range(offset)) + [w, h] + [offset + 2]
    cases = [(equal(k, 1), lambda: _transpose(reverse(image, [w]), perm)),
             (equal(k, 2), lambda: reverse(image, [h, w])),
             (equal(k, 3), lambda: reverse(_transpose(image, perm), [w]))]
    result = case(cases, default=lambda: image, exclusive=True, name=scope_name)
    dims = result.shape if offset else image.shape
    if dims.ndims is not None:
        kept = dims.as_list()
        result.set_shape(kept[:offset] + [None, None] + kept[offset + 2:])
    return result


def rot90(image, k=1, name=None):
    """Rotates images counter-clockwise by k * 90 degrees (TF1's tf.image.rot90).

    Args:
      image: a 3-D or 4-D image Tensor.
      k: a scalar int32 Tensor or int: the number of quarter turns (any integer, taken mod 4).
      name: a name scope (default "rot90").

    Returns:
      The rotated Tensor: height and width swap for odd k.

    Raises:
      ValueError: if the rank is statically not 3 or 4, or `k` is not a scalar.
    """
    with name_scope(name, "rot90", [image, k]) as scope:
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))
        k = convert_to_tensor(k, dtype=_dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = mod(k, 4)
        return _by_rank(image, lambda: _rotations(image, k, 0, scope),
                        lambda: _rotations(image, k, 1, scope), None)


def transpose(image, name=None):
    """Swaps the height and width of images (TF1's tf.image.transpose /
    tf.image.transpose_image).

    Args:
      image: a 3-D or 4-D image Tensor.
      name: a name scope (default "transpose"); the Transpose op gets the same name.

    Returns:
      The transposed Tensor `[..., width, height, channels]`.

    Raises:
      ValueError: if the rank is statically not 3 or 4, or an inner dimension is 0.
    """
    with name_scope(name, "transpose", [image]):
        image = assert_at_least_3d(convert_to_tensor(image, name="image"))
        return _by_rank(image, lambda: _transpose(image, [1, 0, 2], name=name),
                        lambda: _transpose(image, [0, 2, 1, 3], name=name), None)


transpose_image = transpose
