"""Shared checks of the random kernels: a shape tensor's value as output dimensions.

The kernels themselves draw TensorFlow's own bits (kernels/random_philox.py, multinomial.py,
random_gamma.py, sampling.py, image_boxes.py, fractional_pool.py), from Philox streams keyed
by the op's (seed, seed2) attrs (kernels/philox.py).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors


def output_shape(value) -> tuple[int, ...]:
    """A 1-D shape tensor's value as a tuple; negative dimensions are an error."""
    dims = tuple(int(d) for d in np.ravel(value))
    for d in dims:
        if d < 0:
            raise errors.InvalidArgumentError(None, None, f"Dimension {d} must be >= 0")
    return dims

