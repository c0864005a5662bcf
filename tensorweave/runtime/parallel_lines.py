"""Parallel lines: a step's nodes scheduled over a few threads, each thread's share compiled to
straight-line code.

Towers (data-parallel replicas, each with its own matmuls) share no work, so one thread running
them one after the other leaves a core to BLAS's own threads, which scale badly on small
matmuls and spin when the machine is busy. Virtual CPU devices share one process's memory and
cores, and TensorFlow runs any CPU device's kernels on any thread of its inter-op pool; here
the step's partitions are merged (`merged_line.merge`: one slot space, linked transfers
elided) and their nodes list-scheduled over the threads by estimated time
(`cost_model.estimate_us`): longest remaining path first, each node on the thread where it
finishes earliest, a value crossing threads costing a hand-off. The averaging and updates of
the towers' variables then split over the threads instead of waiting for one. Each thread's
nodes run in scheduled order as one generated function, with single-threaded BLAS (NumPy and
the compiled loops release the GIL); a value needed on another thread is put into the step's
`Mailbox` after its producer and taken before its first reader there. Every line follows one
topological order of the step (scheduled start, then a topological order with the update
edges below), so no thread waits for a value whose producer comes after that wait: no
deadlock.

An in-place variable update is ordered after every read of that variable's storage it is not
upstream of, and after earlier updates of it, so reads see the step's starting values and
results do not depend on thread timing. Feeds, constants, variables and views of them are
bound on every thread that reads them. A failing line cancels the step: waiting takes raise,
and the step's first error is raised once every line has stopped.
"""
from __future__ import annotations

import copy
import threading

import numpy as np

from tensorweave.runtime import cost_model
from tensorweave.runtime.executor import straight_line, update_order
from tensorweave.runtime.executor.kernel_errors import node_error
from tensorweave.runtime.merged_line import merge

# What the schedule charges a value for crossing threads: a put, a waiting thread's wake-up
# (tens of µs on a busy machine), a take.
_HANDOFF_US = 40.0
_VARIABLES = frozenset({"VariableV2", "Variable", "TemporaryVariable"})
# Items that cost nothing and change nothing, every line binds its own rather than receive
# them from another thread: feeds, constants, variables, and views (Identity reads, Split,
# Reshape, ...) of items bound anywhere.
_BOUND_ANYWHERE = frozenset({"_Arg", "Const"})


class Mailbox:
    """The step's values crossing threads: one slot per producer read on another thread (the
    step's rendezvous: `StepState.cancel` calls `start_abort`)."""

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
                    self._cond.wait(step.wait_seconds())
                    self._waiting -= 1
            if self._error is not None:
                raise self._error
            step.enforce_deadline()
        return self._values[k]

    def start_abort(self, error: Exception) -> None:
        with self._cond:
            if self._error is None:
                self._error = error
            self._cond.notify_all()


def _put(k, step, *outputs) -> None:
    step.rendezvous.put(k, outputs[0] if len(outputs) == 1 else outputs)


def _take(k, step):
    return step.rendezvous.take(k, step)


def _bound_anywhere(items, preds) -> list[bool]:
    anywhere = []
    for it, ps in zip(items, preds):
        node = it.node
        free = node.op in _VARIABLES or it.returns_view and not node.op_def.is_stateful
        anywhere.append(node.op in _BOUND_ANYWHERE or free and all(anywhere[p] for p in ps))
    return anywhere


def _schedule(items, preds, order, threads: int) -> tuple[list[int], list[tuple]]:
    """Each item's thread (-1: bound on every thread that reads it) and its sort key in the
    lines, (scheduled start, position in `order`); `order` is a topological order of the
    items with their update edges."""
    n = len(items)
    anywhere = _bound_anywhere(items, preds)
    cost = [0.0 if anywhere[i] or it.kind == "_Retval" else cost_model.estimate_us(it.node)
            for i, it in enumerate(items)]
    succ = update_order.successors(preds)
    rank = [0.0] * n
    for i in reversed(order):
        rank[i] = cost[i] + max((rank[s] for s in succ[i]), default=0.0)
    position = {i: k for k, i in enumerate(order)}
    thread = [-1] * n
    start, finish, free = [0.0] * n, [0.0] * n, [0.0] * threads
    for i in sorted(range(n), key=lambda i: (-rank[i], position[i])):
        if anywhere[i]:
            continue
        best = None
        for t in range(threads):
            ready = max((finish[p] + (_HANDOFF_US if thread[p] not in (t, -1) else 0.0)
                         for p in preds[i]), default=0.0)
            begin = max(ready, free[t])
            if best is None or begin + cost[i] < best[0]:
                best = (begin + cost[i], begin, t)
        finish[i], start[i], thread[i] = best
        free[thread[i]] = finish[i]
    # (start, position) order is topological: a node starts no earlier than its inputs
    # finish, and ties are zero-cost nodes in `order`'s sequence.
    return thread, [(start[i], position[i]) for i in range(n)]


