"""Parallel lines: each partition of a step compiled to straight-line code, all run at once.

Towers (data-parallel replicas, each with its own matmuls) share no work, so one thread running
them one after the other leaves a core to BLAS's own threads, which scale badly on small
matmuls and spin when the machine is busy. Here every partition runs on a thread of its own with
single-threaded BLAS (NumPy and the compiled loops release the GIL), as TensorFlow runs towers on
its inter-op threads. Each partition's items are emitted in the order they take in one
topological order of the whole step — sends as early as possible, receives and in-place
variable updates as late as possible — so no partition waits for a value whose producer comes
after that wait (no deadlock), and a partition works on its own nodes before waiting. A linked
`_Send` puts its value into the step's `Mailbox`; its `_Recv` takes it, waiting if needed. A
received value that may be another device's variable storage is copied by the receiver, so the
owner's in-place update cannot race with its reads (results do not depend on thread timing).
A failing partition cancels the step: waiting receives raise, and the step's first error is
raised once every partition has stopped.
"""
from __future__ import annotations

import copy
import heapq
import threading

import numpy as np

from tensorweave.runtime.executor import straight_line
from tensorweave.runtime.executor.kernel_errors import node_error
from tensorweave.runtime.executor.node_item import _mark_variable_aliases, input_arg_is_ref

_POLL_SECONDS = 0.5
# Order classes: lower runs first among nodes ready at the same time.
_SEND, _COMPUTE, _RECV, _UPDATE = range(4)


class Mailbox:
    """The step's transfers between parallel lines: one slot per linked send (the step's
    rendezvous: `StepState.cancel` calls `start_abort`)."""

    __slots__ = ("_values", "_sent", "_cond", "_error", "_waiting")

    def __init__(self, n: int):
        self._values = [None] * n
        self._sent = [False] * n
        self._cond = threading.Condition(threading.Lock())
        self._error = None
        self._waiting = 0

    def put(self, k: int, value) -> None:
        if self._error is not None:
            raise self._error
        self._values[k] = value
        with self._cond:
            self._sent[k] = True
            if self._waiting:
                self._cond.notify_all()

    def take(self, k: int, step):
        """The value sent to slot k, once it is; raises the step's error if it is aborted."""
        while not self._sent[k]:
            with self._cond:
                if not self._sent[k] and self._error is None:
                    self._waiting += 1
                    self._cond.wait(_POLL_SECONDS)
                    self._waiting -= 1
            if self._error is not None:
                raise self._error
            remaining = step.remaining_seconds()
            if remaining is not None and remaining <= 0:
                step.cancel(step.deadline_error())
        return self._values[k]

    def start_abort(self, error: Exception) -> None:
        with self._cond:
            if self._error is None:
                self._error = error
            self._cond.notify_all()


def _put(k, step, value) -> None:
    step.rendezvous.put(k, value)


def _take(k, step):
    return step.rendezvous.take(k, step)


def _take_copy(k, step):
    return np.array(step.rendezvous.take(k, step), copy=True)


def _order_class(item) -> int:
    op = item.node.op
    if op == "_Send":
        return _SEND
    if op == "_Recv":
        return _RECV
    if any(input_arg_is_ref(item.node, j) for j in range(len(item.in_slots))):
        return _UPDATE
    return _COMPUTE


def _orders(executors, links) -> list[list]:
    """Each partition's items in the order they take in one prioritized topological order of
    the whole step (Kahn's algorithm; ties go to the partition's own order)."""
    recv_source = {}
    for e, per in enumerate(links):
        for send_id, link in enumerate(per):
            if link is not None:
                recv_source[(link[0], link[1].id)] = (e, send_id)
    pending = [[it.pending for it in ex.items] for ex in executors]
    for (e, r), _ in recv_source.items():
        pending[e][r] += 1
    heap = [(_order_class(it), it.id, e) for e, ex in enumerate(executors)
            for it in ex.items if pending[e][it.id] == 0]
    heapq.heapify(heap)
    orders = [[] for _ in executors]
    while heap:
        _, i, e = heapq.heappop(heap)
        item = executors[e].items[i]
        orders[e].append(item)
        targets = [(e, c) for c in item.consumers]
        if links[e][i] is not None:
            targets.append((links[e][i][0], links[e][i][1].id))
        for t, c in targets:
            pending[t][c] -= 1
            if pending[t][c] == 0:
                heapq.heappush(heap, (_order_class(executors[t].items[c]), c, t))
    return orders


class ParallelLines:
    """The compiled functions of one plan; `run(args, rets, step, pool)` runs a step."""

    def __init__(self, executors, links):
        slots = {}   # (executor, item id) of a linked send and of its receive -> mailbox slot
        takes = {}   # (executor, receive id) -> _take, or _take_copy for variable storage
        for e, ex in enumerate(executors):
            aliased = _mark_variable_aliases(ex.items)
            for send_id, link in enumerate(links[e]):
                if link is not None:
                    send, recv = ex.items[send_id], (link[0], link[1].id)
                    slots[(e, send_id)] = slots[recv] = len(takes)
                    takes[recv] = _take_copy if send.deref[0] or send.in_slots[0] in aliased \
                        else _take
        self.n_links = len(takes)
        self.user_graph = executors[0].user_graph
        self._lines = []
        for e, order in enumerate(_orders(executors, links)):
            items = []
            for item in order:
                slot = slots.get((e, item.id))
                if slot is not None:
                    item = copy.copy(item)
                    item.kind, item.ctx, item.needs_step = "kernel", slot, True
                    item.fn = takes.get((e, item.id), _put)
                items.append(item)
            self._lines.append(straight_line.generate(items, f"parallel {e}"))

    def mailbox(self) -> Mailbox:
        return Mailbox(self.n_links)

    def _run_one(self, e, args, rets, step) -> bool:
        """Runs partition e's line; on failure cancels the step and returns True."""
        fn, line_items = self._lines[e]
        try:
            with np.errstate(all="ignore"):
                fn(args, rets, step)
            return False
        except Exception as exc:  # noqa: BLE001 - the step's first error is raised by run
            item = straight_line.failing_item(exc, fn.__code__, line_items)
            step.cancel(exc if item is None else node_error(exc, item.node, self.user_graph))
            return True

    def run(self, args, rets, step, pool) -> None:
        """Partition 0 on the calling thread, every other on a pool thread; raises the step's
        first error (a failing node's, the deadline's or a cancellation) after all stopped."""
        futures = [pool.submit(self._run_one, e, args, rets, step)
                   for e in range(1, len(self._lines))]
        failed = self._run_one(0, args, rets, step)
        for f in futures:
            failed = f.result() or failed
        if failed:
            raise step.error
