"""Candidate sampler kernels and ComputeAccidentalHits: TensorFlow 2.21's draws, bit for bit.

As TF's (core/kernels/candidate_sampler_ops.cc, range_sampler.cc): each sampler kernel holds a
GuardedPhiloxRandom (kernels/random_philox.PhiloxStream) and each run reserves
ReserveSamples32(2048 * num_sampled), i.e. 512 blocks a candidate, then reads the words from
the start of its reservation one by one (SimplePhilox over a SingleSampleAdapter; a run that
needs more reads on into the next run's blocks, as TF's local generator does). The draws:
uniform is ExactUniformInt over 64-bit words (two words each, low first, the low remainder
rejected); log-uniform is int64(exp(RandDouble() * log1p(range))) - 1, mod range; the learned
unigram sampler is WeightedPicker: ExactUniformInt(total weight) over 32-bit words, then the
class whose running count passes it (counts start at 1 and each run adds the true classes,
up to an int32 total); the fixed unigram sampler is DistributionSampler, Walker's alias table
built with TF's stacks in TF's order, drawn as RandFloat() then Uniform(n). With `unique`,
draws repeat until num_sampled distinct classes are found, and the expected counts use the
number of tries: p * num_sampled without repeats, else -expm1(tries * log1p(-p)) in float.

The draws and expected counts run as one compiled loop (kernels/jit.py), so exp, log, powf,
log1pf and expm1f are the C library's, as in TensorFlow (NumPy's SIMD float32 log1p and pow
differ from them in the last bit).
"""
from __future__ import annotations

import math
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.jit import compiled, loop_helper
from tensorweave.kernels.multinomial import upper_bound
from tensorweave.kernels.philox import philox_block
from tensorweave.kernels.random_philox import PhiloxStream
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.stateless_random import uint64_to_double

_BLOCKS_PER_CANDIDATE = 512   # ReserveSamples32(2048 * num_sampled): 4 words a block
_INT32_MAX = 2**31 - 1
# What a sampler's draws are (the compiled loop's `kind`).
_UNIFORM, _LOG_UNIFORM, _PICKER, _ALIAS = range(4)
_NO_FLOATS, _NO_INTS = np.empty(0, np.float32), np.empty(0, np.int64)


# --- the compiled draw loop: SimplePhilox, the range samplers, ExpectedCountHelper -----------
@loop_helper
def _next_word(key0, key1, low, high, words, pos):
    """SingleSampleAdapter: the stream's next word; `pos` holds (next block, words used)."""
    if pos[1] == 4:
        words[0], words[1], words[2], words[3] = philox_block(key0, key1, low, high,
                                                              np.uint64(pos[0]))
        pos[0] += 1
        pos[1] = 0
    pos[1] += 1
    return words[pos[1] - 1]


@loop_helper
def _exact_uniform(n, wide, key0, key1, low, high, words, pos):
    """TF's ExactUniformInt: [0, n) from 32-bit words (64-bit ones, low word first, if `wide`),
    masked for a power of two, else rejecting the draws below (max % n) + 1."""
    top = np.uint64(0xFFFFFFFFFFFFFFFF) if wide else np.uint64(0xFFFFFFFF)
    while True:
        rnd = _next_word(key0, key1, low, high, words, pos)
        if wide:
            rnd |= _next_word(key0, key1, low, high, words, pos) << np.uint64(32)
        if (n & (n - np.uint64(1))) == 0:
            return rnd & (n - np.uint64(1))
        if rnd >= top % n + np.uint64(1):
            return rnd % n


@loop_helper
def _draw(kind, range_max, log_range, alias_prob, alias_alt, cumulative,
          key0, key1, low, high, words, pos):
    """One RangeSampler::Sample of the sampler `kind`."""
    if kind == _UNIFORM:
        return np.int64(_exact_uniform(np.uint64(range_max), True,
                                       key0, key1, low, high, words, pos))
    if kind == _LOG_UNIFORM:
        hi = _next_word(key0, key1, low, high, words, pos)
        u = uint64_to_double(hi, _next_word(key0, key1, low, high, words, pos))
        return (np.int64(np.exp(u * log_range)) - 1) % range_max
    if kind == _PICKER:   # the tree descent is the first class whose running count passes it
        target = np.int64(_exact_uniform(np.uint64(cumulative[-1]), False,
                                         key0, key1, low, high, words, pos))
        return np.int64(upper_bound(cumulative, target))
    # _ALIAS: RandFloat is the word's low 23 bits * 2**-23, exactly
    r = np.float32(_next_word(key0, key1, low, high, words, pos) & np.uint64(0x7FFFFF)) * \
        np.float32(2.0**-23)
    idx = np.int64(_exact_uniform(np.uint64(alias_prob.size), False,
                                  key0, key1, low, high, words, pos))
    return idx if r < alias_prob[idx] else alias_alt[idx]


