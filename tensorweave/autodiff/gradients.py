"""tf.gradients: reverse-mode autodiff as a graph pass.

Walk backward from `ys` over the ops that lie between `xs` and `ys`; each op's registered
gradient function turns the gradients of its outputs into gradients of its inputs (new graph
ops, so gradients of gradients work); gradients reaching a tensor by several paths are summed.
An op is processed once every consumer between xs and ys has contributed its gradient.
"""
from __future__ import annotations

import collections
import contextlib
import enum

from tensorweave.autodiff import aggregate
from tensorweave.autodiff.gating import gate_op_gradients
from tensorweave.autodiff.registry import gradient_function
from tensorweave.autodiff.while_grad import loop_gradients, loop_unit, unit_inputs, unit_outputs
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.scopes import colocate_with, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.control_flow_context import WhileContext

__all__ = ["gradients", "hessians", "UnconnectedGradients", "AggregationMethod"]


class UnconnectedGradients(enum.Enum):
    """What `gradients` returns for an x that does not affect ys."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How gradients arriving by several paths are combined (all sum; kept for the API)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def is_differentiable_dtype(dtype) -> bool:
    base = dtype.base_dtype
    return base.is_floating or base.is_complex or base in (_dtypes.resource, _dtypes.variant)


def as_list(x) -> list:
    """`x` as a list: a list or tuple's items, anything else as a one-item list."""
    return list(x) if isinstance(x, (list, tuple)) else [x]


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """Constructs symbolic derivatives of sum(ys) with respect to each x in xs.

    Args:
      ys: a Tensor or list of Tensors to differentiate.
      xs: a Tensor, Variable or list of them to differentiate with respect to.
      grad_ys: optional initial gradients for each y (default: ones).
      name: name scope for the gradient ops.
      colocate_gradients_with_ops: place each gradient op with the op it differentiates.
      gate_gradients: if True, each op's input gradients pass through a `tuple` (in its
        `<op>_grad/tuple` scope) so none is available before all are computed, as TF: a
        graph run by TF's parallel executor must not update a variable in place before
        another gradient has read it.
      aggregation_method: accepted; gradients are summed with AddN.
      stop_gradients: tensors through which no gradient flows.
      unconnected_gradients: NONE (default) returns None for x not connected to ys; ZERO zeros.

    Returns:
      A list with, for each x, the gradient (a Tensor or IndexedSlices) or None.

    Raises:
      LookupError: if an op between xs and ys has no gradient function.
      TypeError: for a complex y without grad_ys, grad_ys of another dtype than its y, or a
        gradient through the gradient of a while loop (second order, as TF's v1 loops).
      ValueError: for grad_ys of the wrong number, an unknown `unconnected_gradients`, or a
        gradient function returning a gradient of the wrong number or shape.
    """
    del aggregation_method
    ys, xs = as_list(ys), as_list(xs)
    try:
        unconnected = UnconnectedGradients(unconnected_gradients)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: "
                         f"{unconnected_gradients!r}") from None
    # As TF, the values put the gradient ops in the graph of ys and xs, checked to be one.
    values = ys + xs + ([] if stop_gradients is None else as_list(stop_gradients)) + \
        ([] if grad_ys is None else as_list(grad_ys))
    with name_scope(name, "gradients", values):
        ys = [convert_to_tensor(y) for y in ys]
        xs = [x if isinstance(x, IndexedSlices) else convert_to_tensor(x, as_ref=True)
              for x in xs]
        grad_ys = _initial_grads(ys, grad_ys, colocate_gradients_with_ops)
        level = ys[0].graph._scopes.control_flow_context if ys else None
        grads = _backward(ys, xs, grad_ys, stop_gradients, colocate_gradients_with_ops, level,
                          gate_gradients)
        return [_result(g, x, unconnected) for g, x in zip(grads, xs)]


