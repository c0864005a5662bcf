"""Merged straight line: a step's partitions compiled into one Python function, transfers elided.

When every asynchronous node of a cooperative step is a receive linked to a send
(runtime/cooperative.py), an untraced step can run as straight-line code over all partitions
at once: the partitions' NodeItems (kernels already bound to their own devices) are copied
into one slot space, each linked `_Send`/`_Recv` pair disappears — the receive's consumers read
the send's input slot, dereferencing it if the send would have — and the items are emitted in
one topological order of the whole step by the straight-line generator. A transfer then costs
nothing, and a node costs what it costs on one device. A failing line maps back to its node
through the traceback, as in the single-partition executor. `merge` is shared with the parallel
lines (runtime/parallel_lines.py), which schedule the same merged items over several threads.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from tensorweave.runtime.executor import straight_line
from tensorweave.runtime.executor.kernel_errors import node_error
from tensorweave.runtime.executor.node_item import mark_variable_aliases


def mergeable(executors, links) -> bool:
    """True if the only asynchronous nodes are receives linked to a send."""
    linked_recvs = {id(link[1]) for per in links for link in per if link is not None}
    return all(not it.is_async or id(it) in linked_recvs for ex in executors for it in ex.items)


@dataclass
class Merged:
    """A step's items in one slot space and one topological order (`items[i].id == i`), and
    each item's predecessors (data and control, through the elided transfers)."""

    items: list
    preds: list[list[int]]


def _graph(executors, links):
    """(partition, item) of every item, and each one's successors, by global index."""
    gid, flat = {}, []
    for e, ex in enumerate(executors):
        for it in ex.items:
            gid[(e, it.id)] = len(flat)
            flat.append((e, it))
    succ = [[] for _ in flat]
    for g, (e, it) in enumerate(flat):
        succ[g] = [gid[(e, c)] for c in it.consumers]
        link = links[e][it.id]
        if link is not None:
            succ[g].append(gid[(link[0], link[1].id)])
    return flat, succ


def _topological(succ) -> list[int]:
    indeg = [0] * len(succ)
    for targets in succ:
        for t in targets:
            indeg[t] += 1
    ready = [g for g in range(len(succ)) if indeg[g] == 0]
    order = []
    while ready:
        g = ready.pop()
        order.append(g)
        for t in succ[g]:
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
    return order


def merge(executors, links) -> Merged:
    """The partitions' items relocated into one slot space, linked send/receive pairs elided."""
    offsets, total = [], 0
    for ex in executors:
        offsets.append(total)
        total += ex.n_slots
    alias = {}   # receive's output slot -> (send's input slot, deref)
    for e, per in enumerate(links):
        for send_id, link in enumerate(per):
            if link is not None:
                send = executors[e].items[send_id]
                alias[offsets[link[0]] + link[1].out_start] = (
                    offsets[e] + send.in_slots[0], send.deref[0])
    flat, succ = _graph(executors, links)
    via: list[set] = [set() for _ in flat]   # merged predecessors seen through elided items
    items, preds = [], []
    for g in _topological(succ):
        e, item = flat[g]
        if links[e][item.id] is not None or item.node.op == "_Recv":
            for t in succ[g]:
                via[t] |= via[g]
            continue
        merged = copy.copy(item)
        merged.id = len(items)
        merged.out_start = offsets[e] + item.out_start
        slots, deref = [], []
        for s, d in zip(item.in_slots, item.deref):
            s, d = alias.get(offsets[e] + s, (offsets[e] + s, d))
            slots.append(s)
            deref.append(d)
        merged.in_slots, merged.deref = tuple(slots), tuple(deref)
        items.append(merged)
        preds.append(sorted(via[g]))
        for t in succ[g]:
            via[t].add(merged.id)
    mark_variable_aliases(items)
    return Merged(items, preds)


class MergedLine:
    """The compiled function of one cooperative plan; `run(args, rets, step)` runs a step."""

    def __init__(self, executors, links):
        self.user_graph = executors[0].user_graph
        self._fn, self._line_items = straight_line.generate(merge(executors, links).items,
                                                            "merged")
        self._code = self._fn.__code__

    def run(self, args, rets, step) -> None:
        with np.errstate(all="ignore"):
            try:
                self._fn(args, rets, step)
            except Exception as exc:  # noqa: BLE001 - mapped to the failing node below
                item = straight_line.failing_item(exc, self._code, self._line_items)
                if item is None:
                    raise
                raise node_error(exc, item.node, self.user_graph) from None
