"""Partition: the placed graph split into one graph per device, joined by _Send/_Recv pairs.

In: an RGraph whose nodes all have `device` set, and a callback giving a device's incarnation.
Out: {device name: RGraph}, a pure function of its input (the input graph is not mutated;
nodes with a rewired input are copies). After it:
  - every data edge crossing devices is a `_Send` on the source device and a `_Recv` on the
    destination, with TensorFlow's attrs; one `_Recv` per (tensor, destination device),
    however many consumers it feeds there;
  - the control edges of a node from one other device are carried by one dummy tensor: a
    scalar Const on the source device, run after all of those sources, sent to the
    destination, whose `_Recv` becomes the node's control input (one per (set of source
    nodes, destination device));
  - an edge inside a while loop's frame crosses once per iteration: every device holding part
    of the frame gets a control loop iterating in step with it (`loop_frames.py`), and the
    pair's keys name the frame instance and iteration (executor/frames.py). An Enter or
    NextIteration feeding another device (by data or control edge) is copied there (its input
    crosses instead), since they deliver to another iteration than the one they run in.
Each pair's `tensor_name` is unique within the step, so a step's rendezvous keys never collide.
"""
from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.runtime.loop_frames import (
    ENTER_OPS,
    NEXT_OPS,
    ControlLoops,
    FrameMap,
    check_spanning_frame,
)
from tensorweave.runtime.prune import RGraph, RNode


def partition(graph: RGraph,
              incarnation: Callable[[str], int] = lambda device: 1) -> dict[str, RGraph]:
    """Splits `graph` by device; see the module docstring."""
    devices = {node.device for node in graph}
    if len(devices) <= 1:
        return {device: graph for device in devices}
    return _Partitioner(graph, incarnation).run()


