"""The worker of one task: the partitions masters register on it, and the steps it runs.

RegisterGraph gives the task's part of a session's graph (its nodes, each on one of this
task's devices): the worker splits it by device and builds one executor per device, as the
local runtime does. RunGraph runs one step of it: the master's feeds for this task go into the
step's rendezvous (distributed/remote_rendezvous.py), every executor runs, and the fetches
this task makes come back by rendezvous key. Tensors between tasks go by RecvTensor, answered
here from the step's rendezvous once the local `_Send` has left them: a step pulls all it
receives from one task through one RecvTensors stream (TF's RecvTensor, one call per tensor,
is answered too). Stateful kernels of one
session keep their state across its graphs, and variables live on the devices, shared by
every session of the server.
"""
from __future__ import annotations

import concurrent.futures
import os
import queue
import secrets
import threading

import numpy as np

from tensorweave.distributed import tensor_coding, wire
from tensorweave.distributed.remote_rendezvous import StepTable, task_of
from tensorweave.framework import errors
from tensorweave.framework.graph import Graph
from tensorweave.framework.importer import extend_graph
from tensorweave.protos import graph_pb2, worker_pb2
from tensorweave.runtime import float_env
from tensorweave.runtime.direct_session import run_concurrently
from tensorweave.runtime.executor.executor import Executor
from tensorweave.runtime.executor.frames import CONTROL_FLOW_OPS
from tensorweave.runtime.executor.values import VariableRef, deref
from tensorweave.runtime.prune import RGraph, RNode
from tensorweave.runtime.rendezvous import create_key, parse_key
from tensorweave.runtime.step import StepState
from tensorweave.runtime.step_stats import StepStatsCollector

_PARTITION_THREADS = 64


class _KernelHost:
    """What kernels of one session's graphs on this worker share: stateful kernel instances
    (by device, node and op) and the session's graph."""

    def __init__(self, graph):
        self.graph = graph
        self._kernels: dict = {}
        self._lock = threading.Lock()

    def shared_kernel(self, key, create):
        with self._lock:
            kernel = self._kernels.get(key)
            if kernel is None:
                kernel = self._kernels[key] = create()
            return kernel


class _RegisteredGraph:
    """One executor per device of a registered partition, and the rendezvous keys it
    receives from each other task (pulled by one RecvTensors stream per task and step)."""

    def __init__(self, executors: list, pulls: dict[str, list[str]]):
        self.executors = executors
        self.pulls = pulls