def _transfer(producer, fn, slot: int, put: bool):
    """A copy of `producer` that puts its outputs into mailbox `slot`, or takes them from it."""
    item = copy.copy(producer)
    item.kind, item.fn, item.ctx, item.needs_step = "kernel", fn, slot, True
    if put:
        item.in_slots = tuple(range(producer.out_start, producer.out_start + producer.num_outputs))
        item.deref, item.num_outputs = (False,) * producer.num_outputs, 0
    else:
        item.in_slots, item.deref = (), ()
    return item


def _bind_inputs(i, t, items, preds, thread, slot_of, line, bound) -> None:
    """Appends to thread t's line what item i needs from elsewhere: the items bound anywhere
    (with their own inputs first) and takes of values produced on other threads."""
    for p in sorted(set(preds[i])):
        if p in bound or thread[p] == t:
            continue
        bound.add(p)
        if thread[p] == -1:
            _bind_inputs(p, t, items, preds, thread, slot_of, line, bound)
            line.append(items[p])
        else:
            line.append(_transfer(items[p], _take, slot_of[p], put=False))


def _lines(items, preds, thread, key, threads: int) -> tuple[list[list], int]:
    """Each thread's items in order, with the puts and takes between threads; mailbox size."""
    slot_of: dict[int, int] = {}
    for i, ps in enumerate(preds):
        for p in ps:
            if thread[p] not in (thread[i], -1) and p not in slot_of:
                slot_of[p] = len(slot_of)
    lines = [[] for _ in range(threads)]
    bound: list[set] = [set() for _ in range(threads)]   # replicated or taken on each thread
    for i in sorted(range(len(items)), key=key.__getitem__):
        t = thread[i]
        if t < 0:
            continue
        _bind_inputs(i, t, items, preds, thread, slot_of, lines[t], bound[t])
        lines[t].append(items[i])
        if i in slot_of:
            lines[t].append(_transfer(items[i], _put, slot_of[i], put=True))
    for line in lines:
        for k, item in enumerate(line):
            line[k] = item = copy.copy(item)
            item.id = k
    return lines, len(slot_of)


def schedule(executors, links, threads: int) -> ParallelLines | None:
    """The plan's parallel lines over `threads` threads, or None when ordering its variable
    updates after their reads would close a cycle."""
    merged = merge(executors, links)
    items, preds = merged.items, [list(ps) for ps in merged.preds]
    order = update_order.order_updates(items, preds)
    if order is None:
        return None
    thread, key = _schedule(items, preds, order, threads)
    lines, n_links = _lines(items, preds, thread, key, threads)
    return ParallelLines([straight_line.generate(line, f"parallel {t}")
                          for t, line in enumerate(lines) if line],
                         n_links, executors[0].user_graph)


class ParallelLines:
    """The compiled lines of one plan; `run(args, rets, step, pool)` runs a step."""

    def __init__(self, lines, n_links: int, user_graph):
        self._lines = lines       # (function, line number -> item) of each non-empty line
        self.n_links = n_links
        self.user_graph = user_graph

    def mailbox(self) -> Mailbox:
        return Mailbox(self.n_links)

    def _run_one(self, e, args, rets, step) -> bool:
        """Runs line e; on failure cancels the step and returns True."""
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
        """Line 0 on the calling thread, every other on a pool thread; raises the step's first
        error (a failing node's, the deadline's or a cancellation) after all stopped."""
        futures = [pool.submit(self._run_one, e, args, rets, step)
                   for e in range(1, len(self._lines))]
        failed = self._run_one(0, args, rets, step)
        for f in futures:
            failed = f.result() or failed
        if failed:
            raise step.error
