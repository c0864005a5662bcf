"""Scope context managers: name_scope, device, control_dependencies, colocate_with.

Each pushes onto the calling thread's `ScopeState` of a graph; `apply_op` reads that state when
it creates an op. `variable_scope` lives with variables in `ops/variable_scope.py`.
"""
from __future__ import annotations

import contextlib
import logging

from tensorweave.framework import device_spec as _device_spec
from tensorweave.framework.graph import get_default_graph, graph_from_inputs
from tensorweave.framework.operation import Operation, Tensor


class graph_name_scope:  # noqa: N801 - used as the function it replaces
    """TF1 Graph.name_scope: None/'' resets to the root, 'x/' re-enters, 'x' is made unique.

    A class rather than a generator context manager: every wrapper opens one, and this is
    cheaper to create. With `make_default` the graph is also the default inside the block.
    """

    __slots__ = ("_graph", "_name", "_state", "_old", "_default")

    def __init__(self, graph, name, make_default: bool = False):
        self._graph = graph
        self._name = name
        self._default = graph.as_default() if make_default else None

    def __enter__(self) -> str:
        graph, name = self._graph, self._name
        if self._default is not None:
            self._default.__enter__()
        state = self._state = graph._scopes
        self._old = state.name_stack
        if not name:
            new = ""
        elif name[-1] == "/":
            new = name[:-1]
        else:
            new = graph.unique_name(name)
        state.name_stack = new
        return f"{new}/" if new else ""

    def __exit__(self, *exc_info) -> None:
        self._state.name_stack = self._old
        if self._default is not None:
            self._default.__exit__(*exc_info)


def name_scope(name, default_name=None, values=None):
    """TF1 tf.name_scope(name, default_name=None, values=None): a context yielding 'scope/'.

    The scope is opened in the graph of `values` (the default graph if they hold no tensor),
    which is the default graph inside the block, as in TF: a wrapper's values convert and its
    ops go into its inputs' graph.

    Raises:
      TypeError: if `default_name` is not a string.
      ValueError: if `values` are given without `name` or `default_name`, or hold tensors of
        two graphs.
    """
    if default_name is not None and not isinstance(default_name, str):
        raise TypeError(f"`default_name` type ({type(default_name)}) is not a string type. "
                        "You likely meant to pass this into the `values` kwarg.")
    if name is None:
        if default_name is None and values is not None:
            raise ValueError(f"At least one of name ({name}) and default_name ({default_name}) "
                             "must be provided.")
        name = default_name
    graph = get_default_graph()
    if values:
        inputs_graph = graph_from_inputs(values, graph)
        if inputs_graph is not graph:
            return graph_name_scope(inputs_graph, name, make_default=True)
    return graph_name_scope(graph, name)


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


def _as_op(graph, c, same_graph: bool = True):
    """The Operation `c` (an op, a tensor, a name) stands for; as TF, a control input must
    be of `graph` (a colocation target need not be)."""
    conv = getattr(c, "_as_graph_element", None)
    if conv is not None:
        c = conv()
    if isinstance(c, str) or (same_graph and isinstance(c, (Tensor, Operation))):
        c = graph.as_graph_element(c)   # TF's "Tensor ... is not an element of this graph."
    if isinstance(c, Tensor):
        c = c.op
    if not isinstance(c, Operation):
        raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
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
        op = _as_op(graph, op, same_graph=False)
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
