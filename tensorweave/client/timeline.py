"""Timeline: a traced step's StepStats as Chrome trace JSON, and a per-op summary over steps.

`Timeline(run_metadata.step_stats).generate_chrome_trace_format()` gives what chrome://tracing
and Perfetto open: one process per device, its nodes as complete ("X") events on thread lanes
(a lane per overlapping run), an arrow ("s"/"f" flow events) from each `_Send` to its `_Recv`,
and optionally an output-bytes counter per device. `OpSummary` accumulates several steps'
StepStats into a table of count, total and mean time per op type, like tf.profiler's op view.
(TensorFlow's path: tensorflow.python.client.timeline.)
"""
from __future__ import annotations

import json
import re

_LABEL = re.compile(r"^(?P<name>.+?) = (?P<op>[\w.]+)\((?P<inputs>.*?)\)(?P<rest>.*)$")
_TRANSFER = re.compile(r" (?P<tensor>edge_\d+_\S+) from ")


def _op_and_inputs(node_stats) -> tuple[str, list[str], str]:
    """(op type, input names, rest) parsed from the `name = Op(a, b)` timeline label."""
    m = _LABEL.match(node_stats.timeline_label or "")
    if m is None:
        return node_stats.node_name, [], ""
    inputs = [s for s in m.group("inputs").split(", ") if s]
    return m.group("op"), inputs, m.group("rest")


def _lanes(records) -> list[int]:
    """A lane per record so that records on one lane never overlap (greedy, by start)."""
    ends: list[int] = []
    lanes = []
    for r in records:
        start = r.all_start_micros
        lane = next((i for i, end in enumerate(ends) if end <= start), len(ends))
        if lane == len(ends):
            ends.append(0)
        ends[lane] = start + max(r.all_end_rel_micros, 1)
        lanes.append(lane)
    return lanes


class Timeline:
    """Chrome trace of one step's StepStats (TF1's tf.python.client.timeline.Timeline)."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph   # accepted for TensorFlow's signature; labels carry what we need

    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False) -> str:
        """The trace as a JSON string.

        Args:
          show_dataflow: draw an arrow from each `_Send` to its `_Recv`.
          show_memory: add a counter of the bytes each device's nodes output, over time.

        Returns:
          A JSON string with a `traceEvents` list.
        """
        events, sends, recvs = [], {}, {}
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": f"{dev.device} Compute"}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                           "args": {"sort_index": pid}})
            records = sorted(dev.node_stats, key=lambda r: r.all_start_micros)
            produced = 0
            for r, tid in zip(records, _lanes(records)):
                op, inputs, rest = _op_and_inputs(r)
                args = {"name": r.node_name, "op": op}
                args.update({f"input{i}": name for i, name in enumerate(inputs)})
                events.append({"name": op, "cat": "Op", "ph": "X", "pid": pid, "tid": tid,
                               "ts": r.all_start_micros, "dur": max(r.all_end_rel_micros, 1),
                               "args": args})
                transfer = _TRANSFER.search(rest)
                if transfer is not None:
                    table = sends if op == "_Send" else recvs
                    table[transfer.group("tensor")] = (pid, tid, r)
                if show_memory:
                    produced += sum(o.tensor_description.allocation_description.requested_bytes
                                    for o in r.output)
                    events.append({"name": "Output bytes", "ph": "C", "pid": pid,
                                   "ts": r.all_start_micros + r.all_end_rel_micros,
                                   "args": {"bytes": produced}})
        if show_dataflow:
            events.extend(_flows(sends, recvs))
        return json.dumps({"traceEvents": events}, separators=(",", ":"))


def _flows(sends: dict, recvs: dict) -> list[dict]:
    """A flow arrow from the end of each _Send to the end of the matching _Recv."""
    flows = []
    for flow_id, (tensor, (spid, stid, s)) in enumerate(sorted(sends.items())):
        if tensor not in recvs:
            continue
        rpid, rtid, r = recvs[tensor]
        end = s.all_start_micros + max(s.all_end_rel_micros, 1) - 1
        arrive = max(r.all_start_micros + max(r.all_end_rel_micros, 1) - 1, end)
        flows.append({"name": tensor, "cat": "DataFlow", "ph": "s", "id": flow_id,
                      "pid": spid, "tid": stid, "ts": end})
        flows.append({"name": tensor, "cat": "DataFlow", "ph": "f", "bp": "e", "id": flow_id,
                      "pid": rpid, "tid": rtid, "ts": arrive})
    return flows


class OpSummary:
    """Per-op-type time over several traced steps: add each step's StepStats, then read
    `rows()` (op, count, total µs, mean µs; slowest first) or print `table()`."""

    def __init__(self):
        self._totals: dict[str, list[int]] = {}

    def add(self, step_stats) -> None:
        for dev in step_stats.dev_stats:
            for r in dev.node_stats:
                op = _op_and_inputs(r)[0]
                entry = self._totals.setdefault(op, [0, 0])
                entry[0] += 1
                entry[1] += r.all_end_rel_micros

    def rows(self) -> list[tuple[str, int, int, float]]:
        rows = [(op, n, total, total / n) for op, (n, total) in self._totals.items()]
        return sorted(rows, key=lambda row: (-row[2], row[0]))

    def table(self) -> str:
        lines = [f"{'op':<28}{'count':>8}{'total us':>12}{'mean us':>10}"]
        lines += [f"{op:<28}{n:>8}{total:>12}{mean:>10.1f}" for op, n, total, mean in
                  self.rows()]
        return "\n".join(lines)
