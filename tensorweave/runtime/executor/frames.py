"""Frames: the executor for partitions with control flow (Switch/Merge/Enter/Exit/NextIteration).

TensorFlow's semantics, as the seeds describe them: every node runs inside an execution frame
and iteration; a value is tagged by (frame, iteration) and may be *dead*. A Switch sends its
data to one output and a dead token to the other; a node with a dead input (data or control)
does not run and its outputs are dead; a Merge fires on its first live input (dead only when all
the inputs it can receive in that iteration are dead); Enter moves a value into a child frame
(iteration 0, or every iteration for a loop constant); NextIteration into the next iteration
(dead tokens stop there, which is how a loop ends); Exit back to the parent frame. At most
`parallel_iterations` iterations of a frame are alive; an iteration's values are freed when it is
done; when a frame is done, each Exit that never produced a live value sends a dead token out.

What is known when the executor is built is computed once (`FrameGraph`): each node's frame,
frame-local value slots, out-edges, initial pending counts and Merge input kinds. A step then
only walks those records.
"""
from __future__ import annotations

import hashlib
import queue
from collections import deque

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.runtime.executor import values
from tensorweave.runtime.executor.dataflow import (
    compute,
    fail_step,
    start_async,
    submit_pooled,
    wait_for,
)
from tensorweave.runtime.step_stats import now_micros

SWITCH_OPS = frozenset({"Switch", "RefSwitch"})
MERGE_OPS = frozenset({"Merge", "RefMerge"})
ENTER_OPS = frozenset({"Enter", "RefEnter"})
EXIT_OPS = frozenset({"Exit", "RefExit"})
NEXT_OPS = frozenset({"NextIteration", "RefNextIteration"})
CONTROL_FLOW_OPS = SWITCH_OPS | MERGE_OPS | ENTER_OPS | EXIT_OPS | NEXT_OPS | {"LoopCond"}

# Node kinds in the frame graph (small ints: compared on every node of every iteration).
PLAIN, SWITCH, MERGE, ENTER, EXIT, NEXT, TRIGGER, SEND = range(8)
_KIND = {**{op: SWITCH for op in SWITCH_OPS}, **{op: MERGE for op in MERGE_OPS},
         **{op: ENTER for op in ENTER_OPS}, **{op: EXIT for op in EXIT_OPS},
         **{op: NEXT for op in NEXT_OPS}, "ControlTrigger": TRIGGER, "_Send": SEND}

def switch_predicate(pred) -> bool:
    """A Switch's predicate as a bool. A fed predicate can be any shape; like TensorFlow's
    Switch kernel, one that is not a scalar fails the step."""
    if getattr(pred, "ndim", 0) != 0:
        raise errors.invalid_argument("The second input must be a scalar, but it has shape "
                                      f"{dims_text(pred.shape)}")
    return bool(pred)


