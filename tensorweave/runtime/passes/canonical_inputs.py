"""Canonical order of a commutative node's inputs, as Grappler's subgraph elimination sets it.

Before it merges nodes, TensorFlow's common subgraph elimination canonicalizes the graph: the
data inputs of every node whose OpDef is commutative (AddV2, Mul, AddN, Equal, ...) are sorted
by their input strings ("node" for output 0, "node:k" otherwise), byte by byte. That changes
results: AddN sums its inputs in their order, and constant folding's push-down (see
constant_push_down.py) picks the first input of a chain as the one it keeps apart. So the order
follows TF's exactly, and only where TF's runs: with Grappler's `common_subgraph_elimination`
(not under the older optimizer's CSE). A fed tensor is named as TF names it, by the placeholder
it replaced, not by its `_Arg` node.
"""
from __future__ import annotations

from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import COMMUTATIVE_ORDER, PassOptions
from tensorweave.runtime.passes.rewrite import Editor
from tensorweave.runtime.prune import fed_tensor


@register_pass("canonical_inputs", order=12, toggle=COMMUTATIVE_ORDER, group="main")
def sort_commutative_inputs(graph, options: PassOptions | None = None):
    """Sorts the data inputs of every commutative node by TensorFlow's input strings."""
    ed = Editor(graph, options or PassOptions.defaults(graph))
    for node in list(graph):
        if len(node.inputs) < 2 or not node.op_def.is_commutative:
            continue
        order = sorted(node.inputs, key=lambda src: _input_string(ed, src))
        if order == node.inputs:
            continue
        for j, src in enumerate(order):
            if node.inputs[j] != src:
                ed.set_input(node, j, src)
        ed.log.record("sort_inputs", node.name, "commutative inputs in TF's order")
    return graph


def _input_string(ed: Editor, src) -> str:
    """TensorFlow's name of tensor `src` in a NodeDef's input list."""
    name, k = fed_tensor(src[0]) if ed.producer(src).op == "_Arg" else src
    return name if k == 0 else f"{name}:{k}"
