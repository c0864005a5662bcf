"""Step tracing: per-node timings and outputs for RunOptions(trace_level=FULL_TRACE).

A traced step runs through the dataflow executor, which reports every node it runs to a
`StepStatsCollector`; the session then writes the collected records into
`RunMetadata.step_stats` (one DeviceStepStats per device), the format TensorBoard and the
Chrome-trace timeline read.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.protos import step_stats_pb2
from tensorweave.runtime.executor.values import VariableRef


def _micros() -> int:
    return time.time_ns() // 1000


# As in TensorFlow's step stats, transfers are not nodes of their own: the timeline draws them
# as arrows from producer to consumer.
_UNRECORDED = frozenset({"_Send", "_Recv"})


class StepStatsCollector:
    """Thread-safe list of (device, NodeExecStats) records for one step."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_device: dict[str, list] = {}

    def record(self, node, device: str, start_us: int, end_us: int, outputs) -> None:
        if node.op in _UNRECORDED:
            return
        stats = step_stats_pb2.NodeExecStats(
            node_name=node.name, all_start_micros=start_us,
            op_start_rel_micros=0, op_end_rel_micros=end_us - start_us,
            all_end_rel_micros=end_us - start_us, thread_id=threading.get_ident() & 0xFFFF,
            timeline_label=f"{node.name} = {node.op}({', '.join(s for s, _ in node.inputs)})")
        for slot, value in enumerate(outputs):
            out = stats.output.add(slot=slot)
            if isinstance(value, VariableRef):   # a variable's output: describe its storage
                value = value.value
            arr = value if isinstance(value, (np.ndarray, np.generic)) else None
            if arr is None:
                continue
            try:
                out.tensor_description.dtype = _dtypes.from_numpy(arr.dtype).as_datatype_enum
            except TypeError:
                pass
            for d in np.shape(arr):
                out.tensor_description.shape.dim.add(size=d)
            alloc = out.tensor_description.allocation_description
            alloc.requested_bytes = alloc.allocated_bytes = arr.nbytes
            alloc.allocator_name = "cpu"
        with self._lock:
            self._by_device.setdefault(device, []).append(stats)

    def fill(self, step_stats) -> None:
        """Appends the collected records to a StepStats proto."""
        with self._lock:
            for device, records in self._by_device.items():
                dev = step_stats.dev_stats.add(device=device)
                dev.node_stats.extend(sorted(records, key=lambda s: s.all_start_micros))


now_micros = _micros
