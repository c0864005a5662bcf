"""Stateful random ops with TensorFlow's numbers: uniform, normal, truncated normal, ints, shuffle.

TensorFlow's stateful random kernels hold a `GuardedPhiloxRandom`: Philox-4x32-10 keyed with
the op's `seed` (the key's two words) and the high half of its counter set to `seed2`; a
(0, 0) pair means "unseeded" and takes two random 64-bit seeds instead. Each run reserves 256
blocks per output value (`ReserveRandomOutputs(n, 256)`: the counter moves on by 256 * n) and
fills its output from the blocks starting where the counter stood, with the same fills as the
stateless ops (kernels/stateless_random.py). So a seeded TF1 program (its initializers, dropout
masks, random inputs) draws TensorFlow's values bit for bit, run after run; as there, one
generator lives per (session, node) and a new session starts the stream over.
"""
from __future__ import annotations

import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import stateless_random
from tensorweave.kernels.jit import compiled
from tensorweave.kernels.philox import op_seeds, philox_blocks, seeded_key_counter
from tensorweave.kernels.random import output_shape
from tensorweave.kernels.registry import kernel

_M32, _M128 = (1 << 32) - 1, (1 << 128) - 1
_BLOCKS_PER_OUTPUT = 256   # TF's ReserveRandomOutputs multiplier


class PhiloxStream:
    """TensorFlow's GuardedPhiloxRandom for an op's (seed, seed2)."""

    def __init__(self, seed: int, seed2: int):
        self.key, words = seeded_key_counter(*op_seeds(seed, seed2))
        self.counter = sum(w << 32 * i for i, w in enumerate(words))   # as one 128-bit int
        self.lock = threading.Lock()      # concurrent runs of one session share the stream

    def reserve(self, outputs: int):
        """The (key, counter) to fill `outputs` values from; the stream moves past them."""
        return self.reserve_blocks(outputs * _BLOCKS_PER_OUTPUT)

    def reserve_blocks(self, blocks: int):
        """The (key, counter) of the next `blocks` Philox blocks; the stream moves past them."""
        with self.lock:
            counter = self.counter
            self.counter = (counter + blocks) & _M128
        return self.key, tuple((counter >> shift) & _M32 for shift in (0, 32, 64, 96))


class _PhiloxKernel:
    """shape -> `fill(stream, n, dtype)` values of the output dtype, shaped."""

    fill = None

    def __init__(self, ctx):
        self.stream = PhiloxStream(ctx.attrs["seed"], ctx.attrs["seed2"])
        self.dtype = ctx.output_dtypes[0]

    def compute(self, ctx, shape):
        shape = output_shape(shape)
        n = int(np.prod(shape, dtype=np.int64))
        stream = self.stream.reserve(n)
        if n == 0:
            return np.zeros(shape, self.dtype.as_numpy_dtype)
        return type(self).fill(stream, n, self.dtype).reshape(shape)


@kernel("RandomUniform")
class RandomUniformKernel(_PhiloxKernel):
    fill = staticmethod(stateless_random.uniform)


@kernel("RandomStandardNormal")
class RandomStandardNormalKernel(_PhiloxKernel):
    fill = staticmethod(stateless_random.normal)


@kernel("TruncatedNormal")
class TruncatedNormalKernel(_PhiloxKernel):
    fill = staticmethod(stateless_random.truncated_normal)


@kernel("RandomUniformInt")
class RandomUniformIntKernel(_PhiloxKernel):
    """Integers in [minval, maxval) by TF's modular method; its checks in its order (the range
    is checked only when there is something to draw)."""

    def compute(self, ctx, shape, minval, maxval):
        for what, v in (("minval", minval), ("maxval", maxval)):
            if np.ndim(v) != 0:
                raise errors.InvalidArgumentError(
                    None, None, f"{what} must be 0-D, got shape {list(np.shape(v))}")
        shape = output_shape(shape)
        n = int(np.prod(shape, dtype=np.int64))
        if n == 0:
            return np.zeros(shape, self.dtype.as_numpy_dtype)
        lo, hi = int(minval), int(maxval)
        if lo >= hi:
            raise errors.InvalidArgumentError(None, None,
                                              f"Need minval < maxval, got {lo} >= {hi}")
        return stateless_random.uniform_int(self.stream.reserve(n), n, lo, hi,
                                            self.dtype).reshape(shape)


@kernel("RandomShuffle")
class RandomShuffleKernel:
    """Rows in TF's order: its RandomShuffleOp reserves the words of (rows - 1) / 4 blocks and
    runs a forward Fisher-Yates over row indices, swapping row i with row
    i + word_i % (rows - i); a tensor of at most one row or element comes back as it is."""

    def __init__(self, ctx):
        self.stream = PhiloxStream(ctx.attrs["seed"], ctx.attrs["seed2"])

    def compute(self, ctx, value):
        value = np.asarray(value)
        if value.size <= 1 or value.shape[0] <= 1:
            return value.copy()   # never the input's own buffer (a variable's, say)
        rows = value.shape[0]
        return value[shuffled_order(self.stream, rows, rows - 1)]


def shuffled_order(stream: PhiloxStream, n: int, reserved_words: int) -> np.ndarray:
    """TF's RandomShuffle of range(n) (tf.random_shuffle's rows, fractional pooling's window
    sizes) with the words of ReserveSamples32(reserved_words) from `stream`: item i swaps with
    item i + word_i % (n - i), for i < n - 1."""
    blocks = (reserved_words + 3) // 4   # 4 words a block
    key, counter = stream.reserve_blocks(blocks)
    words = philox_blocks(key, counter, np.arange(blocks, dtype=np.uint64))
    order = np.arange(n, dtype=np.int64)
    compiled(_fisher_yates)(order, words.reshape(-1))
    return order


def _fisher_yates(order, words):
    """The forward Fisher-Yates of `shuffled_order`, in place."""
    n = order.size
    for i in range(n - 1):
        j = i + np.int64(words[i]) % (n - i)
        order[i], order[j] = order[j], order[i]
