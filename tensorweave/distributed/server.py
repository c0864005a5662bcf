"""tf.train.Server: one task of a cluster, serving TensorFlow's master and worker over gRPC.

The server of task `job_name`/`task_index` listens on the port its address in the cluster
names (the host it names too, so "localhost:2222" is reachable from this machine only and a
task named by a public address listens there), and its devices are
`/job:<job_name>/replica:0/task:<task_index>/device:CPU:<i>`. Sessions created on it with
`Session(server.target)` run their graphs on those devices and share their variables. A
session in the same process reaches the master without RPCs (TF's LocalMaster) unless its
config sets `rpc_options.use_rpc_for_inprocess_master`. Unlike TensorFlow's, `stop()` shuts a
server down.
"""
from __future__ import annotations

import threading
from concurrent import futures

from tensorweave.distributed import security, wire
from tensorweave.distributed.master import Master
from tensorweave.distributed.services import add_services
from tensorweave.framework import errors
from tensorweave.protos import config_pb2, tensorflow_server_pb2
from tensorweave.runtime.devices import DeviceMgr
from tensorweave.train.cluster_spec import ClusterSpec

__all__ = ["Server", "in_process_master"]

_RPC_THREADS = 32                    # a RunStep holds one for the whole step

_in_process: dict[str, Master] = {}   # "localhost:port" of each started server -> its master
_in_process_lock = threading.Lock()


def in_process_master(address: str) -> Master | None:
    """The master of a server started in this process at `address` ("host:port"), if any."""
    return _in_process.get(address)


def make_server_def(server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                    config=None) -> tensorflow_server_pb2.ServerDef:
    """A ServerDef from a ServerDef, ClusterSpec, ClusterDef or dict, TF's way: the job and
    task may be left out when the cluster has only one of them; "grpc" is the protocol."""
    if isinstance(server_or_cluster_def, tensorflow_server_pb2.ServerDef):
        server_def = tensorflow_server_pb2.ServerDef()
        server_def.CopyFrom(server_or_cluster_def)
        if job_name is not None:
            server_def.job_name = job_name
        if task_index is not None:
            server_def.task_index = task_index
        if protocol is not None:
            server_def.protocol = protocol
    else:
        try:
            cluster = ClusterSpec(server_or_cluster_def)
        except TypeError:
            raise TypeError("Could not convert `server_or_cluster_def` to a "
                            "`tf.train.ServerDef` or `tf.train.ClusterSpec`.") from None
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster.jobs[0]
        if task_index is None:
            indices = cluster.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        server_def = tensorflow_server_pb2.ServerDef(
            cluster=cluster.as_cluster_def(), job_name=job_name, task_index=task_index,
            protocol=protocol or "grpc")
    if config is not None:
        if not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        server_def.default_session_config.MergeFrom(config)
    return server_def


def _task_address(server_def) -> tuple[str, int]:
    """(host, port) this task listens on."""
    jobs = {job.name: job for job in server_def.cluster.job}
    job = jobs.get(server_def.job_name)
    if job is None:
        raise errors.InvalidArgumentError(None, None, f'Job "{server_def.job_name}" was not '
                                          "defined in cluster")
    address = job.tasks.get(server_def.task_index)
    if address is None:
        raise errors.InvalidArgumentError(None, None, f"Task {server_def.task_index} was not "
                                          f'defined in job "{server_def.job_name}"')
    host, _, port = address.rpartition(":")
    if server_def.port:
        return host or "localhost", server_def.port
    if not host or not port.isdigit():
        raise errors.InvalidArgumentError(None, None, "Could not parse port for local server "
                                          f'from "{address}".')
    return host, int(port)


class Server:
    """An in-process server of one task of a cluster (TF1's tf.train.Server)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        import grpc
        self._server_def = make_server_def(server_or_cluster_def, job_name, task_index,
                                           protocol, config)
        server_def = self._server_def
        if server_def.protocol != "grpc":
            raise errors.NotFoundError(None, None, "No server factory registered for the given "
                                       f'ServerDef: protocol "{server_def.protocol}"')
        host, port = _task_address(server_def)
        session_config = server_def.default_session_config
        devices = DeviceMgr.local(dict(session_config.device_count), server_def.job_name,
                                  server_def.task_index)
        self._master = Master(ClusterSpec(server_def.cluster), server_def.job_name,
                              server_def.task_index, devices, session_config)
        secured = security.Security.from_environment()
        self._grpc = grpc.server(
            futures.ThreadPoolExecutor(max_workers=_RPC_THREADS, thread_name_prefix="tw-rpc"),
            options=[*wire.MESSAGE_SIZE_OPTIONS, ("grpc.so_reuseport", 0)],
            interceptors=security.server_interceptors(secured))
        add_services(self._grpc, self._master)
        try:
            self._port = security.add_port(self._grpc, f"{host}:{port}", secured)
        except RuntimeError:
            self._port = 0
        if not self._port:
            raise errors.UnknownError(None, None, f"Could not start gRPC server: cannot listen "
                                      f"on {host}:{port}")
        secured.warn_if_exposed(host, self._port, f"Task {server_def.job_name}:"
                                f"{server_def.task_index}")
        self._address = f"localhost:{self._port}"
        self._started = self._stopped = False
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True) -> Server:
        """A server of a one-task cluster on any free port of localhost (job "localhost")."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config,
                      start=start)

    @property
    def server_def(self) -> tensorflow_server_pb2.ServerDef:
        return self._server_def

    @property
    def target(self) -> str:
        """The target to give tf.Session: "grpc://localhost:<port>"."""
        return f"grpc://{self._address}"

    def start(self) -> None:
        """Starts serving (idempotent)."""
        if self._stopped:
            raise errors.FailedPreconditionError(None, None, "The server has been stopped.")
        if not self._started:
            self._started = True
            self._grpc.start()
            with _in_process_lock:
                _in_process[self._address] = self._master

    def join(self) -> None:
        """Blocks until the server stops (for a ps task: forever)."""
        self._grpc.wait_for_termination()

    def stop(self) -> None:
        """Stops serving and closes every session; TensorFlow's servers cannot."""
        if self._stopped:
            return
        self._stopped = True
        with _in_process_lock:
            if _in_process.get(self._address) is self._master:
                del _in_process[self._address]
        self._grpc.stop(grace=None).wait()
        self._master.stop()
