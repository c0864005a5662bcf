"""Partial runs: one step fed and fetched over several calls (TF1's Session.partial_run).

`Session.partial_run_setup` starts the step; each `Session.partial_run` feeds and fetches part.

The step's plan is the run plan of all its feeds, fetches and targets with the call frame
swapped for the step's rendezvous, as TensorFlow's DirectSession does it: each feed is a
`_Recv` and each fetch a `_Send`, client-terminated, keyed by the tensor's name
(`client_terminated`). Setup starts the step on a thread of its own, and its nodes run as their
inputs arrive (targets too, once). `partial_run` sends the values it is given and waits for the
fetches it names; a fetch that needs a feed not fed yet fails at once rather than wait. Once
every feed is fed and every fetch fetched, it waits for the step to end and forgets it.
"""
from __future__ import annotations

import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.op_def import get_op_def
from tensorweave.runtime.executor.values import VariableRef, deref
from tensorweave.runtime.rendezvous import LocalRendezvous, create_key

# The two ends of a partial run's transfers: names in its rendezvous keys, not devices.
CLIENT, STEP = "client", "step"


def feed_key(name: str) -> str:
    return create_key(CLIENT, 1, STEP, name)


def fetch_key(name: str) -> str:
    return create_key(STEP, 1, CLIENT, name)


def client_terminated(graph, feeds, fetches) -> None:
    """Turns a run plan's call frame into the client's end of the rendezvous, in place: the
    `_Arg` of feed i becomes a `_Recv` of `feed_key`, the `_Retval` of fetch i a `_Send` to
    `fetch_key` (their attrs TensorFlow's, client_terminated set)."""
    for node in graph:
        if node.op == "_Arg":
            name, dtype = feeds[node.attrs["index"]].name, node.attrs["T"]
            _become(node, "_Recv", name, CLIENT, STEP, {"tensor_type": dtype})
        elif node.op == "_Retval":
            name, dtype = fetches[node.attrs["index"]].name, node.attrs["T"]
            _become(node, "_Send", name, STEP, CLIENT, {"T": dtype})


def _become(node, op: str, tensor_name: str, src: str, dst: str, type_attr: dict) -> None:
    node.op, node.op_def = op, get_op_def(op)
    node.attrs = {"tensor_name": tensor_name, "send_device": src, "send_device_incarnation": 1,
                  "recv_device": dst, "client_terminated": True, **type_attr}


class PartialRun:
    """One partial run's step: its plan, rendezvous, running thread, and what is left to
    feed and to fetch (tensors by name)."""

    def __init__(self, handle: str, plan, feeds, fetches):
        self.handle = handle
        self.plan = plan
        self.feeds = {t.name: t for t in feeds}
        self.fetches = {t.name: t for t in fetches}
        self.specs = dict(zip(self.feeds, plan.feed_specs))
        self.fed: set[str] = set()
        self.fetched: set[str] = set()
        self.rendezvous = LocalRendezvous()
        self.error: Exception | None = None
        self.thread: threading.Thread | None = None

    def start(self, run_step) -> None:
        """Runs `run_step(rendezvous)` (the whole step) on a daemon thread; a failure aborts
        the rendezvous with its error, so a waiting fetch raises it."""
        def body():
            try:
                run_step(self.rendezvous)
            except Exception as e:   # reported by the partial_run that waits on it
                self.error = e
                self.rendezvous.start_abort(e)
        self.thread = threading.Thread(target=body, name=f"tw-partial-run-{self.handle}",
                                       daemon=True)
        self.thread.start()

    def check(self, feed_names, fetch_names) -> None:
        """TensorFlow's checks of one partial_run call, in its order and words."""
        for name in feed_names:
            if name not in self.feeds:
                raise errors.InvalidArgumentError(
                    None, None, f"The feed {name} was not specified in partial_run_setup.")
            if name in self.fed:
                raise errors.InvalidArgumentError(None, None,
                                                  f"The feed {name} has already been fed.")
        for name in fetch_names:
            if name not in self.fetches:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {name} was not specified in partial_run_setup.")
            if name in self.fetched:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {name} has already been fetched.")
        available = self.fed | set(feed_names)
        for name in fetch_names:
            self._check_computable(self.fetches[name], available)

    def _check_computable(self, tensor, available: set) -> None:
        """InvalidArgumentError if `tensor` depends on a feed of this run not fed by now."""
        if tensor.name in available:
            return
        seen, stack = set(), [tensor.op]
        while stack:
            op = stack.pop()
            if op.name in seen:
                continue
            seen.add(op.name)
            for t in op.inputs:
                if t.name in available:
                    continue
                if t.name in self.feeds:
                    raise errors.InvalidArgumentError(
                        None, None, f"Fetch {t.name} can't be computed from the feeds that "
                        "have been fed so far.")
                stack.append(t.op)
            stack.extend(op.control_inputs)

    def feed(self, name: str, value) -> None:
        self.rendezvous.send(feed_key(name), self.specs[name].convert(value))
        self.fed.add(name)

    def fetch(self, name: str):
        """The fetch's value, a copy of its own: the step may still be running, and a fetch
        of a variable's storage would see its later updates."""
        value, _ = self.rendezvous.recv(fetch_key(name))
        self.fetched.add(name)
        if isinstance(value, VariableRef):
            value = deref(value)
        return np.array(value, copy=True) if isinstance(value, np.ndarray) else value

    def done(self) -> bool:
        """Whether every feed has been fed and every fetch fetched."""
        return len(self.fed) == len(self.feeds) and len(self.fetched) == len(self.fetches)

    def finish(self) -> None:
        """Waits for the step to end; raises its error if it failed."""
        self.thread.join()
        if self.error is not None:
            raise self.error


def make_handle(feeds, fetches, targets, serial: int) -> str:
    """TensorFlow's handle string, `feeds->fetches/targets/1/;serial` with the names sorted
    (the session's serial number of the partial run makes it unique)."""
    def names(items):
        return ",".join(sorted(x.name for x in items))
    return f"{names(feeds)}->{names(fetches)}/{names(targets)}/1/;{serial}"
