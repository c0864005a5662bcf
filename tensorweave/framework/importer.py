"""import_graph_def: rebuild a GraphDef's nodes in the default graph (TF1 semantics).

Nodes are created in dependency order through `create_op`, under the import prefix, with
`input_map` replacing references to the mapped tensors; `return_elements` names the tensors
and operations to hand back. A while loop's back edges (NextIteration -> Merge) are left out of
that order: the Merge is created with a stand-in for its back-edge input, which is rewired to
the NextIteration once everything is imported, and its output shape is unknown (as in TF).
"""
from __future__ import annotations

import contextlib
import heapq

from tensorweave.framework import errors
from tensorweave.framework.apply_op import create_op
from tensorweave.framework.device_spec import canonical
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.graph_io import attr_from_proto
from tensorweave.framework.op_def import OP_REGISTRY
from tensorweave.framework.scopes import device, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape

__all__ = ["extend_graph", "import_graph_def"]


def _parse_input(name: str):
    """'^a' -> ('a', None, True); 'a:1' -> ('a', 1, False); 'a' -> ('a', 0, False)."""
    if name.startswith("^"):
        return name[1:], None, True
    op, _, index = name.partition(":")
    return op, int(index) if index else 0, False


def _canonical_tensor_name(name: str) -> str:
    return name if ":" in name else f"{name}:0"


_MERGES = ("Merge", "RefMerge")
_NEXT_ITERATIONS = ("NextIteration", "RefNextIteration")


def _is_back_edge(node, src, by_name) -> bool:
    """True for a loop's NextIteration -> Merge edge, which closes the loop's cycle."""
    return node.op in _MERGES and src in by_name and by_name[src].op in _NEXT_ITERATIONS


def _dependency_order(nodes) -> list:
    """The nodes, each after its data and control inputs (back edges ignored); among the
    nodes ready at once, the one first in the GraphDef goes first, as TF's importer does."""
    by_name = {n.name: n for n in nodes}
    index = {n.name: k for k, n in enumerate(nodes)}
    waiting = [0] * len(nodes)
    consumers: dict[str, list[int]] = {}
    for k, node in enumerate(nodes):
        for inp in node.input:
            src = _parse_input(inp)[0]
            if src in by_name and not _is_back_edge(node, src, by_name):
                waiting[k] += 1
                consumers.setdefault(src, []).append(k)
    ready = [k for k in range(len(nodes)) if not waiting[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(nodes[k])
        for c in consumers.get(nodes[k].name, ()):
            waiting[c] -= 1
            if not waiting[c]:
                heapq.heappush(ready, c)
    if len(order) != len(nodes):
        stuck = sorted((n for n in nodes if waiting[index[n.name]]), key=lambda n: n.name)
        raise ValueError(f"{len(stuck)} nodes in a cycle (not a while loop's back edge): "
                         f"{[n.name for n in stuck][:10]}")
    return order


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None):
    """Imports the graph in `graph_def` into the default graph.

    Args:
      graph_def: a GraphDef proto.
      input_map: maps tensor names in `graph_def` to Tensors that replace them.
      return_elements: names of tensors ("y:0") and operations ("done") to return.
      name: prefix for the imported names; default "import", "" for none.

    Returns:
      The list of Tensors/Operations named by `return_elements` (None if not given).

    Raises:
      ValueError: for input_map keys or return_elements that the GraphDef does not contain.
    """
    del op_dict, producer_op_list
    graph = get_default_graph()
    input_map = {_canonical_tensor_name(k): convert_to_tensor(v)
                 for k, v in (input_map or {}).items()}
    nodes = list(graph_def.node)
    # A key may also name an input no node produces (the unbound inputs of a scoped export).
    names = {n.name for n in nodes} | {_parse_input(i)[0] for n in nodes for i in n.input}
    missing = [k for k in input_map if k.rpartition(":")[0] not in names]
    if missing:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: "
                         f"[{', '.join(missing)}]")
    node_names = {n.name for n in nodes}
    for n in nodes:
        if n.op not in OP_REGISTRY:
            raise ValueError(f"Op type not registered '{n.op}' (node {n.name}) in tensorweave")
        for c in n.attr["_class"].list.s if "_class" in n.attr else ():
            c = c.decode()
            if c.startswith("loc:@") and c[5:] not in node_names:
                raise ValueError(f"Node '{n.name}' expects to be colocated with unknown node "
                                 f"'{c[5:]}'")
    with name_scope(name, "import") as scope:
        renamed = _unique_names(graph, nodes, scope)
        created = _import_nodes(graph, nodes, scope, input_map, {}, renamed)
    return _return_elements(return_elements, created, nodes)


