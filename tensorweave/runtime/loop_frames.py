"""Loops spanning devices: which frame each node runs in, and the control loops partitioning adds.

A while loop is a frame: its nodes run once per iteration. When partitioning splits a loop's
nodes over devices, a value crossing devices inside the frame crosses once per iteration, under
a rendezvous key naming the frame instance and iteration (`_Send`/`_Recv` in frames.py). The
receiving device needs the frame too, iterating in step with the loop: TensorFlow's answer
(graph_partition.cc, AddControlFlow), followed here, is a *control loop* on every device holding
part of the frame:

    Enter(dummy) -> Merge -> Switch(., pred) -> Identity (the pivot) -> NextIteration -> Merge

whose predicate is the loop's LoopCond, received from its device each iteration. Every `_Recv`
inside the frame depends on the control loop's Merge, so it runs in every iteration, the last
(predicate false) included, where the sender's side is dead and sends a dead token. A nested
loop's control loop enters from a dummy that depends on its parent's pivot on that device.
"""
from __future__ import annotations

import re

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.runtime.prune import RGraph, RNode

ENTER_OPS = frozenset({"Enter", "RefEnter"})
EXIT_OPS = frozenset({"Exit", "RefExit"})
NEXT_OPS = frozenset({"NextIteration", "RefNextIteration"})
LOOP_OPS = ENTER_OPS | EXIT_OPS | NEXT_OPS | {"LoopCond"}


class FrameMap:
    """For each node, the frame it runs in ("" for the root): an Enter runs in the frame it
    names, whose parent is its input's; an Exit runs in its loop's frame and outputs into the
    parent; any other node runs in the frame of its inputs."""

    def __init__(self, graph: RGraph):
        self.runs_in: dict[str, str] = {}
        self.parent: dict[str, str] = {}
        self.enters: dict[str, RNode] = {}      # frame -> one of its Enters
        self.loop_conds: dict[str, RNode] = {}  # frame -> its LoopCond
        self.exits = {n.name for n in graph if n.op in EXIT_OPS}
        if any(n.op in LOOP_OPS for n in graph):
            self._assign(graph)

    def _assign(self, graph: RGraph) -> None:
        """Passes over the graph until no node's frame is new (a Merge takes its frame from
        its Enter before its NextIteration is known; nesting depth bounds the passes)."""
        changed = True
        while changed:
            changed = False
            for node in graph:
                if node.name not in self.runs_in and self._try_assign(node):
                    changed = True

    def _try_assign(self, node: RNode) -> bool:
        is_enter = node.op in ENTER_OPS
        sources = [s for s, _ in node.inputs[:1]] if is_enter else \
            [s for s, _ in node.inputs] + list(node.control_inputs)
        known = [s for s in sources if s in self.runs_in]
        if sources and not known:
            return False
        outer = self.output_frame(known[0]) if known else ""
        if is_enter:
            frame = node.attrs["frame_name"]
            frame = frame.decode() if isinstance(frame, bytes) else frame
            self.parent[frame] = outer
            self.enters.setdefault(frame, node)
            self.runs_in[node.name] = frame
        else:
            self.runs_in[node.name] = outer
            if node.op == "LoopCond":
                self.loop_conds[outer] = node
        return True

    def output_frame(self, name: str) -> str:
        """The frame `name`'s outputs live in."""
        frame = self.runs_in.get(name, "")
        return self.parent[frame] if name in self.exits else frame

    def add(self, node: RNode, frame: str) -> None:
        """Records the frame of a node partitioning made (a transfer, a clone, a control
        loop's node)."""
        self.runs_in[node.name] = frame
        if node.op in EXIT_OPS:
            self.exits.add(node.name)

    def ancestry(self, frame: str) -> list[str]:
        """`frame` and the frames enclosing it, outermost first, without the root."""
        chain = []
        while frame:
            chain.append(frame)
            frame = self.parent[frame]
        return chain[::-1]