def _backward(ys, xs, grad_ys, stop_gradients=None, colocate=False, level=None, gate=False):
    """The summed gradient lists of `xs`. The walk's nodes are ops and, for loops below
    context `level`, whole loops (autodiff/while_grad.py); `gate` gates each op's gradients."""
    to_nodes = [_node_of(y.op, level) for y in ys]
    from_nodes = [_node_of(x.op, level) for x in xs]
    between, pending = _between_nodes(to_nodes, from_nodes, level)
    stop_nodes = _stop_nodes(from_nodes, stop_gradients, pending, level)
    grads: dict[Tensor, list] = collections.defaultdict(list)
    for y, g in zip(ys, grad_ys):
        if g is not None:
            grads[y].append(g)
    ready = collections.deque()
    seen = set()
    for node in to_nodes:  # a y that no x reaches sends no gradient (and needs no function)
        if node in between and pending.get(node, 0) == 0 and node not in seen:
            ready.append(node)
            seen.add(node)
    while ready:
        node = ready.popleft()
        out_grads = []
        for t in _outputs(node):
            g = aggregate.sum_gradients(grads.get(t, []))
            if g is not None:
                grads[t] = [g]   # summed once: an x's gradient is this sum (one AddN, as TF)
            out_grads.append(g)
        inputs = _inputs(node)  # before a loop's gradient adds its counter and stacks
        if isinstance(node, WhileContext):
            in_grads = _backprop_loop(node, out_grads, stop_nodes, gate)
        else:
            in_grads = _backprop_op(node, out_grads, stop_nodes, colocate, gate)
        for index, (t_in, g) in enumerate(zip(inputs, in_grads)):
            if g is not None and is_differentiable_dtype(t_in.dtype):
                # A handle's gradient is its variable's, not shaped like the (scalar) handle.
                if isinstance(g, Tensor) and not isinstance(node, WhileContext) and \
                        t_in.dtype != _dtypes.resource:
                    _check_shape(node, index, g)
                grads[t_in].append(g)
            src = _node_of(t_in.op, level)
            if src in between:
                pending[src] -= 1
                if pending[src] == 0 and src not in seen:
                    ready.append(src)
                    seen.add(src)
    return [grads.get(x, []) for x in xs]


def _node_of(op, level):
    unit = loop_unit(op, level)
    return op if unit is None else unit


def _inputs(node) -> list:
    return unit_inputs(node) if isinstance(node, WhileContext) else list(node.inputs)


def _outputs(node) -> list:
    return unit_outputs(node) if isinstance(node, WhileContext) else list(node.outputs)


def _consumers(node, level):
    for t in _outputs(node):
        for op in t._consumers:
            yield _node_of(op, level)


def _backprop_loop(ctx, out_grads, stop_nodes, gate=False):
    """The gradients of a loop's inputs; with `gate`, as TF, each op of the gradient loop's
    body gates its gradients too."""
    if ctx in stop_nodes or all(g is None for g in out_grads):
        return [None] * len(unit_inputs(ctx))

    def body_gradients(ys, xs, grad_ys, level):
        return [aggregate.sum_gradients(g)
                for g in _backward(ys, xs, grad_ys, level=level, gate=gate)]
    return loop_gradients(ctx, out_grads, body_gradients, is_differentiable_dtype, gate)


def _initial_grads(ys, grad_ys, colocate=False):
    """The gradients ys start from: `grad_ys`, or ones shaped like each y."""
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_ops import shape
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    grad_ys = as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    out = []
    for i, (y, g) in enumerate(zip(ys, grad_ys)):
        if g is None and y.dtype.is_complex:
            raise TypeError(f"Gradients of complex tensors ({y!r}) must set grad_ys "
                            f"(y.dtype = {y.dtype.base_dtype.name})")
        if not is_differentiable_dtype(y.dtype):
            out.append(None)  # like TF: no gradient flows from an integer, bool or string y
            continue
        if g is None:
            # Like TF, the default ones sit with y only when gradients are colocated; else
            # the enclosing device scope places them.
            with colocate_with(y.op) if colocate else contextlib.nullcontext():
                out.append(ones(shape(y), dtype=y.dtype.base_dtype, name=f"grad_ys_{i}"))
            continue
        g = g if isinstance(g, IndexedSlices) else convert_to_tensor(g, name=f"grad_ys_{i}")
        if g.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError(f"Gradient type {g.dtype.base_dtype.name} generated for "
                            f"{y.name} does not match its type {y.dtype.base_dtype.name}")
        out.append(g)
    return out


def _check_shape(op, index: int, grad) -> None:
    """Refines the gradient's static shape to its input's; incompatible shapes are a bug in
    the op's gradient function, reported like TF."""
    t_in = op.inputs[index]
    try:
        grad.set_shape(t_in.shape)
    except ValueError:
        raise ValueError(f"Incompatible shapes between op input and calculated input gradient. "
                         f"Forward operation: {op.name}. Input index: {index}. "
                         f"Original input shape: {t_in.shape}. "
                         f"Calculated input gradient shape: {grad.shape}") from None


