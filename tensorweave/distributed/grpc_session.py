"""A session on a tf.train.Server's master: `Session("grpc://host:port")` (TF's GrpcSession).

The first run sends the graph (CreateSession), later runs send only the ops added since
(ExtendSession), and a run is one RunStep with the feeds as TensorProtos and the fetches and
targets by name; errors come back in the response body and are raised here as the same
`tensorweave.errors` class. A server in this process is called directly (TF's LocalMaster;
a step's feeds and fetches pass as arrays) unless `rpc_options.use_rpc_for_inprocess_master`
is set. A call to a server that does not answer fails at once with UnavailableError instead
of waiting for it to appear.
"""
from __future__ import annotations

import threading

from tensorweave.distributed import security, wire
from tensorweave.distributed.server import in_process_master
from tensorweave.distributed.services import MASTER_SERVICE
from tensorweave.framework import errors
from tensorweave.protos import config_pb2, master_pb2
from tensorweave.runtime.devices import DeviceAttributes
from tensorweave.runtime.direct_session import FeedSpec
from tensorweave.runtime.graph_growth import GraphGrowthWatch

__all__ = ["GrpcSessionCore", "reset"]


class _RemotePlan:
    """A run signature as the master takes it: names of feeds, fetches and targets."""

    __slots__ = ("feed_specs", "feed_names", "fetch_names", "target_names")

    def __init__(self, feeds, fetches, targets):
        self.feed_specs = [FeedSpec(t) for t in feeds]
        self.feed_names = [t.name for t in feeds]
        self.fetch_names = [t.name for t in fetches]
        self.target_names = [op.name for op in targets]


class MasterClient:
    """Calls a master's methods in this process or over a gRPC channel."""

    def __init__(self, target: str, config):
        address = target[len("grpc://"):]
        if not address:
            raise errors.InvalidArgumentError(None, None, f"Session target {target!r} names "
                                              "no host:port")
        self.address = address
        use_rpc = config is not None and config.rpc_options.use_rpc_for_inprocess_master
        self.local = None if use_rpc else in_process_master(address)
        self._channel = None
        self._stubs: dict = {}

    def call(self, method: str, request, timeout_ms: int = 0):
        """The master's response to `request`; raises the OpError it answered with."""
        if self.local is not None:
            return self.local.call(method, request)
        import grpc
        stub = self._stubs.get(method)
        if stub is None:
            if self._channel is None:
                self._channel = security.channel(self.address, wire.MESSAGE_SIZE_OPTIONS,
                                                 security.Security.from_environment())
            from tensorweave.distributed.master import Master
            response_type = Master.REQUEST_TYPES[method][1]
            stub = self._stubs[method] = self._channel.unary_unary(
                f"/{MASTER_SERVICE}/{method}", request_serializer=type(request).SerializeToString,
                response_deserializer=response_type.FromString)
        try:
            return stub(request, timeout=timeout_ms / 1000 if timeout_ms > 0 else None)
        except grpc.RpcError as e:
            wire.raise_rpc_error(e, f"{method} to the master at {self.address}")

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None


