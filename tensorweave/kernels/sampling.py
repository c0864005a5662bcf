"""Candidate sampler kernels and ComputeAccidentalHits.

A sampler kernel keeps its generator (and, for the learned unigram sampler, its class counts)
for the session's lifetime, like TensorFlow's. With `unique`, draws are repeated until
num_sampled distinct classes are found, and the expected counts account for the number of
draws that took: -expm1(tries * log1p(-p)) instead of p * num_sampled.
"""
from __future__ import annotations

import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.random import seeded_generator
from tensorweave.kernels.registry import kernel


def _expected_count(p, num_sampled: int, tries: int):
    if tries == num_sampled:
        return p * num_sampled
    return -np.expm1(tries * np.log1p(-p))


def _draw_weighted(rng: np.random.Generator, weights: np.ndarray, n: int) -> np.ndarray:
    """n classes drawn with probability proportional to `weights`."""
    cumulative = np.cumsum(weights)
    picks = rng.random(n) * cumulative[-1]
    return np.minimum(np.searchsorted(cumulative, picks, side="right"),
                      len(weights) - 1).astype(np.int64)


class _SamplerKernel:
    """Shared driver: validation, (unique) sampling, expected counts; subclasses define the
    distribution through `draw(n)` and `probability(classes)`."""

    def __init__(self, ctx):
        a = ctx.attrs
        self.num_true, self.num_sampled = a["num_true"], a["num_sampled"]
        # AllCandidateSampler has no range_max: its range is num_sampled.
        self.unique, self.range_max = a["unique"], a.get("range_max", a["num_sampled"])
        self.rng = seeded_generator(a["seed"], a["seed2"])
        self.lock = threading.Lock()

    def compute(self, ctx, true_classes):
        true = np.asarray(true_classes)
        if true.ndim != 2:
            raise errors.InvalidArgumentError(None, None, "true_classes must be a matrix")
        if true.shape[1] != self.num_true:
            raise errors.InvalidArgumentError(
                None, None, f"true_classes must have num_true columns, expected: "
                f"{self.num_true} was: {true.shape[1]}")
        if self.unique and self.num_sampled > self.range_max:
            raise errors.InvalidArgumentError(None, None, "Sampler's range is too small.")
        if true.size and (true.min() < 0 or true.max() >= self.range_max):
            bad = true.min() if true.min() < 0 else true.max()
            raise errors.InvalidArgumentError(
                None, None, f"`true_candidate` out of range [0, {self.range_max}), received "
                f"{bad}")
        if self.unique and self.num_sampled > self.support_size():
            raise errors.InvalidArgumentError(
                None, None, f"Sampler's range is too small: only {self.support_size()} "
                f"classes can be drawn, {self.num_sampled} unique ones requested")
        with self.lock:
            sampled, tries = self._sample()
            sampled_count = _expected_count(self.probability(sampled), self.num_sampled, tries)
            true_count = _expected_count(self.probability(true), self.num_sampled, tries)
            self.update(true)
        return (sampled.astype(np.int64), true_count.astype(np.float32),
                sampled_count.astype(np.float32))

    def _sample(self):
        n = self.num_sampled
        if not self.unique:
            return self.draw(n), n
        picked: list[int] = []
        seen: set[int] = set()
        tries = 0
        while len(picked) < n:
            for value in self.draw(max(2 * (n - len(picked)), 16)).tolist():
                tries += 1
                if value not in seen:
                    seen.add(value)
                    picked.append(value)
                    if len(picked) == n:
                        break
        return np.array(picked, dtype=np.int64), tries

    def update(self, true) -> None:
        """Learns from the true classes (only the learned sampler does)."""

    def support_size(self) -> int:
        """How many classes can be drawn (those of nonzero probability)."""
        return self.range_max


@kernel("UniformCandidateSampler")
class UniformSamplerKernel(_SamplerKernel):
    def draw(self, n):
        return self.rng.integers(0, self.range_max, size=n, dtype=np.int64)

    def probability(self, classes):
        return np.full(np.shape(classes), 1.0 / self.range_max)


@kernel("LogUniformCandidateSampler")
class LogUniformSamplerKernel(_SamplerKernel):
    """Zipfian: floor(exp(u * log(range_max + 1))) - 1 for u uniform in [0, 1)."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.log_range = np.log1p(self.range_max)

    def draw(self, n):
        values = np.exp(self.rng.random(n) * self.log_range).astype(np.int64) - 1
        return np.minimum(values, self.range_max - 1)

    def probability(self, classes):
        classes = np.asarray(classes, dtype=np.float64)
        return np.log((classes + 2.0) / (classes + 1.0)) / self.log_range


@kernel("LearnedUnigramCandidateSampler")
class LearnedUnigramSamplerKernel(_SamplerKernel):
    """Draws by counts that start at 1 per class and grow with each true class seen."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.counts = np.ones(self.range_max, dtype=np.float64)

    def draw(self, n):
        return _draw_weighted(self.rng, self.counts, n)

    def probability(self, classes):
        return self.counts[np.asarray(classes, dtype=np.int64)] / self.counts.sum()

    def update(self, true) -> None:
        np.add.at(self.counts, true.reshape(-1), 1.0)


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
                self.weights = self._weights(a, _read_unigrams(vocab_file) if vocab_file
                                             else unigrams)
            except errors.OpError as e:
                self.error = e

    def _weights(self, a, counts) -> np.ndarray:
        shards, shard = a["num_shards"], a["shard"]
        reserved = np.arange(a["num_reserved_ids"])
        reserved_here = int(np.sum(reserved % shards == shard))
        # TF numbers the counts from the number of reserved ids kept, not from num_reserved_ids.
        ids = reserved_here + np.arange(len(counts))
        kept = np.power(np.asarray(counts, np.float64)[ids % shards == shard], a["distortion"])
        weights = np.concatenate([np.zeros(reserved_here), kept])
        if weights.size != self.range_max:
            raise errors.InvalidArgumentError(
                None, None, f"range is {self.range_max} must be equal to weights size  "
                f"{weights.size}")
        return weights

    def compute(self, ctx, true_classes):
        if self.error is not None:
            raise self.error
        return super().compute(ctx, true_classes)

    def draw(self, n):
        return _draw_weighted(self.rng, self.weights, n)

    def probability(self, classes):
        return self.weights[np.asarray(classes, dtype=np.int64)] / self.weights.sum()

    def support_size(self) -> int:
        return int(np.count_nonzero(self.weights))


@kernel("AllCandidateSampler")
class AllSamplerKernel(_SamplerKernel):
    """Every class in [0, num_sampled), in order, each with expected count 1."""

    def _sample(self):
        return np.arange(self.num_sampled, dtype=np.int64), self.num_sampled

    def probability(self, classes):
        return np.full(np.shape(classes), 1.0 / self.num_sampled)


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
