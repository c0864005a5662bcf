"""tf.train.ClusterSpec: the jobs of a cluster and the network address of each of their tasks.

A client-side description, as in TensorFlow: built from a dict {job: [addresses]} (task i at
index i), {job: {task index: address}} (sparse indices), a `ClusterDef` proto or another
ClusterSpec, and convertible to a `ClusterDef` (jobs sorted by name, tasks by index) for the
distributed runtime. `replica_device_setter(cluster=...)` reads its "ps" job.
"""
from __future__ import annotations

from tensorweave.protos import cluster_pb2

__all__ = ["ClusterSpec"]


def _text(value, what: str) -> str:
    """A job name or address as str (bytes decoded); TypeError in TensorFlow's words else."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, str):
        return value
    raise TypeError(f"{what} {value!r} must be bytes or unicode")


class ClusterSpec:
    """A cluster's jobs, each a map from task index to network address."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_cluster_def()
        if isinstance(cluster, cluster_pb2.ClusterDef):
            self._jobs = {job.name: dict(job.tasks) for job in cluster.job}
        elif isinstance(cluster, dict):
            self._jobs = {name: self._tasks(name, tasks) for name, tasks in cluster.items()}
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")
        self._cluster_def = self._make_cluster_def()

    @staticmethod
    def _tasks(job: str, tasks) -> dict:
        if isinstance(tasks, (list, tuple)):
            return dict(enumerate(tasks))
        if isinstance(tasks, dict):
            return {int(i): address for i, address in tasks.items()}
        raise TypeError(f"The tasks for job {job!r} must be a list or a dictionary from "
                        "integers to strings.")

    def _make_cluster_def(self) -> cluster_pb2.ClusterDef:
        cluster_def = cluster_pb2.ClusterDef()
        for name in sorted(self._jobs):
            job = cluster_def.job.add(name=_text(name, "Job name"))
            for index, address in sorted(self._jobs[name].items()):
                job.tasks[index] = _text(address, "Task address")
        return cluster_def

    def _job(self, job_name) -> dict:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    # --- queries --------------------------------------------------------------------------
    @property
    def jobs(self) -> list:
        """The job names, in the order they were given."""
        return list(self._jobs)

    def num_tasks(self, job_name) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name) -> list:
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index) -> str:
        tasks = self._job(job_name)
        try:
            return tasks[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name) -> list:
        """The addresses by task index, None where a sparse job has no task."""
        tasks = self._job(job_name)
        addresses = [None] * (max(tasks) + 1 if tasks else 0)
        for index, address in tasks.items():
            addresses[index] = address
        return addresses

    def as_dict(self) -> dict:
        """{job: [addresses]} where a job's indices are 0..n-1, else {job: {index: address}}."""
        result = {}
        for name, tasks in self._jobs.items():
            dense = sorted(tasks) == list(range(len(tasks)))
            result[name] = self.job_tasks(name) if dense and tasks else dict(tasks)
        return result

    def as_cluster_def(self) -> cluster_pb2.ClusterDef:
        return self._cluster_def

    # --- comparison and display -------------------------------------------------------------
    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other):
        return self._jobs == (other._jobs if isinstance(other, ClusterSpec) else other)

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        jobs = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{name!r}: {jobs[name]!r}"
                                           for name in sorted(jobs)) + "})"
