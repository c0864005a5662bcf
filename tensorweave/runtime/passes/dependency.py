"""Model pruning and dependency optimization: forwarding nodes and control edges nobody needs.

`prune_model` removes Identity-like forwarding nodes (Identity, StopGradient, Snapshot,
PreventGradient) and NoOps that nothing observes: readers of a forwarding node read its input
instead (and inherit its control inputs); dependents of a NoOp depend on what it depended on. A
pure node whose outputs nobody reads, kept only by control edges, is such a NoOp (Grappler
converts it to one): tf.gradients' gates keep the gradient of a network's input alive that way.

`optimize_dependencies` drops control edges that order nothing: duplicates, a control edge from a
node that is also a data input, from a source Const (it is always ready), and, in graphs without
control flow, from a node that is already an ancestor through another input (transitive
reduction), and from a node when all the edge adds to wait for is work without effects (pure
nodes, variables, feeds, reads of a variable through its ref): it orders nothing another node
sees. Such edges are what the gates of tf.gradients (`gate_gradients`: GATE_OP, GATE_GRAPH) leave;
in TF they keep a variable's in-place update after the gradients that read it, which this runtime
does itself (executor/update_order.py: an update runs after the reads of its variable it does not
feed), and they would stop update fusion.

Kept on purpose: preserved nodes (fetched or targets), forwarding nodes that read a ref (a read
of a variable at that point in time), that read a control-flow op (cond pivots are Identities of
a Switch and anchor control edges), that cross devices, and anything whose readers are
control-flow ops (their inputs carry frames and deadness).
"""
from __future__ import annotations

from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import DEPENDENCY, MODEL_PRUNING, PassOptions
from tensorweave.runtime.passes.rewrite import CONTROL_FLOW_OPS, Editor, is_pure

FORWARDING_OPS = frozenset({"Identity", "StopGradient", "Snapshot", "PreventGradient"})
# Impure ops whose running changes nothing another node sees: variables and fed values (an
# unfed Placeholder fails, and that must still happen).
_SOURCE_OPS = frozenset({"VariableV2", "Variable", "VarHandleOp", "_Arg"})
_MAX_NODES_FOR_REDUCTION = 20000


@register_pass("model_pruning", order=10, toggle=MODEL_PRUNING, group="main")
def prune_model(graph, options: PassOptions | None = None):
    """Removes forwarding nodes and NoOps that nothing observes; see the module docstring."""
    options = options or PassOptions.defaults(graph)
    ed = Editor(graph, options)
    for node in list(ed.topological()):
        if node.name not in graph.nodes or not is_pure(node) or ed.is_preserved(node.name):
            continue
        if node.op in FORWARDING_OPS:
            _bypass_forwarding(ed, node)
        elif node.op == "NoOp":
            _bypass_noop(ed, node)
    for node in reversed(ed.topological()):  # readers first: a chain of unread nodes goes at once
        if node.name in graph.nodes and is_pure(node) and not ed.is_preserved(node.name) and \
                _unread(ed, node):
            _bypass_noop(ed, node)
    ed.sweep()
    return graph


def _bypass_forwarding(ed: Editor, node) -> None:
    src = node.inputs[0]
    producer = ed.producer(src)
    if producer.op in CONTROL_FLOW_OPS or producer.device != node.device:
        return
    readers = ed.data_readers(node.name)
    if any(r.op in CONTROL_FLOW_OPS for r in readers):
        return
    dependents = [ed.node(n) for n in ed.dependents.get(node.name, ())]
    if any(d.op in CONTROL_FLOW_OPS for d in dependents):
        return
    for r in readers:
        ed.add_control_inputs(r, node.control_inputs)
    ed.replace(node, [src], "bypass_" + node.op.lower(), f"readers use {_name(src)}")


def _unread(ed: Editor, node) -> bool:
    """Whether `node` has outputs and nobody reads them. Not one reading a control-flow op:
    an output of a Switch is dead or alive, a control edge from the Switch always alive."""
    return bool(node.output_dtypes) and \
        not any(ed.readers.get((node.name, k)) for k in range(len(node.output_dtypes))) and \
        not any(ed.producer(t).op in CONTROL_FLOW_OPS for t in node.inputs)


