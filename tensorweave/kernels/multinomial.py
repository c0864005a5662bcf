"""Multinomial and StatelessMultinomial: TensorFlow 2.21's CPU sampling, index for index.

Both of TF's kernels (core/kernels/multinomial_op.cc) hand a Philox stream to one functor. The
stateful op's stream is its GuardedPhiloxRandom (kernels/random_philox.PhiloxStream), which
each run with a nonempty output moves on by batch * ceil4(num_samples) * 2 * 256 blocks (two
words per uniform double); the stateless op's is the key and counter its seed stands for. The
functor shards the rows over the device's intra-op threads (`Shard`, at a cost of
50 * (num_samples * log2(classes) + classes) a row); each shard copies the stream, skips
start_row * (num_samples + 3) / 4 blocks (fewer than the rows before it drew: shards overlap
the stream, so the values depend on the sharding) and draws row after row, `num_samples`
doubles a row. Per row: the CDF of exp(logit - max) in float64 over the finite logits only
(a row with none finite yields num_classes), then upper_bound(cdf, uniform * total) per sample.

The sharding is deterministic: TF's Shard hands the rows to Eigen's parallelFor, whose blocks
are a function of (rows, cost, threads) alone (`shard_ranges`); which thread runs a block does
not matter, as each block draws from its own copy of the stream. Small inputs (rows * cost
below about 110000 cycles) run as one block. The thread count is the one TF gives a session's
CPU device: `intra_op_parallelism_threads` if set, else the schedulable cores
(`device_threads`). The per-row work is one compiled loop (kernels/jit.py).

In a tf.data function TF does not shard at all (checked with TF 2.21: also under a dataset
option max_intra_op_parallelism of 2), so there the rows run as one block.

Where TF's values can differ: (1) constant folding runs without a session and takes the
cores (TF folds on the session's device, so they differ only under an
intra_op_parallelism_threads other than the cores); (2) TF sizes its intra-op pool once per
process, from the first session's config; (3) exp is the C library's, TF's Eigen's vectorized
one differs from it in the last bit for about 14% of arguments, which changes an index only if
a target falls within an ulp or two of a class boundary (about 1e-16 a sample).
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.jit import compiled, loop_helper
from tensorweave.kernels.philox import philox_block, stateless_key_counter
from tensorweave.kernels.random_philox import PhiloxStream
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.stateless_random import check_seed, uint64_to_double

# Eigen's TensorCostModel constants (cycles), by which parallelFor sizes its blocks.
_STARTUP_CYCLES, _PER_THREAD_CYCLES, _TASK_SIZE = 100000, 100000, 40000
_MAX_OVERSHARDING = 4   # Eigen's max_oversharding_factor: at most 4 blocks a thread
_LOOP_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# --- sharding: TF's Shard -> Eigen's ThreadPoolDevice::parallelFor -----------------------------
@functools.cache
def _cores() -> int:
    """TF's port::NumSchedulableCPUs: the CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def device_threads(ctx) -> int:
    """The intra-op thread count of the CPU device TF would run this kernel on: 1 in a tf.data
    function, else the session's `intra_op_parallelism_threads`, else the schedulable cores
    (TF's default)."""
    if ctx.intra_op_threads is not None:
        return ctx.intra_op_threads
    config = getattr(ctx.session, "config", None)
    threads = config.intra_op_parallelism_threads if config is not None else 0
    return threads if threads > 0 else _cores()


def row_cost(num_classes: int, num_samples: int) -> int:
    """The functor's "incredibly rough estimate" of one row's cycles, as its int64."""
    return int(50 * (num_samples * math.log(num_classes) / math.log(2) + num_classes))