class _Dead:
    """The dead token: what the untaken side of a Switch carries."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"


DEAD = _Dead()


def dead_fetch(index: int):
    """Fetching a dead tensor (an untaken branch's value) fails the step, as in TensorFlow."""
    err = errors.InvalidArgumentError(None, None, f"Retval[{index}] does not have value")
    err._tw_located = True   # the _Retval node is the session's, not the user's
    raise err


def has_control_flow(items) -> bool:
    return any(it.node.op in CONTROL_FLOW_OPS for it in items)


def is_back_edge(src_op: str, dst_op: str) -> bool:
    """NextIteration → Merge: the edge that closes a loop (ignored for topological order)."""
    return src_op in NEXT_OPS and dst_op in MERGE_OPS


class FrameDef:
    """Static facts about one frame (one while loop; "" is the root frame)."""

    __slots__ = ("name", "parent", "n_slots", "n_items", "n_enters", "parallel_iterations",
                 "exits", "slot_uses", "pending")

    def __init__(self, name, parent):
        self.name = name
        self.parent = parent
        self.n_slots = 0
        self.n_items = 0
        self.n_enters = 0
        self.parallel_iterations = 1
        self.exits: list[int] = []      # Exit items executing in this frame
        self.slot_uses: list[int] = []
        self.pending: list[int] = []    # initial pending count per frame-local item


class FrameGraph:
    """Per-item frame layout, computed once per executor.

    For item i: `fid[i]` the frame it executes in, `ofid[i]` the frame its outputs live in
    (the child frame for Enter, the parent for Exit), `lid[i]` its index among its frame's
    items, `lin[i]` its input slots and `lout[i]` its first output slot (frame-local),
    `edges[i]` its out-edges as (consumer, output index or -1 for a control edge).
    """

    def __init__(self, items):
        n = len(items)
        self.items = items
        self.kind = [_KIND.get(it.node.op, PLAIN) for it in items]
        self.frames: dict[str, FrameDef] = {"": FrameDef("", None)}
        self.fid = [""] * n
        self.ofid = [""] * n
        self.lid = [0] * n
        self.lout = [0] * n
        self.lin: list[tuple] = [()] * n
        self.edges: list[list] = [[] for _ in range(n)]
        self.merge_counts: dict[int, tuple[int, int]] = {}   # item -> (forward, back) inputs
        self.constant_enter = [False] * n
        self._assign_frames(items)
        self._layout(items)
        # Transfers inside a loop frame: keyed per frame instance and iteration.
        self.keyed = [self.fid[i] != "" and it.node.op in ("_Send", "_Recv")
                      for i, it in enumerate(items)]

    def _assign_frames(self, items) -> None:
        by_name = {it.node.name: it.id for it in items}
        for it in items:  # topological order (back edges ignored), so sources come first
            node = it.node
            srcs = [(by_name[s], False) for s, _ in node.inputs] + \
                   [(by_name[s], True) for s in node.control_inputs]
            frame = None
            for src, _ in srcs:
                if is_back_edge(items[src].node.op, node.op) and src > it.id:
                    continue
                f = self.ofid[src]
                if frame is None:
                    frame = f
                elif f != frame:
                    raise errors.InvalidArgumentError(
                        None, None, f"Node {node.name} ({node.op}) has inputs from different "
                        f"frames: '{frame or 'root'}' and '{f or 'root'}' (a loop value used "
                        "outside its loop without an Exit, or a value entering without Enter)")
            frame = frame if frame is not None else ""
            self.fid[it.id] = frame
            kind = self.kind[it.id]
            if kind == ENTER:
                child = node.attrs["frame_name"]
                child = child.decode() if isinstance(child, bytes) else child
                fdef = self.frames.get(child)
                if fdef is None:
                    fdef = self.frames[child] = FrameDef(child, frame)
                elif fdef.parent != frame:
                    raise errors.InvalidArgumentError(
                        None, None, f"Frame {child} entered from two parent frames")
                fdef.n_enters += 1
                fdef.parallel_iterations = max(1, int(node.attrs.get("parallel_iterations", 10)))
                self.constant_enter[it.id] = bool(node.attrs.get("is_constant", False))
                self.ofid[it.id] = child
            elif kind == EXIT:
                if frame == "":
                    raise errors.InvalidArgumentError(
                        None, None, f"Exit node {node.name} is not inside a loop frame")
                self.frames[frame].exits.append(it.id)
                self.ofid[it.id] = self.frames[frame].parent
            else:
                self.ofid[it.id] = frame

    def _layout(self, items) -> None:
        frames = self.frames
        local_slot = {}
        for it in items:
            fdef = frames[self.fid[it.id]]
            self.lid[it.id] = fdef.n_items
            fdef.n_items += 1
            ofdef = frames[self.ofid[it.id]]
            self.lout[it.id] = ofdef.n_slots
            for k in range(it.num_outputs):
                local_slot[it.out_start + k] = ofdef.n_slots + k
            ofdef.n_slots += it.num_outputs
        for fdef in frames.values():
            fdef.slot_uses = [0] * fdef.n_slots
            fdef.pending = [0] * fdef.n_items
        by_name = {it.node.name: it.id for it in items}
        for it in items:
            fdef = frames[self.fid[it.id]]
            self.lin[it.id] = tuple(local_slot[s] for s in it.in_slots)
            for s in self.lin[it.id]:
                fdef.slot_uses[s] += 1
            node = it.node
            n_control = len(node.control_inputs)
            if self.kind[it.id] == MERGE:
                back = sum(1 for s, _ in node.inputs if items[by_name[s]].node.op in NEXT_OPS)
                self.merge_counts[it.id] = (len(node.inputs) - back, back)
                fdef.pending[self.lid[it.id]] = n_control
            else:
                fdef.pending[self.lid[it.id]] = len(node.inputs) + n_control
            for src, k in node.inputs:
                self.edges[by_name[src]].append((it.id, k))
            for src in node.control_inputs:
                self.edges[by_name[src]].append((it.id, -1))


class Iteration:
    """One iteration of one frame instance: its values and pending counts."""

    __slots__ = ("index", "vals", "uses", "pending", "dead", "merge_live", "merge_dead",
                 "fired", "outstanding", "child_frames")

    def __init__(self, fdef: FrameDef, index: int):
        self.index = index
        self.vals = [None] * fdef.n_slots
        self.uses = list(fdef.slot_uses)
        self.pending = list(fdef.pending)
        self.dead = [False] * fdef.n_items
        self.merge_live: dict[int, bool] = {}
        self.merge_dead: dict[int, int] = {}
        self.fired: set[int] = set()
        self.outstanding = 0
        self.child_frames = 0


def frame_instance_id(parent_id: int, parent_iter: int, name: str) -> int:
    """The rendezvous frame id of one instance of frame `name`: the same on every device
    running part of the loop, nonzero (0 is the root's), from the instance's path."""
    digest = hashlib.blake2b(f"{parent_id}:{parent_iter}/{name}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "little") | 1


class Frame:
    """One instance of a frame: the loop run once for one parent iteration."""

    __slots__ = ("fdef", "key", "parent", "parent_iter", "iterations", "first", "last",
                 "pending_enters", "invariants", "deferred", "live_exits", "rendezvous_id")

    def __init__(self, fdef, key, parent, parent_iter):
        self.fdef = fdef
        self.key = key
        self.parent = parent
        self.parent_iter = parent_iter
        self.rendezvous_id = 0 if parent is None else frame_instance_id(
            parent.rendezvous_id, parent_iter.index, fdef.name)
        self.iterations = {0: Iteration(fdef, 0)}
        self.first = 0
        self.last = 0
        self.pending_enters = fdef.n_enters
        self.invariants: list = []      # (Enter item, value) delivered to every iteration
        self.deferred: list = []        # NextIteration outputs waiting for a free iteration
        self.live_exits: set[int] = set()


class FrameRun:
    """One step of one partition with control flow."""

    def __init__(self, executor, args, rets, step):
        self.ex = executor
        self.fg = executor.frame_graph
        self.args, self.rets, self.step = args, rets, step
        self.root = Frame(self.fg.frames[""], "", None, None)
        self.root.pending_enters = 0
        self.frames: dict = {}
        self.ready: deque = deque()
        self.done: queue.SimpleQueue = queue.SimpleQueue()
        self.outstanding = 0
        self.error = None
        root_iter = self.root.iterations[0]
        fg = self.fg
        for it in executor.items:
            if fg.fid[it.id] == "" and root_iter.pending[fg.lid[it.id]] == 0 and \
                    fg.kind[it.id] != MERGE:
                self._make_ready(it.id, self.root, root_iter)

    # --- the loop ---------------------------------------------------------------------------
    def run(self) -> None:
        items = self.ex.items
        ready = self.ready
        while True:
            while ready and self.error is None:
                i, frame, it = ready.popleft()
                item = items[i]
                if item.is_async or item.expensive:
                    self._launch(item, frame, it)
                else:
                    self._run_inline(item, frame, it)
            if self.outstanding == 0:
                break
            self._wait_one()
        if self.error is not None:
            raise self.error

    def _make_ready(self, i, frame, it) -> None:
        it.outstanding += 1
        self.ready.append((i, frame, it))

    def _inputs(self, i, it):
        """(inputs, is_dead) of item i in iteration `it`; releases values at their last use."""
        vals, uses = it.vals, it.uses
        item = self.ex.items[i]
        dead = it.dead[self.fg.lid[i]]
        inputs = []
        for s, d in zip(self.fg.lin[i], item.deref):
            v = vals[s]
            if v is DEAD:
                dead = True
            elif d:
                v = values.deref(v)
            inputs.append(v)
            uses[s] -= 1
            if uses[s] == 0:
                vals[s] = None
        return inputs, dead

    def _execute(self, item, inputs, dead, frame, it):
        """Outputs of one node given its inputs (dead tokens never reach a kernel)."""
        kind = self.fg.kind[item.id]
        if kind == MERGE:
            for index, v in enumerate(inputs):
                if v is not None and v is not DEAD:
                    return (v, np.int32(index)), False
            return (DEAD, DEAD), True
        if kind == SEND and (dead or self.fg.keyed[item.id]):
            # A dead tensor is sent too: the receiving partition must not wait for it.
            kernel = item.fn.__self__
            key = kernel.key_in(frame.rendezvous_id, it.index) if self.fg.keyed[item.id] \
                else kernel.key
            kernel.send(item.ctx, self.step, key, None if dead else inputs[0], dead)
            return (), dead
        if dead and kind != TRIGGER:
            if item.kind == "_Retval":
                dead_fetch(item.index)
            return (DEAD,) * item.num_outputs, True
        if kind == SWITCH:
            data, pred = inputs
            return ((DEAD, data) if switch_predicate(pred) else (data, DEAD)), False
        if kind in (ENTER, EXIT, NEXT):
            return (inputs[0],), False
        return compute(item, inputs, self.args, self.rets, self.step), False

    def _run_inline(self, item, frame, it) -> None:
        stats = self.step.stats
        start = now_micros() if stats is not None else 0
        try:
            inputs, dead = self._merge_inputs(item, it) if self.fg.kind[item.id] == MERGE \
                else self._inputs(item.id, it)
            outputs, dead = self._execute(item, inputs, dead, frame, it)
        except Exception as exc:  # noqa: BLE001 - any kernel failure fails the step
            self._fail(item, exc)
            return
        if stats is not None and not dead:
            stats.record(item.node, self.ex.device.name, start, now_micros(), outputs)
        self._complete(item, frame, it, outputs, dead)

    def _merge_inputs(self, item, it):
        """A Merge reads whichever of its inputs arrived (the others are absent, not dead)."""
        vals, uses = it.vals, it.uses
        inputs = []
        for s in self.fg.lin[item.id]:
            v = vals[s]
            inputs.append(v)
            if v is not None:
                uses[s] -= 1
                if uses[s] == 0:
                    vals[s] = None
        return inputs, False

    def _launch(self, item, frame, it) -> None:
        """Starts an asynchronous kernel, or an expensive one on the inter-op pool."""
        try:
            inputs, dead = self._inputs(item.id, it)
        except Exception as exc:  # noqa: BLE001
            self._fail(item, exc)
            return
        if dead:
            self._complete(item, frame, it, (DEAD,) * item.num_outputs, True)
            return
        self.outstanding += 1
        done = self.done

        def report(outputs, exc):
            done.put((item, frame, it, outputs, exc))
        if self.fg.keyed[item.id]:   # a _Recv inside a loop frame
            kernel = item.fn.__self__
            key = kernel.key_in(frame.rendezvous_id, it.index)
            start_async(item, self.step, inputs, report,
                        lambda ctx, step, _, done: kernel.receive(ctx, step, key, done))
        elif item.is_async:
            start_async(item, self.step, inputs, report)
        else:
            submit_pooled(self.ex.pool, item, inputs, self.args, self.rets, self.step,
                          self.ex.device.name, report)

    def _wait_one(self) -> None:
        item, frame, it, outputs, exc = wait_for(self.done, self.step)
        self.outstanding -= 1
        if exc is not None:
            self._fail(item, exc)
        elif self.error is None:
            self._complete(item, frame, it, outputs, any(v is DEAD for v in outputs))

    def _fail(self, item, exc) -> None:
        if self.error is None:
            self.error = fail_step(self.step, self.ex, item, exc)

    # --- propagation ------------------------------------------------------------------------
    def _complete(self, item, frame, it, outputs, dead) -> None:
        """Routes a finished node's outputs to the frame and iteration they belong to."""
        i = item.id
        kind = self.fg.kind[i]
        if kind == ENTER:
            child = self._child_frame(i, frame, it)
            if self.fg.constant_enter[i]:
                child.invariants.append((i, outputs))
                for child_it in list(child.iterations.values()):
                    self._deliver(i, child, child_it, outputs, dead)
            else:
                self._deliver(i, child, child.iterations[0], outputs, dead)
            child.pending_enters -= 1
            self._maybe_finish(child)
        elif kind == EXIT:
            if not dead:
                frame.live_exits.add(i)
                self._deliver(i, frame.parent, frame.parent_iter, outputs, False)
        elif kind == NEXT:
            if not dead:
                self._next_iteration(i, frame, it, outputs)
        else:
            self._deliver(i, frame, it, outputs, dead)
        it.outstanding -= 1
        self._maybe_finish(frame)

    def _child_frame(self, i, frame, it) -> Frame:
        name = self.fg.ofid[i]
        key = (name, id(frame), it.index)
        child = self.frames.get(key)
        if child is None:
            child = self.frames[key] = Frame(self.fg.frames[name], key, frame, it)
            it.child_frames += 1
        return child

    def _next_iteration(self, i, frame, it, outputs) -> None:
        target = it.index + 1
        nxt = frame.iterations.get(target)
        if nxt is None:
            if target - frame.first >= frame.fdef.parallel_iterations or frame.deferred:
                frame.deferred.append((i, outputs))
                return
            nxt = self._new_iteration(frame, target)
        self._deliver(i, frame, nxt, outputs, False)

    def _new_iteration(self, frame, index) -> Iteration:
        nxt = frame.iterations[index] = Iteration(frame.fdef, index)
        frame.last = index
        for enter, outputs in frame.invariants:
            self._deliver(enter, frame, nxt, outputs, False)
        return nxt

    def _deliver(self, i, frame, it, outputs, dead) -> None:
        """Stores `outputs` of item i in iteration `it` and updates its consumers there."""
        fg = self.fg
        base = fg.lout[i]
        vals = it.vals
        for k, v in enumerate(outputs):
            vals[base + k] = v
        lid, kinds, pending = fg.lid, fg.kind, it.pending
        for c, k in fg.edges[i]:
            lc = lid[c]
            if kinds[c] == MERGE:
                if k < 0:
                    pending[lc] -= 1
                elif outputs[k] is DEAD:
                    it.merge_dead[c] = it.merge_dead.get(c, 0) + 1
                else:
                    it.merge_live[c] = True
                self._check_merge(c, lc, frame, it)
                continue
            if k < 0 and dead:
                it.dead[lc] = True
            pending[lc] -= 1
            if pending[lc] == 0:
                self._make_ready(c, frame, it)

    def _check_merge(self, c, lc, frame, it) -> None:
        if it.pending[lc] != 0 or c in it.fired:
            return
        forward, back = self.fg.merge_counts[c]
        expected = back if back and it.index > 0 else forward
        if it.merge_live.get(c) or it.merge_dead.get(c, 0) >= expected:
            it.fired.add(c)
            self._make_ready(c, frame, it)

    # --- frame bookkeeping ------------------------------------------------------------------
    def _maybe_finish(self, frame) -> None:
        """Frees finished iterations in order; a finished frame sends dead tokens out."""
        if frame is self.root:
            return
        while True:
            it = frame.iterations.get(frame.first)
            if it is None or it.outstanding or it.child_frames or \
                    (it.index == 0 and frame.pending_enters):
                return
            del frame.iterations[frame.first]
            frame.first += 1
            if frame.deferred:
                self._start_deferred(frame)
            if frame.first > frame.last and not frame.deferred:
                self._finish_frame(frame)
                return

    def _start_deferred(self, frame) -> None:
        target = frame.last + 1
        if target - frame.first >= frame.fdef.parallel_iterations:
            return
        deferred, frame.deferred = frame.deferred, []
        nxt = self._new_iteration(frame, target)
        for i, outputs in deferred:
            self._deliver(i, frame, nxt, outputs, False)

    def _finish_frame(self, frame) -> None:
        del self.frames[frame.key]
        parent, parent_it = frame.parent, frame.parent_iter
        for i in frame.fdef.exits:
            if i not in frame.live_exits:
                self._deliver(i, parent, parent_it, (DEAD,), True)
        parent_it.child_frames -= 1
        self._maybe_finish(parent)
