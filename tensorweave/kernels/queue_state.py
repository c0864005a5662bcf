"""Queue resources: FIFO, random-shuffle, padding and priority queues with asynchronous waiters.

A queue lives in a device's ResourceMgr. Enqueue and dequeue never hold a thread: an attempt
that cannot finish at once is parked with its `done` callback and makes progress whenever the
queue changes (enqueue, dequeue, close). Cancelling its step (Session.close, a deadline, another
node's failure) removes it and fails it with CancelledError. An element is a (chunk, row) pair:
row `row` of every component array of `chunk`, a private copy made at enqueue, so no step's
buffers are shared and a batch of consecutive rows leaves as slices, not a stack of rows.
Callbacks run outside the queue's lock.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque

import numpy as np

from tensorweave.framework import errors

_log = logging.getLogger("tensorweave")

STARVED_WARNING_SECONDS = 5.0
_ENQUEUE_CANCELLED = "Enqueue operation was cancelled"
_DEQUEUE_CANCELLED = "Dequeue operation was cancelled"


class Attempt:
    """One parked enqueue (elements to put) or dequeue (n to take) with its callback."""

    __slots__ = ("elements", "n", "taken", "allow_smaller", "single", "done", "step", "token",
                 "since")

    def __init__(self, done, step, elements=None, n=0, allow_smaller=False, single=False):
        self.elements = deque(elements) if elements is not None else None
        self.n = n
        self.taken: list = []
        self.allow_smaller = allow_smaller
        self.single = single
        self.done = done
        self.step = step
        self.token = None
        self.since = 0.0


class QueueResource:
    """A bounded FIFO queue of tuples; subclasses change the storage order and batching."""

    kind = "FIFOQueue"

    def __init__(self, name: str, dtypes, shapes, capacity: int, on_starved=None):
        self.name = name
        self.dtypes = list(dtypes)
        self.shapes = list(shapes)   # TensorShapes, or [] when the queue has no fixed shapes
        self.capacity = capacity if capacity >= 0 else None
        self.on_starved = on_starved  # called once if a dequeue stays blocked a long time
        self._lock = threading.Lock()
        self._closed = False
        self._enqueues: deque[Attempt] = deque()
        self._dequeues: deque[Attempt] = deque()
        self._timer = None
        self._init_storage()

    # --- storage (overridden by subclasses) ---------------------------------------------------
    def _init_storage(self) -> None:
        self._items: deque = deque()

    def _size(self) -> int:
        return len(self._items)

    def _put_many(self, elements) -> None:
        self._items.extend(elements)

    def _available(self) -> int:
        """How many elements a dequeue may take now."""
        return len(self._items)

    def _take_many(self, k: int) -> list:
        popleft = self._items.popleft
        return [popleft() for _ in range(k)]

    def _put_back(self, elements) -> None:
        self._items.extendleft(reversed(elements))

    def _batch(self, elements) -> list:
        """Stacks elements per component, slicing runs of consecutive rows of one chunk."""
        if not elements:
            return [np.zeros((0,) + self._component_dims(k), dtype.as_numpy_dtype)
                    for k, dtype in enumerate(self.dtypes)]
        runs = _runs(elements)
        if len(runs) * 4 > len(elements):   # mostly scattered rows: gather them one by one
            return [np.stack([chunk[k][i] for chunk, i in elements])
                    for k in range(len(self.dtypes))]
        if len(runs) == 1:
            chunk, start, stop = runs[0]
            return [c[start:stop] for c in chunk]
        return [np.concatenate([chunk[k][start:stop] for chunk, start, stop in runs])
                for k in range(len(self.dtypes))]

    def _component_dims(self, k) -> tuple:
        if not self.shapes or not self.shapes[k].is_fully_defined():
            return ()
        return tuple(self.shapes[k].as_list())

    # --- the kernels' interface ---------------------------------------------------------------
    def size(self) -> int:
        with self._lock:
            return self._size()

    def is_closed(self) -> bool:
        return self._closed

    def enqueue(self, elements, step, done) -> None:
        """Puts `elements` (tuples of arrays) in order; `done(())` once all are in."""
        if self._closed:
            done(error=errors.CancelledError(None, None, f"{self.kind} '{self.name}' is "
                                             "closed."))
            return
        self._park(Attempt(done, step, elements=elements), self._enqueues, _ENQUEUE_CANCELLED)

    def dequeue(self, n: int | None, step, done, allow_smaller: bool = False) -> None:
        """Takes one element (n None) or a batch of n; `done(components)` when available."""
        self._park(Attempt(done, step, n=1 if n is None else n, allow_smaller=allow_smaller,
                            single=n is None), self._dequeues, _DEQUEUE_CANCELLED)

    def close(self, cancel_pending_enqueues: bool = False) -> None:
        """Closes the queue: no new enqueues; dequeues drain it, then fail with OutOfRange."""
        with self._lock:
            self._closed = True
            finished = []
            if cancel_pending_enqueues:
                while self._enqueues:
                    attempt = self._enqueues.popleft()
                    finished.append((attempt, None, errors.CancelledError(
                        None, None, _ENQUEUE_CANCELLED)))
            finished.extend(self._flush())
        complete(finished)

    def close_resource(self) -> None:
        """The session is going away: fail every parked attempt."""
        with self._lock:
            self._closed = True
            finished = [(a, None, errors.CancelledError(None, None, msg))
                        for waiters, msg in ((self._enqueues, _ENQUEUE_CANCELLED),
                                             (self._dequeues, _DEQUEUE_CANCELLED))
                        for a in waiters]
            self._enqueues.clear()
            self._dequeues.clear()
        complete(finished)

    # --- waiting --------------------------------------------------------------------------
    def _park(self, attempt, waiters, message) -> None:
        """Queues the attempt, lets every waiter progress, and arms cancellation if it waits."""
        with self._lock:
            waiters.append(attempt)
            finished = self._flush()
            if attempt in waiters:
                attempt.token = attempt.step.register_cancellation(
                    lambda error: self._cancel(attempt, waiters, message))
                if attempt.token is None:   # the step was already cancelled
                    waiters.remove(attempt)
                    finished.append((attempt, None, errors.CancelledError(None, None, message)))
                elif waiters is self._dequeues:
                    attempt.since = time.monotonic()
                    self._arm_starved_timer()
        complete(finished)

    def _cancel(self, attempt, waiters, message) -> None:
        with self._lock:
            if attempt not in waiters:
                return  # it finished first
            waiters.remove(attempt)
            if attempt.taken:
                self._put_back(attempt.taken)
            finished = [(attempt, None, errors.CancelledError(None, None, message))]
            finished.extend(self._flush())   # a removed head may unblock the next waiter
        complete(finished)

    def _flush(self) -> list:
        """Moves elements for parked attempts in arrival order; returns those that finished."""
        finished = []
        capacity = self.capacity
        progress = True
        while progress:
            progress = False
            while self._enqueues:
                attempt = self._enqueues[0]
                pending = attempt.elements
                room = len(pending) if capacity is None else \
                    min(len(pending), capacity - self._size())
                if room > 0:
                    self._put_many([pending.popleft() for _ in range(room)])
                    progress = True
                if pending:
                    break
                self._enqueues.popleft()
                finished.append((attempt, (), None))
            while self._dequeues:
                attempt = self._dequeues[0]
                taken = attempt.taken
                k = min(attempt.n - len(taken), self._available())
                if k > 0:
                    taken.extend(self._take_many(k))
                    progress = True
                if len(taken) < attempt.n and not self._closed:
                    break
                self._dequeues.popleft()
                finished.append(self._finish_dequeue(attempt))
        return finished

    def _finish_dequeue(self, attempt):
        taken = attempt.taken
        if len(taken) == attempt.n or (attempt.allow_smaller and taken):
            if attempt.single:
                chunk, i = taken[0]
                return attempt, [c[i] for c in chunk], None
            return attempt, self._batch(taken), None
        self._put_back(taken)
        return attempt, None, errors.OutOfRangeError(
            None, None, f"{self.kind} '{self.name}' is closed and has insufficient elements "
            f"(requested {attempt.n}, current size {self._size()})")

    # --- starvation warning ---------------------------------------------------------------
    def _arm_starved_timer(self) -> None:
        if self.on_starved is None or self._timer is not None:
            return
        self._timer = threading.Timer(STARVED_WARNING_SECONDS, self._check_starved)
        self._timer.daemon = True
        self._timer.start()

    def _check_starved(self) -> None:
        with self._lock:
            self._timer = None
            if not self._dequeues:
                return
            waited = time.monotonic() - self._dequeues[0].since
            if waited < STARVED_WARNING_SECONDS:
                self._arm_starved_timer()
                return
            warn, self.on_starved = self.on_starved, None   # once per queue
        warn(waited)


class RandomShuffleQueueResource(QueueResource):
    """Dequeues a uniformly random element, keeping min_after_dequeue until closed."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, dtypes, shapes, capacity, min_after_dequeue, rng, on_starved=None):
        self.min_after_dequeue = min_after_dequeue
        self.rng = rng
        super().__init__(name, dtypes, shapes, capacity, on_starved)

    def _init_storage(self) -> None:
        self._items: list = []

    def _available(self) -> int:
        return max(0, len(self._items) - (0 if self._closed else self.min_after_dequeue))

    def _take_many(self, k: int) -> list:
        items = self._items
        out = []
        for j in self.rng.random(k):   # swap a uniformly chosen element to the end, pop it
            i = int(j * len(items))
            items[i], items[-1] = items[-1], items[i]
            out.append(items.pop())
        return out

    def _put_back(self, elements) -> None:
        self._items.extend(elements)