def shard_ranges(total: int, cost: int, threads: int) -> list[tuple[int, int]]:
    """The [start, limit) blocks TF's Shard(threads, pool, total, cost) runs `work` on.

    With more than one thread Shard calls the pool's ParallelFor, Eigen's parallelFor: inline
    (one block) when the cost model wants one thread; else blocks of at least
    ceil(total / (4 * threads)) and 40000 / cost units, grown up to twice that while the
    blocks still divide over the threads as evenly (TensorDeviceThreadPool.h,
    CalculateParallelForBlock). Its halving scheduler splits at multiples of the block size,
    so the blocks are [k * size, (k + 1) * size).
    """
    if total <= 0:
        return []
    wanted = (total * float(cost) - _STARTUP_CYCLES) / _PER_THREAD_CYCLES + 0.9
    if threads <= 1 or total == 1 or min(threads, max(1, int(wanted))) == 1:
        return [(0, total)]
    size = min(total, max(-(-total // (_MAX_OVERSHARDING * threads)),
                          int(1.0 / (float(cost) / _TASK_SIZE))))
    largest = min(total, 2 * size)
    count = -(-total // size)

    def efficiency(blocks: int) -> float:
        return blocks / (-(-blocks // threads) * threads)

    best, previous = efficiency(count), count
    while best < 1.0 and previous > 1:
        coarser = -(-total // (previous - 1))
        if coarser > largest:
            break
        previous = -(-total // coarser)
        if efficiency(previous) + 0.01 >= best:
            size, count = coarser, previous
            best = max(best, efficiency(previous))
    return [(start, min(start + size, total)) for start in range(0, total, size)]


# --- the functor --------------------------------------------------------------------------------
def _sample_rows(logits, key0, key1, low, high, shard_starts, out):
    """TF's per-row work, shard by shard: each shard [start, next start) draws from its own
    copy of the stream skipped (start * (num_samples + 3)) // 4 blocks, two words per sample,
    row after row (the Philox blocks computed as the words are taken). Per row: the running
    total of exp(logit - max) over the finite logits (max over them too), then per sample
    std::upper_bound(cdf, uniform_double * total)."""
    rows, classes = logits.shape
    num_samples = out.shape[1]
    cdf = np.empty(classes)
    for s in range(shard_starts.size):
        start = shard_starts[s]
        limit = shard_starts[s + 1] if s + 1 < shard_starts.size else rows
        skip = np.uint64(start * (num_samples + 3) // 4)
        word, cached = 0, -1
        w0 = w1 = w2 = w3 = np.uint64(0)
        for b in range(start, limit):
            top = -np.inf
            for j in range(classes):
                v = np.float64(logits[b, j])
                if np.isfinite(v) and v > top:
                    top = v
            total = 0.0
            for j in range(classes):
                v = np.float64(logits[b, j])
                if np.isfinite(v):
                    total += np.exp(v - top)
                cdf[j] = total
            for k in range(num_samples):
                if word // 4 != cached:   # two words never straddle a block: `word` is even
                    cached = word // 4
                    w0, w1, w2, w3 = philox_block(key0, key1, low, high,
                                                  skip + np.uint64(cached))
                hi_word, lo_word = (w0, w1) if word % 4 == 0 else (w2, w3)
                word += 2
                out[b, k] = upper_bound(cdf, uint64_to_double(hi_word, lo_word) * total)


@loop_helper
def upper_bound(values, target):
    """std::upper_bound: the index of the first of the ascending `values` above `target`
    (their size when none is)."""
    lo, hi = 0, values.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] <= target:
            lo = mid + 1
        else:
            hi = mid
    return lo


def sample(stream, logits: np.ndarray, num_samples: int, threads: int, dtype) -> np.ndarray:
    """TF's CPU MultinomialFunctor on `threads` intra-op threads: [batch, num_samples] class
    indices of integer `dtype` drawn from the Philox `stream` ((key, counter)) for a
    [batch, classes] `logits` with batch, classes and num_samples all positive."""
    rows, classes = logits.shape
    shards = shard_ranges(rows, row_cost(classes, num_samples), threads)
    (key0, key1), (c0, c1, c2, c3) = stream
    if logits.dtype not in _LOOP_FLOATS:   # float16: its values, exactly, as float32
        logits = logits.astype(np.float32)
    out = np.empty((rows, num_samples), dtype)
    compiled(_sample_rows)(logits, np.uint64(key0), np.uint64(key1),
                           np.uint64(c0 | c1 << 32), np.uint64(c2 | c3 << 32),
                           np.array([start for start, _ in shards], np.int64), out)
    return out


def _checked(logits, num_samples) -> tuple[np.ndarray, int]:
    """TF's MultinomialOp checks, in its order: (logits, num_samples)."""
    logits, num_samples = np.asarray(logits), np.asarray(num_samples)
    if logits.ndim != 2:
        raise invalid_argument(f"logits should be a matrix, got shape {dims_text(logits.shape)}")
    if num_samples.ndim != 0:
        raise invalid_argument("num_samples should be a scalar, got shape "
                               f"{dims_text(num_samples.shape)}")
    n = int(num_samples)
    if n < 0:
        raise invalid_argument(f"num_samples should be non-negative, got {n}")
    if logits.shape[1] == 0:
        raise invalid_argument("num_classes should be positive, got 0")
    return logits, n


# --- kernels --------------------------------------------------------------------------------------
@kernel("Multinomial", dtypes=_dtypes.FLOATING)
class MultinomialKernel:
    """tf.multinomial / tf.random.categorical: the op's Philox stream, which each run with
    samples to draw moves past the blocks TF reserves for them."""

    def __init__(self, ctx):
        self.stream = PhiloxStream(ctx.attrs["seed"], ctx.attrs["seed2"])
        self.threads = device_threads(ctx)
        self.dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(self, ctx, logits, num_samples):
        logits, n = _checked(logits, num_samples)
        rows = logits.shape[0]
        if rows == 0 or n == 0:
            return np.zeros((rows, n), self.dtype)
        # ReserveRandomOutputs(batch * ceil4(num_samples) * 2, 256): doubles take two words.
        stream = self.stream.reserve(rows * -(-n // 4) * 4 * 2)
        return sample(stream, logits, n, self.threads, self.dtype)


@kernel("StatelessMultinomial", dtypes=_dtypes.FLOATING)
def _stateless_multinomial(ctx, logits, num_samples, seed):
    """TF's checks, in TF's order (the seed first), then `sample` from the seed's stream."""
    seed = check_seed(seed)
    logits, n = _checked(logits, num_samples)
    out_dtype = ctx.output_dtypes[0].as_numpy_dtype
    if logits.shape[0] == 0 or n == 0:
        return np.zeros((logits.shape[0], n), out_dtype)
    return sample(stateless_key_counter(seed), logits, n, device_threads(ctx), out_dtype)
