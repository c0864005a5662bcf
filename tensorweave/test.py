"""tf.test: TestCase and main for TF1-style tests, gradient checks, local clusters, benchmarks."""
from __future__ import annotations

import os
import re
import sys
import unittest
from unittest import mock

from tensorweave.autodiff.checker import compute_gradient, compute_gradient_error
from tensorweave.testing.benchmark import Benchmark
from tensorweave.testing.test_case import TestCase, get_temp_dir

__all__ = ["Benchmark", "TestCase", "assert_equal_graph_def", "compute_gradient",
           "compute_gradient_error", "create_local_cluster", "get_temp_dir", "gpu_device_name",
           "is_built_with_cuda", "is_built_with_gpu_support", "is_built_with_rocm",
           "is_built_with_xla", "is_gpu_available", "main", "mock", "test_src_dir_path"]


def main(argv=None):
    """Runs the tests of the __main__ module (unittest's runner; TF1 uses absl's)."""
    return unittest.main(module="__main__", argv=argv if argv is not None else sys.argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None) -> bool:
    """tensorweave has no GPU device type yet."""
    return False


def is_built_with_cuda() -> bool:
    return False


def is_built_with_gpu_support() -> bool:
    return False


def is_built_with_rocm() -> bool:
    return False


def is_built_with_xla() -> bool:
    return False


def gpu_device_name() -> str:
    return ""


def test_src_dir_path(relative_path: str) -> str:
    """`relative_path` under the installed tensorweave package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), relative_path)


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                         ps_config=None):
    """(worker Servers, ps Servers) of a cluster on free ports of localhost, started."""
    import socket

    from tensorweave.distributed.server import Server

    def free_port() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    cluster = {"worker": [f"localhost:{free_port()}" for _ in range(num_workers)],
               "ps": [f"localhost:{free_port()}" for _ in range(num_ps)]}
    workers = [Server(cluster, job_name="worker", protocol=protocol, task_index=i,
                      config=worker_config) for i in range(num_workers)]
    ps_servers = [Server(cluster, job_name="ps", protocol=protocol, task_index=i,
                         config=ps_config) for i in range(num_ps)]
    return workers, ps_servers


_RANDOM_TEMP = re.compile(r"_temp_[0-9a-f]{32}")


def assert_equal_graph_def(actual, expected, checkpoint_v2=False,
                           hash_table_shared_name=False) -> None:
    """AssertionError unless two GraphDefs have the same nodes (in any order): op, inputs
    (control inputs in any order), device and attrs. `checkpoint_v2` ignores the random part
    of savers' temporary file names, `hash_table_shared_name` hash tables' shared names."""
    from tensorweave.protos import graph_pb2
    for graph, what in ((actual, "actual"), (expected, "expected")):
        if not isinstance(graph, graph_pb2.GraphDef):
            raise TypeError(f"Expected tf.GraphDef for {what}, got {type(graph).__name__}")
    nodes = [{node.name: _comparable(node, checkpoint_v2, hash_table_shared_name)
              for node in graph.node} for graph in (actual, expected)]
    problems = []
    only_actual = sorted(set(nodes[0]) - set(nodes[1]))
    only_expected = sorted(set(nodes[1]) - set(nodes[0]))
    if only_actual:
        problems.append(f"Found unexpected nodes: {only_actual}")
    if only_expected:
        problems.append(f"Missing nodes: {only_expected}")
    for name in sorted(set(nodes[0]) & set(nodes[1])):
        if nodes[0][name] != nodes[1][name]:
            problems.append(f"Node {name!r} differs:\nactual: {nodes[0][name]}\n"
                            f"expected: {nodes[1][name]}")
    if problems:
        raise AssertionError("\n".join(problems))


def _comparable(node, checkpoint_v2: bool, hash_table_shared_name: bool) -> tuple:
    data = [i for i in node.input if not i.startswith("^")]
    control = sorted(i for i in node.input if i.startswith("^"))
    attrs = {}
    for key, value in node.attr.items():
        text = value.SerializeToString(deterministic=True)
        if checkpoint_v2 and value.HasField("tensor"):
            text = _RANDOM_TEMP.sub("_temp_", text.decode("latin-1")).encode("latin-1")
        if hash_table_shared_name and key == "shared_name" and \
                node.op.endswith(("HashTable", "HashTableV2")):
            text = b""
        attrs[key] = text
    return node.op, data, control, node.device, attrs
