"""Editing the runtime graph: the few operations every pass is written with, and its rules.

An `Editor` indexes a graph's edges once (who reads each tensor, who depends on each node by
control) and keeps that index right through every edit, so a pass is a loop of local
decisions. The rules no pass may break are enforced here, in one place:

* A node is *pure* (may be folded, merged or removed) only if its op is not stateful, not a
  control-flow primitive or call-frame/communication node, and it neither reads nor makes refs.
* A *preserved* node keeps its name and is never removed: the run's targets, and every node a
  `_Retval` reads (so fetched tensors keep their names). Rewriting one replaces it in place by
  a node of the same name (a Const, or an Identity of the simpler value).
* Removing a node hands its control dependents over to what it depended on, so every
  "runs after" relation of the original graph still holds.
* New nodes take the replaced node's device and creation site (errors still name the user's
  line); attrs dicts are never mutated in place, because an RNode shares its dict with the
  user's Operation.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.ops.fused_ops import resource_twin
from tensorweave.runtime.prune import RGraph, RNode

# TF1 control flow: frames and dead tensors flow through these; no pass rewrites them.
CONTROL_FLOW_OPS = frozenset({
    "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
    "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger", "_SwitchN"})
# The call frame, communication and feeds: never folded, merged or removed.
_FRAME_OPS = frozenset({"_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv",
                        "Placeholder", "PlaceholderWithDefault", "VariableV2", "Variable"})
UNTOUCHABLE = CONTROL_FLOW_OPS | _FRAME_OPS

Tensor = tuple  # (node name, output index)


def is_pure(node: RNode) -> bool:
    """Whether `node` may be folded, merged or removed: no state, no refs, no frames."""
    if node.op in UNTOUCHABLE or node.op_def.is_stateful:
        return False
    # `_type_enum > 100` is DType._is_ref_dtype without the property call (this runs per node
    # in every pass).
    for d in node.input_dtypes:
        if d._type_enum > 100:
            return False
    for d in node.output_dtypes:
        if d._type_enum > 100:
            return False
    return True


def known_shape(shape) -> tuple | None:
    """A static shape as a tuple of ints when fully defined, else None."""
    if shape is None or shape.ndims is None or not shape.is_fully_defined():
        return None
    return tuple(shape.as_list())


_SHARED_SLOTS = tuple(s for s in RNode.__slots__ if s not in (
    "inputs", "control_inputs", "input_dtypes", "output_dtypes", "output_shapes"))


def clone_node(node: RNode) -> RNode:
    """A copy whose lists may be edited; attrs stay shared until replaced wholesale."""
    new = RNode.__new__(RNode)
    for slot in _SHARED_SLOTS:
        setattr(new, slot, getattr(node, slot))
    new.inputs = list(node.inputs)
    new.control_inputs = list(node.control_inputs)
    new.input_dtypes = list(node.input_dtypes)
    new.output_dtypes = list(node.output_dtypes)
    new.output_shapes = list(node.output_shapes)
    return new


def clone_graph(graph: RGraph) -> RGraph:
    return RGraph([clone_node(n) for n in graph])


def make_node(name: str, op: str, attrs: dict, inputs: list, like: RNode, graph: RGraph,
              output_dtypes: list, output_shapes: list, control_inputs=()) -> RNode:
    """A new node on `like`'s device, credited to `like`'s creation site."""
    input_dtypes, input_shapes = [], []
    for src, k in inputs:
        producer = graph.nodes[src]
        input_dtypes.append(producer.output_dtypes[k])
        input_shapes.append(producer.output_shapes[k] if k < len(producer.output_shapes)
                            else _ts.unknown_shape())
    node = RNode(name, op, attrs, list(inputs), list(control_inputs), like.requested_device,
                 input_dtypes, list(output_dtypes), list(output_shapes), like.creation_site)
    node.device = like.device
    node.input_shapes = tuple(input_shapes)
    return node


def const_attrs(value: np.ndarray, dtype) -> dict:
    return {"value": value, "dtype": dtype}


class Editor:
    """A graph with an up-to-date index of its edges, and the edits passes make."""

    def __init__(self, graph: RGraph, options):
        self.graph = graph
        self.options = options
        self.log = options.log
        self.readers: dict[Tensor, list[tuple[str, int]]] = defaultdict(list)
        self.dependents: dict[str, set[str]] = defaultdict(set)
        self.changed = False
        self._maybe_dead: list[str] = []
        self._control_flow: bool | None = None
        for node in graph:
            self._index(node)

    # --- the index ----------------------------------------------------------------------------
    def _index(self, node: RNode) -> None:
        name, readers = node.name, self.readers
        j = 0
        for src in node.inputs:
            readers[src].append((name, j))
            j += 1
        if node.control_inputs:
            dependents = self.dependents
            for c in node.control_inputs:
                dependents[c].add(name)

    def _unindex(self, node: RNode) -> None:
        for j, src in enumerate(node.inputs):
            lst = self.readers.get(src)
            if lst is not None:
                try:
                    lst.remove((node.name, j))
                except ValueError:
                    pass
        for c in node.control_inputs:
            self.dependents[c].discard(node.name)

    def node(self, name: str) -> RNode:
        return self.graph.nodes[name]

    def readers_of(self, tensor: Tensor) -> list[RNode]:
        """The nodes reading `tensor` (once per reading input)."""
        return [self.graph.nodes[n] for n, _ in self.readers.get(tensor, ())]

    def data_readers(self, name: str) -> list[RNode]:
        """The nodes reading any output of `name` (once per reading input)."""
        node = self.graph.nodes[name]
        out = []
        for k in range(max(len(node.output_dtypes), 1)):
            out.extend(self.readers_of((name, k)))
        return out

    def has_consumers(self, name: str) -> bool:
        node = self.graph.nodes[name]
        if self.dependents.get(name):
            return True
        return any(self.readers.get((name, k)) for k in range(len(node.output_dtypes)))

    def is_preserved(self, name: str) -> bool:
        """Targets, and nodes whose value is fetched, keep their names and are never removed."""
        if name in self.options.preserve:
            return True
        return any(r.op == "_Retval" for r in self.data_readers(name))

    def only_reader(self, tensor: Tensor) -> RNode | None:
        """The one node reading `tensor` through one input, if exactly one does and no node
        depends on its producer by control."""
        lst = self.readers.get(tensor, ())
        if len(lst) != 1 or self.dependents.get(tensor[0]):
            return None
        node = self.graph.nodes[tensor[0]]
        others = sum(len(self.readers.get((tensor[0], k), ())) for k in
                     range(len(node.output_dtypes)) if k != tensor[1])
        return self.graph.nodes[lst[0][0]] if others == 0 else None

    # --- edits --------------------------------------------------------------------------------
    def unique_name(self, base: str) -> str:
        return self.graph.unique_name(base)

    def add(self, node: RNode) -> RNode:
        self.graph.add(node)
        self._index(node)
        self.changed = True
        return node

    def set_input(self, node: RNode, j: int, src: Tensor) -> None:
        old = node.inputs[j]
        lst = self.readers.get(old)
        if lst is not None:
            lst.remove((node.name, j))
            if not lst:
                self._maybe_dead.append(old[0])
        node.inputs[j] = src
        self.readers[src].append((node.name, j))
        producer = self.graph.nodes[src[0]]
        k = src[1]
        dtypes = list(node.input_dtypes)
        dtypes[j] = producer.output_dtypes[k]
        node.input_dtypes = dtypes
        shapes = list(node.input_shapes)
        if j < len(shapes):
            shapes[j] = producer.output_shapes[k]
            node.input_shapes = tuple(shapes)
        self.changed = True

    def set_control_inputs(self, node: RNode, names) -> None:
        """Replaces `node`'s control inputs (deduplicated, order kept, no self-edge)."""
        seen, out = set(), []
        for c in names:
            if c != node.name and c not in seen:
                seen.add(c)
                out.append(c)
        for c in node.control_inputs:
            if c not in seen:
                self.dependents[c].discard(node.name)
                self._maybe_dead.append(c)
        for c in out:
            self.dependents[c].add(node.name)
        node.control_inputs = out
        self.changed = True

    def add_control_inputs(self, node: RNode, names) -> None:
        data_sources = {s for s, _ in node.inputs}
        extra = [c for c in names if c not in data_sources]
        if extra:
            self.set_control_inputs(node, list(node.control_inputs) + extra)

    def redirect(self, old: Tensor, new: Tensor) -> None:
        """Every reader of tensor `old` reads `new` instead."""
        if old == new:
            return
        for name, j in list(self.readers.get(old, ())):
            self.set_input(self.graph.nodes[name], j, new)

    def replace(self, node: RNode, outputs: list[Tensor], kind: str, detail: str = "") -> bool:
        """Replaces `node` by existing tensors (one per output it has) and removes it.

        Readers of output k read outputs[k]; nodes that depended on `node` by control depend on
        what it depended on (its inputs' producers and its control inputs). A preserved node is
        instead rewritten in place into Identity(outputs[0]) of the same name (so a preserved
        node with several outputs is left alone: False).
        """
        if self.is_preserved(node.name):
            if len(node.output_dtypes) != 1:
                return False
            if node.op == "Identity" and node.inputs == [outputs[0]]:
                return False
            self.log.record(kind, node.name, detail)
            self._become_identity(node, outputs[0])
            return True
        self.log.record(kind, node.name, detail)
        for k, new in enumerate(outputs):
            self.redirect((node.name, k), new)
        self.forward_dependents(node, [s for s, _ in outputs])
        self.remove(node)
        return True

    def forward_dependents(self, node: RNode, extra_sources=()) -> None:
        """Nodes depending on `node` by control depend on its inputs instead (and `extra`)."""
        dependents = list(self.dependents.get(node.name, ()))
        if not dependents:
            return
        sources = [s for s, _ in node.inputs] + list(node.control_inputs) + list(extra_sources)
        for name in dependents:
            dep = self.graph.nodes[name]
            kept = [c for c in dep.control_inputs if c != node.name]
            self.set_control_inputs(dep, kept)
            self.add_control_inputs(dep, [s for s in sources if s != name])

    def substitute(self, old: RNode, new: RNode, kind: str, detail: str = "") -> RNode:
        """`new` takes `old`'s name and place: readers and dependents are unchanged."""
        self.log.record(kind, old.name, detail)
        self._unindex(old)
        for src, _ in old.inputs:
            self._maybe_dead.append(src)
        self._maybe_dead.extend(old.control_inputs)
        new.name = old.name
        self.graph.nodes[old.name] = new
        self._index(new)
        self.changed = True
        return new

    def _become_identity(self, node: RNode, src: Tensor) -> None:
        producer = self.graph.nodes[src[0]]
        dtype = producer.output_dtypes[src[1]]
        ident = make_node(node.name, "Identity", {"T": dtype.base_dtype}, [src], node,
                          self.graph, node.output_dtypes[:1], node.output_shapes[:1],
                          list(node.control_inputs))
        self._unindex(node)
        for s, _ in node.inputs:
            self._maybe_dead.append(s)
        self.graph.nodes[node.name] = ident
        self._index(ident)
        self.changed = True

    def remove(self, node: RNode) -> None:
        """Removes a node nothing reads; its inputs may become dead (swept later)."""
        self._unindex(node)
        self._maybe_dead.extend(s for s, _ in node.inputs)
        self._maybe_dead.extend(node.control_inputs)
        self.graph.remove(node.name)
        self.dependents.pop(node.name, None)
        for k in range(len(node.output_dtypes)):
            self.readers.pop((node.name, k), None)
        self.changed = True

    def sweep(self) -> None:
        """Removes pure, unpreserved nodes that nothing reads any more, transitively."""
        while self._maybe_dead:
            name = self._maybe_dead.pop()
            node = self.graph.nodes.get(name)
            if node is None or not is_pure(node) or self.has_consumers(name) or \
                    name in self.options.preserve:
                continue
            self.log.record("remove_dead", name)
            self.remove(node)

    def topological(self) -> list[RNode]:
        """The nodes in a topological order (data and control edges), stable in graph order."""
        nodes, readers, dependents = self.graph.nodes, self.readers, self.dependents
        remaining = {n.name: len(n.inputs) + len(n.control_inputs) for n in nodes.values()}
        order = [n for n in nodes.values() if remaining[n.name] == 0]
        i = 0
        while i < len(order):
            node = order[i]
            i += 1
            name = node.name
            for k in range(len(node.output_dtypes)):
                for reader, _ in readers.get((name, k), ()):
                    remaining[reader] -= 1
                    if remaining[reader] == 0:
                        order.append(nodes[reader])
            for reader in dependents.get(name, ()):
                remaining[reader] -= 1
                if remaining[reader] == 0:
                    order.append(nodes[reader])
        if len(order) != len(nodes):  # a cycle (loops): keep the graph's own order
            return list(nodes.values())
        return order

    # --- building blocks ------------------------------------------------------------------------
    def const(self, base_name: str, value: np.ndarray, like: RNode, control_inputs=(),
              name: str | None = None) -> RNode:
        """A new Const node holding `value` (not yet added).

        In a graph with control flow the constant waits on `like`'s first input, so it lives in
        the same frame (and cond branch) as the node it serves.
        """
        if not control_inputs and like.inputs and self.has_control_flow():
            control_inputs = [like.inputs[0][0]]
        value = np.asarray(value)
        dtype = _dtypes.from_numpy(value.dtype) if value.dtype != object else _dtypes.string
        return make_node(name or self.unique_name(base_name), "Const", const_attrs(value, dtype),
                         [], like, self.graph, [dtype], [_ts.TensorShape(value.shape)],
                         control_inputs)

    def has_control_flow(self) -> bool:
        """Whether the graph has frames or conds (computed once per Editor)."""
        if self._control_flow is None:
            self._control_flow = any(n.op in CONTROL_FLOW_OPS for n in self.graph)
        return self._control_flow

    def producer(self, tensor: Tensor) -> RNode:
        return self.graph.nodes[tensor[0]]

    def const_value(self, tensor: Tensor) -> np.ndarray | None:
        """The value of `tensor` if a Const node makes it, else None."""
        node = self.graph.nodes[tensor[0]]
        if node.op != "Const":
            return None
        return node.attrs["value"]


