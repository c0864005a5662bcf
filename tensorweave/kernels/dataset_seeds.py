"""Random seeds for tf.data nodes whose pipeline gave none, reproducible per iterator.

A node that needs seeds the pipeline did not give (an unseeded shuffle) calls
`random_seeds()`. While an iterator builds and runs its nodes it keeps its `SeedSource`
active on that thread, and the source derives every draw from one random root and the draw's
index: restoring an iterator from a checkpoint (kernels/iterator_checkpoint.py) replays its
pipeline under a source of the saved root, so the rebuilt nodes, and the nodes built after
the restore, make the same random choices as the saved iterator's.
"""
from __future__ import annotations

import threading

import numpy as np

_active = threading.local()   # .source: the SeedSource of the iterator running on this thread


def _seeds_of(sequence: np.random.SeedSequence) -> list:
    return [int(s) for s in sequence.generate_state(2)]


class SeedSource:
    """The seeds an iterator's nodes draw while it is active (`with source:`): the k-th draw
    derived from `root` and k, so that a source of the same root draws the same sequence."""

    def __init__(self, root: int | None = None):
        self.root = root if root is not None else np.random.SeedSequence().entropy
        self._drawn = 0
        self._outer = None

    def draw(self) -> list:
        self._drawn += 1
        return _seeds_of(np.random.SeedSequence(self.root, spawn_key=(self._drawn - 1,)))

    def __enter__(self):
        self._outer = getattr(_active, "source", None)
        _active.source = self
        return self

    def __exit__(self, *exc_info):
        _active.source = self._outer


def random_seeds() -> list:
    """Two seeds for a node whose pipeline gave none: from the active SeedSource, fresh when
    no iterator runs the node (Dataset.reduce, cardinality checks)."""
    source = getattr(_active, "source", None)
    return source.draw() if source is not None else _seeds_of(np.random.SeedSequence())
