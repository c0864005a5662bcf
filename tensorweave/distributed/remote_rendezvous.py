"""The rendezvous of one step on one task: local transfers in a table, remote ones pulled.

A step's worker pulls every tensor its partitions receive from another task through one
RecvTensors stream per task (`pull`), started with the step: each tensor lands in the local
table as it arrives, where its `_Recv` takes it. `_Send` never waits: it leaves its tensor in
the local table, where the other task's stream (or TF's RecvTensor) finds it. A transfer
inside a loop frame has a key per frame instance and iteration, which registration cannot
list: its `_Send` pushes it to the receiving task instead, through one SendTensors stream per
step and receiving task, and the step's RunGraph answers once those streams are answered.
Aborting the step fails local waiters and cancels the streams in flight.
"""
from __future__ import annotations

import collections
import threading

from tensorweave.distributed import tensor_coding
from tensorweave.framework import errors
from tensorweave.runtime.rendezvous import LocalRendezvous, parse_key

_ROOT_FRAME = ";0:0"   # the end of a key outside every loop frame


def task_of(device: str) -> str | None:
    """"/job:j/replica:r/task:t" of a full device name; None for anything else."""
    parts = device.split("/")
    if len(parts) < 5 or not parts[1].startswith("job:") or not parts[3].startswith("task:"):
        return None
    return "/".join(parts[:4])


class RemoteRendezvous:
    """One step's rendezvous on the task `task` ("/job:j/replica:0/task:t")."""

    def __init__(self, step_id: int, task: str, peers):
        self.step_id = step_id
        self.task = task
        self._peers = peers   # distributed.channels.Peers: streams from other tasks
        self._local = LocalRendezvous()
        self._lock = threading.Lock()
        self._calls: set = set()
        self._pushes: dict = {}   # destination task -> its SendTensors stream
        self._error: Exception | None = None

    def send(self, key: str, value, is_dead: bool = False) -> None:
        if not key.endswith(_ROOT_FRAME):
            destination = task_of(parse_key(key)[2])
            if destination is not None and destination != self.task:
                self._push(destination, key, value, is_dead)
                return
        self._local.send(key, value, is_dead)

    def _push(self, destination: str, key: str, value, is_dead: bool) -> None:
        """Sends a loop frame's tensor to the task that receives it, through the step's one
        SendTensors stream to that task (encoded at once: the value may be a variable's
        storage, updated later in the step)."""
        encoded = tensor_coding.encode([(key, value, is_dead)])
        with self._lock:
            stream = self._pushes.get(destination)
            if stream is None:
                stream = self._pushes[destination] = self._peers.push_stream(destination,
                                                                             self.step_id)
                stream.add_done_callback(self._pushed)
        stream.put(encoded)

    def _pushed(self, future) -> None:
        error = future.exception()
        if error is not None:
            self.start_abort(error)

    def finish_pushes(self) -> None:
        """Ends the step's SendTensors streams and waits for their answers; raises the first
        failure."""
        with self._lock:
            streams, self._pushes = list(self._pushes.values()), {}
        for stream in streams:
            stream.close()
        for stream in streams:
            stream.result()

    def deliver(self, key: str, value, is_dead: bool) -> None:
        """A tensor another task pushed or streamed here."""
        try:
            self._local.send(key, value, is_dead)
        except errors.OpError:
            pass   # the step was aborted meanwhile: its receivers have their error

    def pull(self, source: str, keys: list[str]) -> None:
        """Starts the stream of the tensors `keys` from task `source`; each lands in the
        local table as it arrives, and a failed stream aborts the step."""
        with self._lock:
            if self._error is not None:
                return
            self._calls.add(self._peers.stream_tensors(source, self.step_id, keys,
                                                       self.deliver, self.start_abort))

    def recv_async(self, key: str, callback) -> None:
        self._local.recv_async(key, callback)   # remote keys arrive by stream or push

    def recv(self, key: str, timeout: float | None = None):
        return self._local.recv(key, timeout)

    def start_abort(self, error: Exception) -> None:
        with self._lock:
            if self._error is not None:
                return
            self._error = error
            calls = list(self._calls)
            self._calls.clear()
        self._local.start_abort(error)
        for call in calls:
            call.cancel(error)


class StepTable:
    """The rendezvous of each step a task takes part in, made by whichever comes first: the
    step's RunGraph or another task's RecvTensor for it; dropped by CleanupGraph.

    The last `ENDED_KEPT` aborted or cleaned-up steps are remembered with their error: a call
    for one that arrives late (a RunGraph still queued here when another task failed the
    step, a peer's RecvTensor after the cleanup) gets a rendezvous already aborted, so it
    fails at once instead of waiting for a step that is over.
    """

    ENDED_KEPT = 4096

    def __init__(self, task: str, peers):
        self.task, self._peers = task, peers
        self._steps: dict[int, RemoteRendezvous] = {}
        self._ended: collections.OrderedDict[int, Exception] = collections.OrderedDict()
        self._lock = threading.Lock()

    def find_or_create(self, step_id: int) -> RemoteRendezvous:
        with self._lock:
            rendezvous = self._steps.get(step_id)
            if rendezvous is not None:
                return rendezvous
            rendezvous = RemoteRendezvous(step_id, self.task, self._peers)
            ended = self._ended.get(step_id)
            if ended is None:
                self._steps[step_id] = rendezvous
                return rendezvous
        rendezvous.start_abort(ended)   # a late call of an ended step: not kept
        return rendezvous

    def abort(self, step_id: int, error: Exception) -> None:
        with self._lock:
            rendezvous = self._steps.get(step_id)
            if rendezvous is None:
                self._remember_ended(step_id, error)
        if rendezvous is not None:
            rendezvous.start_abort(error)

    def cleanup(self, step_id: int) -> None:
        """Forgets the step; anything still waiting in it fails with AbortedError."""
        error = errors.AbortedError(None, None, f"Cleanup {step_id}")
        with self._lock:
            rendezvous = self._steps.pop(step_id, None)
            self._remember_ended(step_id, error)
        if rendezvous is not None:
            rendezvous.start_abort(error)

    def _remember_ended(self, step_id: int, error: Exception) -> None:
        """Records an ended step (the caller holds the lock); the oldest records go first."""
        self._ended.setdefault(step_id, error)
        while len(self._ended) > self.ENDED_KEPT:
            self._ended.popitem(last=False)

    def abort_all(self, error: Exception) -> None:
        with self._lock:
            steps = list(self._steps.values())
            self._steps.clear()
        for rendezvous in steps:
            rendezvous.start_abort(error)
