"""Compile once: a partition's nodes become flat NodeItem records in topological order.

Each record holds the kernel callable (instantiated once, attrs parsed), its context, the value
slots it reads and writes, which inputs must be dereferenced (a variable's ref read as a value),
its consumers and initial pending count, and whether it is expensive or asynchronous. Per-step
executors only walk these records.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.context import KernelContext
from tensorweave.kernels.registry import find_kernel
from tensorweave.runtime import cost_model
from tensorweave.runtime.executor.frames import is_back_edge
from tensorweave.runtime.executor.kernel_errors import node_error
from tensorweave.runtime.executor.sum_order import order_sums

# Kernels of stateful ops keep state across steps (random generators): a session shares one
# instance per node across all its executors, like TensorFlow's OpSegment.
_SPECIAL = frozenset({"_Arg", "_Retval", "Const"})


class NodeItem:
    """One node compiled for execution."""

    __slots__ = ("id", "node", "kind", "fn", "ctx", "in_slots", "deref", "out_start",
                 "num_outputs", "consumers", "pending", "expensive", "is_async", "needs_step",
                 "const_value", "index", "returns_view", "copy_out")

    def __init__(self, idx, node):
        self.id = idx
        self.node = node
        self.kind = "kernel"
        self.fn = None
        self.ctx = None
        self.in_slots: tuple = ()
        self.deref: tuple = ()
        self.out_start = 0
        self.num_outputs = len(node.output_dtypes)
        self.consumers: list[int] = []
        self.pending = 0
        self.expensive = False
        self.is_async = False
        self.needs_step = False
        self.const_value = None
        self.index = None
        self.returns_view = False
        self.copy_out = False   # _Retval only: the fetched value may alias variable storage


def topological_order(graph, consumers) -> list:
    """Kahn's algorithm over data and control edges, stable in the graph's node order.

    The NextIteration → Merge edges that close loops are left out (frames.is_back_edge).
    """
    nodes = graph.nodes
    remaining = {n.name: len(n.inputs) + len(n.control_inputs) -
                 sum(1 for s, _ in n.inputs if is_back_edge(nodes[s].op, n.op)) for n in graph}
    ready = [n for n in graph if remaining[n.name] == 0]
    order = []
    while ready:
        nxt = []
        for node in ready:
            order.append(node)
            for c in consumers[node.name]:
                if is_back_edge(node.op, c.op):
                    continue
                remaining[c.name] -= 1
                if remaining[c.name] == 0:
                    nxt.append(c)
        ready = nxt
    if len(order) != len(graph):
        stuck = sorted(n for n, k in remaining.items() if k > 0)[:10]
        raise errors.InvalidArgumentError(None, None, "Graph contains a cycle (without "
                                          f"control-flow frames) through: {', '.join(stuck)}")
    return order


def compile_items(graph, device, session, user_graph=None,
                  intra_op_threads=None) -> tuple[list[NodeItem], int]:
    """NodeItems in topological order and the number of value slots they use. A kernel that
    rejects its node's attrs fails with the node's error (naming it and its site, from
    `user_graph`), as a kernel failing at run time does. `intra_op_threads`: see
    KernelContext."""
    order = topological_order(graph, graph.consumers())
    items, slot_of, by_name = [], {}, {}
    n_slots = 0
    for idx, node in enumerate(order):
        item = NodeItem(idx, node)
        item.out_start = n_slots
        for k in range(item.num_outputs):
            slot_of[(node.name, k)] = n_slots + k
        n_slots += item.num_outputs
        items.append(item)
    for item in items:  # a loop's Merge reads a NextIteration that comes later in the order
        node = item.node
        item.in_slots = tuple(slot_of[src] for src in node.inputs)
        item.deref = tuple(_is_deref(graph, node, j, src, k)
                           for j, (src, k) in enumerate(node.inputs))
        _bind_kernel(item, device, session, user_graph, intra_op_threads)
        by_name[node.name] = item
    mark_variable_aliases(items)
    order_sums(items)
    if any(cost_model.uses_every_core(item.node) for item in items):
        for item in items:   # the contractions use every core: nothing to overlap with them
            item.expensive = False
    for item in items:
        deps = [s for s, _ in item.node.inputs] + list(item.node.control_inputs)
        item.pending = len(deps)
        for src in deps:
            by_name[src].consumers.append(item.id)
    return items, n_slots


def mark_variable_aliases(items) -> set[int]:
    """Flags fetches whose value may share memory with a variable's storage; returns the value
    slots that may (idempotent: a second call finds and flags the same).

    A dereferenced ref input is the storage itself; kernels declared `returns_view` (Identity,
    Reshape, ...) pass that aliasing on. Such fetches are copied, so a later in-place update
    cannot change a value the user already holds; every other fetch is returned as is.
    """
    aliased: set[int] = set()
    for item in items:
        if item.kind == "Const" and isinstance(item.const_value, np.ndarray) or \
                item.node.op == "_Recv":
            # A constant's array is bound once and shared by every step (constant folding
            # makes many), and a received array may be another device's variable storage: a
            # fetch of it, or of a view of it, is copied like variable storage.
            aliased.add(item.out_start)
            continue
        reads_storage = any(item.deref) or any(s in aliased for s in item.in_slots)
        if item.kind == "_Retval":
            item.copy_out = reads_storage
        elif reads_storage and item.returns_view:
            aliased.update(range(item.out_start, item.out_start + item.num_outputs))
    return aliased


def _is_deref(graph, node, j, src, k) -> bool:
    """True if input j reads a ref (variable) output as a plain value."""
    return graph.nodes[src].output_dtypes[k]._is_ref_dtype and not input_arg_is_ref(node, j)


def input_arg_is_ref(node, j) -> bool:
    """Whether input j of `node` is declared a ref argument by its OpDef."""
    flat = 0
    for arg in node.op_def.inputs:
        if arg.number_attr:
            count = node.attrs[arg.number_attr]
        elif arg.type_list_attr:
            count = len(node.attrs[arg.type_list_attr])
        else:
            count = 1
        if j < flat + count:
            return arg.is_ref
        flat += count
    return False


def _bind_kernel(item: NodeItem, device, session, user_graph, intra_op_threads) -> None:
    node = item.node
    if node.op in _SPECIAL:
        item.kind = node.op
        item.index = node.attrs.get("index")
        if node.op == "Const":
            value = node.attrs["value"]
            # 0-d constants run as NumPy scalars: scalar arithmetic skips the ufunc machinery.
            # (Not strings: value[()] of an object array is a bare `bytes` without .shape.)
            numeric = value.ndim == 0 and value.dtype != object
            if not numeric:
                # Read-only: every step shares the array, so nothing may write into it, and
                # a consumer may keep it (or a view of it) without copying (queue enqueues).
                value.flags.writeable = False
            item.const_value = value[()] if numeric else value
        return
    kdef = find_kernel(node.op, device.device_type, node.attrs)
    if kdef is None:
        raise errors.NotFoundError(
            None, None, f"No registered kernel for op '{node.op}' on device {device.name} "
            f"with attrs {_attr_summary(node.attrs)} (node {node.name}, defined at "
            f"{node.creation_site[0]}:{node.creation_site[1]})")
    ctx = KernelContext(node, device, session, intra_op_threads)
    item.ctx = ctx
    item.returns_view = kdef.returns_view
    item.needs_step = kdef.needs_step
    item.is_async = kdef.is_async
    if kdef.pure:
        item.kind = "pure"
        item.fn = kdef.impl
    elif kdef.is_class:
        if node.op_def.is_stateful and session is not None and not node.op.startswith("_"):
            # A user's stateful node keeps one kernel (its state: a random stream, a reader)
            # across every run signature. Runtime-made nodes (_Send, _Recv, ...) are not
            # shared: their names are per-signature, and two signatures may reuse one name
            # for different nodes.
            instance = session.shared_kernel((device.name, node.name, node.op),
                                             lambda: _construct(kdef, ctx, node, user_graph))
        else:
            instance = _construct(kdef, ctx, node, user_graph)
        item.fn = instance.compute_async if kdef.is_async else instance.compute
    else:
        item.fn = kdef.impl
    item.expensive = cost_model.is_expensive(node, kdef)
    j = node.attrs.get("_in_place_input")
    if j is not None and not kdef.is_async and not kdef.needs_step:
        # The memory pass (runtime/passes/memory.py) found that input j's buffer dies here.
        from tensorweave.kernels.fused import in_place_kernel
        variant = in_place_kernel(node, j, ctx, item.fn, item.kind == "pure")
        if variant is not None:
            item.kind, item.fn = "pure", variant


def _construct(kdef, ctx, node, user_graph):
    """The kernel instance for `node`; its constructor's error as the node's."""
    try:
        return kdef.impl(ctx)
    except Exception as e:
        raise node_error(e, node, user_graph) from None


def _attr_summary(attrs: dict) -> str:
    return "{" + ", ".join(f"{k}={getattr(v, 'name', v)}" for k, v in sorted(attrs.items())
                           if not k.startswith("_") and not isinstance(v, np.ndarray)) + "}"
