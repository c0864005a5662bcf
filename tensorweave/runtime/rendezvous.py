"""Rendezvous: where a step's `_Send` and `_Recv` kernels meet to hand over a tensor.

One `LocalRendezvous` serves one step of one session. A key names one transfer — source device
and incarnation, destination device, tensor name, frame and iteration — and is used once per
step: whichever of send and receive comes second completes the transfer (the receiver's
callback runs on the sender's thread when the receiver was first). `start_abort(error)` fails
every pending receive at once and every later one immediately, so no executor of a failed step
waits forever.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from tensorweave.framework import errors

# A callback receives (value, is_dead) or, when the step failed, (error, None).
RecvCallback = Callable[[object, object], None]


def create_key(src_device: str, src_incarnation: int, dst_device: str, tensor_name: str,
               frame_id: int = 0, iter_id: int = 0) -> str:
    """TensorFlow's key string: `src;incarnation as 16 hex digits;dst;name;frame:iter`."""
    return (f"{src_device};{src_incarnation:016x};{dst_device};{tensor_name};"
            f"{frame_id}:{iter_id}")


def parse_key(key: str) -> tuple[str, int, str, str, int, int]:
    """The fields of a key made by `create_key`; InvalidArgumentError for anything else."""
    parts = key.split(";")
    try:
        src, incarnation, dst, name, frame_iter = parts
        frame_id, iter_id = frame_iter.split(":")
        return src, int(incarnation, 16), dst, name, int(frame_id), int(iter_id)
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"Invalid rendezvous key: {key}") from None


class _Waiter:
    """A receive that arrived before its send."""

    __slots__ = ("callback",)

    def __init__(self, callback: RecvCallback):
        self.callback = callback


class LocalRendezvous:
    """The in-process rendezvous of one step; see the module docstring."""

    __slots__ = ("_table", "_lock", "_error")

    def __init__(self):
        self._table: dict[str, object] = {}   # key -> (value, is_dead) sent, or a _Waiter
        self._lock = threading.Lock()
        self._error: Exception | None = None

    def send(self, key: str, value, is_dead: bool = False) -> None:
        """Delivers `value` under `key`; raises the abort error if the step was aborted."""
        with self._lock:
            if self._error is not None:
                raise self._error
            waiter = self._table.pop(key, None)
            if waiter is None:
                self._table[key] = (value, is_dead)
                return
            if not isinstance(waiter, _Waiter):
                self._table[key] = waiter
                raise errors.InternalError(None, None, f"Send of an already sent tensor: {key}")
        waiter.callback(value, is_dead)

    def recv_async(self, key: str, callback: RecvCallback) -> None:
        """Calls `callback(value, is_dead)` once `key` is sent (now, if it already was), or
        `callback(error, None)` if the step is or gets aborted first."""
        with self._lock:
            error = self._error
            if error is None:
                sent = self._table.pop(key, None)
                if sent is None:
                    self._table[key] = _Waiter(callback)
                    return
                if isinstance(sent, _Waiter):
                    self._table[key] = sent
                    error = errors.InternalError(None, None, f"Two receives of one tensor: {key}")
        if error is not None:
            callback(error, None)
        else:
            callback(*sent)

    def recv(self, key: str, timeout: float | None = None):
        """Blocks until `key` is sent; returns (value, is_dead). Raises the abort error, or
        DeadlineExceededError after `timeout` seconds."""
        arrived = threading.Event()
        result = []

        def callback(value, is_dead):
            result.append((value, is_dead))
            arrived.set()
        self.recv_async(key, callback)
        if not arrived.wait(timeout):
            self.start_abort(errors.DeadlineExceededError(
                None, None, f"Timed out after {timeout} s waiting to receive {key}"))
            arrived.wait()
        value, is_dead = result[0]
        if is_dead is None:
            raise value
        return value, is_dead

    def start_abort(self, error: Exception) -> None:
        """Fails every pending and future receive with `error` (the first abort wins)."""
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            waiters = [w for w in self._table.values() if isinstance(w, _Waiter)]
            self._table.clear()
        for waiter in waiters:
            waiter.callback(error, None)
