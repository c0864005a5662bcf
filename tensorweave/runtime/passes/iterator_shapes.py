"""Iterator shapes: give a one-shot iterator's batches the size its pipeline guarantees.

`batch(n)` says its batch dimension is unknown (`None`, as TensorFlow does) because the last
batch may be short; but over an input that `repeat()` makes endless every batch has exactly n
rows. Left unknown, the dimension keeps the gradient's shape arithmetic (Shape,
BroadcastGradientArgs, Sum, Reshape, ...) in every step; a fed batch of static shape has it
folded away. This pass reads the pipeline of each `IteratorGetNext` fed by an unshared
`OneShotIterator` (whose dataset the graph fixes), sets the batch dimension its pipeline proves,
and re-runs the shape functions of the nodes downstream, each refined shape merged with the
old one (a node whose shape function fails or disagrees keeps its shape). Then it folds
constants and refines again, in rounds: a folded Shape makes the next Sum's axes, and that
Sum's shape the next Reshape's, known. The step ends up like a fed one (the arithmetic pass
drops the reductions over no axes that remain). In: a placed runtime graph; out: the same
graph with more specific output shapes and folded constants. Only the runtime graph changes:
the user's tensors keep TensorFlow's static shapes. Graphs with control flow are left alone.
"""
from __future__ import annotations

import json

from tensorweave.framework import tensor_shape as _ts
from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.constant_folding import fold_constants
from tensorweave.runtime.passes.options import CONSTANT_FOLDING, PassOptions
from tensorweave.runtime.passes.rewrite import CONTROL_FLOW_OPS, Editor
from tensorweave.runtime.passes.shape_inference import infer_shapes

# Transformations that keep batches whole, or an endless input endless (`_guaranteed_rows`).
_KEEP_BATCHES = frozenset({"prefetch", "take", "skip", "shuffle", "repeat", "shard"})
_KEEP_ENDLESS = frozenset({"prefetch", "shuffle", "map"})
MAX_ROUNDS = 8   # refine, fold, refine again: each round reaches one more step of shape math


@register_pass("iterator_shapes", order=15, toggle=CONSTANT_FOLDING, group="main")
def refine_iterator_shapes(graph, options: PassOptions | None = None):
    """Exact batch sizes for one-shot iterators' outputs; see the module docstring."""
    options = options or PassOptions.defaults(graph)
    ops = {n.op for n in graph}
    if "IteratorGetNext" not in ops or ops & CONTROL_FLOW_OPS:
        return graph
    for _ in range(MAX_ROUNDS):
        if not _refine(Editor(graph, options)):
            break
        fold_constants(graph, options)   # Shape arithmetic the new shapes fix feeds the next
    return graph


def _refine(ed: Editor) -> bool:
    """One pass of shape inference downstream of the iterators; True if a shape changed."""
    seeds = {}
    for node in ed.graph:
        if node.op == "IteratorGetNext":
            rows = _guaranteed_rows(ed, node)
            if rows is not None:
                seeds[node.name] = [_with_rows(s, rows) for s in node.output_shapes]
    if not seeds:
        return False
    affected, changed = set(seeds), False
    for node in ed.topological():
        if node.name in seeds:
            shapes = seeds[node.name]
        elif any(src in affected for src, _ in node.inputs) or (node.inputs and not all(
                s.is_fully_defined() for s in node.output_shapes)):
            affected.add(node.name)   # downstream, or fed by constants folding just made
            node.input_shapes = tuple(ed.producer(src).output_shapes[src[1]]
                                      for src in node.inputs)
            shapes = infer_shapes(ed, node)
        else:
            continue
        merged = _merged(node.output_shapes, shapes)
        if merged is not None and merged != list(node.output_shapes):
            node.output_shapes = merged
            changed = True
            ed.log.record("refine_shape", node.name, ", ".join(str(s) for s in merged))
    return changed


def _guaranteed_rows(ed: Editor, get_next) -> int | None:
    """The batch size every element of the iterator's pipeline has, if the graph proves one."""
    iterator = ed.producer(get_next.inputs[0])
    if iterator.op != "OneShotIterator" or iterator.attrs.get("shared_name"):
        return None
    pipeline = ed.producer(iterator.inputs[0])
    if pipeline.op != "DatasetPipeline":
        return None
    spec = json.loads(pipeline.attrs["pipeline"])["root"]

    def arg(node_spec):
        value = ed.const_value(pipeline.inputs[node_spec["args"][0]])
        return int(value) if value is not None and value.size == 1 else None

    while spec["kind"] in _KEEP_BATCHES:
        spec = spec["input"]
    if spec["kind"] != "batch" or spec["drop_remainder"] or spec.get("sparse"):
        return None   # (a SparseTensor's components have no batch dimension to fix)
    rows, spec = arg(spec), spec["input"]
    while spec["kind"] in _KEEP_ENDLESS:
        spec = spec["input"]
    endless = spec["kind"] == "repeat" and arg(spec) == -1
    return rows if endless and rows is not None and rows > 0 else None


def _with_rows(shape, rows: int):
    if shape.ndims is None or shape.ndims == 0:
        return shape
    return _ts.TensorShape([rows] + shape.as_list()[1:])


def _merged(old, new) -> list | None:
    if new is None:
        return None
    try:
        return [a.merge_with(b) for a, b in zip(old, new)]
    except ValueError:
        return None
