"""A master session over several tasks: one graph placed on all their devices and run by all.

Each task's part is registered on its worker, and a step runs on all of them with one step id.
Devices of the other tasks come from their GetStatus (the master waits for a task that is not
up yet, logging every 10 s as TensorFlow does, until `operation_timeout_in_ms` if set). The
plan is the local pipeline's (prune, optimize, place, partition by device) with feeds and
fetches as client-terminated `_Recv`/`_Send` nodes, as TF's master makes them; each task's
partitions go to its worker (this task's directly, the others' as a GraphDef by
RegisterGraph). A step sends each task its feeds (RunGraph) and takes back the fetches it
makes; the first failure cancels the other tasks' parts, the root cause is raised, and every
task drops the step's rendezvous (CleanupGraph).
"""
from __future__ import annotations

import concurrent.futures
import logging
import random

import numpy as np

from tensorweave.distributed import wire
from tensorweave.distributed.channels import task_name
from tensorweave.distributed.remote_rendezvous import task_of
from tensorweave.framework import errors
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.protos import config_pb2, graph_pb2, worker_pb2
from tensorweave.runtime.devices import Device, DeviceMgr
from tensorweave.runtime.direct_session import DirectSessionCore, RunPlan, check_initialized
from tensorweave.runtime.partial_run import feed_key, fetch_key
from tensorweave.runtime.passes.graph_def import graph_def_of

_log = logging.getLogger("tensorweave")
_WAIT_LOG_SECONDS = 10
_STEP_THREADS = 32


def tasks_in_session(cluster, job: str, task: int, device_filters) -> list[str]:
    """The other tasks a session's config lets it use (all when it sets no device_filters)."""
    filters = [DeviceSpec.from_string(f) for f in device_filters]
    tasks = []
    for other_job in cluster.jobs:
        for index in cluster.task_indices(other_job):
            if (other_job, index) == (job, task):
                continue
            spec = DeviceSpec(job=other_job, replica=0, task=index)
            if not filters or any(f.replace(device_type=None, device_index=None)
                                  .is_compatible_with(spec) for f in filters):
                tasks.append(task_name(other_job, index))
    return tasks


def discover_devices(peers, tasks: list[str], timeout_ms: int) -> list[Device]:
    """Devices of `tasks` from their GetStatus, waiting for tasks not up yet."""
    devices = []
    for task in tasks:
        waited = 0
        while True:
            wait = _WAIT_LOG_SECONDS * 1000
            if timeout_ms > 0:
                wait = min(wait, timeout_ms - waited)
            try:
                status = peers.call(task, "GetStatus", worker_pb2.GetStatusRequest(), wait,
                                    wait_for_ready=True)
                break
            except errors.DeadlineExceededError:
                waited += wait
                if timeout_ms > 0 and waited >= timeout_ms:
                    raise errors.DeadlineExceededError(
                        None, None, f"CreateSession timed out after {timeout_ms} ms waiting "
                        f"for response from worker: {task}") from None
                _log.info("CreateSession still waiting for response from worker: %s", task)
        for attributes in status.device_attributes:
            device = Device(attributes.name, attributes.device_type, np,
                            memory_limit_bytes=attributes.memory_limit)
            device.incarnation = attributes.incarnation
            device.resource_mgr = None   # another process's state
            devices.append(device)
    return devices


class ClusterPlan(RunPlan):
    """A run signature's graphs on each task, and where its feeds go and fetches come from."""

    __slots__ = ("handles", "feed_keys", "feed_tasks", "fetch_keys", "fetch_tasks")


