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
  - a crossing edge that touches a node inside a control-flow frame raises
    UnimplementedError: loops spanning devices are not supported yet.
Each pair's `tensor_name` is unique within the step, so a step's rendezvous keys never collide.
"""
from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.runtime.prune import RGraph, RNode

# The ops that make and run loop frames (a cond's Switch and Merge may span devices: dead
# tokens cross through the rendezvous).
LOOP_OPS = frozenset({"Enter", "Exit", "NextIteration", "LoopCond", "RefEnter", "RefExit",
                      "RefNextIteration"})


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
        self.in_frame = _nodes_in_frames(graph)
        self.taken = set(graph.nodes)

    def run(self) -> dict[str, RGraph]:
        for node in self.graph:
            self._part(node.device).add(self._rewire(node))
        return self.parts

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
            inputs[i] = (self._recv_for(inputs[i], node), 0)
        node.inputs = inputs
        by_device: dict[str, list[str]] = {}   # one transfer carries all control edges
        for c in control:                      # from one device
            by_device.setdefault(nodes[c].device, []).append(c)
        node.control_inputs = [c for c in node.control_inputs if nodes[c].device == dev] + [
            self._control_recv_for(tuple(sources), node) for sources in by_device.values()]
        return node

    def _check_frames(self, src: RNode, dst: RNode) -> None:
        for n in (src, dst):
            if n.name in self.in_frame:
                raise errors.UnimplementedError(
                    None, None, f"Edge {src.name} ({src.device}) -> {dst.name} ({dst.device}) "
                    f"crosses devices inside a control-flow frame ({n.name}); loops whose "
                    "bodies span devices are not supported yet: place the loop on one device.")

    def _recv_for(self, edge, dst: RNode) -> str:
        key = (edge[0], edge[1], dst.device)
        name = self.recvs.get(key)
        if name is None:
            src = self.graph.nodes[edge[0]]
            self._check_frames(src, dst)
            dtype = src.output_dtypes[edge[1]].base_dtype
            shape = src.output_shapes[edge[1]]
            name = self.recvs[key] = self._pair(src, edge, dst, dtype, shape)
        return name

    def _control_recv_for(self, sources: tuple[str, ...], dst: RNode) -> str:
        """The _Recv of a dummy scalar made after every node of `sources` (all on one
        device), for `dst`'s control edges from them."""
        key = (sources, None, dst.device)
        name = self.recvs.get(key)
        if name is None:
            for source in sources:
                self._check_frames(self.graph.nodes[source], dst)
            src = self.graph.nodes[sources[0]]
            dummy = RNode(self._unique(sources[0]), "Const",
                          {"value": np.zeros((), np.float32), "dtype": _dtypes.float32},
                          [], list(sources), "", [], [_dtypes.float32], [TensorShape([])],
                          src.creation_site)
            dummy.device = src.device
            self._part(src.device).add(dummy)
            name = self.recvs[key] = self._pair(dummy, (dummy.name, 0), dst, _dtypes.float32,
                                                TensorShape([]))
        return name

    def _pair(self, src: RNode, edge, dst: RNode, dtype, shape) -> str:
        """Adds a _Send after `edge` on its device and a _Recv on dst's; returns the recv."""
        attrs = {"tensor_name": f"edge_{self.counter}_{src.name}",
                 "send_device": src.device,
                 "send_device_incarnation": self.incarnation(src.device),
                 "recv_device": dst.device, "client_terminated": False,
                 "_src": src.name, "_dst": dst.name}
        self.counter += 1
        send = RNode(self._unique(src.name), "_Send", {**attrs, "T": dtype}, [edge], [],
                     "", [src.output_dtypes[edge[1]]], [], [], src.creation_site)
        send.device = src.device
        send.input_shapes = (shape,)
        recv = RNode(self._unique(src.name), "_Recv", {**attrs, "tensor_type": dtype},
                     [], [], "", [], [dtype], [shape], src.creation_site)
        recv.device = dst.device
        self._part(src.device).add(send)
        self._part(dst.device).add(recv)
        return recv.name

    def _unique(self, base: str) -> str:
        """The next free `base/_k` (TensorFlow names a pair's nodes `x/_0`, `x/_1`)."""
        while True:
            name = f"{base}/_{self.n_names}"
            self.n_names += 1
            if name not in self.taken:
                self.taken.add(name)
                return name


def _nodes_in_frames(graph: RGraph) -> set[str]:
    """Names of the nodes inside a while loop: control-flow ops and what an Enter reaches
    before an Exit (empty, and cheap, for graphs without control flow)."""
    inside = {n.name for n in graph if n.op in LOOP_OPS}
    if not inside:
        return inside
    consumers = graph.consumers()
    stack = [n for n in graph if n.op in ("Enter", "RefEnter")]
    while stack:
        for c in consumers[stack.pop().name]:
            if c.name not in inside:
                inside.add(c.name)
                if c.op not in ("Exit", "RefExit"):
                    stack.append(c)
    return inside