class PaddingFIFOQueueResource(QueueResource):
    """A FIFO queue whose batches pad unknown dimensions to the batch maximum (0 or b"")."""

    kind = "PaddingFIFOQueue"

    def _batch(self, elements) -> list:
        out = []
        for k, dtype in enumerate(self.dtypes):
            parts = [chunk[k][i] for chunk, i in elements]
            dims = tuple(max(p.shape[i] for p in parts) for i in range(parts[0].ndim)) \
                if parts else self._component_dims(k)
            np_dtype = dtype.as_numpy_dtype
            batch = np.full((len(parts),) + dims, b"" if np.dtype(np_dtype) == object else 0,
                            np_dtype)
            for i, p in enumerate(parts):
                batch[(i,) + tuple(slice(0, d) for d in p.shape)] = p
            out.append(batch)
        return out


class PriorityQueueResource(QueueResource):
    """Dequeues the element with the smallest int64 priority (component 0) first."""

    kind = "PriorityQueue"

    def _init_storage(self) -> None:
        self._items: list = []
        self._order = itertools.count()   # ties leave in arrival order

    def _put_many(self, elements) -> None:
        for e in elements:
            heapq.heappush(self._items, (int(e[0][0][e[1]]), next(self._order), e))

    def _take_many(self, k: int) -> list:
        return [heapq.heappop(self._items)[2] for _ in range(k)]

    def _put_back(self, elements) -> None:
        self._put_many(elements)