@loop_helper
def _expected_count(kind, value, range_max, log_range, weights, total, batch, tries):
    """ExpectedCountHelper(Probability(value), batch, tries), all in float as TF's are."""
    if kind == _UNIFORM:
        p = np.float32(1.0 / range_max)
    elif kind == _LOG_UNIFORM:
        p = np.float32(math.log((value + 2.0) / (value + 1.0)) / log_range)
    else:
        p = weights[value] / total
    if tries == batch:
        return p * np.float32(batch)
    return -math.expm1(np.float32(tries) * math.log1p(-p))


def _sample_batch(kind, unique, range_max, log_range, weights, total, alias_prob, alias_alt,
                  cumulative, key0, key1, low, high, true, sampled, sampled_count, true_count):
    """SampleBatchGetExpectedCount: `sampled` (distinct if `unique`), then the expected counts
    of the sampled and the `true` classes."""
    words, pos = np.empty(4, np.uint64), np.array([0, 4])
    n = tries = sampled.size
    if unique:
        seen, tries = set(), 0
        while len(seen) < n:
            value = _draw(kind, range_max, log_range, alias_prob, alias_alt, cumulative,
                          key0, key1, low, high, words, pos)
            tries += 1
            if value not in seen:
                sampled[len(seen)] = value
                seen.add(value)
    else:
        for i in range(n):
            sampled[i] = _draw(kind, range_max, log_range, alias_prob, alias_alt, cumulative,
                               key0, key1, low, high, words, pos)
    for i in range(n):
        sampled_count[i] = _expected_count(kind, sampled[i], range_max, log_range, weights,
                                           total, n, tries)
    for i in range(true.size):
        true_count[i] = _expected_count(kind, true[i], range_max, log_range, weights, total,
                                        n, tries)


# --- the unigram tables ---------------------------------------------------------------------
def _distorted(counts, distortion, out):
    """powf(count, distortion), as TF's FixedUnigramSampler weighs its classes."""
    for i in range(counts.size):
        out[i] = counts[i] ** distortion


def _alias_table(weights, prob, alt):
    """TF's DistributionSampler table: scaled weights (weight * n in float, over the double
    total) on `low`/`high` stacks, the top of each paired until one is empty; leftovers keep
    themselves with probability 1."""
    n = weights.size
    total = 0.0
    for i in range(n):
        total += np.float64(weights[i])
    scaled = np.empty(n)
    low, high = np.empty(n, np.int64), np.empty(n, np.int64)
    n_low = n_high = 0
    for i in range(n):
        alt[i] = -1
        scaled[i] = np.float64(weights[i] * np.float32(n)) / total
        if scaled[i] < 1.0:
            low[n_low] = i
            n_low += 1
        else:
            high[n_high] = i
            n_high += 1
    while n_low and n_high:
        n_low -= 1
        n_high -= 1
        small, big = low[n_low], high[n_high]
        alt[small] = big
        scaled[big] -= 1.0 - scaled[small]
        if scaled[big] < 1.0:
            low[n_low] = big
            n_low += 1
        else:
            high[n_high] = big
            n_high += 1
    for i in range(n):
        prob[i] = np.float32(scaled[i])
    for stack, size in ((high, n_high), (low, n_low)):
        for k in range(size):
            prob[stack[k]] = 1.0
            alt[stack[k]] = stack[k]


