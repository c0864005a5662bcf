"""Queue resources: FIFO, random-shuffle, padding and priority queues with asynchronous waiters.

A queue lives in a device's ResourceMgr. Enqueue and dequeue never hold a thread: an attempt
that cannot finish at once is parked with its `done` callback and makes progress whenever the
queue changes (enqueue, dequeue, close). Cancelling its step (Session.close, a deadline, another
node's failure) removes it and fails it with CancelledError. Elements move in runs: a run
(chunk, start, stop) is rows start..stop-1 of every component array of `chunk`, a private copy
made at enqueue, so no step's buffers are shared (an array nothing can write, such as a slice of
a constant, is kept as it is: kernels/queues.py). An enqueue_many is one run; the FIFO queue
keeps runs and splits only the ones a dequeue cuts through, so a batch leaves as slices of one
chunk or one concatenation per component, never a stack of rows. The queues that order single
elements (random-shuffle, priority) keep runs of one row. Callbacks run outside the queue's
lock.
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
from tensorweave.framework.shape_text import shape_text
from tensorweave.protos import types_pb2

_log = logging.getLogger("tensorweave")

STARVED_WARNING_SECONDS = 5.0
_ENQUEUE_CANCELLED = "Enqueue operation was cancelled"
_DEQUEUE_CANCELLED = "Dequeue operation was cancelled"


class Attempt:
    """One parked enqueue (runs to put) or dequeue (n to take) with its callback.

    `n` counts the elements still to put (enqueue) or wanted in all (dequeue); a dequeue's
    `taken` runs hold `count` elements.
    """

    __slots__ = ("runs", "n", "taken", "count", "allow_smaller", "single", "done", "step",
                 "token", "since")

    def __init__(self, done, step, runs=None, n=0, allow_smaller=False, single=False):
        self.runs = deque(runs) if runs is not None else None
        self.n = n if runs is None else run_length(runs)
        self.taken: list = []
        self.count = 0
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
        self._runs: deque = deque()
        self._count = 0

    def _size(self) -> int:
        return self._count

    def _put_many(self, runs) -> None:
        self._runs.extend(runs)
        self._count += run_length(runs)

    def _available(self) -> int:
        """How many elements a dequeue may take now."""
        return self._count

    def _take_many(self, k: int) -> list:
        self._count -= k
        return split_runs(self._runs, k)

    def _put_back(self, runs) -> None:
        self._runs.extendleft(reversed(runs))
        self._count += run_length(runs)

    def _batch(self, runs) -> list:
        """The components of `runs` along a new dimension 0: slices of one chunk, or joined."""
        if not runs:
            return [np.zeros((0,) + self._component_dims(k), dtype.as_numpy_dtype)
                    for k, dtype in enumerate(self.dtypes)]
        if len(runs) == 1:
            chunk, start, stop = runs[0]
            return [c[start:stop] for c in chunk]
        return [np.concatenate([chunk[k][start:stop] for chunk, start, stop in runs])
                for k in range(len(self.dtypes))]

    def _component_dims(self, k) -> tuple:
        if not self.shapes or not self.shapes[k].is_fully_defined():
            return ()
        return tuple(self.shapes[k].as_list())

    # --- sharing -------------------------------------------------------------------------
    def check_shared(self, op_type: str, capacity: int, dtypes, shapes, attrs) -> None:
        """Raises InvalidArgumentError unless a queue op of `op_type` with these attrs may use
        this queue: TF's MatchesNodeDef (op, capacity, own attrs, types, shapes, in order)."""
        if op_type not in (self.kind, self.kind + "V2"):
            raise _invalid(f"Expected {self.kind}, found {op_type}")
        self._check_same("capacity", _capacity_text(self.capacity),
                         _capacity_text(capacity if capacity >= 0 else None), "was")
        self._check_attrs(attrs)
        self._check_same("component types", _types_text(self.dtypes), _types_text(dtypes),
                         "were")
        if not self._shapes_match(list(shapes)):
            self._check_same("component shapes", _shapes_text(self.shapes),
                             _shapes_text(shapes), "were")

    def _check_same(self, what: str, have: str, requested: str, verb: str, end: str = "") -> None:
        if have != requested:
            raise _invalid(f"Shared queue '{self.name}' has {what} {have} but requested {what} "
                           f"{verb} {requested}{end}")

    def _check_attrs(self, attrs) -> None:
        """The attrs only this kind of queue has (none)."""

    def _shapes_match(self, shapes) -> bool:
        return [s.as_list() for s in shapes] == [s.as_list() for s in self.shapes]

    # --- the kernels' interface ---------------------------------------------------------------
    def size(self) -> int:
        with self._lock:
            return self._size()

    def is_closed(self) -> bool:
        return self._closed

    def enqueue(self, runs, step, done) -> None:
        """Puts the elements of `runs` in order; `done(())` once all are in.

        An empty enqueue_many (no runs) succeeds at once, even on a closed queue, as in
        TensorFlow.
        """
        if not runs:
            done(())
            return
        if self._closed:
            done(error=errors.CancelledError(None, None, f"{self.kind} '{self.name}' is "
                                             "closed."))
            return
        self._park(Attempt(done, step, runs=runs), self._enqueues, _ENQUEUE_CANCELLED)

    def dequeue(self, n: int | None, step, done, allow_smaller: bool = False) -> None:
        """Takes one element (n None) or a batch of n; `done(components)` when available."""
        self._park(Attempt(done, step, n=1 if n is None else n, allow_smaller=allow_smaller,
                            single=n is None), self._dequeues, _DEQUEUE_CANCELLED)

    def close(self, cancel_pending_enqueues: bool = False) -> None:
        """Closes the queue: no new enqueues; dequeues drain it, then fail with OutOfRange.

        Closing a closed queue again raises CancelledError, unless `cancel_pending_enqueues`
        (as in TensorFlow).
        """
        with self._lock:
            if self._closed and not cancel_pending_enqueues:
                raise errors.CancelledError(None, None, f"Queue '{self.name}' is already "
                                            "closed.")
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
                room = attempt.n if capacity is None else \
                    min(attempt.n, capacity - self._size())
                if room > 0:
                    self._put_many(split_runs(attempt.runs, room))
                    attempt.n -= room
                    progress = True
                if attempt.n:
                    break
                self._enqueues.popleft()
                finished.append((attempt, (), None))
            while self._dequeues:
                attempt = self._dequeues[0]
                if self._closed and self._size() < attempt.n and not self._settle(attempt):
                    self._dequeues.popleft()
                    finished.append(self._finish_dequeue(attempt))
                    continue
                k = min(attempt.n - attempt.count, self._available())
                if k > 0:
                    attempt.taken.extend(self._take_many(k))
                    attempt.count += k
                    progress = True
                if attempt.count < attempt.n and not self._closed:
                    break
                self._dequeues.popleft()
                finished.append(self._finish_dequeue(attempt))
        return finished

    def _settle(self, attempt) -> bool:
        """A closed queue holds fewer elements than the attempt wants in all (TF compares
        what is left, not what is missing): what it took goes back, then a dequeue_up_to
        wants what is there and may go on (True); a dequeue_many fails without drawing."""
        if attempt.taken:
            self._put_back(attempt.taken)
            attempt.taken, attempt.count = [], 0
        if attempt.allow_smaller and self._size():
            attempt.n = self._size()
            return True
        return False

    def _finish_dequeue(self, attempt):
        taken = attempt.taken
        if attempt.count == attempt.n or (attempt.allow_smaller and taken):
            if attempt.single:
                chunk, i, _ = taken[0]
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
    """Dequeues a uniformly random element, keeping min_after_dequeue until closed: TF's
    order for a seed (its DequeueLocked: the element at the next Philox word modulo the size,
    whose place the last element takes)."""

    kind = "RandomShuffleQueue"

    def __init__(self, name, dtypes, shapes, capacity, min_after_dequeue, words,
                 on_starved=None, seeds=(0, 0)):
        self.min_after_dequeue = min_after_dequeue
        self.words = words   # philox.PhiloxWords of the queue's seeds
        self.seeds = tuple(seeds)   # the op's seed and seed2 attrs, for sharing
        super().__init__(name, dtypes, shapes, capacity, on_starved)

    def _check_attrs(self, attrs) -> None:
        self._check_same("min_after_dequeue", str(self.min_after_dequeue),
                         str(attrs.get("min_after_dequeue", 0)), "was", ".")
        seeds = (attrs.get("seed", 0), attrs.get("seed2", 0))
        if seeds != (0, 0) and seeds != self.seeds:   # unseeded ops may share any queue
            have, want = (", ".join(map(str, pair)) for pair in (self.seeds, seeds))
            raise _invalid(f"Shared queue '{self.name}' has random seeds ({have}) but "
                           f"requested seeds are ({want}).")

    def _init_storage(self) -> None:
        self._items: list = []   # runs of one row

    def _size(self) -> int:
        return len(self._items)

    def _put_many(self, runs) -> None:
        self._items.extend(unit_runs(runs))

    def _available(self) -> int:
        return max(0, len(self._items) - (0 if self._closed else self.min_after_dequeue))

    def _take_many(self, k: int) -> list:
        items = self._items
        out = []
        for word in self.words.take(k).tolist():   # the chosen element out, the last in
            i = word % len(items)
            items[i], items[-1] = items[-1], items[i]
            out.append(items.pop())
        return out

    def _put_back(self, runs) -> None:
        """TF pushes taken elements back last first."""
        self._items.extend(reversed(unit_runs(runs)))


