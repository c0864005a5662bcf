"""Cooperative run: all partitions of a step on the calling thread, one ready queue over them.

Each partition keeps its own compiled executor (kernels bound to their own device and its
resources); only the scheduling is shared. Every `_Send` is linked once, when the plan is
built, to its `_Recv` in the partition it feeds: running the send writes the value straight
into the receive's slot and readies its consumers, so a transfer costs no rendezvous and no
thread switch, and NumPy's BLAS keeps every core for the matmuls. Asynchronous kernels that
complete from other threads report through a thread-safe queue polled with the step's
deadline. A failing kernel cancels the step and the first error is raised once nothing is
outstanding. Untraced steps whose only asynchronous kernels are linked receives run as one
generated straight-line function instead (runtime/merged_line.py). The session uses this module
unless partitions run at once (runtime/parallel_lines.py: two or more with BLAS work, or the
config asks for it with intra-op threads set; never with one inter-op thread), and never for
partitions with loop frames.
"""
from __future__ import annotations

import queue
import threading
from collections import deque

import numpy as np

from tensorweave.runtime.executor.dataflow import compute, gather_inputs
from tensorweave.runtime.merged_line import MergedLine, mergeable
from tensorweave.runtime.step_stats import now_micros


def link_sends(executors) -> list[list]:
    """Per executor and item id: the (executor index, _Recv item) a `_Send` feeds, else None."""
    recv_of = {it.node.attrs["tensor_name"]: (e, it) for e, ex in enumerate(executors)
               for it in ex.items if it.node.op == "_Recv"}
    links = [[None] * len(ex.items) for ex in executors]
    for e, ex in enumerate(executors):
        for it in ex.items:
            if it.node.op == "_Send" and it.node.attrs["tensor_name"] in recv_of:
                links[e][it.id] = recv_of[it.node.attrs["tensor_name"]]
    return links


class CooperativeSchedule:
    """Built once per plan: each send's receive, and the roots that are not linked receives."""

    def __init__(self, executors):
        self.executors = executors
        self.links = link_sends(executors)
        linked = {(link[0], link[1].id) for per in self.links for link in per
                  if link is not None}
        self.roots = [(e, ex.items[i]) for e, ex in enumerate(executors) for i in ex.roots
                      if (e, i) not in linked]
        self.line = MergedLine(executors, self.links) if mergeable(executors, self.links) \
            else None

    def run(self, args, rets, step) -> None:
        """Untraced steps without other asynchronous kernels run as one straight line."""
        if self.line is not None and step.stats is None:
            self.line.run(args, rets, step)
        else:
            CooperativeRun(self, args, rets, step).run()


class CooperativeRun:
    """One step over several executors; see the module docstring."""

    def __init__(self, schedule, args, rets, step):
        executors = schedule.executors
        self.exs = executors
        self.links = schedule.links
        self.args, self.rets, self.step = args, rets, step
        self.vals = [[None] * ex.n_slots for ex in executors]
        self.pending = [list(ex.initial_pending) for ex in executors]
        self.uses = [list(ex.slot_uses) for ex in executors]
        self.ready = deque(schedule.roots)
        self.completed: deque = deque()          # async completions on this thread
        self.remote: queue.SimpleQueue = queue.SimpleQueue()   # ... and from other threads
        self.owner = threading.get_ident()
        self.outstanding = 0
        self.error = None

    def run(self) -> None:
        links, ready, completed = self.links, self.ready, self.completed
        args, rets, step = self.args, self.rets, self.step
        untraced = step.stats is None
        with np.errstate(all="ignore"):
            while True:
                while (ready or completed) and self.error is None:
                    if completed:
                        self._finish(*completed.popleft())
                        continue
                    e, item = ready.popleft()
                    link = links[e][item.id]
                    if link is not None:
                        self._hand_over(e, item, link)
                    elif item.is_async:
                        self._start_async(e, item)
                    elif untraced:   # _run_inline without the tracing, inline: the hot path
                        try:
                            outputs = compute(item, self._inputs(e, item), args, rets, step)
                        except Exception as exc:  # noqa: BLE001 - fails the step
                            self._fail(e, item, exc)
                            continue
                        self._propagate(e, item, outputs)
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
        inputs = gather_inputs(item, vals)
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

    def _hand_over(self, e, send, link) -> None:
        """A linked _Send: its input becomes the output of the _Recv it feeds."""
        try:
            value = self._inputs(e, send)[0]
        except Exception as exc:  # noqa: BLE001 - an uninitialized variable, say
            self._fail(e, send, exc)
            return
        self._propagate(e, send, ())
        self._propagate(link[0], link[1], (value,))

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
                self.completed.append(self.remote.get(timeout=step.wait_seconds()))
                return
            except queue.Empty:
                step.enforce_deadline()

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
        pending, ready, items = self.pending[e], self.ready, self.exs[e].items
        for c in item.consumers:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append((e, items[c]))
