"""The master of one task: its sessions, each a graph sent by a client and run by the cluster.

`Master.call(method, request)` answers MasterService's requests (CreateSession, ExtendSession,
RunStep, CloseSession, ListDevices, Reset) and raises `tensorweave.errors` for bad ones; the
gRPC layer (distributed/services.py) and in-process clients share it. A MasterSession imports
the client's GraphDef into a graph of its own, grows it with ExtendSession, and runs steps
through the local runtime pipeline (prune, place, optimize, partition, executors): on this
task's devices, or, when the cluster has other tasks the session may use (its
device_filters), on every task's devices (distributed/cluster_session.py). Sessions share the
devices, so variables and queues live on the server across sessions (TF's default,
isolate_session_state=False) until a Reset.
"""
from __future__ import annotations

import secrets
import threading

from tensorweave.distributed import wire
from tensorweave.distributed.channels import Peers, task_name
from tensorweave.distributed.cluster_session import (
    ClusterCore,
    discover_devices,
    tasks_in_session,
)
from tensorweave.distributed.worker import Worker
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.graph import Graph
from tensorweave.framework.importer import extend_graph
from tensorweave.protos import config_pb2, device_attributes_pb2, master_pb2, worker_pb2
from tensorweave.runtime.direct_session import DirectSessionCore

__all__ = ["Master"]


class Master:
    """The MasterService of the task `job`/`task` of `cluster` (a ClusterSpec), running
    sessions on `device_mgr` with `default_config` unless a session brings its own."""

    def __init__(self, cluster, job: str, task: int, device_mgr, default_config):
        self.cluster, self.job, self.task = cluster, job, task
        self.device_mgr = device_mgr
        self.default_config = default_config
        self.peers = Peers(cluster)
        self.worker = Worker(task_name(job, task), device_mgr, self.peers,
                             self.device_attributes)
        self._sessions: dict[str, MasterSession] = {}
        self._lock = threading.Lock()
        self._handlers = {
            "CreateSession": self._create_session, "ExtendSession": self._extend_session,
            "RunStep": self._run_step, "PartialRunSetup": self._partial_run_setup,
            "CloseSession": self._close_session,
            "ListDevices": self._list_devices, "Reset": self._reset}

    REQUEST_TYPES = {
        "CreateSession": (master_pb2.CreateSessionRequest, master_pb2.CreateSessionResponse),
        "ExtendSession": (master_pb2.ExtendSessionRequest, master_pb2.ExtendSessionResponse),
        "RunStep": (master_pb2.RunStepRequest, master_pb2.RunStepResponse),
        "PartialRunSetup": (master_pb2.PartialRunSetupRequest,
                            master_pb2.PartialRunSetupResponse),
        "CloseSession": (master_pb2.CloseSessionRequest, master_pb2.CloseSessionResponse),
        "ListDevices": (master_pb2.ListDevicesRequest, master_pb2.ListDevicesResponse),
        "Reset": (master_pb2.ResetRequest, master_pb2.ResetResponse),
    }

    def call(self, method: str, request):
        """The response to `request`; raises an OpError for a bad one."""
        return self._handlers[method](request)

    def device_attributes(self) -> list:
        """DeviceAttributes protos of this task's devices."""
        return [device_attributes_pb2.DeviceAttributes(
            name=d.name, device_type=d.device_type, memory_limit=d.memory_limit_bytes,
            incarnation=d.incarnation) for d in self.device_mgr.devices]

    def close(self) -> None:
        """Closes every session (their running steps end with CancelledError)."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            session.close()

    def stop(self) -> None:
        """Closes every session and stops the worker (the server is going away)."""
        self.close()
        self.worker.close()
        self.peers.close()

    # --- the requests -------------------------------------------------------------------------
    def _session(self, handle: str) -> MasterSession:
        session = self._sessions.get(handle)
        if session is None:
            raise errors.AbortedError(None, None, f"Session {handle} is not found.")
        return session

    def _create_session(self, request):
        config = request.config if request.HasField("config") else self.default_config
        handle = secrets.token_hex(8)
        session = MasterSession(self, handle, request.graph_def, config)
        with self._lock:
            self._sessions[handle] = session
        return master_pb2.CreateSessionResponse(session_handle=handle,
                                                graph_version=session.version)

    def _extend_session(self, request):
        version = self._session(request.session_handle).extend(
            request.graph_def, request.current_graph_version)
        return master_pb2.ExtendSessionResponse(new_graph_version=version)

    def _run_step(self, request):
        return self._session(request.session_handle).run_step(request)

    def run_in_process(self, handle: str, fed, fetch_names, target_names, options=None,
                       metadata=None) -> list:
        """A step for a client in this process: arrays in and out, no TensorProtos (TF's
        LocalMaster passes tensors the same way)."""
        return self._session(handle).run([(name, array, None) for name, array in fed],
                                         fetch_names, target_names, "", options, metadata)

    def _partial_run_setup(self, request):
        handle = self._session(request.session_handle).partial_run_setup(request)
        return master_pb2.PartialRunSetupResponse(partial_run_handle=handle)

    def _close_session(self, request):
        with self._lock:
            session = self._sessions.pop(request.session_handle, None)
        if session is None:
            raise errors.AbortedError(None, None, f"Session {request.session_handle} is not "
                                      "found.")
        session.close()
        return master_pb2.CloseSessionResponse()

    def _list_devices(self, request):
        """This task's devices, and those of the other tasks a session uses."""
        response = master_pb2.ListDevicesResponse(local_device=self.device_attributes())
        if request.session_handle:
            local = {d.name for d in self.device_mgr.devices}
            for device in self._session(request.session_handle).core.device_mgr.devices:
                if device.name not in local:
                    response.remote_device.add(
                        name=device.name, device_type=device.device_type,
                        memory_limit=device.memory_limit_bytes, incarnation=device.incarnation)
        return response

    def _reset(self, request):
        """Closes every session and frees the resources of the containers named (the
        default container when none is)."""
        self.close()
        for device in self.device_mgr.devices:
            device.resource_mgr.clear_containers(list(request.container))
        cleanup = worker_pb2.CleanupAllRequest(container=request.container)
        for task in tasks_in_session(self.cluster, self.job, self.task,
                                     request.device_filters):
            self.peers.call(task, "CleanupAll", cleanup, 10_000)
        return master_pb2.ResetResponse()


