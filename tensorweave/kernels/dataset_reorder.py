"""tf.data nodes that only select and order their input: shuffle, repeat, take, skip, shard.

Prefetch too, which runs inline (kernels/dataset_runtime.py has the pipeline's other nodes).

Each runs one algorithm over either its input's elements or, over an indexable source, its
row positions (`positions()`), so that a batch above is one gather of the positions.
"""
from __future__ import annotations

import itertools

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.dataset_random import epoch_seeds
from tensorweave.kernels.dataset_runtime import (
    ElementError,
    UnaryNode,
    in_blocks,
    one_by_one,
    register_nodes,
)
from tensorweave.kernels.dataset_seeds import random_seeds
from tensorweave.kernels.jit import compiled
from tensorweave.kernels.philox import PhiloxWords

_END = object()


class Reorder(UnaryNode):
    """A transformation that only selects and orders its input's elements.

    `_order(epoch)` is its algorithm over the items of `epoch()`, a fresh pass over the input:
    elements when iterated, row positions of an indexable source for `positions()`. Nodes whose
    algorithm does not count items (`blockwise`) run it on the position blocks themselves;
    `_order_blocks`, where defined, is the algorithm written for blocks; the others take the
    positions one by one.
    """

    blockwise = False
    passes_errors = True
    # take and skip over elements that may fail: (items, count) -> the items, counting as
    # TensorFlow does (only the elements returned)
    counted = None

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.source = self.child.source

    def __iter__(self):
        counted = type(self).counted
        if counted is not None and self.resumable and int(self.params[0]) >= 0:
            return counted(iter(self.child), int(self.params[0]))
        return self._order(lambda: iter(self.child))

    def positions(self):
        blocks = self.child.positions
        if self.blockwise:
            return self._order(blocks)
        order_blocks = getattr(self, "_order_blocks", None)
        if order_blocks is not None:
            return order_blocks(blocks)
        return in_blocks(self._order(lambda: one_by_one(blocks())))


class _Shuffle(Reorder):
    """TensorFlow's ShuffleDataset, its order for a seed: a ring buffer of `buffer_size`
    elements; each output is the element at a uniform offset from the ring's start (the next
    uint32 word of Philox(seeds), modulo the number held), whose place the start's element then
    takes. Each pass (each epoch a repeat above asks for) starts a new ring, with the op's
    seeds, or with reshuffle_each_iteration the pass's pair from TF's seed generator
    (`epoch_seeds`); TF 2.21 gives the same orders with shuffle and repeat fused."""

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        seeds = spec["seeds"]
        if len(self.params) > 1:   # a tensor op seed (data/dataset_ops.py _Shuffle)
            seed2 = int(self.params[1])
            seeds = [seeds[0], seed2 if (seeds[0], seed2) != (0, 0) else 2**31 - 1]
        self.seeds = seeds if seeds is not None else random_seeds()
        self.epoch = 0

    def _pass(self):
        """(buffer size, the pass's word stream)."""
        size = int(self.params[0])
        if size < 1:
            raise errors.InvalidArgumentError(None, None, "buffer_size must be greater than "
                                              "zero.")
        k, self.epoch = self.epoch, self.epoch + 1
        return size, PhiloxWords(*epoch_seeds(self.seeds, k, self.spec["reshuffle"]))

    def _order(self, epoch):
        size, words = self._pass()
        return _shuffled(epoch(), size, words)

    def _order_blocks(self, epoch):
        """`_order` over position blocks: the same draws, the same order."""
        size, words = self._pass()
        return _shuffled_blocks(epoch(), size, words)


def _shuffled(items, size, words):
    """The items through TF's shuffle ring (see _Shuffle). An ElementError from the input is
    passed on when it arrives and draws nothing, as TensorFlow's shuffle returns an error met
    while filling its buffer."""
    ring, start, end = [None] * size, 0, 0

    def take():
        nonlocal start
        i = (start + int(words.take(1)[0]) % (end - start)) % size
        out, ring[i] = ring[i], ring[start % size]
        start += 1
        return out

    for e in items:
        if type(e) is ElementError:
            yield e
            continue
        ring[end % size] = e
        end += 1
        if end - start == size:
            yield take()
    while end > start:
        yield take()


def _shuffled_blocks(blocks, size, words):
    """`_shuffled` over int64 position blocks, a compiled loop per block."""
    ring = np.empty(size, np.int64)
    state = np.zeros(2, np.int64)   # the ring's start and end, as counts
    for block in blocks:
        held = int(state[1] - state[0])
        outputs = max(0, held + block.size - (size - 1))
        out = np.empty(outputs, np.int64)
        compiled(_through_ring)(ring, state, block, words.take(outputs), out)
        if outputs:
            yield out
    held = int(state[1] - state[0])
    if held:
        out = np.empty(held, np.int64)
        compiled(_drain_ring)(ring, state, words.take(held), out)
        yield out