# --- kernels ----------------------------------------------------------------------------------
class _SamplerKernel:
    """BaseCandidateSamplerOp: TF's checks in TF's order, the run's Philox reservation and the
    compiled draw; subclasses set `kind` and the tables it reads."""

    kind = _UNIFORM

    def __init__(self, ctx):
        a = ctx.attrs
        self.num_true, self.num_sampled = a["num_true"], a["num_sampled"]
        # AllCandidateSampler has no range_max: its range is num_sampled.
        self.unique, self.range_max = a["unique"], a.get("range_max", a["num_sampled"])
        self.stream = PhiloxStream(a["seed"], a["seed2"])
        self.lock = threading.Lock()   # the learned sampler's counts change between runs
        self.log_range = 0.0
        self.weights, self.total = _NO_FLOATS, np.float32(1)
        self.alias_prob, self.alias_alt, self.cumulative = _NO_FLOATS, _NO_INTS, _NO_INTS

    def compute(self, ctx, true_classes):
        true = np.asarray(true_classes)
        if true.ndim != 2:
            raise errors.InvalidArgumentError(None, None, "true_classes must be a matrix")
        if true.shape[1] != self.num_true:   # TF's message has the two numbers swapped
            raise errors.InvalidArgumentError(
                None, None, f"true_classes must have num_true columns, expected: "
                f"{true.shape[1]} was: {self.num_true}")
        if self.unique and self.num_sampled > self.range_max:
            raise errors.InvalidArgumentError(None, None, "Sampler's range is too small.")
        flat = np.ascontiguousarray(true, np.int64).reshape(-1)
        bad = np.flatnonzero((flat < 0) | (flat >= self.range_max))
        if bad.size:
            raise errors.InvalidArgumentError(
                None, None, f"`true_candidate` out of range [0, {self.range_max}), received "
                f"{flat[bad[0]]}")
        if self.unique and self.num_sampled > self.support_size():   # TF would loop forever
            raise errors.InvalidArgumentError(
                None, None, f"Sampler's range is too small: only {self.support_size()} "
                f"classes can be drawn, {self.num_sampled} unique ones requested")
        key, counter = self.stream.reserve_blocks(_BLOCKS_PER_CANDIDATE * self.num_sampled)
        with self.lock:
            sampled, true_count, sampled_count = self.sample(key, counter, flat)
            self.update(flat)
        return sampled, true_count.reshape(true.shape), sampled_count

    def sample(self, key, counter, true):
        """(sampled, true expected counts, sampled expected counts) from the Philox stream at
        (key, counter)."""
        sampled = np.empty(self.num_sampled, np.int64)
        sampled_count = np.empty(self.num_sampled, np.float32)
        true_count = np.empty(true.size, np.float32)
        compiled(_sample_batch)(
            self.kind, self.unique, self.range_max, self.log_range, self.weights, self.total,
            self.alias_prob, self.alias_alt, self.cumulative, np.uint64(key[0]),
            np.uint64(key[1]), np.uint64(counter[0] | counter[1] << 32),
            np.uint64(counter[2] | counter[3] << 32), true, sampled, sampled_count, true_count)
        return sampled, true_count, sampled_count

    def update(self, true) -> None:
        """Learns from the true classes (only the learned sampler does)."""

    def support_size(self) -> int:
        """How many classes can be drawn (those of nonzero probability)."""
        return self.range_max


@kernel("UniformCandidateSampler")
class UniformSamplerKernel(_SamplerKernel):
    kind = _UNIFORM


@kernel("LogUniformCandidateSampler")
class LogUniformSamplerKernel(_SamplerKernel):
    """Zipfian: P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)."""

    kind = _LOG_UNIFORM

    def __init__(self, ctx):
        super().__init__(ctx)
        self.log_range = math.log1p(self.range_max)


@kernel(["LearnedUnigramCandidateSampler", "ThreadUnsafeUnigramCandidateSampler"])
class LearnedUnigramSamplerKernel(_SamplerKernel):
    """TF's (ThreadUnsafe)UnigramSampler: integer counts that start at 1 a class and grow by
    the true classes of each run, after its draw, while the total stays within int32."""

    kind = _PICKER

    def __init__(self, ctx):
        super().__init__(ctx)
        if self.range_max >= _INT32_MAX:
            raise errors.InvalidArgumentError(
                None, None, f"range_max must be less than {_INT32_MAX} for unigram samplers, "
                f"got {self.range_max}")
        self.counts = np.ones(self.range_max, np.int64)
        self._refresh()

    def _refresh(self) -> None:
        """The running counts the picker searches and the float weights of Probability."""
        self.cumulative = np.cumsum(self.counts)
        self.weights = self.counts.astype(np.float32)
        self.total = np.float32(self.cumulative[-1])

    def update(self, true) -> None:
        room = _INT32_MAX - int(self.cumulative[-1])
        np.add.at(self.counts, true[:max(room, 0)], 1)
        self._refresh()