def extend_graph(graph, graph_def) -> None:
    """Adds the nodes of `graph_def` to `graph` under their own names; their inputs and
    colocations may name ops `graph` already has (the master's ExtendSession).

    All or nothing: when a node cannot be added, the nodes of `graph_def` added before it
    are removed again.

    Raises:
      InvalidArgumentError: for a node whose name `graph` already uses, an input or
        colocation that names no op, or a malformed NodeDef.
    """
    count = len(graph._ops)
    try:
        _extend(graph, list(graph_def.node))
    except errors.OpError:
        graph._drop_ops_after(count)
        raise
    except (TypeError, ValueError, KeyError, IndexError) as e:   # a malformed NodeDef
        graph._drop_ops_after(count)
        raise errors.InvalidArgumentError(None, None, f"Invalid GraphDef: {e}") from None


def _extend(graph, nodes) -> None:
    existing = dict(graph._ops_by_name)
    taken = sorted(n.name for n in nodes if n.name in existing)
    if taken:
        raise errors.InvalidArgumentError(None, None, f"Node '{taken[0]}' already exists in "
                                          "the session's graph")
    known = existing.keys() | {n.name for n in nodes}
    for n in nodes:
        if n.op not in OP_REGISTRY:
            raise errors.InvalidArgumentError(None, None, f"Op type not registered '{n.op}' "
                                              f"(node {n.name}) in tensorweave")
        unknown = [i for i in n.input if _parse_input(i)[0] not in known]
        unknown += [c.decode() for c in (n.attr["_class"].list.s if "_class" in n.attr else ())
                    if c.startswith(b"loc:@") and c[5:].decode() not in known]
        if unknown:
            raise errors.InvalidArgumentError(None, None, f"Node '{n.name}': Unknown input "
                                              f"or colocated node '{unknown[0]}'")
    with graph.as_default():
        _import_nodes(graph, nodes, "", {}, existing, {})


def _import_nodes(graph, nodes, scope, input_map, existing, renamed) -> dict:
    """Creates `nodes` in dependency order, their inputs resolved among themselves and the
    ops of `existing` (by name); returns {node name: op} of the new ops."""
    node_names = {n.name for n in nodes}
    created, back_edges = dict(existing), []
    for node in _dependency_order(nodes):
        created[node.name] = _import_node(graph, node, scope, created, input_map,
                                          back_edges, node_names, renamed)
    for op, index, src, src_index in back_edges:
        op._update_input(index, created[src].outputs[src_index])
    new = {name: op for name, op in created.items() if name in node_names}
    _place_colocated(graph, new.values())
    return new


def _unique_names(graph, nodes, scope: str) -> dict[str, str]:
    """{node name: new name} for the nodes whose (prefixed) name the graph already uses, as
    an op's name or a scope of one ("a" of "a/b"). As TF's GraphConstructor::FindUniqueName,
    each takes the first `name_N` (N = 1, 2, ...) that neither the graph nor the GraphDef
    uses; the other nodes keep their names, so the ones sharing a name with a renamed node's
    new name never clash. Names compare case-sensitively, as TF's do."""
    in_graph = _names_and_scopes(graph._ops_by_name)
    in_def = _names_and_scopes(n.name for n in nodes)
    renamed = {}
    for node in nodes:
        name = f"{scope}{node.name}"
        if name not in in_graph:
            continue
        count, new = 1, f"{name}_1"
        while new in in_graph or new in in_def:
            count += 1
            new = f"{name}_{count}"
        renamed[node.name] = new[len(scope):]
    return renamed


def _names_and_scopes(names) -> set[str]:
    """The names and each of their enclosing scopes: "a/b/c" gives "a", "a/b", "a/b/c"."""
    out = set()
    for name in names:
        parts = name.split("/")
        out.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    return out


def _colocation_names(op) -> list[str]:
    """The other ops `op`'s `_class` attr colocates it with."""
    names = (c[5:] for c in op._attrs.get("_class", ()) if c.startswith("loc:@"))
    return [n for n in names if n != op.name]