def apply_rules(ed: Editor, rules: dict, applies, max_per_node: int = 8) -> RGraph:
    """`rules[node.op](ed, node)` for every pure node `applies(node)` accepts, in topological
    order, again on the rewritten node while a rule changes it (at most `max_per_node` times);
    then the sweep. Returns the graph."""
    for node in ed.topological():
        for _ in range(max_per_node):
            node = ed.graph.nodes.get(node.name)
            if node is None or not is_pure(node) or not applies(node):
                break
            rule = rules.get(node.op)
            if rule is None or not rule(ed, node):
                break
    ed.sweep()
    return ed.graph


def rewrite_each(ed: Editor, op_types: str | tuple, rewrite) -> RGraph:
    """`rewrite(ed, node)` for every node of `op_types` (one type or a tuple) still in the
    graph when its turn comes (a rewrite may remove later ones), then the sweep; returns the
    graph."""
    graph = ed.graph
    wanted = (op_types,) if isinstance(op_types, str) else op_types
    for node in list(graph):
        if node.op in wanted and node.name in graph.nodes:
            rewrite(ed, node)
    ed.sweep()
    return graph


def rewrite_updates(ed: Editor, fuse, update: str = "ApplyGradientDescent") -> RGraph:
    """`fuse(ed, node)` for every `update` (ApplyGradientDescent, ApplyAdam) and its resource
    twin, unless the graph has control flow: a fused update waits for the variable's
    unordered reads (`unordered_value_readers`), and those ordering edges could cross frames."""
    if ed.has_control_flow():
        return ed.graph
    return rewrite_each(ed, (update, "Resource" + update), fuse)


