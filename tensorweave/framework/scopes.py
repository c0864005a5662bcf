"""Scope context managers: name_scope, device, control_dependencies, colocate_with.

Each pushes onto the calling thread's `ScopeState` of a graph; `apply_op` reads that state when
it creates an op. `variable_scope` lives with variables in `ops/variable_scope.py`.
"""
from __future__ import annotations

import contextlib
import logging

from tensorweave.framework import device_spec as _device_spec
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Operation, Tensor


@contextlib.contextmanager
def graph_name_scope(graph, name):
    """TF1 Graph.name_scope: None/'' resets to the root, 'x/' re-enters, 'x' is made unique."""
    state = graph._scopes
    old = state.name_stack
    if not name:
        new = ""
    elif name[-1] == "/":
        new = name[:-1]
    else:
        new = graph.unique_name(name)
    state.name_stack = new
    try:
        yield f"{new}/" if new else ""
    finally:
        state.name_stack = old


def name_scope(name, default_name=None, values=None):
    """TF1 tf.name_scope(name, default_name=None, values=None): a context yielding 'scope/'."""
    del values  # used by TF only to pick the graph; tensors here always live in the default
    if name is None and default_name is not None:
        name = default_name
    return graph_name_scope(get_default_graph(), name)


@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """TF1's deprecated tf.op_scope: tf.name_scope(name, default_name, values)."""
    logging.getLogger("tensorflow").warning(
        "tf.op_scope(values, name, default_name) is deprecated, use tf.name_scope(name, "
        "default_name, values)")
    with name_scope(name, default_name=default_name, values=values) as scope:
        yield scope


@contextlib.contextmanager
def graph_device(graph, device_name_or_function):
    """Pushes a device string (merged with enclosing scopes), a device function, or None."""
    state = graph._scopes
    entry = device_name_or_function
    if entry is not None and not callable(entry):
        spec = entry.to_string() if hasattr(entry, "to_string") else entry
        entry = _device_spec.canonical(spec)
    state.device_stack.append(entry)
    try:
        yield
    finally:
        state.device_stack.pop()


def device(device_name_or_function):
    """TF1 tf.device: the device (or device function) for ops created in the block."""
    return graph_device(get_default_graph(), device_name_or_function)


def device_for_op(state, op: Operation) -> str:
    """Applies the device stack innermost first; inner fields win, outer ones fill the rest.

    Like TF, a string scope yields a canonical name, while a device function's string result
    is kept as it is ('/cpu:0') unless an enclosing string scope merges it.
    """
    dev = ""
    for entry in reversed(state.device_stack):
        if entry is None:
            break
        if isinstance(entry, str):
            dev = _device_spec.merge_strings(entry, dev) if entry else dev
        else:
            op._device = dev
            result = entry(op)
            if hasattr(result, "to_string"):
                result = result.to_string()
            dev = result or ""
    return dev


class ControlDependencies:
    """One `control_dependencies` block: its control ops and the ops created inside it."""

    __slots__ = ("ops", "seen")

    def __init__(self, ops):
        self.ops = ops
        self.seen: set[int] = set()


@contextlib.contextmanager
def graph_control_dependencies(graph, control_inputs):
    """Ops created in the block run after `control_inputs`; None clears enclosing blocks."""
    state = graph._scopes
    if control_inputs is None:
        saved = state.control_stack
        state.control_stack = []
        try:
            yield
        finally:
            state.control_stack = saved
        return
    ops = []
    for c in control_inputs:
        c = _as_op(graph, c)
        if c is not None and c not in ops:
            ops.append(c)
    state.control_stack.append(ControlDependencies(ops))
    try:
        yield
    finally:
        state.control_stack.pop()


def _as_op(graph, c):
    conv = getattr(c, "_as_graph_element", None)
    if conv is not None:
        c = conv()
    if isinstance(c, Tensor):
        c = c.op
    if isinstance(c, str):
        c = graph.as_graph_element(c)
        c = c.op if isinstance(c, Tensor) else c
    if not isinstance(c, Operation):
        raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
    if c.graph is not graph:
        raise ValueError(f"Control input {c.name} must be from the same graph.")
    return c


def control_dependencies(control_inputs):
    """TF1 tf.control_dependencies."""
    return graph_control_dependencies(get_default_graph(), control_inputs)


def control_inputs_for(state, input_ops) -> list[Operation]:
    """Control inputs from the enclosing blocks, skipping those an input already implies."""
    result: list[Operation] = []
    for block in state.control_stack:
        if any(op._id in block.seen for op in input_ops):
            continue  # an input made inside this block already depends on its ops
        for c in block.ops:
            if c not in input_ops and c not in result:
                result.append(c)
    return result


def record_op_in_blocks(state, op: Operation) -> None:
    for block in state.control_stack:
        block.seen.add(op._id)


@contextlib.contextmanager
def graph_colocate_with(graph, op, ignore_existing: bool = False):
    """Ops created in the block join `op`'s colocation group (and take its device).

    Like TF, the blocks nest: an op joins the groups of every enclosing block, and takes the
    device of the innermost colocation op that has one. The block starts with an empty device
    stack (colocation is stronger than device scopes); a `device` scope opened inside it
    applies when no colocation op has a device. `ignore_existing` drops the enclosing blocks;
    `op=None` (only with `ignore_existing`) clears colocation altogether.
    """
    if op is None and not ignore_existing:
        raise ValueError("Trying to reset colocation (op is None) but ignore_existing is not "
                         "True")
    state = graph._scopes
    if op is not None:
        op = _as_op(graph, op)
    saved_stack, saved_devices = state.colocation_stack, state.device_stack
    state.device_stack = []
    if ignore_existing:
        state.colocation_stack = []
    if op is not None:
        state.colocation_stack = state.colocation_stack + [op]
    try:
        yield
    finally:
        state.colocation_stack, state.device_stack = saved_stack, saved_devices


class _PendingOp:
    """Stands in the colocation stack for an op not created yet: only its name is known."""

    _device = ""

    def __init__(self, name: str):
        self._name = name

    def colocation_groups(self) -> list[bytes]:
        return [f"loc:@{self._name}".encode()]


@contextlib.contextmanager
def colocate_with_pending(name: str):
    """Ops created in the block get `_class` "loc:@<name>", for an op made after them.

    TF's variables do this with an attr scope so that their initial value is colocated with
    the variable op it feeds. As there, an enclosing colocate_with block wins.
    """
    state = get_default_graph()._scopes
    saved = state.colocation_stack
    if not saved:
        state.colocation_stack = [_PendingOp(name)]
    try:
        yield
    finally:
        state.colocation_stack = saved


def colocation_for(stack) -> tuple[list[str], str]:
    """The `_class` groups (sorted, like TF) and the device of an op made in colocate_with
    blocks for the ops of `stack` (the outermost first)."""
    groups: set[str] = set()
    device = ""
    for target in reversed(stack):
        groups.update(g.decode() if isinstance(g, bytes) else g
                      for g in target.colocation_groups())
        device = device or target._device
    return sorted(groups), device


def colocate_with(op, ignore_existing: bool = False):
    """TF1 tf.colocate_with."""
    return graph_colocate_with(get_default_graph(), op, ignore_existing)
