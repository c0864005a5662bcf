"""Calls from one task to the others of its cluster: WorkerService RPCs by task name.

A task is "/job:j/replica:0/task:t"; its address comes from the ClusterSpec. Channels are
made once per task and kept. A failed call raises the `tensorweave.errors` class of its
status (UNAVAILABLE when the task does not answer). `recv_tensor` starts a RecvTensor call
that completes through a callback, so a waiting `_Recv` holds no thread.
"""
from __future__ import annotations

import threading

from tensorweave.distributed import wire
from tensorweave.framework import errors
from tensorweave.protos import worker_pb2

WORKER_SERVICE = "tensorflow.WorkerService"
MAX_MESSAGE_BYTES = (1 << 31) - 1   # TensorFlow's servers and channels take any protobuf


def task_name(job: str, task: int) -> str:
    return f"/job:{job}/replica:0/task:{task}"


class Peers:
    """Channels to the tasks of `cluster` (a ClusterSpec)."""

    def __init__(self, cluster):
        self.addresses = {task_name(job, index): cluster.task_address(job, index)
                          for job in cluster.jobs for index in cluster.task_indices(job)}
        self._channels: dict = {}
        self._lock = threading.Lock()

    def _stub(self, task: str, method: str):
        import grpc

        from tensorweave.distributed.worker import Worker
        with self._lock:
            channel = self._channels.get(task)
            if channel is None:
                address = self.addresses.get(task)
                if address is None:
                    raise errors.InvalidArgumentError(None, None, f"Task {task} is not in the "
                                                      "cluster")
                channel = self._channels[task] = grpc.insecure_channel(
                    address, options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                                      ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)])
        request_type, response_type = Worker.REQUEST_TYPES[method]
        return channel.unary_unary(f"/{WORKER_SERVICE}/{method}",
                                   request_serializer=request_type.SerializeToString,
                                   response_deserializer=response_type.FromString)

    def call(self, task: str, method: str, request, timeout_ms: int = 0,
             wait_for_ready: bool = False):
        """The task's response; raises the OpError it failed with."""
        import grpc
        try:
            return self._stub(task, method)(
                request, timeout=timeout_ms / 1000 if timeout_ms > 0 else None,
                wait_for_ready=wait_for_ready)
        except grpc.RpcError as e:
            wire.raise_rpc_error(e, f"{method} to {task}")

    def future(self, task: str, method: str, request, timeout_ms: int = 0):
        """A started call: a grpc.Future of the response."""
        return self._stub(task, method).future(
            request, timeout=timeout_ms / 1000 if timeout_ms > 0 else None)

    def recv_tensor(self, task: str, step_id: int, key: str) -> PendingRecv:
        return PendingRecv(self.future(task, "RecvTensor", worker_pb2.RecvTensorRequest(
            step_id=step_id, rendezvous_key=key)), task, key)

    def close(self) -> None:
        with self._lock:
            channels = list(self._channels.values())
            self._channels.clear()
        for channel in channels:
            channel.close()


class PendingRecv:
    """A RecvTensor in flight: `then(callback)` gets (value, is_dead), or (error, None)."""

    def __init__(self, future, task: str, key: str):
        self._future, self._task, self._key = future, task, key
        self._cancel_error: Exception | None = None

    def then(self, callback) -> None:
        def done(future):
            if future.cancelled():
                callback(self._cancel_error or errors.CancelledError(
                    None, None, f"RecvTensor {self._key} was cancelled"), None)
                return
            try:
                response = future.result()
            except Exception as e:  # noqa: BLE001 - a failed call fails the receive
                callback(_call_error(e, self._task), None)
                return
            if response.is_dead:
                callback(None, True)
                return
            try:
                callback(wire.ndarray(response.tensor, f"Tensor {self._key}"), False)
            except errors.OpError as e:
                callback(e, None)
        self._future.add_done_callback(done)

    def cancel(self, error: Exception) -> None:
        self._cancel_error = error
        self._future.cancel()


def _call_error(error, task: str) -> errors.OpError:
    try:
        wire.raise_rpc_error(error, f"RecvTensor from {task}")
    except errors.OpError as e:
        return e
    return errors.UnknownError(None, None, str(error))
