"""tf.data's `prefetch`: a producer thread runs the pipeline below it ahead of the consumer.

The elements of the input are computed on a thread of their own into a buffer of at most
`buffer_size` (AUTOTUNE: 2), so a training step that asks for the next batch takes one already
made while the previous step ran, as TensorFlow's prefetch does. Values, order and errors are
those of the inline pipeline: an error is raised where its element would have been, and ends
the iteration as it ends a Python generator. The thread starts at the first `next`, holds no
reference to its Prefetcher, and stops when the Prefetcher is closed (iterator re-initialized)
or collected (its session gone).
"""
from __future__ import annotations

import threading
import weakref
from collections import deque

from tensorweave.runtime import float_env

AUTOTUNE_BUFFER = 2
_END = object()


class _Shared:
    """What the producer and the consumer share: the buffer, its condition and the stop flag."""

    __slots__ = ("buffer", "cond", "capacity", "stopped")

    def __init__(self, capacity: int):
        self.buffer: deque = deque()
        self.cond = threading.Condition(threading.Lock())
        self.capacity = capacity
        self.stopped = False

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.buffer.clear()
            self.cond.notify_all()


def _produce(source, shared: _Shared) -> None:
    float_env.flush_in_this_thread()
    cond, buffer = shared.cond, shared.buffer
    while True:
        try:
            item, error = next(source, _END), None
        except BaseException as exc:  # noqa: BLE001 - raised to the consumer at this position
            item, error = _END, exc   # (whatever it is: a consumer must never wait forever)
        with cond:
            while len(buffer) >= shared.capacity and not shared.stopped:
                cond.wait()
            if shared.stopped:
                return
            buffer.append((item, error))
            cond.notify_all()
        if item is _END:
            return


class Prefetcher:
    """An iterator over `source`'s elements, computed ahead by a producer thread."""

    def __init__(self, source, buffer_size: int):
        self._source = source
        self._shared = _Shared(buffer_size if buffer_size > 0 else AUTOTUNE_BUFFER)
        self._started = False
        self._finished = False
        weakref.finalize(self, _Shared.stop, self._shared)

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        shared = self._shared
        if not self._started:
            self._started = True
            threading.Thread(target=_produce, args=(self._source, shared), daemon=True,
                             name="tw-prefetch").start()
            self._source = None
        with shared.cond:
            while not shared.buffer:
                shared.cond.wait()
            item, error = shared.buffer.popleft()
            shared.cond.notify_all()
        if item is _END:
            self._finished = True
            if error is not None:
                raise error
            raise StopIteration
        return item

    def close(self) -> None:
        """Stops the producer (the iterator is being replaced)."""
        self._finished = True
        self._shared.stop()
