"""Random kernels: one generator per (session, node), seeded from the `seed`/`seed2` attrs.

The runtime builds one instance of a stateful op's kernel class per session and node, so the
generator lives as long as the session: each run continues the stream, a new session restarts
it. A nonzero (seed, seed2) pair keys a Philox generator (two ops with equal seeds draw equal
streams); (0, 0) means "unseeded" and draws fresh OS entropy. Values follow TensorFlow's
distributions, not its bit patterns.
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


@kernel("RandomUniform")
class RandomUniformKernel(RandomKernel):
    """Uniform in [0, 1): float32/float64 natively; float16 from 11 random bits (exact)."""

    def draw(self, shape):
        shape = output_shape(shape)
        if self.dtype == np.float16:
            bits = self.rng.integers(0, 1 << 11, size=shape, dtype=np.uint16)
            return (bits * np.float32(2.0 ** -11)).astype(np.float16)
        return self.rng.random(shape, dtype=self.dtype)


def _standard_normal(rng, shape, dtype):
    if dtype == np.float16:
        return rng.standard_normal(shape, dtype=np.float32).astype(np.float16)
    return rng.standard_normal(shape, dtype=dtype)


@kernel("RandomStandardNormal")
class RandomStandardNormalKernel(RandomKernel):
    def draw(self, shape):
        return _standard_normal(self.rng, output_shape(shape), self.dtype)


@kernel("TruncatedNormal")
class TruncatedNormalKernel(RandomKernel):
    """Standard normal values; those with magnitude above 2 are re-drawn until none is."""

    def draw(self, shape):
        out = _standard_normal(self.rng, output_shape(shape), self.dtype)
        flat = out.reshape(-1)
        bad = np.flatnonzero(np.abs(flat) > 2)
        while bad.size:
            flat[bad] = _standard_normal(self.rng, bad.size, self.dtype)
            bad = bad[np.abs(flat[bad]) > 2]
        return out


@kernel("RandomUniformInt")
class RandomUniformIntKernel(RandomKernel):
    def draw(self, shape, minval, maxval):
        for what, v in (("minval", minval), ("maxval", maxval)):
            if np.ndim(v) != 0:
                raise errors.InvalidArgumentError(
                    None, None, f"{what} must be 0-D, got shape {list(np.shape(v))}")
        shape = output_shape(shape)
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            if 0 in shape:
                return np.zeros(shape, self.dtype)
            raise errors.InvalidArgumentError(None, None,
                                              f"Need minval < maxval, got {lo} >= {hi}")
        return self.rng.integers(lo, hi, size=shape, dtype=self.dtype)


@kernel("RandomShuffle")
class RandomShuffleKernel(RandomKernel):
    def draw(self, value):
        value = np.asarray(value)
        if value.ndim == 0 or value.shape[0] <= 1:
            return value.copy()
        return value[self.rng.permutation(value.shape[0])]


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