def check_spanning_frame(frames: FrameMap, frame: str, edge: str) -> None:
    """UnimplementedError unless `frame` is a loop whose iterations partitioning can drive on
    another device (it has the one LoopCond tf.while_loop builds)."""
    if frame not in frames.loop_conds:
        raise errors.UnimplementedError(
            None, None, f"Edge {edge} crosses devices inside the control-flow frame {frame}, "
            "which has no LoopCond to drive its iterations on the other device: place the "
            "loop on one device.")


def _node(name, op, attrs, inputs, control, device, dtypes, shapes, site) -> RNode:
    node = RNode(name, op, attrs, inputs, control, "", [], dtypes, shapes, site)
    node.device = device
    return node


class ControlLoops:
    """The control loops of one partitioning, made on demand per (frame, device).

    `make_name(base)` gives a fresh node name, `add(node)` puts a node in its device's
    partition, `transfer(src, edge, dst)` makes a `_Send`/`_Recv` pair inside the frame and
    returns the `_Recv` (which partitioning makes depend on this device's Merge)."""

    def __init__(self, frames: FrameMap, make_name, add, transfer):
        self.frames = frames
        self.make_name, self.add, self.transfer = make_name, add, transfer
        self.merges: dict[tuple[str, str], str] = {}
        self.pivots: dict[tuple[str, str], str] = {}

    def merge(self, frame: str, device: str) -> str:
        """The control loop's Merge of `frame` on `device`: done once per iteration there."""
        key = (frame, device)
        if key not in self.merges:
            self._build(frame, device)
        return self.merges[key]

    def _build(self, frame: str, device: str) -> None:
        frames = self.frames
        enter_like = frames.enters[frame]
        loop_cond = frames.loop_conds[frame]
        site = loop_cond.creation_site
        base = f"{frame}/_control_loop/" + re.sub(r"[^A-Za-z0-9_./-]", "_", device.strip("/"))
        f32 = _dtypes.float32
        scalar = TensorShape([])
        parent = frames.parent[frame]
        control = []
        if parent:   # one run of this loop per iteration of the parent's control loop
            self.merge(parent, device)
            control = [self.pivots[(parent, device)]]
        dummy = _node(self.make_name(base + "/dummy"), "Const",
                      {"value": np.zeros((), np.float32), "dtype": f32}, [], control, device,
                      [f32], [scalar], site)
        enter = _node(self.make_name(base + "/Enter"), "Enter",
                      {"T": f32, "frame_name": frame, "is_constant": False,
                       "parallel_iterations": enter_like.attrs.get("parallel_iterations", 10)},
                      [(dummy.name, 0)], [], device, [f32], [scalar], site)
        merge_name = self.make_name(base + "/Merge")
        next_name = self.make_name(base + "/NextIteration")
        merge = _node(merge_name, "Merge", {"T": f32, "N": 2},
                      [(enter.name, 0), (next_name, 0)], [], device,
                      [f32, _dtypes.int32], [scalar, scalar], site)
        self.merges[(frame, device)] = merge_name
        for node, in_frame in ((dummy, parent), (enter, frame), (merge, frame)):
            frames.add(node, in_frame)
            self.add(node)
        pred = loop_cond.name if loop_cond.device == device else \
            self.transfer(loop_cond, (loop_cond.name, 0), merge).name
        switch = _node(self.make_name(base + "/Switch"), "Switch", {"T": f32},
                       [(merge_name, 0), (pred, 0)], [], device, [f32, f32],
                       [scalar, scalar], site)
        pivot = _node(self.make_name(base + "/pivot"), "Identity", {"T": f32},
                      [(switch.name, 1)], [], device, [f32], [scalar], site)
        nxt = _node(next_name, "NextIteration", {"T": f32}, [(pivot.name, 0)], [], device,
                    [f32], [scalar], site)
        self.pivots[(frame, device)] = pivot.name
        for node in (switch, pivot, nxt):
            frames.add(node, frame)
            self.add(node)