def _between_nodes(to_nodes, from_nodes, level):
    """Nodes on a path from some x to some y, and per node how many of its outputs'
    consumers (within that set) will send it a gradient. A loop body's NextIteration is a
    dead end: the walk never goes round a loop."""
    reached = set()
    stack = list(from_nodes)
    while stack:
        node = stack.pop()
        if node in reached:
            continue
        reached.add(node)
        if isinstance(node, Operation) and node.type in _LOOP_BACK_OPS:
            continue
        stack.extend(_consumers(node, level))
    between = set()
    stack = [node for node in to_nodes if node in reached]
    while stack:
        node = stack.pop()
        if node in between:
            continue
        between.add(node)
        stack.extend(src for src in (_node_of(t.op, level) for t in _inputs(node))
                     if src in reached)
    pending = collections.Counter()
    for node in between:
        for t in _inputs(node):
            src = _node_of(t.op, level)
            if src in between:
                pending[src] += 1
    return between, pending


def _stop_nodes(from_nodes, stop_gradients, pending, level):
    """x-producing nodes with no gradient flowing into their inputs, and explicit stops."""
    stops = {node for node in from_nodes
             if all(pending.get(_node_of(t.op, level), 0) == 0 for t in _inputs(node))}
    for t in as_list(stop_gradients) if stop_gradients is not None else ():
        stops.add(_node_of(convert_to_tensor(t).op, level))
    return stops


_LOOP_BACK_OPS = frozenset({"NextIteration", "RefNextIteration"})

# Ops whose gradient functions make their own zeros for outputs without a gradient (a cond
# Switch's zeros must be dead exactly when that output is).
_ZEROS_BY_OP = frozenset({"Switch", "RefSwitch"})


def _backprop_op(op, out_grads, stop_ops, colocate, gate=False):
    """The gradients of `op`'s inputs from those of its outputs (None where none flows),
    gated together when `gate` and more than one flows."""
    n_in = len(op.inputs)
    if op in stop_ops or all(g is None for g in out_grads):
        return [None] * n_in
    fn = gradient_function(op)
    if fn is None:
        return [None] * n_in
    filled = []
    for t, g in zip(op.outputs, out_grads):
        if g is None and is_differentiable_dtype(t.dtype) and op.type not in _ZEROS_BY_OP:
            from tensorweave.ops.array_creation_ops import zeros_like
            g = zeros_like(t)
        filled.append(g)
    with name_scope(f"{op.name}_grad"):
        if colocate:
            with colocate_with(op):
                in_grads = fn(op, *filled)
        else:
            in_grads = fn(op, *filled)
        in_grads = as_list(in_grads) if in_grads is not None else [None] * n_in
        if len(in_grads) != n_in:
            raise ValueError(f"Num gradients {len(in_grads)} generated for op {op.node_def} "
                             f"do not match num inputs {n_in}")
        if gate:
            in_grads = gate_op_gradients(in_grads)
    return in_grads


def _result(grad_list, x, unconnected):
    """The summed gradient of x (zeros instead of None when asked)."""
    total = aggregate.sum_gradients(grad_list)
    if total is None and unconnected is UnconnectedGradients.ZERO:
        from tensorweave.ops.array_creation_ops import zeros_like
        return zeros_like(x)
    return total


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False,
             gate_gradients=False, aggregation_method=None):
    """The Hessian of sum(ys) with respect to each x (x's size must be known statically)."""
    from tensorweave.ops.array_join_ops import stack, unstack
    from tensorweave.ops.array_ops import reshape
    xs = as_list(xs)
    out = []
    with name_scope(name, "hessians"):
        grads = gradients(ys, xs, colocate_gradients_with_ops=colocate_gradients_with_ops,
                          gate_gradients=gate_gradients)
        for x, g in zip(xs, grads):
            if g is None:
                out.append(None)
                continue
            shape = x.shape
            if not shape.is_fully_defined():
                raise ValueError(f"hessians needs a statically known shape for {x.name}")
            n = shape.num_elements()
            flat = unstack(reshape(convert_to_tensor(g), [n]), num=n)
            rows = []
            for gi in flat:
                (row,) = gradients(gi, x, gate_gradients=gate_gradients)
                rows.append(reshape(convert_to_tensor(row), [n]) if row is not None else
                            reshape(x * 0, [n]))
            out.append(reshape(stack(rows), shape.as_list() + shape.as_list()))
    return out