def _read_unigrams(path: str) -> list[float]:
    """The last comma-separated column of each non-empty line of a vocabulary file."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    return [float(line.split(",")[-1]) for line in lines if line.strip()]


@kernel("FixedUnigramCandidateSampler")
class FixedUnigramSamplerKernel(_SamplerKernel):
    """Draws by fixed counts (unigrams or a vocabulary file's last column) ** distortion.

    As TF's FixedUnigramSampler: the reserved ids and the counts of this shard (ids with
    id % num_shards == shard) are kept, in order, and their number must be range_max.
    """

    kind = _ALIAS

    def __init__(self, ctx):
        super().__init__(ctx)
        a = ctx.attrs
        vocab_file, unigrams = a["vocab_file"], list(a["unigrams"])
        self.error = None
        if not vocab_file and not unigrams:
            self.error = errors.InvalidArgumentError(
                None, None, "Must provide either vocab_file or unigrams.")
        elif vocab_file and unigrams:
            self.error = errors.InvalidArgumentError(
                None, None, "Must only provide one of vocab_file and unigrams.")
        else:
            try:
                self._set_weights(a, _read_unigrams(vocab_file) if vocab_file else unigrams)
            except errors.OpError as e:
                self.error = e

    def _set_weights(self, a, counts) -> None:
        """The shard's float weights, their float total and the alias table drawn from."""
        shards, shard = a["num_shards"], a["shard"]
        reserved_here = int(np.sum(np.arange(a["num_reserved_ids"]) % shards == shard))
        # TF numbers the counts from the number of reserved ids kept, not from num_reserved_ids.
        ids = reserved_here + np.arange(len(counts))
        kept = np.asarray(counts, np.float32)[ids % shards == shard]
        weights = np.zeros(reserved_here + kept.size, np.float32)
        compiled(_distorted)(kept, np.float32(a["distortion"]), weights[reserved_here:])
        if weights.size != self.range_max:
            raise errors.InvalidArgumentError(
                None, None, f"range is {self.range_max} must be equal to weights size  "
                f"{weights.size}")
        self.weights = weights
        self.total = np.cumsum(weights, dtype=np.float32)[-1]   # summed in float, in order
        self.alias_prob = np.empty(weights.size, np.float32)
        self.alias_alt = np.empty(weights.size, np.int64)
        compiled(_alias_table)(weights, self.alias_prob, self.alias_alt)

    def compute(self, ctx, true_classes):
        if self.error is not None:
            raise self.error
        return super().compute(ctx, true_classes)

    def support_size(self) -> int:
        return int(np.count_nonzero(self.weights))


@kernel("AllCandidateSampler")
class AllSamplerKernel(_SamplerKernel):
    """Every class in [0, num_sampled), in order, each with expected count 1."""

    def sample(self, key, counter, true):
        return (np.arange(self.num_sampled, dtype=np.int64), np.ones(true.size, np.float32),
                np.ones(self.num_sampled, np.float32))


@kernel("ComputeAccidentalHits")
class ComputeAccidentalHitsKernel:
    """(row, sampled position, -FLT_MAX) for each true class that was also sampled."""

    def __init__(self, ctx):
        self.num_true = ctx.attrs["num_true"]

    def compute(self, ctx, true_classes, sampled_candidates):
        true = np.asarray(true_classes)
        if true.ndim != 2 or true.shape[1] != self.num_true:
            raise errors.InvalidArgumentError(
                None, None, f"true_classes must be a matrix with num_true = {self.num_true} "
                f"columns, got shape {list(true.shape)}")
        position = {int(c): j for j, c in enumerate(np.asarray(sampled_candidates).tolist())}
        indices, ids = [], []
        for i, row in enumerate(true.tolist()):
            for c in row:
                j = position.get(c)
                if j is not None:
                    indices.append(i)
                    ids.append(j)
        weights = np.full(len(indices), -np.finfo(np.float32).max, dtype=np.float32)
        return (np.array(indices, dtype=np.int32), np.array(ids, dtype=np.int64), weights)