class MasterSession:
    """One client session: its graph (grown by ExtendSession) and its runtime core."""

    def __init__(self, master: Master, handle: str, graph_def, config):
        self.graph = Graph()
        extend_graph(self.graph, graph_def)
        self.version = self.graph.version
        filters = config.device_filters if config is not None else ()
        tasks = tasks_in_session(master.cluster, master.job, master.task, filters)
        if tasks:
            timeout = config.operation_timeout_in_ms if config is not None else 0
            self.core = ClusterCore(self.graph, config, master, handle,
                                    discover_devices(master.peers, tasks, timeout))
        else:
            self.core = DirectSessionCore(self.graph, config, master.device_mgr)
        self._lock = threading.Lock()

    def extend(self, graph_def, current_version: int) -> int:
        with self._lock:
            if current_version != self.version:
                raise errors.AbortedError(None, None, f"Current version is {self.version} but "
                                          f"caller expected {current_version}.")
            extend_graph(self.graph, graph_def)
            self.version = self.graph.version
            return self.version

    def run_step(self, request):
        """A RunStep: a whole step, or a part of the partial run it names."""
        fed = [(feed.name, wire.ndarray(feed.tensor, f"Feed {feed.name}"), feed.tensor.dtype)
               for feed in request.feed]
        response = master_pb2.RunStepResponse()
        options = request.options if request.HasField("options") else None
        metadata = config_pb2.RunMetadata() if options is not None else None
        values = self.run(fed, request.fetch, request.target, request.partial_run_handle,
                          options, metadata)
        if metadata is not None:
            response.metadata.CopyFrom(metadata)
        for name, value in zip(request.fetch, values):
            response.tensor.add(name=name).tensor.CopyFrom(wire.tensor_proto(value))
        return response

    def run(self, fed, fetch_names, target_names, partial_handle: str = "", options=None,
            metadata=None) -> list:
        """The fetched values of one step (or of a part of partial run `partial_handle`):
        `fed` holds (tensor name, array, DataType enum or None when the array is the
        tensor's dtype already, as from a client in this process)."""
        feeds, fetches, targets = self._elements([name for name, _, _ in fed], fetch_names,
                                                 target_names)
        arrays = [_checked_dtype(tensor, name, array, dtype)
                  for tensor, (name, array, dtype) in zip(feeds, fed)]
        core = self.core
        if partial_handle:
            return core.partial_run(partial_handle, feeds, arrays, fetches)
        plan = core.plan(feeds, fetches, targets)
        try:
            args = [spec.convert(array) for spec, array in zip(plan.feed_specs, arrays)]
        except (TypeError, ValueError) as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from None
        return core.run_step(plan, args, options, metadata)

    def partial_run_setup(self, request) -> str:
        feeds, fetches, targets = self._elements(request.feed, request.fetch, request.target)
        return self.core.partial_run_setup(feeds, fetches, targets)

    def _elements(self, feed_names, fetch_names, target_names) -> tuple:
        """(fed tensors, fetched tensors, target ops) of the session's graph, by name."""
        graph = self.graph
        return (tuple(self._element(graph.get_tensor_by_name, name, "Feed")
                      for name in feed_names),
                tuple(self._element(graph.get_tensor_by_name, name, "Fetch")
                      for name in fetch_names),
                tuple(self._element(graph.get_operation_by_name, name, "Target")
                      for name in target_names))

    @staticmethod
    def _element(lookup, name: str, what: str):
        try:
            return lookup(name)
        except (KeyError, ValueError) as e:
            raise errors.InvalidArgumentError(None, None, f"{what} {name!r} is not in the "
                                              f"session's graph: {e}") from None

    def close(self) -> None:
        self.core.close()


def _checked_dtype(tensor, name: str, array, dtype):
    """`array`, fed to `tensor`; InvalidArgumentError if the DataType it came as is another
    (clients convert feeds to the tensor's dtype before sending them)."""
    if dtype is not None and dtype != tensor.dtype.base_dtype.as_datatype_enum:
        raise errors.InvalidArgumentError(
            None, None, f"Feed {name}: expected a {tensor.dtype.base_dtype.name} tensor, got "
            f"{_dtypes.as_dtype(dtype).name}")
    return array
