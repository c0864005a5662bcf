"""Fed shapes: static shapes that still hold when a feed overrides a value the graph fixed.

A node's static shape is inferred when the graph is built, and shape functions read the *values*
of inputs the graph fixes then: Reshape's shape, Fill's dims, Tile's multiples, a reduction's
axes, a Shape of a fully defined tensor. A feed overrides such a value (fed tensors are never
folded: in the runtime graph a feed is an `_Arg`, which has no static value), so a shape
inferred from it may be wrong for this run signature: with `c = tf.constant([2, 3])` fed
`[3, 2]`, `tf.reshape(x, c)` is 3x2 although its static shape says 2x3. Every rewrite that
trusts a static shape (reshape to its own shape, x * ones keeping x's shape, a Shape folded to a
constant, layout and fusion choices) would then change what the step computes, or hide an error
the step must raise.

So before any other pass, this one re-runs the shape function of every node downstream of a
feed over the runtime graph (shape_inference.py), where a fed value is unknown, as it is at run
time. A node whose shape function looked at neither a fed value nor a shape this pass changed
computed exactly what it computed when the graph was built, and keeps its shape (so shapes
refined by `set_shape` survive); any other node takes the re-inferred shape, or an unknown one
if its shape function fails here. Feeds keep their own static shapes: the session checks every
fed value against them. In: a placed runtime graph; out: the same graph, with shapes every later
pass may trust. Graphs with control flow are swept until no shape changes (loops feed shapes
back); after `MAX_ROUNDS` sweeps, whatever still changes becomes unknown.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import ANY, PassOptions
from tensorweave.runtime.passes.rewrite import Editor
from tensorweave.runtime.passes.shape_inference import Watch, infer_shapes

MAX_ROUNDS = 8
_BACK_EDGE_OPS = frozenset({"NextIteration", "RefNextIteration"})


@register_pass("fed_shapes", order=5, toggle=ANY)
def reinfer_fed_shapes(graph, options: PassOptions | None = None):
    """Re-infers the static shapes that depend on fed values; see the module docstring."""
    options = options or PassOptions.defaults(graph)
    if not any(n.op == "_Arg" for n in graph):
        return graph
    ed = Editor(graph, options)
    changed: set[str] = set()
    rounds = MAX_ROUNDS if ed.has_control_flow() else 1
    for _ in range(rounds):
        last = _sweep(ed, changed)
        if not last:
            return graph
    if rounds > 1:
        _forget(ed, last)
    return graph


def _sweep(ed: Editor, changed: set[str]) -> set[str]:
    """One pass in topological order; the names of the nodes whose shapes it replaced."""
    downstream = _downstream_of_feeds(ed)
    replaced = set()
    for node in _order(ed):
        if node.name not in downstream or node.op == "_Arg" or not node.output_shapes:
            continue
        watch = Watch(changed)
        shapes = infer_shapes(ed, node, watch)
        if not watch.touched and not watch.failed:
            continue       # as inferred when the graph was built: the shape still holds
        if shapes is None:
            shapes = [_ts.unknown_shape() for _ in node.output_shapes]
        if shapes != list(node.output_shapes):
            _set_shapes(ed, node, shapes)
            changed.add(node.name)
            replaced.add(node.name)
    return replaced


def _order(ed: Editor) -> list:
    """A topological order, where a loop's back edges (NextIteration -> Merge) do not count:
    the next sweep carries their shapes around the loop."""
    if not ed.has_control_flow():
        return ed.topological()
    nodes = ed.graph.nodes
    remaining = {n.name: sum(nodes[s].op not in _BACK_EDGE_OPS for s, _ in n.inputs) +
                 len(n.control_inputs) for n in nodes.values()}
    order = [n for n in nodes.values() if remaining[n.name] == 0]
    for node in order:     # grows while it is read
        back = node.op in _BACK_EDGE_OPS
        readers = [r for k in range(len(node.output_dtypes))
                   for r, _ in ed.readers.get((node.name, k), ()) if not back]
        for reader in readers + list(ed.dependents.get(node.name, ())):
            remaining[reader] -= 1
            if remaining[reader] == 0:
                order.append(nodes[reader])
    seen = {n.name for n in order}
    return order + [n for n in nodes.values() if n.name not in seen]


def _downstream_of_feeds(ed: Editor) -> set[str]:
    """Names of the nodes reachable from an `_Arg` through data edges."""
    stack = [n.name for n in ed.graph if n.op == "_Arg"]
    seen = set(stack)
    while stack:
        node = ed.node(stack.pop())
        for k in range(len(node.output_dtypes)):
            for reader, _ in ed.readers.get((node.name, k), ()):
                if reader not in seen:
                    seen.add(reader)
                    stack.append(reader)
    return seen


def _set_shapes(ed: Editor, node, shapes: list) -> None:
    """Replaces `node`'s output shapes, and the input shapes its readers recorded."""
    node.output_shapes = shapes
    ed.log.record("fed_shape", node.name, ", ".join(str(s) for s in shapes))
    for k, shape in enumerate(shapes):
        for reader_name, j in ed.readers.get((node.name, k), ()):
            reader = ed.node(reader_name)
            if j < len(reader.input_shapes):
                input_shapes = list(reader.input_shapes)
                input_shapes[j] = shape
                reader.input_shapes = tuple(input_shapes)


def _forget(ed: Editor, still_changing: set[str]) -> None:
    """Unknown shapes for the nodes a loop kept changing, and everything they reach."""
    stack, seen = list(still_changing), set(still_changing)
    while stack:
        node = ed.node(stack.pop())
        unknown = [_ts.unknown_shape() for _ in node.output_shapes]
        if unknown != list(node.output_shapes):
            _set_shapes(ed, node, unknown)
        for k in range(len(node.output_dtypes)):
            for reader, _ in ed.readers.get((node.name, k), ()):
                if reader not in seen:
                    seen.add(reader)
                    stack.append(reader)
