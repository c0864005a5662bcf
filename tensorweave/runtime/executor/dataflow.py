"""Dataflow executor: a ready queue over NodeItems, expensive and asynchronous kernels overlap.

The calling thread owns all bookkeeping (pending counts, value slots, the ready queue), so no
locks guard them; it runs cheap kernels inline, hands expensive ones to the inter-op pool and
starts asynchronous ones, and all of those report back through one completion queue. A failing
kernel cancels the step (aborting its rendezvous and every waiter) and the first error is
raised once nothing is outstanding. Values are released when their last consumer has read them.
"""
from __future__ import annotations

import queue
from collections import deque

import numpy as np

from tensorweave.runtime.executor import values
from tensorweave.runtime.step_stats import now_micros


def gather_inputs(item, vals):
    """A node's input values from `vals` by its input slots, dereferenced where it reads refs."""
    if True in item.deref and item.kind != "_Retval":   # a fetch derefs when the step ends
        return [values.deref(vals[s]) if d else vals[s] for s, d in zip(item.in_slots, item.deref)]
    return [vals[s] for s in item.in_slots]


def compute(item, inputs, args, rets, step) -> tuple:
    """Runs one synchronous node; returns its outputs as a tuple."""
    kind = item.kind
    if kind == "_Arg":
        return (args[item.index],)
    if kind == "Const":
        return (item.const_value,)
    if kind == "_Retval":
        rets[item.index] = inputs[0]   # a storage fetch: copied when the step ends
        return ()
    if kind == "pure":
        out = item.fn(*inputs)
    elif item.needs_step:
        out = item.fn(item.ctx, step, *inputs)
    else:
        out = item.fn(item.ctx, *inputs)
    n = item.num_outputs
    if n == 1:
        return (out,)
    if n == 0:
        return ()
    return tuple(out)


def submit_pooled(pool, item, inputs, args, rets, step, device_name, report) -> None:
    """Runs a synchronous kernel on the inter-op pool; the worker calls report(outputs, error)."""
    def work():
        try:
            start = now_micros()
            with np.errstate(all="ignore"):  # error state is per thread
                outputs = compute(item, inputs, args, rets, step)
            if step.stats is not None:
                step.stats.record(item.node, device_name, start, now_micros(), outputs)
            report(outputs, None)
        except BaseException as exc:  # noqa: BLE001 - reported to the owner thread
            report(None, exc)
    pool.submit(work)


def start_async(item, step, inputs, report, fn=None) -> None:
    """Starts an asynchronous kernel (or `fn` in its place, with its arguments); it calls
    report(outputs tuple, error) when done."""
    def callback(outputs=None, error=None):
        if error is None and item.num_outputs == 1:
            outputs = (outputs,)
        report(tuple(outputs) if error is None and outputs is not None else (), error)
    try:
        (fn or item.fn)(item.ctx, step, inputs, callback)
    except Exception as exc:  # noqa: BLE001
        callback(error=exc)


def wait_for(done: queue.SimpleQueue, step):
    """The next completion report; cancels the step when its deadline passes meanwhile."""
    while True:
        try:
            return done.get(timeout=step.wait_seconds())
        except queue.Empty:
            step.enforce_deadline()


def fail_step(step, executor, item, exc):
    """Cancels the step with the error of `item`'s failure and returns that error; a
    cancellation caused by an earlier failure reports that earlier (root) error instead."""
    error = executor.wrap_error(step.root_error(exc), item)
    step.cancel(error)
    return error


class DataflowRun:
    """One step of one partition under the dataflow executor."""

    def __init__(self, executor, args, rets, step):
        self.ex = executor
        self.args, self.rets, self.step = args, rets, step
        self.vals = [None] * executor.n_slots
        self.pending = list(executor.initial_pending)
        self.uses = list(executor.slot_uses)
        self.ready = deque(executor.roots)
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self.outstanding = 0
        self.error = None

    def run(self) -> None:
        items = self.ex.items
        while True:
            while self.ready and self.error is None:
                item = items[self.ready.popleft()]
                if item.is_async:
                    self._start_async(item)
                elif item.expensive:
                    self._start_pooled(item)
                else:
                    self._run_inline(item)
            if self.outstanding == 0:
                break
            self._wait_one()
        if self.error is not None:
            raise self.error

    def _inputs(self, item):
        vals, uses = self.vals, self.uses
        inputs = gather_inputs(item, vals)
        for s in item.in_slots:
            uses[s] -= 1
            if uses[s] == 0:
                vals[s] = None
        return inputs

    def _run_inline(self, item) -> None:
        stats = self.step.stats
        start = now_micros() if stats is not None else 0
        try:
            outputs = compute(item, self._inputs(item), self.args, self.rets, self.step)
        except Exception as exc:  # noqa: BLE001 - any kernel failure fails the step
            self._fail(item, exc)
            return
        if stats is not None:
            stats.record(item.node, self.ex.device.name, start, now_micros(), outputs)
        self._propagate(item, outputs)

    def _start_pooled(self, item) -> None:
        try:
            inputs = self._inputs(item)
        except Exception as exc:  # noqa: BLE001
            self._fail(item, exc)
            return
        self.outstanding += 1
        done = self.done
        submit_pooled(self.ex.pool, item, inputs, self.args, self.rets, self.step,
                      self.ex.device.name, lambda outputs, exc: done.put((item, outputs, exc)))

    def _start_async(self, item) -> None:
        try:
            inputs = self._inputs(item)
        except Exception as exc:  # noqa: BLE001
            self._fail(item, exc)
            return
        self.outstanding += 1
        done = self.done
        start_async(item, self.step, inputs, lambda outputs, exc: done.put((item, outputs, exc)))

    def _wait_one(self) -> None:
        item, outputs, exc = wait_for(self.done, self.step)
        self.outstanding -= 1
        if exc is not None:
            self._fail(item, exc)
        elif self.error is None:
            self._propagate(item, outputs)

    def _fail(self, item, exc) -> None:
        if self.error is None:
            self.error = fail_step(self.step, self.ex, item, exc)

    def _propagate(self, item, outputs) -> None:
        vals = self.vals
        base = item.out_start
        for k, value in enumerate(outputs):
            vals[base + k] = value
        pending, ready = self.pending, self.ready
        for c in item.consumers:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)