class PaddingFIFOQueueResource(QueueResource):
    """A FIFO queue whose batches pad unknown dimensions to the batch maximum (0 or b"")."""

    kind = "PaddingFIFOQueue"

    def _shapes_match(self, shapes) -> bool:
        """Compatible shapes suffice (PartialTensorShapeUtils::AreCompatible)."""
        return len(shapes) == len(self.shapes) and all(
            a.is_compatible_with(b) for a, b in zip(shapes, self.shapes))

    def _batch(self, runs) -> list:
        out = []
        for k, dtype in enumerate(self.dtypes):
            parts = [chunk[k][i] for chunk, i, _ in unit_runs(runs)]
            # An empty batch (dequeue_many(0)) pads its unknown dimensions to 0, as TF.
            dims = tuple(max(p.shape[i] for p in parts) for i in range(parts[0].ndim)) \
                if parts else tuple(d or 0 for d in self.shapes[k].as_list())
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
        self._items: list = []   # (priority, arrival, run of one row)
        self._order = itertools.count()   # ties leave in arrival order

    def _size(self) -> int:
        return len(self._items)

    _available = _size

    def _put_many(self, runs) -> None:
        for run in unit_runs(runs):
            heapq.heappush(self._items, (int(run[0][0][run[1]]), next(self._order), run))

    def _take_many(self, k: int) -> list:
        return [heapq.heappop(self._items)[2] for _ in range(k)]

    _put_back = _put_many