class ClusterCore(DirectSessionCore):
    """The runtime of a master session whose graph may span tasks."""

    def __init__(self, graph, config, master, session_handle: str, remote_devices: list):
        super().__init__(graph, config,
                         DeviceMgr(list(master.device_mgr.devices) + remote_devices))
        self._master = master
        self._handle = session_handle
        self._timeout = config.operation_timeout_in_ms if config is not None else 0
        self._steps = concurrent.futures.ThreadPoolExecutor(
            max_workers=_STEP_THREADS, thread_name_prefix="tw-master-step")
        self._running: dict[int, dict] = {}   # step id -> its RunGraph requests, per task
        self._closing = False

    def partial_run_setup(self, feeds: tuple, fetches: tuple, targets: tuple) -> str:
        raise errors.UnimplementedError(None, None, "Partial runs of a graph that spans tasks "
                                        "are not supported yet: they run on a one-task "
                                        "session (device_filters) only.")

    def _placement_task(self) -> tuple:
        return None, None   # a request naming no job may land on any task

    def _build_plan(self, feeds, fetches, targets, partial: bool) -> ClusterPlan:
        optimized, parts, reasons = self._partitions(feeds, fetches, targets, partial=True)
        by_task: dict[str, dict] = {}
        for device, part in parts.items():
            by_task.setdefault(task_of(device), {})[device] = part
        plan = ClusterPlan([self.feed_spec(t) for t in feeds], len(fetches), [],
                           self._variables_read_before_written(optimized), parts.values(),
                           reasons)
        plan.handles = {task: self._register(task, task_parts)
                        for task, task_parts in by_task.items()}
        ends = {(n.op, n.attrs["tensor_name"]): task_of(n.device)
                for part in parts.values() for n in part
                if n.op in ("_Recv", "_Send") and n.attrs.get("client_terminated")}
        plan.feed_keys = [feed_key(t.name) for t in feeds]
        plan.feed_tasks = [ends[("_Recv", t.name)] for t in feeds]
        plan.fetch_keys = [fetch_key(t.name) for t in fetches]
        plan.fetch_tasks = [ends[("_Send", t.name)] for t in fetches]
        return plan

    def _register(self, task: str, parts: dict) -> str:
        master = self._master
        if task == master.worker.task:
            return master.worker.register_partitions(self._handle, parts, self.graph)
        graph_def = graph_pb2.GraphDef()
        for part in parts.values():
            graph_def.node.extend(graph_def_of(part).node)
        return master.peers.call(task, "RegisterGraph", worker_pb2.RegisterGraphRequest(
            session_handle=self._handle, graph_def=graph_def), self._timeout).graph_handle

    def run_step(self, plan: ClusterPlan, args: list, options=None, run_metadata=None) -> list:
        check_initialized(plan.var_checks)
        timeout = (options.timeout_in_ms if options is not None else 0) or self._timeout
        step_id = random.getrandbits(57)
        traced = (run_metadata is not None and options is not None and
                  options.trace_level != config_pb2.RunOptions.NO_TRACE)
        requests = {task: worker_pb2.RunGraphRequest(
            graph_handle=handle, step_id=step_id, session_handle=self._handle,
            exec_opts=worker_pb2.ExecutorOpts(record_timeline=traced))
            for task, handle in plan.handles.items()}
        for key, task, value in zip(plan.feed_keys, plan.feed_tasks, args):
            requests[task].send.add(name=key).tensor.CopyFrom(wire.tensor_proto(value))
        for key, task in zip(plan.fetch_keys, plan.fetch_tasks):
            requests[task].recv_key.append(key)
        received, stats = self._run_everywhere(requests, step_id, timeout)
        if traced:   # every task's nodes, each task's devices apart
            for step_stats in stats:
                run_metadata.step_stats.dev_stats.extend(step_stats.dev_stats)
        if run_metadata is not None and options is not None and \
                options.output_partition_graphs:
            run_metadata.partition_graphs.extend(plan.partition_graph_defs())
        return [wire.ndarray(received[key], f"Fetch {key}") for key in plan.fetch_keys]

    def _run_everywhere(self, requests: dict, step_id: int, timeout: int) -> tuple:
        """Runs the step's RunGraph on every task at once; ({rendezvous key: TensorProto},
        [each task's StepStats]).
        The first failure cleans the step up on every task at once (CleanupGraph cancels a
        task's part still running), so the others end too."""
        master, local = self._master, self._master.worker
        running = {}
        for task, request in requests.items():
            running[task] = (self._steps.submit(local.run_graph, request, timeout)
                             if task == local.task else
                             master.peers.start(task, "RunGraph", request, timeout))
        received, failures, stats = {}, [], []
        self._running[step_id] = requests
        try:
            for future in concurrent.futures.as_completed(running.values()):
                try:
                    response = future.result()
                    if response.status_code:
                        _raise_status(response)
                except errors.OpError as e:
                    if not failures:
                        self._cleanup(requests, step_id)
                    failures.append(e)
                    continue
                received.update((r.name, r.tensor) for r in response.recv)
                stats.append(response.step_stats)
        finally:
            self._running.pop(step_id, None)
            self._cleanup(requests, step_id)
        if failures:
            if self._closing:
                raise errors.CancelledError(None, None, "Session has been closed.")
            raise _root_cause(failures)
        return received, stats

    def _cleanup(self, requests: dict, step_id: int) -> None:
        """CleanupGraph on every task of the step (this one's at once, the others' without
        waiting for their answers)."""
        master = self._master
        for task in requests:
            if task == master.worker.task:
                master.worker.steps.cleanup(step_id)
                master.worker.abort_step(step_id, _cleanup_error(step_id))
            else:
                master.peers.start(task, "CleanupGraph",
                                   worker_pb2.CleanupGraphRequest(step_id=step_id), 10_000)

    def close(self) -> None:
        """Cancels the steps still running (CancelledError) and forgets the graphs."""
        self._closing = True
        for step_id, requests in list(self._running.items()):
            self._cleanup(requests, step_id)
        for plan in list(self._plans.values()):
            for task, handle in plan.handles.items():
                if task == self._master.worker.task:
                    self._master.worker.call("DeregisterGraph", worker_pb2.DeregisterGraphRequest(
                        graph_handle=handle))
                else:
                    self._master.peers.start(task, "DeregisterGraph",
                                              worker_pb2.DeregisterGraphRequest(
                                                  graph_handle=handle), 10_000)
        self._steps.shutdown(wait=False, cancel_futures=True)
        self._master.worker.forget_session(self._handle)
        super().close()


def _raise_status(response):
    wire.raise_status(response.status_code, response.status_error_message)


def _cleanup_error(step_id: int) -> errors.OpError:
    return errors.AbortedError(None, None, f"Cleanup {step_id}")


def _root_cause(failures: list) -> errors.OpError:
    """The first failure that is not only a consequence of another (a cancellation or an
    aborted transfer)."""
    derived = (errors.CancelledError, errors.AbortedError)
    return next((e for e in failures if not isinstance(e, derived)), failures[0])