def _through_ring(ring, state, incoming, words, out):
    size = ring.size
    start, end, n = state[0], state[1], 0
    for x in incoming:
        ring[end % size] = x
        end += 1
        if end - start == size:
            i = (start + words[n] % (end - start)) % size
            out[n] = ring[i]
            ring[i] = ring[start % size]
            start += 1
            n += 1
    state[0], state[1] = start, end


def _drain_ring(ring, state, words, out):
    size = ring.size
    start, end = state[0], state[1]
    for n in range(end - start):
        i = (start + words[n] % (end - start)) % size
        out[n] = ring[i]
        ring[i] = ring[start % size]
        start += 1
    state[0] = start


class _Repeat(Reorder):
    blockwise = True   # counts epochs, not elements

    def _order(self, epoch):
        count, done = int(self.params[0]), 0
        while count < 0 or done < count:
            items = epoch()
            first = next(items, _END)
            if first is _END:
                return  # repeating an empty dataset would never end
            yield first
            yield from items
            done += 1


def _first_successes(items, count):
    """Items up to the `count`-th that is not an ElementError: TensorFlow's take counts only
    the elements it returns."""
    if count == 0:
        return
    for item in items:
        yield item
        if type(item) is not ElementError:
            count -= 1
            if not count:
                return


def _skipping(items, count):
    """The items after the first `count`, as TensorFlow's skip takes them when some fail: each
    attempt skips up to the count still missing, and an error ends the attempt, is returned,
    and leaves what that attempt skipped uncounted."""
    done = 0
    while done < count:
        skipped, failed = 0, False
        for item in items:
            if type(item) is ElementError:
                failed = True
                yield item
                break
            skipped += 1
            if done + skipped == count:
                break
        else:
            return
        if not failed:
            done += skipped
    yield from items


class _Take(Reorder):
    counted = staticmethod(_first_successes)

    def _order(self, epoch):
        count = int(self.params[0])
        return epoch() if count < 0 else itertools.islice(epoch(), count)


class _Skip(Reorder):
    counted = staticmethod(_skipping)

    def _order(self, epoch):
        count = int(self.params[0])
        if count < 0:
            return iter(())
        it = epoch()
        next(itertools.islice(it, count, count), None)
        return it


class _Shard(Reorder):
    """Every num_shards-th element from `index` on (TensorFlow's ShardDataset)."""

    def __iter__(self):
        if not self.resumable:
            return super().__iter__()
        num_shards, index = self._checked()
        return _sharded(iter(self.child), num_shards, index)

    def _order(self, epoch):
        num_shards, index = self._checked()
        return itertools.islice(epoch(), index, None, num_shards)

    def _checked(self) -> tuple[int, int]:
        num_shards, index = (int(p) for p in self.params)
        if num_shards <= 0:
            raise errors.InvalidArgumentError(
                None, None, "Number of shards must be greater than zero (currently num_shards "
                f"= {num_shards}).")
        if not 0 <= index < num_shards:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {num_shards - 1} (currently index = "
                f"{index}).")
        return num_shards, index


def _sharded(items, num_shards, index):
    """TensorFlow's shard when elements fail: before each element it skips to the next index
    of its shard by the count of elements it has passed; a failure while skipping is returned
    and leaves that attempt's skips uncounted, a failed element is returned uncounted."""
    passed = 0
    while True:
        to_skip, skipped, failed = (index - passed) % num_shards, 0, False
        while skipped < to_skip:
            item = next(items, _END)
            if item is _END:
                return
            if type(item) is ElementError:
                failed = True
                yield item
                break
            skipped += 1
        if failed:
            continue
        passed += skipped
        item = next(items, _END)
        if item is _END:
            return
        yield item
        if type(item) is not ElementError:
            passed += 1


class _Prefetch(Reorder):
    """Runs inline: elements are produced when asked for (see ARCHITECTURE.md, tf.data)."""

    blockwise = True

    def _order(self, epoch):
        return epoch()

    def batches(self, n, drop):
        # The batches of what is below: a map's are vectorized. So a failure under
        # map -> prefetch -> batch fails its whole batch, as adjacent map and batch do;
        # TensorFlow, which does not fuse across prefetch, drops only the partial batch
        # before it (a departure kept for the vectorized map; ARCHITECTURE.md).
        return self.child.batches(n, drop)


register_nodes({"shuffle": _Shuffle, "repeat": _Repeat, "take": _Take, "skip": _Skip,
                "shard": _Shard, "prefetch": _Prefetch})