_UNBOUNDED = 2 ** 31 - 1   # TF's capacity of an unbounded queue (kUnbounded, INT32_MAX)


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _capacity_text(capacity) -> str:
    return str(_UNBOUNDED if capacity is None else capacity)


def _types_text(dtypes) -> str:
    """DataTypeSliceString: `int32, float`."""
    return ", ".join(types_pb2.DataType.Name(d.base_dtype.as_datatype_enum)[3:].lower()
                     for d in dtypes)


def _shapes_text(shapes) -> str:
    """QueueBase::ShapeListString: `[[], [2,3]]` (`[?,3]`, `<unknown>` when partial)."""
    return "[" + ", ".join(shape_text(s, "<unknown>") for s in shapes) + "]"


def run_length(runs) -> int:
    """How many elements the runs (chunk, start, stop) hold."""
    return sum(stop - start for _, start, stop in runs)


def split_runs(runs: deque, k: int) -> list:
    """Removes the first `k` elements from the deque of runs, splitting a run if needed."""
    out = []
    while k > 0:
        chunk, start, stop = runs[0]
        if stop - start <= k:
            out.append(runs.popleft())
            k -= stop - start
        else:
            out.append((chunk, start, start + k))
            runs[0] = (chunk, start + k, stop)
            k = 0
    return out


def unit_runs(runs) -> list:
    """The runs split into runs of one row each, in order."""
    return [(chunk, i, i + 1) for chunk, start, stop in runs for i in range(start, stop)]


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