def fused_update_type(fused: str, update) -> str:
    """The fused op replacing `update`: `fused` (an `...Apply...` op taking the variable's
    ref), or its resource twin for a ResourceApply update (ops/fused_ops.py)."""
    return resource_twin(fused) if update.op.startswith("Resource") else fused


def unordered_value_readers(ed: Editor, update) -> list[str]:
    """Readers of the value of `update`'s variable (input 0: the ref itself, or an Identity
    of it) with no path to or from `update`, in graph order: a fused update that becomes ready
    sooner than the unfused one waits for them, so they still read this step's values."""
    var = update.inputs[0]
    readers = []
    for r in ed.readers_of(var):
        if r is update:
            continue
        readers.extend(ed.readers_of((r.name, 0)) if r.op == "Identity" else [r])
    if not readers:
        return []
    related = _reachable(update.name, lambda n: [s for s, _ in n.inputs] + n.control_inputs, ed)
    related |= _reachable(update.name, lambda n: [r for r, _ in _all_readers(ed, n)] +
                          list(ed.dependents.get(n.name, ())), ed)
    return [r.name for r in readers if r.name not in related]


def _all_readers(ed: Editor, node):
    for k in range(len(node.output_dtypes)):
        yield from ed.readers.get((node.name, k), ())


def _reachable(start: str, neighbours, ed: Editor) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for name in neighbours(ed.node(stack.pop())):
            if name not in seen:
                seen.add(name)
                stack.append(name)
    return seen
