"""Prune: the minimal subgraph for one run signature, as the runtime's own light graph.

In: the user's Graph, fed tensors, fetched tensors and target ops. Out: an `RGraph` holding only
the nodes the fetches and targets need, where each fed tensor is produced by an `_Arg` node and
each fetch is consumed by a `_Retval` node (the call frame's slots). The user's Graph is never
mutated; later stages rewrite the RGraph.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.op_def import get_op_def
from tensorweave.framework.shape_text import shape_text


class RNode:
    """A runtime node: op type, typed attrs, data inputs as (node, output index), devices."""

    __slots__ = ("name", "op", "op_def", "attrs", "inputs", "control_inputs",
                 "requested_device", "device", "input_dtypes", "output_dtypes",
                 "output_shapes", "creation_site", "input_shapes")

    def __init__(self, name, op, attrs, inputs, control_inputs, requested_device,
                 input_dtypes, output_dtypes, output_shapes, creation_site):
        self.name = name
        self.op = op
        self.op_def = get_op_def(op)
        self.attrs = attrs
        self.inputs = inputs                    # list[tuple[str, int]]
        self.control_inputs = control_inputs    # list[str]
        self.requested_device = requested_device
        self.device = None                      # assigned by placement
        self.input_dtypes = input_dtypes
        self.output_dtypes = output_dtypes
        self.output_shapes = output_shapes
        self.creation_site = creation_site
        self.input_shapes = ()

    @classmethod
    def from_operation(cls, op, inputs) -> RNode:
        node = cls(op._name, op.type, op._attrs, inputs,
                   [c._name for c in op._control_inputs], op._device,
                   [t._dtype for t in op._inputs], [t._dtype for t in op._outputs],
                   [t._shape for t in op._outputs], op._creation_site)
        node.input_shapes = tuple(t._shape for t in op._inputs)
        return node

    def __repr__(self) -> str:
        return f"RNode({self.name!r}, {self.op}, device={self.device!r})"


class RGraph:
    """The runtime's graph: nodes by name, in a deterministic order."""

    def __init__(self, nodes: list[RNode] | None = None):
        self.nodes: dict[str, RNode] = {}
        for n in nodes or ():
            self.add(n)

    def add(self, node: RNode) -> RNode:
        self.nodes[node.name] = node
        return node

    def remove(self, name: str) -> None:
        del self.nodes[name]

    def __iter__(self):
        return iter(self.nodes.values())

    def __len__(self):
        return len(self.nodes)

    def unique_name(self, base: str) -> str:
        name, i = base, 0
        while name in self.nodes:
            i += 1
            name = f"{base}_{i}"
        return name

    def consumers(self) -> dict[str, list[RNode]]:
        """Node name -> nodes that read any of its outputs or depend on it by control."""
        out: dict[str, list[RNode]] = {n: [] for n in self.nodes}
        for node in self.nodes.values():
            for src, _ in node.inputs:
                out[src].append(node)
            for src in node.control_inputs:
                out[src].append(node)
        return out


_ARG_PREFIX = "_arg_"


def arg_node_name(op_name: str, k: int, i: int) -> str:
    """The name of the `_Arg` node of feed i, tensor op_name:k."""
    return f"{_ARG_PREFIX}{op_name}_{k}_{i}"


def fed_tensor(arg_name: str) -> tuple[str, int]:
    """(op name, output index) of the tensor the `_Arg` node `arg_name` stands for."""
    op_name, k, _ = arg_name[len(_ARG_PREFIX):].rsplit("_", 2)
    return op_name, int(k)


def prune(fed, fetched, targets) -> RGraph:
    """Builds the pruned client graph; `fed`/`fetched` are Tensors, `targets` Operations."""
    feed_nodes = {}
    graph = RGraph()
    for i, t in enumerate(fed):
        node = RNode(arg_node_name(t._op._name, t._value_index, i), "_Arg",
                     {"T": t._dtype.base_dtype, "index": i}, [], [], t._op._device,
                     [], [t._dtype.base_dtype], [t._shape], t._op._creation_site)
        feed_nodes[(t._op._name, t._value_index)] = graph.add(node).name
    visited: set[str] = set()
    stack = [t._op for t in fetched if (t._op._name, t._value_index) not in feed_nodes]
    stack.extend(targets)
    while stack:
        op = stack.pop()
        if op._name in visited:
            continue
        visited.add(op._name)
        inputs = []
        for t in op._inputs:
            key = (t._op._name, t._value_index)
            arg = feed_nodes.get(key)
            if arg is not None:
                inputs.append((arg, 0))
            else:
                inputs.append(key)
                stack.append(t._op)
        node = graph.add(RNode.from_operation(op, inputs))
        # As in TF, a control edge from a fed Placeholder comes from its feed instead.
        node.control_inputs = []
        for c in op._control_inputs:
            arg = feed_nodes.get((c._name, 0)) if c.type == "Placeholder" else None
            node.control_inputs.append(arg or c._name)
            if arg is None:
                stack.append(c)
    for i, t in enumerate(fetched):
        key = (t._op._name, t._value_index)
        src = (feed_nodes[key], 0) if key in feed_nodes else key
        graph.add(RNode(f"_retval_{t._op._name}_{t._value_index}_{i}", "_Retval",
                        {"T": t._dtype.base_dtype, "index": i}, [src], [],
                        t._op._device, [t._dtype], [], [], t._op._creation_site))
    _check_feeds_present(graph)
    return graph


def _check_feeds_present(graph: RGraph) -> None:
    """One InvalidArgumentError naming every placeholder the fetches need but nobody fed."""
    missing = [n for n in graph if n.op == "Placeholder"]
    if not missing:
        return
    parts = []
    for n in sorted(missing, key=lambda n: n.name):
        shape = n.attrs.get("shape")
        shape_str = "unknown" if shape is None else shape_text(shape, unknown_rank="unknown")
        parts.append(f"'{n.name}' with dtype {_dtypes.as_dtype(n.attrs['dtype']).name} and "
                     f"shape {shape_str} (defined at {n.creation_site[0]}:{n.creation_site[1]})")
    first = missing[0]
    raise errors.InvalidArgumentError(
        None, None,
        "You must feed a value for placeholder tensor " + "; and for ".join(parts)
        + f"\n\t [[{{{{node {first.name}}}}}]]")