def _node_device(node, op_def, attrs):
    """The device scope a node is created under (TF's importer._ProcessNewOps).

    A node colocated with another op ignores both its own device and the enclosing scopes
    (`_place_colocated` gives it its group's device); any other node's device is pushed as
    the innermost `tf.device` scope, so it is canonicalized and merged with the enclosing ones.
    """
    if any(c.startswith("loc:@") and c[5:] != node.name for c in attrs.get("_class", ())):
        return device(None)
    return device(node.device) if node.device else contextlib.nullcontext()


def _place_colocated(graph, ops) -> None:
    """Gives each colocated op the device of the first op of its group that has one."""
    for op in ops:
        names = _colocation_names(op)
        for name in names:
            target = graph._ops_by_name[name]   # checked to be imported too
            if target.device:
                op._device = canonical(target.device)
                break


def _import_node(graph, node, scope, created, input_map, back_edges, node_names, renamed):
    """Creates `node`; appends (op, input index, source, output index) to `back_edges` for
    each input not yet created (a Merge's back edge), which gets a stand-in for now."""
    op_def = OP_REGISTRY[node.op]
    data, control, pending = [], [], []
    for inp in node.input:
        src, index, is_control = _parse_input(inp)
        if is_control:
            control.append(created[src])
            continue
        key = f"{src}:{index}"
        if key in input_map:
            data.append(input_map[key])
        elif src in created:
            data.append(created[src].outputs[index])
        elif node.op in _MERGES and src in node_names:
            pending.append((len(data), src, index))
            data.append(None)
        else:
            raise ValueError(f"Node '{node.name}': Unknown input node '{inp}'")
    if pending:
        stand_in = next((t for t in data if t is not None), None)
        if stand_in is None:
            raise ValueError(f"Node '{node.name}': a Merge needs an input from outside its "
                             "loop")
        data = [stand_in if t is None else t for t in data]
    attrs = {}
    for key, value in node.attr.items():
        spec = op_def.attrs.get(key)
        if spec is None and not key.startswith("_"):
            raise ValueError(f"NodeDef {node.name} mentions attr '{key}' not in Op "
                             f"{node.op}")
        if key == "_output_shapes":
            continue
        attrs[key] = attr_from_proto(value, spec.kind if spec else None)
    if "_class" in attrs:
        prefix = scope.rstrip("/") + "/" if scope else ""
        attrs["_class"] = [f"loc:@{prefix}{renamed.get(c[5:], c[5:])}"
                           if c.startswith("loc:@") else c for c in attrs["_class"]]
    inputs = _group_inputs(op_def, data, attrs, node.name)
    with _node_device(node, op_def, attrs):
        op = create_op(op_def, inputs, attrs,
                       name=f"{scope}{renamed.get(node.name, node.name)}/")
    graph._names_in_use[op.name.lower()] = max(graph._names_in_use.get(op.name.lower(), 0), 1)
    if control:
        op._add_control_inputs(control)
    if pending:
        op.outputs[0]._shape = TensorShape(None)
        back_edges.extend((op, i, src, index) for i, src, index in pending)
    return op


def _group_inputs(op_def, data, attrs, node_name):
    """Regroups a NodeDef's flat inputs into the OpDef's (possibly list) arguments."""
    grouped, i = [], 0
    for arg in op_def.inputs:
        if arg.number_attr:
            n = attrs[arg.number_attr]
            grouped.append(data[i:i + n])
            i += n
        elif arg.type_list_attr:
            n = len(attrs[arg.type_list_attr])
            grouped.append(data[i:i + n])
            i += n
        else:
            grouped.append(data[i])
            i += 1
    if i != len(data):
        raise errors.InvalidArgumentError(None, None, f"NodeDef {node_name} has {len(data)} "
                                          f"inputs, its op {op_def.name} expects {i}")
    return grouped


def _return_elements(return_elements, created, nodes):
    if return_elements is None:
        return None
    out = []
    for element in return_elements:
        op_name, _, index = element.partition(":")
        op = created.get(op_name)
        if op is None:
            raise ValueError(f"Requested return_element '{element}' not found in graph_def.")
        if index:
            idx = int(index)
            if idx >= len(op.outputs):
                raise ValueError(f"Requested return_element '{element}' not found in "
                                 "graph_def.")
            out.append(op.outputs[idx])
        else:
            out.append(op)
    return out
