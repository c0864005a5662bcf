"""Random kernels: one generator per (session, node), seeded from the `seed`/`seed2` attrs.

The runtime builds one instance of a stateful op's kernel class per session and node, so the
generator lives as long as the session: each run continues the stream, a new session restarts
it. A nonzero (seed, seed2) pair keys a Philox generator (two ops with equal seeds draw equal
streams); (0, 0) means "unseeded" and draws fresh OS entropy. Values follow TensorFlow's
distributions, not its bit patterns; the uniform, normal, truncated-normal, integer and
shuffle ops draw TensorFlow's own bits (kernels/random_philox.py).
"""
from __future__ import annotations

import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import kernel

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


class RandomKernel:
    """Holds the node's generator and output dtype; `compute` draws under a lock."""

    def __init__(self, ctx):
        self.rng = seeded_generator(ctx.attrs["seed"], ctx.attrs["seed2"])
        self.dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
        self.lock = threading.Lock()  # two concurrent runs of one session share the stream

    def compute(self, ctx, *inputs):
        with self.lock:
            return self.draw(*inputs)

    def draw(self, *inputs):
        raise NotImplementedError


@kernel("Multinomial")
class MultinomialKernel(RandomKernel):
    """Inverse-CDF sampling per row of softmax(logits); non-finite logits get probability 0
    (a row with none finite yields num_classes, as TensorFlow's CPU kernel does)."""

    def draw(self, logits, num_samples):
        n = int(num_samples)
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"num_samples should be non-negative, got {n}")
        logits = np.asarray(logits, dtype=np.float64)
        batch, classes = logits.shape
        if classes == 0 and batch > 0 or classes == 0 and n > 0:
            raise errors.InvalidArgumentError(
                None, None, "num_classes should be positive, got 0")
        out = np.empty((batch, n), self.dtype)
        if batch == 0 or n == 0:
            return out
        finite = np.isfinite(logits)
        top = np.max(np.where(finite, logits, -np.inf), axis=1, keepdims=True)
        probs = np.where(finite, np.exp(logits - np.where(np.isfinite(top), top, 0.0)), 0.0)
        cdf = np.cumsum(probs, axis=1)
        draws = self.rng.random((batch, n)) * cdf[:, -1:]
        for row in range(batch):
            out[row] = np.searchsorted(cdf[row], draws[row], side="right")
        return out
