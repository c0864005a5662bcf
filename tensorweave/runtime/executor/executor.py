"""Executor: one per partition, built once, run per step.

It compiles the partition into NodeItems and picks the strategy: the straight-line function when
nothing can overlap (no two independent expensive kernels, and at most one asynchronous kernel,
waited for in line, when no transfer shares the partition), otherwise the dataflow executor
with the inter-op pool. Both raise a kernel failure as TensorFlow's error
class naming the node, its op type, device and the user's line that created it.
"""
from __future__ import annotations

import numpy as np

from tensorweave.runtime.executor import (
    compiled_frames,
    dataflow,
    frames,
    straight_line,
    update_order,
)
from tensorweave.runtime.executor.kernel_errors import node_error
from tensorweave.runtime.executor.node_item import compile_items


def _independent_expensive_pair(items) -> bool:
    """True if two expensive nodes have no path between them (so they could overlap)."""
    expensive = [it.id for it in items if it.expensive]
    if len(expensive) < 2:
        return False
    ancestors = [0] * len(items)
    for it in items:  # items are in topological order
        for c in it.consumers:
            ancestors[c] |= ancestors[it.id] | (1 << it.id)
    for i, a in enumerate(expensive):
        for b in expensive[i + 1:]:
            if not (ancestors[b] >> a) & 1:
                return True
    return False


# Ops that move values between partitions: a partition holding one may wait for another
# partition that waits for it, which only the dataflow executor's overlap resolves.
_TRANSFERS = frozenset({"_Send", "_Recv", "_HostSend", "_HostRecv"})


def _awaitable_in_line(items) -> bool:
    """True if the one asynchronous node may simply be waited for in topological order: with a
    single one and no transfers, nothing else in the step can be what completes it (a
    dequeue's enqueue comes from another step or thread), so waiting delays nothing."""
    waits = [it for it in items if it.is_async]
    return len(waits) == 1 and not any(it.node.op in _TRANSFERS for it in items)


class Executor:
    """Runs one partition graph on one device."""

    def __init__(self, graph, device, session, user_graph=None, pool=None, name="partition",
                 control_flow=False, intra_op_threads=None):
        self.device = device
        self.user_graph = user_graph
        self.items, self.n_slots = compile_items(graph, device, session, user_graph,
                                                 intra_op_threads)
        self.pool = pool
        self.frame_graph = frames.FrameGraph(self.items) \
            if control_flow or frames.has_control_flow(self.items) else None
        self.uses_dataflow = self.frame_graph is not None or (
            any(it.is_async for it in self.items) and not _awaitable_in_line(self.items)) or (
                pool is not None and _independent_expensive_pair(self.items))
        # The dataflow records serve untraced steps that need them and every traced step.
        self.initial_pending = [it.pending for it in self.items]
        self.roots = [it.id for it in self.items if it.pending == 0]
        uses = [0] * self.n_slots
        for it in self.items:
            for s in it.in_slots:
                uses[s] += 1
        self.slot_uses = uses
        self._fn = None
        if self.frame_graph is not None:
            compiled = compiled_frames.compile_partition(self.items, self.frame_graph, name)
            if compiled is not None:
                self._fn, self._line_items, self._filename = compiled
        elif not self.uses_dataflow:
            self._fn, self._line_items = straight_line.generate(
                update_order.straight_line_order(self.items), name)
            self._filename = self._fn.__code__.co_filename

    def run(self, args, rets, step) -> None:
        """Runs one step: reads `args`, writes `rets`; raises the node's OpError on failure."""
        with np.errstate(all="ignore"):
            if self._fn is None or step.stats is not None:
                if self.frame_graph is not None:
                    frames.FrameRun(self, args, rets, step).run()
                else:
                    dataflow.DataflowRun(self, args, rets, step).run()
                return
            try:
                self._fn(args, rets, step)
            except Exception as exc:  # noqa: BLE001 - mapped to the failing node below
                item = self._failing_item(exc)
                if item is None:
                    raise
                raise self.wrap_error(exc, item) from None

    def _failing_item(self, exc):
        tb = exc.__traceback__
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self._filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        return self._line_items.get(line)

    def wrap_error(self, exc, item):
        return node_error(exc, item.node, self.user_graph)
