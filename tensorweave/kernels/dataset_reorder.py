"""tf.data nodes that only select and order their input: shuffle, repeat, take, skip, shard.

Prefetch too, which runs inline (kernels/dataset_runtime.py has the pipeline's other nodes).

Each runs one algorithm over either its input's elements or, over an indexable source, its
row positions (`positions()`), so that a batch above is one gather of the positions.
"""
from __future__ import annotations

import itertools

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.dataset_runtime import (
    ElementError,
    Node,
    UnaryNode,
    in_blocks,
    one_by_one,
    register_nodes,
)
from tensorweave.kernels.dataset_seeds import random_seeds
from tensorweave.kernels.jit import compiled

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
    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        seeds = spec["seeds"]
        self.seeds = seeds if seeds is not None else random_seeds()
        self.rng = np.random.default_rng(self.seeds)

    def _buffer_and_rng(self):
        size = int(self.params[0])
        if size < 1:
            raise errors.InvalidArgumentError(None, None, "buffer_size must be greater than "
                                              "zero.")
        return size, self.rng if self.spec["reshuffle"] else np.random.default_rng(self.seeds)

    def _order(self, epoch):
        """TF's shuffle buffer: fill it, then emit a uniform slot and refill it from the input."""
        size, rng = self._buffer_and_rng()
        return _shuffled(epoch(), size, rng)

    def _order_blocks(self, epoch):
        """`_order` over position blocks: the same draws, the same order."""
        size, rng = self._buffer_and_rng()
        return _shuffled_blocks(epoch(), size, rng)


def _shuffled(items, size, rng):
    """The items through a buffer of `size`: each new item replaces the one a slot emits. An
    ElementError from the input is passed on when it arrives, as TensorFlow's shuffle returns
    an error met while filling its buffer."""
    slots = _slots(rng, size)
    buf = []
    if size:
        for e in items:
            if type(e) is ElementError:
                yield e
                continue
            buf.append(e)
            if len(buf) == size:
                break
    for e in items:
        if type(e) is ElementError:
            yield e
            continue
        j = next(slots)
        yield buf[j]
        buf[j] = e
    for j in rng.permutation(len(buf)).tolist():
        yield buf[j]


def _shuffled_blocks(blocks, size, rng):
    """`_shuffled` over int64 position blocks, a compiled loop per block: the generator of
    `_slots` draws its first 1024 slots at once and each further 1024 when the first of them
    is needed, and so does this."""
    slots = _SlotBlocks(rng, size)
    pieces, have = [], 0
    for block in blocks:
        if have < size:
            take = min(size - have, block.size)
            pieces.append(block[:take])
            have += take
            block = block[take:]
            if have < size or not block.size:
                continue
        if len(pieces) != 1 or pieces[0].base is not None:
            pieces = [np.concatenate(pieces)]   # the buffer: an array of its own
        out = np.empty_like(block)
        compiled(_through_buffer)(pieces[0], block, slots.take(block.size), out)
        yield out
    buf = np.concatenate(pieces) if pieces else np.empty(0, np.int64)
    order = rng.permutation(buf.size)   # drawn even when empty, as `_shuffled` does
    if buf.size:
        yield buf[order]


def _through_buffer(buf, incoming, slots, out):
    for k in range(incoming.size):
        j = slots[k]
        out[k] = buf[j]
        buf[j] = incoming[k]


class _SlotBlocks:
    """`_slots` as arrays: `take(m)` gives the next m slots, drawing 1024 at a time."""

    def __init__(self, rng, size):
        self.rng, self.size = rng, size
        self.block = (rng.random(1024) * size).astype(np.int64)
        self.used = 0

    def take(self, m: int) -> np.ndarray:
        parts = []
        while m:
            if self.used == self.block.size:
                self.block = (self.rng.random(1024) * self.size).astype(np.int64)
                self.used = 0
            k = min(m, self.block.size - self.used)
            parts.append(self.block[self.used:self.used + k])
            self.used += k
            m -= k
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _slots(rng, size):
    """Uniform buffer slots one by one, drawn 1024 at a time (the first block at once)."""
    blocks = _SlotBlocks(rng, size)

    def draw():
        while True:
            yield from blocks.take(1024).tolist()
    return draw()


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

    passes_errors = False

    def _order(self, epoch):
        num_shards, index = (int(p) for p in self.params)
        if num_shards <= 0:
            raise errors.InvalidArgumentError(
                None, None, "Number of shards must be greater than zero (currently num_shards "
                f"= {num_shards}).")
        if not 0 <= index < num_shards:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {num_shards - 1} (currently index = "
                f"{index}).")
        return itertools.islice(epoch(), index, None, num_shards)


class _Prefetch(Reorder):
    """Runs inline: elements are produced when asked for (see ARCHITECTURE.md, tf.data)."""

    blockwise = True

    def _order(self, epoch):
        return epoch()

    def batches(self, n, drop):
        # Batches of what is below, but not a map's fused ones where errors are reported:
        # TensorFlow fuses map and batch only when adjacent, and a failed element then fails
        # just itself and the partial batch before it.
        if self.resumable and self.source is None:
            return Node.batches(self, n, drop)
        return self.child.batches(n, drop)


register_nodes({"shuffle": _Shuffle, "repeat": _Repeat, "take": _Take, "skip": _Skip,
                "shard": _Shard, "prefetch": _Prefetch})