class _Partitioner:
    """One partitioning: the pairs made so far, keyed so each transfer is made once."""

    def __init__(self, graph, incarnation):
        self.graph = graph
        self.incarnation = incarnation
        self.parts: dict[str, RGraph] = {}
        self.recvs: dict[tuple, str] = {}   # (src name, output, dst device) -> recv name
        self.counter = 0    # numbers the tensor names
        self.n_names = 0    # numbers the new nodes' names
        self.frames = FrameMap(graph)
        self.frame_recvs: list[RNode] = []   # _Recvs inside frames, waiting for their loop
        self.clones: dict[tuple[str, str], str] = {}
        self.loops = ControlLoops(self.frames, self._unique, self._add, self._frame_pair)
        self.taken = set(graph.nodes)

    def run(self) -> dict[str, RGraph]:
        for node in self.graph:
            self._add(self._rewire(node))
        self._add_control_loops()
        return self.parts

    def _add(self, node: RNode) -> None:
        self._part(node.device).add(node)

    def _add_control_loops(self) -> None:
        """A control loop for each frame on each device holding part of it (frames split over
        devices only); each _Recv inside a frame then depends on its loop's Merge there."""
        runs_in = self.frames.runs_in
        devices: dict[str, set[str]] = {}
        for part in self.parts.values():
            for node in part:
                for frame in self.frames.ancestry(runs_in.get(node.name, "")):
                    devices.setdefault(frame, set()).add(node.device)
        for frame, on in devices.items():
            if len(on) > 1:
                for device in sorted(on):
                    self.loops.merge(frame, device)
        while self.frame_recvs:
            recv = self.frame_recvs.pop()
            recv.control_inputs.append(self.loops.merge(runs_in[recv.name], recv.device))

    def _part(self, device: str) -> RGraph:
        part = self.parts.get(device)
        if part is None:
            part = self.parts[device] = RGraph()
        return part

    def _rewire(self, node: RNode) -> RNode:
        nodes, dev = self.graph.nodes, node.device
        crossing = [i for i, (s, _) in enumerate(node.inputs) if nodes[s].device != dev]
        control = [c for c in node.control_inputs if nodes[c].device != dev]
        if not crossing and not control:
            return node
        node = copy.copy(node)
        inputs = list(node.inputs)
        for i in crossing:
            src = nodes[inputs[i][0]]
            if src.op in ENTER_OPS or src.op in NEXT_OPS:
                inputs[i] = (self._clone_for(src, dev), inputs[i][1])
            else:
                inputs[i] = (self._recv_for(inputs[i], node), 0)
        node.inputs = inputs
        local = [c for c in node.control_inputs if nodes[c].device == dev]
        by_source: dict[tuple, list[str]] = {}   # one transfer carries all control edges
        for c in control:                        # from one device and frame
            if nodes[c].op in ENTER_OPS or nodes[c].op in NEXT_OPS:
                local.append(self._clone_for(nodes[c], dev))
                continue
            key = (nodes[c].device, self.frames.output_frame(c))
            by_source.setdefault(key, []).append(c)
        node.control_inputs = local + [self._control_recv_for(tuple(sources), node)
                                       for sources in by_source.values()]
        return node

    def _clone_for(self, src: RNode, device: str) -> str:
        """A copy of the Enter or NextIteration `src` on `device` (its input crosses instead:
        the copy then delivers into the frame and iteration the original does)."""
        key = (src.name, device)
        name = self.clones.get(key)
        if name is None:
            clone = copy.copy(src)
            clone.name = name = self.clones[key] = self._unique(src.name)
            clone.device = device
            clone.control_inputs = list(src.control_inputs)
            self.frames.add(clone, self.frames.runs_in.get(src.name, ""))
            self._add(self._rewire(clone))
        return name

    def _recv_for(self, edge, dst: RNode) -> str:
        key = (edge[0], edge[1], dst.device)
        name = self.recvs.get(key)
        if name is None:
            src = self.graph.nodes[edge[0]]
            dtype = src.output_dtypes[edge[1]].base_dtype
            shape = src.output_shapes[edge[1]]
            name = self.recvs[key] = self._pair(src, edge, dst, dtype, shape).name
        return name

    def _frame_pair(self, src: RNode, edge, dst: RNode) -> RNode:
        """The _Recv of a control loop's predicate (`ControlLoops.transfer`)."""
        return self.parts[dst.device].nodes[self._recv_for(edge, dst)]

    def _control_recv_for(self, sources: tuple[str, ...], dst: RNode) -> str:
        """The _Recv of a dummy scalar made after every node of `sources` (all on one
        device), for `dst`'s control edges from them."""
        key = (sources, None, dst.device)
        name = self.recvs.get(key)
        if name is None:
            src = self.graph.nodes[sources[0]]
            dummy = RNode(self._unique(sources[0]), "Const",
                          {"value": np.zeros((), np.float32), "dtype": _dtypes.float32},
                          [], list(sources), "", [], [_dtypes.float32], [TensorShape([])],
                          src.creation_site)
            dummy.device = src.device
            self.frames.add(dummy, self.frames.output_frame(sources[0]))
            self._add(dummy)
            name = self.recvs[key] = self._pair(dummy, (dummy.name, 0), dst, _dtypes.float32,
                                                TensorShape([])).name
        return name

    def _pair(self, src: RNode, edge, dst: RNode, dtype, shape) -> RNode:
        """Adds a _Send after `edge` on its device and a _Recv on dst's; returns the recv.
        Inside a frame, both run in it and the recv waits for its device's control loop."""
        frame = self.frames.output_frame(src.name)
        if frame:
            check_spanning_frame(self.frames, frame, f"{src.name} -> {dst.name}")
        attrs = {"tensor_name": f"edge_{self.counter}_{src.name}",
                 "send_device": src.device,
                 "send_device_incarnation": self.incarnation(src.device),
                 "recv_device": dst.device, "client_terminated": False,
                 "_src": src.name, "_dst": dst.name}
        if frame:   # keyed per frame instance and iteration: not known before the step
            attrs["_frame"] = frame
        self.counter += 1
        send = RNode(self._unique(src.name), "_Send", {**attrs, "T": dtype}, [edge], [],
                     "", [src.output_dtypes[edge[1]]], [], [], src.creation_site)
        send.device = src.device
        send.input_shapes = (shape,)
        recv = RNode(self._unique(src.name), "_Recv", {**attrs, "tensor_type": dtype},
                     [], [], "", [], [dtype], [shape], src.creation_site)
        recv.device = dst.device
        self._add(send)
        self._add(recv)
        if frame:
            self.frames.add(send, frame)
            self.frames.add(recv, frame)
            self.frame_recvs.append(recv)
        return recv

    def _unique(self, base: str) -> str:
        """The next free `base/_k` (TensorFlow names a pair's nodes `x/_0`, `x/_1`)."""
        while True:
            name = f"{base}/_{self.n_names}"
            self.n_names += 1
            if name not in self.taken:
                self.taken.add(name)
                return name
