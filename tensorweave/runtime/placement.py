"""Placement: a device for every node of the pruned graph.

In: an RGraph whose nodes carry requested device strings, the session's devices. Out: the same
RGraph with `node.device` set to a full device name. Honours explicit constraints (merged with
the session's job/task), keeps colocation groups (`_class` "loc:@x" attrs, and ref and
DT_RESOURCE edges to the variable or resource they reach) together, moves nodes whose device
cannot run them when soft placement is allowed, and otherwise raises one InvalidArgumentError
listing every unplaceable node. As in TF's placer, a node joined to a group by such an edge
gives up a requested device the group's others conflict with. Unconstrained
groups are placed by the cost model, in topological order: a group goes to the capable device
holding the most bytes on its edges to already placed nodes (static sizes, see
cost_model.tensor_bytes), ties and groups with no placed neighbour to the first capable device.
`place` returns why each node landed where it did; `explain` turns that into text.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.kernels.registry import find_kernel
from tensorweave.runtime.cost_model import tensor_bytes
from tensorweave.runtime.executor.node_item import input_arg_is_ref

_NO_KERNEL_NEEDED = frozenset({"_Arg", "_Retval", "Const"})


class _Groups:
    """Union-find over node names for colocation."""

    def __init__(self, names):
        self.parent = {n: n for n in names}

    def find(self, n):
        parent = self.parent
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _colocation_groups(graph) -> tuple[_Groups, set[str]]:
    """The colocation groups, and the nodes that joined theirs by a ref or resource input."""
    groups = _Groups(graph.nodes)
    by_edge = set()
    for node in graph:
        for entry in node.attrs.get("_class", ()):
            entry = entry.decode() if isinstance(entry, bytes) else entry
            target = entry[5:] if entry.startswith("loc:@") else None
            if target in graph.nodes:
                groups.union(target, node.name)
        for j, ((src, k), dtype) in enumerate(zip(node.inputs, node.input_dtypes)):
            # A ref argument (assign, a cond's RefSwitch) works on the variable's storage and
            # must sit with it; a plain argument reading a ref gets a copy and may be elsewhere.
            # A resource handle (a resource variable's, a table's) likewise, as in TF's placer.
            if dtype._is_ref_dtype and graph.nodes[src].output_dtypes[k]._is_ref_dtype and \
                    input_arg_is_ref(node, j) or dtype == _dtypes.resource:
                groups.union(src, node.name)
                by_edge.add(node.name)
    return groups, by_edge


def _can_run(node, device) -> bool:
    return node.op in _NO_KERNEL_NEEDED or \
        find_kernel(node.op, device.device_type, node.attrs) is not None


def _topological(graph) -> list:
    """Nodes in dependency order (Kahn); nodes on cycles (loops) follow in graph order."""
    consumers = graph.consumers()
    remaining = {n.name: len(n.inputs) + len(n.control_inputs) for n in graph}
    ready = [n for n in graph if remaining[n.name] == 0]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for c in consumers[node.name]:
            remaining[c.name] -= 1
            if remaining[c.name] == 0:
                ready.append(c)
    if len(order) < len(graph):
        seen = {n.name for n in order}
        order.extend(n for n in graph if n.name not in seen)
    return order


def place(graph, devices, allow_soft_placement: bool = False, job: str = "localhost",
          task: int = 0) -> dict[str, str]:
    """Assigns `node.device` for every node; returns {node name: why it landed there}."""
    groups, by_edge = _colocation_groups(graph)
    members: dict[str, list] = {}
    for node in _topological(graph):
        members.setdefault(groups.find(node.name), []).append(node)
    failures, reasons, by_cost = [], {}, []
    for group in members.values():
        if not any(n.requested_device for n in group):
            by_cost.append(group)
            continue
        device, why = _place_constrained(group, devices, allow_soft_placement, job, task,
                                         failures, by_edge)
        _assign(group, device, why, reasons)
    consumers = graph.consumers()
    for group in by_cost:
        device, why = _place_by_cost(group, devices, graph, consumers, failures)
        _assign(group, device, why, reasons)
    if failures:
        available = ", ".join(d.name for d in devices)
        raise errors.InvalidArgumentError(
            None, None, "Cannot assign a device for operation(s):\n  " + "\n  ".join(failures)
            + f"\nAvailable devices: [{available}]")
    return reasons


def _assign(group, device, why: str, reasons: dict) -> None:
    if device is None:
        return
    together = ""
    if len(group) > 1:
        names = ", ".join(n.name for n in group[:6]) + (", ..." if len(group) > 6 else "")
        together = f"; colocation group of {len(group)} nodes ({names}) placed together"
    for node in group:
        node.device = device.name
        reasons[node.name] = f"{node.name} ({node.op}) -> {device.name}: {why}{together}"


def _edge_bytes(group, devices, graph, consumers) -> dict[str, int]:
    """Bytes on the group's edges to placed nodes outside it, per device."""
    inside = {n.name for n in group}
    weights = dict.fromkeys((d.name for d in devices), 0)
    for node in group:
        for (src, k), dtype in zip(node.inputs, node.input_dtypes):
            producer = graph.nodes[src]
            if src not in inside and producer.device in weights:
                weights[producer.device] += tensor_bytes(dtype, producer.output_shapes[k])
        for src in node.control_inputs:
            if src not in inside and graph.nodes[src].device in weights:
                weights[graph.nodes[src].device] += 4   # a control edge sends a dummy scalar
        for c in consumers[node.name]:
            if c.name in inside or c.device not in weights:
                continue
            weights[c.device] += 4 * (node.name in c.control_inputs)
            for (src, k), dtype in zip(c.inputs, c.input_dtypes):
                if src == node.name:
                    weights[c.device] += tensor_bytes(dtype, node.output_shapes[k])
    return weights


