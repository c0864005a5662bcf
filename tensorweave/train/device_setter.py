"""`tf.train.replica_device_setter`: the device function of between-graph replication.

Each worker builds the whole model under `tf.device(replica_device_setter(...))`: variables
(and the other ops that hold state a worker must share) go to the parameter-server tasks in
turn, everything else to the worker's own device. The function merges with the device an
op already asks for, so `tf.device("/cpu:0")` inside the scope pins the device type and
index while the job and task still come from the setter (TF1's behaviour).
"""
from __future__ import annotations

from tensorweave.framework.device_spec import DeviceSpec

__all__ = ["replica_device_setter"]

# The op types placed on parameter servers by default (TensorFlow's STANDARD_PS_OPS).
STANDARD_PS_OPS = (
    "Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
    "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
    "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp", "ResourceConditionalAccumulator",
    "DecisionTreeResource")


class _RoundRobinStrategy:
    """Parameter-server task for each placed op: 0, 1, ..., n-1, 0, ..."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op) -> int:
        task = self._next_task
        self._next_task = (task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    """The device function: ps ops to `ps_device` (task from the strategy), others to
    `worker_device`, each merged with the device the op already requests."""

    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                 ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op) -> str:
        if not self._merge_devices and op.device:
            return op.device
        requested = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            # The task is chosen only when the op's own job (if any) is the ps job: an op
            # that asks for another job keeps it, and a task number would be meaningless.
            if ps.job and (not requested.job or requested.job == ps.job):
                ps = ps.replace(task=self._ps_strategy(op))
            return ps.make_merged_spec(requested).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(requested).to_string()


def _cluster_jobs(cluster) -> dict:
    """{job: tasks} of a cluster given as a dict or as an object with `as_dict()`."""
    jobs = cluster.as_dict() if hasattr(cluster, "as_dict") else cluster
    if not isinstance(jobs, dict):
        raise TypeError(f"cluster must be a dictionary or a ClusterSpec, got {cluster!r}")
    return jobs


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for `tf.device`, or None when there are no parameter servers.

    `cluster` (a dict {job: [addresses]} or {job: {index: address}}, or a ClusterSpec-like
    object with `as_dict()`) sets `ps_tasks` to the number of "ps" tasks; a cluster without a
    "ps" job gives None, as does `ps_tasks=0`. `ps_strategy(op)` picks a variable's task
    (round-robin by default); `ps_ops` lists the op types that go to parameter servers."""
    if cluster is not None:
        jobs = _cluster_jobs(cluster)
        if "ps" not in jobs:
            return None
        ps_tasks = len(jobs["ps"])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    elif not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    ps_ops, ps_strategy)
    return chooser.device_function
