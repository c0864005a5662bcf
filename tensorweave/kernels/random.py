"""Helpers of the random kernels: a NumPy generator per (session, node), and shape checks.

The runtime builds one instance of a stateful op's kernel class per session and node, so a
generator it holds lives as long as the session: each run continues the stream, a new session
restarts it. A nonzero (seed, seed2) pair keys a Philox generator (two ops with equal seeds draw
equal streams); (0, 0) means "unseeded" and draws fresh OS entropy. Fractional pooling, the
one kernel that still uses it, follows TensorFlow's distribution, not its bit patterns; the
other random kernels draw TensorFlow's own bits (kernels/random_philox.py, multinomial.py,
random_gamma.py, sampling.py, image_boxes.py).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors

_MASK64 = (1 << 64) - 1


def seeded_generator(seed: int, seed2: int) -> np.random.Generator:
    """A Philox generator seeded by the op's (seed, seed2) attrs; nondeterministic if both are 0."""
    if seed or seed2:
        key = ((int(seed2) & _MASK64) << 64) | (int(seed) & _MASK64)
        return np.random.Generator(np.random.Philox(key=key))
    return np.random.Generator(np.random.Philox())


def output_shape(value) -> tuple[int, ...]:
    """A 1-D shape tensor's value as a tuple; negative dimensions are an error."""
    dims = tuple(int(d) for d in np.ravel(value))
    for d in dims:
        if d < 0:
            raise errors.InvalidArgumentError(None, None, f"Dimension {d} must be >= 0")
    return dims