def _has_effect(node) -> bool:
    """Whether running `node` may change what another node sees: impure, and neither a
    variable, a feed nor a read of a variable through its ref (the executor runs those reads
    before the in-place updates they do not feed, executor/update_order.py)."""
    if is_pure(node) or node.op in _SOURCE_OPS:
        return False
    return node.op not in FORWARDING_OPS or node.op_def.is_stateful


def _bypass_noop(ed: Editor, node) -> None:
    """Dependents of `node` (a NoOp, or an unread pure node) depend on its inputs instead."""
    dependents = [ed.node(n) for n in ed.dependents.get(node.name, ())]
    if any(d.op in CONTROL_FLOW_OPS for d in dependents):
        return
    n_in, n_out = len(node.inputs) + len(node.control_inputs), len(dependents)
    if n_in * n_out > n_in + n_out:  # rewiring would add edges (TF's heuristic)
        return
    ed.log.record("bypass_noop", node.name, f"{n_out} dependents take {n_in} control inputs")
    ed.forward_dependents(node)
    ed.remove(node)


@register_pass("dependency_optimization", order=60, toggle=DEPENDENCY, group="main")
def optimize_dependencies(graph, options: PassOptions | None = None):
    """Drops control edges that order nothing; see the module docstring."""
    options = options or PassOptions.defaults(graph)
    ed = Editor(graph, options)
    has_control_flow = any(n.op in CONTROL_FLOW_OPS for n in graph)
    order = ed.topological()
    ancestors = None
    if not has_control_flow and len(order) <= _MAX_NODES_FOR_REDUCTION and \
            any(n.control_inputs for n in graph):
        ancestors = _ancestor_bits(order)
    bit = {n.name: 1 << i for i, n in enumerate(order)}
    effects = 0
    if ancestors is not None:
        for n in order:
            if _has_effect(n):
                effects |= bit[n.name]
    for node in order:
        if not node.control_inputs or node.op in CONTROL_FLOW_OPS:
            continue
        data_sources = {s for s, _ in node.inputs}
        controls = list(dict.fromkeys(node.control_inputs))
        kept = []
        for i, c in enumerate(controls):
            source = ed.node(c)
            if c in data_sources:
                reason = "also a data input"
            elif source.op == "Const" and not source.control_inputs and not source.inputs:
                reason = "a source constant is always ready"
            else:
                reason = None
            if reason is None and ancestors is not None:
                # Against the edges still kept: two edges must not each count on the other.
                others = list(data_sources) + kept + controls[i + 1:]
                if any(ancestors[o] & bit[c] for o in others):
                    reason = "already an ancestor through another input"
                elif not effects & bit[c] and \
                        not effects & ancestors[c] & ~_closure(others, ancestors, bit):
                    reason = "it adds only work without effects to wait for"
            if reason is None:
                kept.append(c)
            else:
                ed.log.record("drop_control_edge", node.name, f"^{c}: {reason}")
        if len(kept) != len(node.control_inputs):
            ed.set_control_inputs(node, kept)
    ed.sweep()
    return graph


def _ancestor_bits(order) -> dict[str, int]:
    """Node name -> bitset (over topological positions) of its strict ancestors."""
    index = {n.name: i for i, n in enumerate(order)}
    anc: dict[str, int] = {}
    for node in order:
        bits = 0
        for src in [s for s, _ in node.inputs] + list(node.control_inputs):
            bits |= anc[src] | (1 << index[src])
        anc[node.name] = bits
    return anc


def _closure(names, ancestors, bit) -> int:
    """The bitset of `names` and their ancestors."""
    bits = 0
    for name in names:
        bits |= ancestors[name] | bit[name]
    return bits


def _name(tensor) -> str:
    return tensor[0] if tensor[1] == 0 else f"{tensor[0]}:{tensor[1]}"