class Worker:
    """The WorkerService of the task `task` ("/job:j/replica:0/task:t") on `device_mgr`;
    `peers` reaches the other tasks."""

    REQUEST_TYPES = {
        "GetStatus": (worker_pb2.GetStatusRequest, worker_pb2.GetStatusResponse),
        "RegisterGraph": (worker_pb2.RegisterGraphRequest, worker_pb2.RegisterGraphResponse),
        "DeregisterGraph": (worker_pb2.DeregisterGraphRequest,
                            worker_pb2.DeregisterGraphResponse),
        "RunGraph": (worker_pb2.RunGraphRequest, worker_pb2.RunGraphResponse),
        "CleanupGraph": (worker_pb2.CleanupGraphRequest, worker_pb2.CleanupGraphResponse),
        "CleanupAll": (worker_pb2.CleanupAllRequest, worker_pb2.CleanupAllResponse),
        "RecvTensor": (worker_pb2.RecvTensorRequest, worker_pb2.RecvTensorResponse),
    }

    def __init__(self, task: str, device_mgr, peers, device_attributes):
        self.task = task
        self.device_mgr = device_mgr
        self.peers = peers
        self._device_attributes = device_attributes
        self.steps = StepTable(task, peers)
        self._graphs: dict[str, _RegisteredGraph] = {}
        self._hosts: dict[str, _KernelHost] = {}
        self._running: dict[int, StepState] = {}
        self._lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=os.cpu_count() or 2, thread_name_prefix="tw-worker-op",
            initializer=float_env.flush_in_this_thread)
        self._partition_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=_PARTITION_THREADS, thread_name_prefix="tw-worker-partition",
            initializer=float_env.flush_in_this_thread)

    # --- registration -------------------------------------------------------------------------
    def register_partitions(self, session_handle: str, parts: dict, graph) -> str:
        """Registers runtime graphs {device name: RGraph} of this task; returns the handle."""
        host = self._host(session_handle, graph)
        control_flow = any(n.op in CONTROL_FLOW_OPS for g in parts.values() for n in g)
        executors = [Executor(g, self._device(dev), host, graph, self._pool, dev, control_flow)
                     for dev, g in parts.items()]
        handle = secrets.token_hex(8)
        with self._lock:
            self._graphs[handle] = _RegisteredGraph(executors, self._pulls(parts))
        return handle

    def _pulls(self, parts: dict) -> dict[str, list[str]]:
        """{other task: keys of the tensors these partitions receive from it}."""
        pulls: dict[str, list[str]] = {}
        for part in parts.values():
            for node in part:
                attrs = node.attrs
                if node.op != "_Recv" or attrs.get("client_terminated") or \
                        attrs.get("_frame"):   # pulled one by one (RemoteRendezvous)
                    continue
                source = task_of(attrs["send_device"])
                if source is not None and source != self.task:
                    pulls.setdefault(source, []).append(create_key(
                        attrs["send_device"], attrs["send_device_incarnation"],
                        attrs["recv_device"], attrs["tensor_name"]))
        return pulls

    def _host(self, session_handle: str, graph) -> _KernelHost:
        with self._lock:
            host = self._hosts.get(session_handle)
            if host is None:
                host = self._hosts[session_handle] = _KernelHost(graph)
            return host

    def _device(self, name: str):
        try:
            return self.device_mgr.lookup(name)
        except KeyError:
            raise errors.InvalidArgumentError(None, None, f"Device {name} is not a device of "
                                              f"this task ({self.task})") from None

    def _register_graph(self, request):
        graph_def = graph_pb2.GraphDef()
        graph_def.CopyFrom(request.graph_def)
        for node in graph_def.node:   # placed already: colocations may name other tasks' nodes
            if "_class" in node.attr:
                del node.attr["_class"]
        graph = Graph()
        extend_graph(graph, graph_def)
        parts: dict[str, RGraph] = {}
        for op in graph.get_operations():
            self._device(op.device)
            node = RNode.from_operation(op, [(t.op.name, t.value_index) for t in op.inputs])
            node.device = op.device
            parts.setdefault(op.device, RGraph()).add(node)
        handle = self.register_partitions(request.session_handle, parts, graph)
        return worker_pb2.RegisterGraphResponse(graph_handle=handle)

    def _deregister_graph(self, request):
        with self._lock:
            self._graphs.pop(request.graph_handle, None)
        return worker_pb2.DeregisterGraphResponse()

    def forget_session(self, session_handle: str) -> None:
        with self._lock:
            self._hosts.pop(session_handle, None)

    # --- steps --------------------------------------------------------------------------------
    def run_graph(self, request, timeout_ms: int = 0):
        """Runs one step of a registered graph; raises its first error."""
        with self._lock:
            graph = self._graphs.get(request.graph_handle)
        if graph is None:
            raise errors.AbortedError(None, None, f"Graph handle is not found: "
                                      f"{request.graph_handle}. Possibly this worker "
                                      f'("{self.task}") just restarted.')
        rendezvous = self.steps.find_or_create(request.step_id)
        for sent in request.send:
            rendezvous.send(sent.name, wire.ndarray(sent.tensor, f"Feed {sent.name}"))
        for source, keys in graph.pulls.items():
            rendezvous.pull(source, keys)
        stats = StepStatsCollector() if request.exec_opts.record_timeline else None
        step = StepState(timeout_ms, rendezvous, stats)
        with self._lock:
            self._running[request.step_id] = step
        saved = float_env.enter()
        try:
            run_concurrently(graph.executors, [], [], step, self._partition_pool)
            rendezvous.finish_pushes()
            response = worker_pb2.RunGraphResponse()
            if stats is not None:
                stats.fill(response.step_stats)
            for key in request.recv_key:
                value, _ = rendezvous.recv(key)
                response.recv.add(name=key).tensor.CopyFrom(wire.tensor_proto(_plain(value)))
            return response
        finally:
            float_env.leave(saved)
            with self._lock:
                self._running.pop(request.step_id, None)

    def abort_step(self, step_id: int, error: Exception) -> None:
        """Cancels the step's executors here (they stop waiting) and fails its transfers."""
        with self._lock:
            step = self._running.get(step_id)
        if step is not None:
            step.cancel(error)
        self.steps.abort(step_id, error)

    def _check_incarnation(self, key: str) -> None:
        """AbortedError if `key`'s sender is an earlier incarnation of a device here."""
        source, incarnation = parse_key(key)[:2]
        device = self._device(source)
        if incarnation != device.incarnation:
            raise errors.AbortedError(
                None, None, f"RecvTensor expects a different device incarnation: "
                f"{incarnation} vs. {device.incarnation}. Your worker job (\"{self.task}\") "
                "was probably restarted. Check your worker job for the reason why it was "
                "restarted.")

    def recv_tensors(self, request, context=None):
        """Yields encoded RecvTensorsResponses (distributed/tensor_coding.py): the tensors
        local `_Send`s of step `step_id` leave under `rendezvous_key`, each as soon as it is
        there, those there at once together (tensorweave's RecvTensors stream); stops early
        if the call ends."""
        keys = list(request.rendezvous_key)
        for key in keys:
            self._check_incarnation(key)
        rendezvous = self.steps.find_or_create(request.step_id)
        arrived: queue.SimpleQueue = queue.SimpleQueue()
        if context is not None:
            context.add_callback(lambda: arrived.put(None))
        for key in keys:
            rendezvous.recv_async(key, lambda value, is_dead, key=key:
                                  arrived.put((key, value, is_dead)))
        left = len(keys)
        while left:
            ready = [arrived.get()]
            while left > len(ready) and not arrived.empty():   # what else is there already
                ready.append(arrived.get())
            if None in ready:
                return
            for _, value, is_dead in ready:
                if is_dead is None:
                    raise value
            left -= len(ready)
            yield tensor_coding.encode((key, None if is_dead else _plain(value), bool(is_dead))
                                       for key, value, is_dead in ready)

    def send_tensors(self, messages, context=None):
        """Takes the tensors another task's loop frames push for a step here (tensorweave's
        SendTensors stream, each message as it arrives): they wait in the step's rendezvous
        for their `_Recv`s."""
        for encoded in messages:
            step_id, items = tensor_coding.decode_pushed(encoded)
            for key, _, _ in items:
                destination = parse_key(key)[2]
                if task_of(destination) != self.task:
                    raise errors.InvalidArgumentError(
                        None, None, f"SendTensors to {self.task} carries {key}, a tensor for "
                        f"{destination}")
            rendezvous = self.steps.find_or_create(step_id)
            for key, value, is_dead in items:
                rendezvous.deliver(key, value, is_dead)
        return worker_pb2.SendTensorsResponse()

    def recv_tensor(self, request, cancelled: threading.Event | None = None):
        """The tensor a local `_Send` of step `step_id` left under `rendezvous_key`, waiting
        for it; AbortedError if the key's sender is an earlier incarnation of the device."""
        key = request.rendezvous_key
        self._check_incarnation(key)
        rendezvous = self.steps.find_or_create(request.step_id)
        arrived = cancelled or threading.Event()
        result = []

        def callback(value, is_dead):
            result.append((value, is_dead))
            arrived.set()
        rendezvous.recv_async(key, callback)
        arrived.wait()
        if not result:
            raise errors.CancelledError(None, None, f"RecvTensor {key} was cancelled")
        value, is_dead = result[0]
        if is_dead is None:
            raise value
        response = worker_pb2.RecvTensorResponse(is_dead=bool(is_dead))
        if not is_dead:
            response.tensor.CopyFrom(wire.tensor_proto(_plain(value)))
        return response

    # --- the service --------------------------------------------------------------------------
    def call(self, method: str, request, context=None):
        """The response to a WorkerService request; raises an OpError for a bad one."""
        if method == "GetStatus":
            return worker_pb2.GetStatusResponse(device_attributes=self._device_attributes())
        if method == "RegisterGraph":
            return self._register_graph(request)
        if method == "DeregisterGraph":
            return self._deregister_graph(request)
        if method == "RunGraph":
            return self.run_graph(request, _remaining_ms(context))
        if method == "CleanupGraph":   # a part still running is cancelled (the step failed)
            self.abort_step(request.step_id, errors.AbortedError(
                None, None, f"Cleanup {request.step_id}"))
            self.steps.cleanup(request.step_id)
            return worker_pb2.CleanupGraphResponse()
        if method == "CleanupAll":
            for device in self.device_mgr.devices:
                device.resource_mgr.clear_containers(list(request.container))
            return worker_pb2.CleanupAllResponse()
        if method == "RecvTensor":
            return self.recv_tensor(request, _cancel_event(context))
        raise errors.UnimplementedError(None, None, f"WorkerService.{method}")

    def close(self) -> None:
        self.steps.abort_all(errors.CancelledError(None, None, "The server is stopping."))
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._partition_pool.shutdown(wait=False, cancel_futures=True)


def _plain(value):
    """A value that can cross processes: a variable's contents, an array."""
    if isinstance(value, VariableRef):
        value = deref(value)
    if isinstance(value, np.ndarray) or np.isscalar(value):
        return value
    raise errors.UnimplementedError(None, None, f"A {type(value).__name__} cannot be sent to "
                                    "another task (only tensors can)")


def _remaining_ms(context) -> int:
    """What is left of a gRPC call's deadline, in ms (0: none, or no call)."""
    remaining = context.time_remaining() if context is not None else None
    return max(1, int(remaining * 1000)) if remaining is not None else 0


def _cancel_event(context) -> threading.Event | None:
    """An event set if the gRPC call ends (cancelled by the caller) before it is answered."""
    if context is None:
        return None
    event = threading.Event()
    context.add_callback(event.set)
    return event
