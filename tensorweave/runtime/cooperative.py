"""Cooperative run: all partitions of a step on the calling thread, one ready queue over them.

Each partition keeps its own compiled executor (kernels bound to their own device and its
resources); only the scheduling is shared. A `_Send` completes its `_Recv` on the same thread,
so a transfer costs a dictionary hand-off instead of a thread switch, and NumPy's BLAS keeps
every core for the matmuls. Receives that complete from elsewhere (none in a local step, but
asynchronous kernels may) arrive through a thread-safe queue polled with the step's deadline. A
failing kernel cancels the step (aborting its rendezvous) and the first error is raised once
nothing is outstanding. The session uses it unless the config asks for parallel partitions
(intra-op threads set and inter-op threads > 1), and never for partitions with loop frames.
"""
from __future__ import annotations

import queue
import threading
from collections import deque

import numpy as np

from tensorweave.runtime.executor.dataflow import _gather_inputs, compute
from tensorweave.runtime.step_stats import now_micros

_POLL_SECONDS = 0.5


class CooperativeRun:
    """One step over several executors; see the module docstring."""

    def __init__(self, executors, args, rets, step):
        self.exs = executors
        self.args, self.rets, self.step = args, rets, step
        self.vals = [[None] * ex.n_slots for ex in executors]
        self.pending = [list(ex.initial_pending) for ex in executors]
        self.uses = [list(ex.slot_uses) for ex in executors]
        self.ready = deque((e, i) for e, ex in enumerate(executors) for i in ex.roots)
        self.completed: deque = deque()          # async completions on this thread
        self.remote: queue.SimpleQueue = queue.SimpleQueue()   # ... and from other threads
        self.owner = threading.get_ident()
        self.outstanding = 0
        self.error = None

    def run(self) -> None:
        exs, ready, completed = self.exs, self.ready, self.completed
        with np.errstate(all="ignore"):
            while True:
                while (ready or completed) and self.error is None:
                    if completed:
                        self._finish(*completed.popleft())
                        continue
                    e, i = ready.popleft()
                    item = exs[e].items[i]
                    if item.is_async:
                        self._start_async(e, item)
                    else:
                        self._run_inline(e, item)
                while completed:   # after an error: settle what already arrived
                    self._finish(*completed.popleft())
                if self.outstanding == 0:
                    break
                self._wait_remote()
        if self.error is not None:
            raise self.error

    def _inputs(self, e, item):
        vals, uses = self.vals[e], self.uses[e]
        inputs = _gather_inputs(item, vals)
        for s in item.in_slots:
            uses[s] -= 1
            if uses[s] == 0:
                vals[s] = None
        return inputs

    def _run_inline(self, e, item) -> None:
        stats = self.step.stats
        start = now_micros() if stats is not None else 0
        try:
            outputs = compute(item, self._inputs(e, item), self.args, self.rets, self.step)
        except Exception as exc:  # noqa: BLE001 - any kernel failure fails the step
            self._fail(e, item, exc)
            return
        if stats is not None:
            stats.record(item.node, self.exs[e].device.name, start, now_micros(), outputs)
        self._propagate(e, item, outputs)

    def _start_async(self, e, item) -> None:
        try:
            inputs = self._inputs(e, item)
        except Exception as exc:  # noqa: BLE001
            self._fail(e, item, exc)
            return
        self.outstanding += 1
        stats = self.step.stats
        start = now_micros() if stats is not None else 0
        owner, completed, remote = self.owner, self.completed, self.remote

        def callback(outputs=None, error=None):
            if error is None:
                outputs = (outputs,) if item.num_outputs == 1 else tuple(outputs or ())
                if stats is not None:
                    stats.record(item.node, self.exs[e].device.name, start, now_micros(),
                                 outputs)
            entry = (e, item, outputs, error)
            if threading.get_ident() == owner:
                completed.append(entry)
            else:
                remote.put(entry)
        try:
            item.fn(item.ctx, self.step, inputs, callback)
        except Exception as exc:  # noqa: BLE001
            callback(error=exc)

    def _wait_remote(self) -> None:
        step = self.step
        while True:
            try:
                self.completed.append(self.remote.get(timeout=_POLL_SECONDS))
                return
            except queue.Empty:
                remaining = step.remaining_seconds()
                if remaining is not None and remaining <= 0 and not step.cancelled:
                    step.cancel(step.deadline_error())

    def _finish(self, e, item, outputs, error) -> None:
        self.outstanding -= 1
        if error is not None:
            self._fail(e, item, error)
        elif self.error is None:
            self._propagate(e, item, outputs)

    def _fail(self, e, item, exc) -> None:
        if self.error is None:
            self.error = self.exs[e].wrap_error(exc, item)
            self.step.cancel(self.error)

    def _propagate(self, e, item, outputs) -> None:
        vals = self.vals[e]
        base = item.out_start
        for k, value in enumerate(outputs):
            vals[base + k] = value
        pending, ready = self.pending[e], self.ready
        for c in item.consumers:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append((e, c))