def _runs(elements) -> list:
    """(chunk, start, stop) for each run of consecutive rows of one chunk, in order."""
    runs = []
    chunk, start = elements[0]
    stop = start + 1
    for c, i in elements[1:]:
        if c is chunk and i == stop:
            stop += 1
        else:
            runs.append((chunk, start, stop))
            chunk, start, stop = c, i, i + 1
    runs.append((chunk, start, stop))
    return runs


def complete(finished) -> None:
    """Runs callbacks of finished attempts (outside any queue lock)."""
    for attempt, outputs, error in finished:
        if attempt.token is not None:
            attempt.step.deregister_cancellation(attempt.token)
        if error is not None:
            attempt.done(error=error)
        else:
            attempt.done(outputs)


def starved_warning(queue_name: str, op_type: str, is_fed):
    """The check a queue runs once a dequeue has waited long: warn if `is_fed()` is False."""
    def warn(waited: float) -> None:
        if is_fed():
            return
        _log.warning(
            "A step has been blocked for %.0f s dequeuing from queue '%s' (%s), and no "
            "tf.train.QueueRunner in the graph's QUEUE_RUNNERS collection feeds it: nothing "
            "may ever enqueue to it. Add a QueueRunner and call tf.train.start_queue_runners, "
            "close the queue, or pass RunOptions(timeout_in_ms=...).", waited, queue_name,
            op_type)
    return warn
