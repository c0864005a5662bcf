"""Shape checks shared by the tf.image functions, as TensorFlow's image_ops_impl makes them.

A check is static when the shape is known (a ValueError while the graph is built) and an Assert
op otherwise; `assert_*` returns the image through an Identity that depends on those asserts,
so the graph has the same ops as TensorFlow's.
"""
from __future__ import annotations

from tensorweave.ops.array_join_ops import unstack
from tensorweave.ops.array_ops import rank, shape
from tensorweave.ops.check_ops import (
    assert_equal,
    assert_greater_equal,
    assert_positive,
    is_tensor,
)
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.logging_ops import Assert


def static_or_assert(condition, error, message: str) -> list:
    """TF's `_assert`: raise `error` now for a false Python condition; an Assert op for a
    Tensor condition (returned in a list, to gather as control inputs)."""
    if is_tensor(condition):
        return [Assert(condition, [message])]
    if not condition:
        raise error(message)
    return []


def image_dimensions(image, rank_: int) -> list:
    """The image's dimensions: Python ints where static, scalar Tensors elsewhere."""
    static = image.shape
    if static.is_fully_defined():
        return static.as_list()
    dims = static.with_rank(rank_).as_list()
    dynamic = unstack(shape(image), rank_)
    return [s if s is not None else d for s, d in zip(dims, dynamic)]


def check_at_least_3d(image, require_static: bool = True) -> list:
    """ValueError unless the image can be [..., height, width, channels] with positive inner
    dims; the Assert ops that check what is not static."""
    try:
        static = image.shape.with_rank(3) if image.shape.ndims is None else \
            image.shape.with_rank_at_least(3)
    except ValueError:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.") \
            from None
    if require_static and not static.is_fully_defined():
        raise ValueError("'image' must be fully defined.")
    inner = static[-3:]
    if any(d == 0 for d in inner.as_list()):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {static}")
    if inner.is_fully_defined():
        return []
    return [assert_positive(shape(image)[-3:], ["inner 3 dims of 'image.shape' must be > 0."]),
            assert_greater_equal(rank(image), 3,
                                 message="'image' must be at least three-dimensional.")]


def assert_at_least_3d(image):
    """The image, after the checks of `check_at_least_3d` (an Identity, as TF adds)."""
    return with_dependencies(check_at_least_3d(image, require_static=False), image)


def assert_grayscale(image):
    """The image after checking that its last dimension is 1 and its rank at least 2."""
    try:
        static = image.shape.with_rank(2) if image.shape.ndims is None else \
            image.shape.with_rank_at_least(2)
    except ValueError:
        raise ValueError(f"A grayscale image (shape {image.shape}) must be at least "
                         "two-dimensional.") from None
    checks = []
    if static.is_fully_defined():
        if static.as_list()[-1] != 1:
            raise ValueError("Last dimension of a grayscale image should be size 1.")
    else:
        checks = [assert_equal(shape(image)[-1], 1,
                               message="Last dimension of a grayscale image should be size 1."),
                  assert_greater_equal(rank(image), 3, message="A grayscale image must be at "
                                       "least two-dimensional.")]
    return with_dependencies(checks, image)


def three_or_four(image, gap: str = " ") -> int | None:
    """The image rank when it is 3 or 4, None when unknown; ValueError otherwise (TF's flips
    word the message without the `gap` after the shape)."""
    ndims = image.shape.ndims
    if ndims not in (None, 3, 4):
        raise ValueError(f"'image' (shape {image.shape}){gap}must have either 3 or 4 "
                         "dimensions.")
    return ndims


def fix_flip_shape(image, result):
    """A flipped 3-D image keeps the input's static shape ([?, ?, ?] when it had none)."""
    result.set_shape([None, None, None] if image.shape.ndims is None else image.shape)
    return result