def _place_by_cost(group, devices, graph, consumers, failures):
    capable = [d for d in devices if all(_can_run(n, d) for n in group)]
    if not capable:
        failures.append(f"{group[0].name} ({group[0].op}): no registered kernel on any device "
                        f"for its colocation group ({', '.join(n.name for n in group)})")
        return None, ""
    weights = _edge_bytes(group, devices, graph, consumers)
    best = max(capable, key=lambda d: weights[d.name])   # max keeps the first of equals
    if weights[best.name] == 0:
        return best, "no device requested and no placed neighbour: first capable device"
    moved = ", ".join(f"{d.name.rsplit('/', 1)[-1]}={weights[d.name]}" for d in capable
                      if weights[d.name])
    return best, ("no device requested; cost model: most bytes on edges to placed nodes "
                  f"({moved})")


def _place_constrained(group, devices, soft: bool, job: str, task: int, failures, by_edge):
    requested = None
    # The others' requests first: one from a node joined by a ref or resource edge yields.
    for node in sorted(group, key=lambda n: n.name in by_edge):
        if not node.requested_device:
            continue
        spec = DeviceSpec.from_string(node.requested_device)
        if requested is None:
            requested = (spec, node)
            continue
        merged = _merge_requests(requested[0], spec, soft)
        if merged is None:
            if node.name in by_edge:
                continue
            failures.append(f"{node.name}: colocation group has conflicting devices "
                            f"{requested[0].to_string()} ({requested[1].name}) and "
                            f"{spec.to_string()} ({node.name})")
            return None, ""
        requested = (merged, requested[1])
    spec, asker = requested
    said = f"requested '{asker.requested_device}' by {asker.name}"
    capable = [d for d in devices if all(_can_run(n, d) for n in group)]
    local = DeviceSpec(job=job, replica=0, task=task)
    matching = [d for d in devices if spec.matches(d.spec) and local.matches(d.spec)]
    chosen = [d for d in matching if d in capable]
    if chosen:
        return chosen[0], f"{said} (merged with /job:{job}/replica:0/task:{task})"
    if not matching:
        why = f"no device matches the requested '{asker.requested_device}'"
    else:
        why = (f"no kernel for op '{asker.op}' (or a colocated op) on the requested "
               f"device type {matching[0].device_type}")
    if not soft:
        failures.append(f"{asker.name} ({asker.op}): {why} (defined at "
                        f"{asker.creation_site[0]}:{asker.creation_site[1]})")
        return None, ""
    # Soft placement relaxes only the device type and index (TF's placer clears just those):
    # a requested job, replica or task that this session lacks stays an error.
    relaxed = spec.replace(device_type=None, device_index=None)
    allowed = [d for d in capable if relaxed.matches(d.spec) and local.matches(d.spec)]
    same_type = [d for d in allowed if d.device_type == spec.device_type]
    if same_type or allowed:
        return (same_type or allowed)[0], (f"{said}, but {why}; allow_soft_placement moved it "
                                           "to the first capable device")
    if not any(relaxed.matches(d.spec) and local.matches(d.spec) for d in devices):
        failures.append(f"{asker.name} ({asker.op}): {why}; allow_soft_placement changes only "
                        "the device type and index, not the job, replica or task")
        return None, ""
    failures.append(f"{asker.name} ({asker.op}): {why}, and no device can run its "
                    f"colocation group ({', '.join(n.name for n in group)})")
    return None, ""


def _merge_requests(a: DeviceSpec, b: DeviceSpec, soft: bool) -> DeviceSpec | None:
    """Two requests of one colocation group merged, or None if they conflict.

    Like TF's DeviceNameUtils::MergeDevNames: a different job, replica or task always
    conflicts; with soft placement a different device type drops the type and index, and a
    different index drops the index.
    """
    if any(x is not None and y is not None and x != y
           for x, y in ((a.job, b.job), (a.replica, b.replica), (a.task, b.task))):
        return None
    merged = a.make_merged_spec(b)
    if a.device_type is not None and b.device_type is not None and \
            a.device_type != b.device_type:
        if not soft:
            return None
        return merged.replace(device_type=None, device_index=None)
    if a.device_index is not None and b.device_index is not None and \
            a.device_index != b.device_index:
        if not soft:
            return None
        return merged.replace(device_index=None)
    return merged


def explain(session_or_plan, node_name: str) -> str:
    """Why `node_name` landed on its device, as one line of text.

    Args:
      session_or_plan: a Session (its newest run plan holding the node, or else a placement
        of the subgraph the node needs) or a RunPlan.
      node_name: the op's name.

    Raises:
      KeyError: if the node is not in the plan or the session's graph.
    """
    reasons = getattr(session_or_plan, "placement", None)
    if reasons is not None:
        return _reason(reasons, node_name)
    core = session_or_plan._core
    for plan in reversed(list(core._plans.values())):
        try:
            return _reason(plan.placement, node_name)
        except KeyError:
            pass
    return _reason(core.placement_for(node_name), node_name)


def _reason(reasons: dict, node_name: str) -> str:
    """The reason for `node_name`, or for the feed (`_arg_<name>_...`) that replaced it."""
    reason = reasons.get(node_name)
    if reason is None:
        prefix = f"_arg_{node_name}_"
        reason = next((r for n, r in reasons.items() if n.startswith(prefix)), None)
    if reason is None:
        raise KeyError(f"No node named {node_name!r} in this placement")
    return reason
