"""Kernels of the optional ops (ops/optional_ops.py): an optional is an `OptionalValue` object.

The variant an optional op outputs is an `OptionalValue`, the element's component values or
nothing, passed by reference like the pipeline's `DatasetValue` (through Switch, Merge and loop
frames as any value is). Constant folding may store one in a Const, which holds it as a 0-d
object array; `_held` unwraps that. `IteratorGetNextAsOptional` turns the end of the data into
an empty optional instead of OutOfRangeError; reading an empty one is TensorFlow's
InvalidArgumentError.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel


class OptionalValue:
    """One optional at run time: the tuple of its components' values, or None when empty."""

    __slots__ = ("components",)

    def __init__(self, components: tuple | None):
        self.components = components


def _held(optional) -> OptionalValue:
    """The OptionalValue itself, also when a folded Const holds it as a 0-d object array."""
    return optional.item() if isinstance(optional, np.ndarray) else optional


@kernel("IteratorGetNextAsOptional")
def _iterator_get_next_as_optional(ctx, iterator):
    try:
        return OptionalValue(tuple(iterator.get_next()))
    except errors.OutOfRangeError:
        return OptionalValue(None)


@kernel("OptionalFromValue")
def _optional_from_value(ctx, *components):
    return OptionalValue(components)


@kernel("OptionalNone")
def _optional_none(ctx):
    return OptionalValue(None)


@kernel("OptionalHasValue")
def _optional_has_value(ctx, optional):
    return np.bool_(_held(optional).components is not None)


@kernel("OptionalGetValue")
def _optional_get_value(ctx, optional):
    components = _held(optional).components
    if components is None:
        raise errors.InvalidArgumentError(None, None, "The given optional does not have a "
                                          "value.")
    return components if len(components) != 1 else components[0]
