"""Timeline: a traced step's StepStats as Chrome trace JSON, and a per-op summary over steps.

`Timeline(run_metadata.step_stats).generate_chrome_trace_format()` gives what chrome://tracing
and Perfetto open: one process per device, its nodes as complete ("X") events on thread lanes
(a lane per overlapping run), an arrow ("s"/"f" flow events) for each tensor that crossed
devices — from its producer to each consumer on another device, the `_Recv` (named `x/_N`
after its producer `x`) resolved to the producer as TensorFlow's step stats omit transfers —
and optionally an output-bytes counter per device. `OpSummary` accumulates several steps'
StepStats into a table of count, total and mean time per op type, like tf.profiler's op view.
(TensorFlow's path: tensorflow.python.client.timeline.)
"""
from __future__ import annotations

import json
import re

_LABEL = re.compile(r"^(?P<name>.+?) = (?P<op>[\w.]+)\((?P<inputs>.*?)\)")
_RECV_NAME = re.compile(r"^(?P<src>.+)/_\d+$")


def _op_and_inputs(node_stats) -> tuple[str, list[str]]:
    """(op type, input names) parsed from the `name = Op(a, b)` timeline label."""
    m = _LABEL.match(node_stats.timeline_label or "")
    if m is None:
        return node_stats.node_name, []
    return m.group("op"), [s for s in m.group("inputs").split(", ") if s]


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
          show_dataflow: draw an arrow for each tensor sent to another device.
          show_memory: add a counter of the bytes each device's nodes output, over time.

        Returns:
          A JSON string with a `traceEvents` list.
        """
        events, placed = [], {}
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": f"{dev.device} Compute"}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                           "args": {"sort_index": pid}})
            records = sorted(dev.node_stats, key=lambda r: r.all_start_micros)
            produced = 0
            for r, tid in zip(records, _lanes(records)):
                op, inputs = _op_and_inputs(r)
                args = {"name": r.node_name, "op": op}
                args.update({f"input{i}": name for i, name in enumerate(inputs)})
                events.append({"name": op, "cat": "Op", "ph": "X", "pid": pid, "tid": tid,
                               "ts": r.all_start_micros, "dur": max(r.all_end_rel_micros, 1),
                               "args": args})
                placed[r.node_name] = (pid, tid, r, inputs)
                if show_memory:
                    produced += sum(o.tensor_description.allocation_description.requested_bytes
                                    for o in r.output)
                    events.append({"name": "Output bytes", "ph": "C", "pid": pid,
                                   "ts": r.all_start_micros + r.all_end_rel_micros,
                                   "args": {"bytes": produced}})
        if show_dataflow:
            events.extend(_flows(placed))
        return json.dumps({"traceEvents": events}, separators=(",", ":"))


def _flows(placed: dict) -> list[dict]:
    """Arrows from the end of a producer to the start of each consumer on another device."""
    flows = []
    for pid, tid, r, inputs in placed.values():
        producers = {}
        for source in inputs:
            source = source.lstrip("^").split(":")[0]
            m = _RECV_NAME.match(source)
            if source not in placed and m is not None:
                source = m.group("src")
            if source in placed and placed[source][0] != pid:
                producers[source] = placed[source]
        for ppid, ptid, p, _ in producers.values():
            end = p.all_start_micros + max(p.all_end_rel_micros, 1) - 1
            flow_id = len(flows) // 2
            flows.append({"name": p.node_name, "cat": "DataFlow", "ph": "s", "id": flow_id,
                          "pid": ppid, "tid": ptid, "ts": end})
            flows.append({"name": p.node_name, "cat": "DataFlow", "ph": "f", "bp": "e",
                          "id": flow_id, "pid": pid, "tid": tid,
                          "ts": max(r.all_start_micros, end)})
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
