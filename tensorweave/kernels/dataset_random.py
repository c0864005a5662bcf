"""Runtime node of Dataset.random: TensorFlow's Philox stream, one 32-bit word per element.

TensorFlow 2.21's RandomDataset keys a Philox-4x32-10 generator with the op's (seed, seed2)
(key = seed, high half of the counter = seed2) and hands out its uint32 words one at a time, in
order, each as an int64 scalar; kernels/philox.py computes the same blocks, so the values are
TensorFlow's bit for bit. Each epoch (each pass a repeat above asks for) restarts the stream;
with `rerandomize`, epoch k is keyed instead by words 2k and 2k + 1 of the stream of the op's
seeds, as TensorFlow's RandomSeedGenerator gives each new iterator its seeds. A pipeline without
seeds (no graph or op seed) takes them from `random_seeds()` (kernels/dataset_seeds.py).
In: the spec {"seeds": [seed, seed2] or None, "rerandomize": bool}; out: endless int64 scalars.
"""
from __future__ import annotations

import numpy as np

from tensorweave.kernels import dataset_runtime
from tensorweave.kernels.dataset_seeds import random_seeds
from tensorweave.kernels.philox import WORD_BLOCKS, PhiloxWords, philox_words


def epoch_seeds(seeds, epoch: int, rerandomize: bool) -> tuple[int, int]:
    """The seeds of a pass: the op's own, or with `rerandomize` the pass's pair from TF's
    RandomSeedGenerator, words 2k and 2k + 1 of the stream of the op's seeds."""
    if not rerandomize:
        return seeds[0], seeds[1]
    words = philox_words(*seeds, first_block=epoch // 2, n_blocks=1)
    return int(words[2 * epoch % 4]), int(words[2 * epoch % 4 + 1])


class _Random(dataset_runtime.Node):
    def __init__(self, spec, args, functions):
        seeds = spec["seeds"]
        self.seeds = seeds if seeds is not None else random_seeds()
        self.rerandomize = spec["rerandomize"]
        self.epoch = 0

    def _epoch_seeds(self) -> tuple[int, int]:
        k, self.epoch = self.epoch, self.epoch + 1
        return epoch_seeds(self.seeds, k, self.rerandomize)

    def _blocks(self):
        """One epoch: the stream as int64 arrays of 4 * WORD_BLOCKS words."""
        words = PhiloxWords(*self._epoch_seeds())
        while True:
            yield words.take(4 * WORD_BLOCKS).astype(np.int64)

    def __iter__(self):
        for block in self._blocks():
            for value in block:
                yield (value,)

    def batches(self, n, drop):
        return ((batch,) for batch in dataset_runtime.rebatched(self._blocks(), n, drop))


dataset_runtime.register_nodes({"random": _Random})