class GrpcSessionCore(GraphGrowthWatch):
    """The runtime side of a Session whose target is "grpc://host:port"."""

    def __init__(self, target: str, graph, config):
        self.graph = graph
        self.config = config
        self._client = MasterClient(target, config)
        self._timeout_ms = config.operation_timeout_in_ms if config is not None else 0
        self._handle = None
        self._master_version = 0   # the master's graph version
        self._sent_version = 0     # the newest op (graph.version) the master has
        self._lock = threading.Lock()
        self._plans: dict = {}
        self.watch_graph_growth(graph)

    def plan(self, feeds: tuple, fetches: tuple, targets: tuple) -> _RemotePlan:
        key = (feeds, fetches, targets)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = _RemotePlan(feeds, fetches, targets)
        return plan

    def _sync_graph(self) -> None:
        """Sends the master the ops it does not have yet (all of them the first time)."""
        graph = self.graph
        with self._lock:
            version = graph.version
            if self._handle is None:
                request = master_pb2.CreateSessionRequest(graph_def=graph.as_graph_def(),
                                                          target=f"grpc://{self._client.address}")
                if self.config is not None:
                    request.config.CopyFrom(self.config)
                response = self._client.call("CreateSession", request, self._timeout_ms)
                self._handle = response.session_handle
                self._master_version = response.graph_version
            elif version != self._sent_version:
                response = self._client.call("ExtendSession", master_pb2.ExtendSessionRequest(
                    session_handle=self._handle,
                    graph_def=graph.as_graph_def(from_version=self._sent_version),
                    current_graph_version=self._master_version), self._timeout_ms)
                self._master_version = response.new_graph_version
            self._sent_version = version

    def run_step(self, plan: _RemotePlan, args: list, options=None, run_metadata=None) -> list:
        local = self._client.local
        if local is not None:   # a master in this process takes and gives arrays
            self._sync_graph()
            try:
                return local.run_in_process(self._handle, list(zip(plan.feed_names, args)),
                                            plan.fetch_names, plan.target_names, options,
                                            run_metadata)
            except errors.OpError as e:
                wire.raise_status(e.error_code, e.message, self.graph)
        request = master_pb2.RunStepRequest(fetch=plan.fetch_names, target=plan.target_names)
        for name, value in zip(plan.feed_names, args):
            request.feed.add(name=name).tensor.CopyFrom(wire.tensor_proto(value))
        timeout_ms = self._timeout_ms
        if options is not None:
            request.options.CopyFrom(options)
            timeout_ms = options.timeout_in_ms or timeout_ms
        response = self._run(request, timeout_ms)
        if run_metadata is not None:
            run_metadata.MergeFrom(response.metadata)
        return self._fetched(response, plan.fetch_names)

    def _run(self, request, timeout_ms: int):
        """The master's RunStepResponse; raises its error, on the user's op if it names one."""
        self._sync_graph()
        request.session_handle = self._handle
        request.store_errors_in_response_body = True
        try:
            response = self._client.call("RunStep", request, timeout_ms)
        except errors.OpError as e:   # a master in this process raises its errors
            wire.raise_status(e.error_code, e.message, self.graph)
        if response.status_code:
            wire.raise_status(response.status_code, response.status_error_message,
                              self.graph)
        return response

    @staticmethod
    def _fetched(response, names) -> list:
        values = {t.name: t.tensor for t in response.tensor}
        return [wire.ndarray(values[name], f"Fetch {name}") for name in names]

    def partial_run_setup(self, feeds: tuple, fetches: tuple, targets: tuple) -> str:
        """The master's handle of a partial run of these feeds, fetches and targets."""
        self._sync_graph()
        request = master_pb2.PartialRunSetupRequest(
            session_handle=self._handle, feed=[t.name for t in feeds],
            fetch=[t.name for t in fetches], target=[op.name for op in targets])
        try:
            response = self._client.call("PartialRunSetup", request, self._timeout_ms)
        except errors.OpError as e:
            wire.raise_status(e.error_code, e.message, self.graph)
        return response.partial_run_handle

    def partial_run(self, handle: str, feeds, values, fetches) -> list:
        """Feeds and fetches part of partial run `handle` (one RunStep naming it)."""
        request = master_pb2.RunStepRequest(partial_run_handle=handle,
                                            fetch=[t.name for t in fetches])
        for tensor, value in zip(feeds, values):
            request.feed.add(name=tensor.name).tensor.CopyFrom(
                wire.tensor_proto(FeedSpec(tensor).convert(value)))
        return self._fetched(self._run(request, self._timeout_ms), request.fetch)

    def run_plan(self, plan: _RemotePlan, args: list, timeout_ms: int = 0, stats=None,
                 rendezvous=None) -> list:
        options = config_pb2.RunOptions(timeout_in_ms=timeout_ms) if timeout_ms else None
        return self.run_step(plan, args, options)

    def list_devices(self) -> list:
        """The devices of the master's session (made now if no run has made it yet)."""
        self._sync_graph()
        response = self._client.call("ListDevices",
                                     master_pb2.ListDevicesRequest(session_handle=self._handle),
                                     self._timeout_ms)
        return [DeviceAttributes(d.name, d.device_type, d.memory_limit, d.incarnation)
                for d in list(response.local_device) + list(response.remote_device)]

    def close(self) -> None:
        """Closes the master's session (its running steps end with CancelledError)."""
        try:
            if self._handle is not None:
                self._client.call("CloseSession", master_pb2.CloseSessionRequest(
                    session_handle=self._handle), self._timeout_ms)
        except errors.OpError:
            pass   # the server is gone or has forgotten the session: nothing left to close
        finally:
            self._handle = None
            self._client.close()


def reset(target: str, containers=None, config=None) -> None:
    """Closes every session on the master at `target` and frees the resources of
    `containers` (the default container when None) on its devices (tf.Session.reset)."""
    client = MasterClient(target, config)
    try:
        client.call("Reset", master_pb2.ResetRequest(container=list(containers or ())),
                    config.operation_timeout_in_ms if config is not None else 0)
    finally:
        client.close()
