"""Common subexpression elimination: identical pure nodes are computed once.

Two nodes are identical when they have the same op, device, data inputs (in order; the two
inputs of a binary op its OpDef marks commutative in either order, since a + b and b + a are
the same IEEE result: AddV2 and Mul, not Add, which also concatenates strings), control inputs
(as a set) and public attrs (constants compare by dtype, shape and bytes). Visiting nodes in
topological order makes merges cascade: once two inputs merge, their identical readers merge
too. Stateful ops never merge (two random draws are two draws, two assign_adds add twice), and
neither do nodes that read refs (each reads the variable when it runs), control-flow primitives
or the call frame. Exact: the survivor computes the same value.

The survivor is the first node in topological order, unless only the second is preserved
(fetched or a target); a preserved node that loses keeps its name as an Identity of the
survivor.
"""
from __future__ import annotations

import numpy as np

from tensorweave.runtime.passes import register_pass
from tensorweave.runtime.passes.options import CSE, PassOptions
from tensorweave.runtime.passes.rewrite import Editor, is_pure

_MAX_CONST_BYTES = 1 << 16


@register_pass("common_subgraph_elimination", order=13, toggle=CSE, group="main")
def eliminate_common_subexpressions(graph, options: PassOptions | None = None):
    """Merges identical pure nodes; see the module docstring."""
    options = options or PassOptions.defaults(graph)
    ed = Editor(graph, options)
    seen: dict = {}
    for node in ed.topological():
        if node.name not in graph.nodes or not node.output_dtypes or not is_pure(node):
            continue
        key = _key(node)
        if key is None:
            continue
        first = seen.get(key)
        if first is None or first.name not in graph.nodes:
            seen[key] = node
            continue
        keep, drop = first, node
        if ed.is_preserved(drop.name) and not ed.is_preserved(keep.name):
            keep, drop = drop, keep
            seen[key] = keep
        outputs = [(keep.name, k) for k in range(len(keep.output_dtypes))]
        ed.replace(drop, outputs, "merge", f"same as {keep.name}")
    ed.sweep()
    return graph


def _key(node):
    attrs = []
    for name in sorted(node.attrs):
        if name.startswith("_"):
            continue
        value = _canonical(node.attrs[name])
        if value is _UNHASHABLE:
            return None
        attrs.append((name, value))
    inputs = tuple(node.inputs)
    if node.op_def.is_commutative and len(inputs) == 2:
        inputs = tuple(sorted(inputs))
    return (node.op, node.device, inputs, tuple(sorted(set(node.control_inputs))),
            tuple(attrs))


_UNHASHABLE = object()


def _canonical(value):
    if isinstance(value, np.ndarray):
        if value.nbytes > _MAX_CONST_BYTES:
            return _UNHASHABLE
        if value.dtype == object:
            return ("object", value.shape, tuple(value.ravel().tolist()))
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        items = tuple(_canonical(v) for v in value)
        return _UNHASHABLE if any(i is _UNHASHABLE for i in items) else items
    try:
        hash(value)
    except TypeError:
        return _UNHASHABLE
    return (type(value).__name__, value)
