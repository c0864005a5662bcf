"""tf.while_loop: a loop as one execution frame of Enter/Merge/Switch/NextIteration/Exit.

Per loop variable: Enter (into the frame) → Merge (iteration 0 takes the Enter, later ones the
NextIteration) → Switch on LoopCond(cond(...)) → the true side feeds the body, the false side an
Exit; the body's result goes through NextIteration back to the Merge. Values captured from
outside enter once as constants. Gradients are built for the loop as a whole
(autodiff/while_grad.py).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import nest
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_primitives as prim
from tensorweave.ops.control_flow_context import LOOP_OF_EXIT, WhileContext, building_in
from tensorweave.ops.loop_vars import from_flows, to_flows

__all__ = ["while_loop"]


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats `body` while `cond` is true (TF1's tf.while_loop).

    Args:
      cond: callable taking the loop variables, returning a scalar bool tensor.
      body: callable taking the loop variables, returning new values of the same structure.
      loop_vars: a (nested) structure of tensors, values or TensorArrays.
      shape_invariants: per loop variable, a TensorShape the variable keeps across iterations
        (default: its initial shape).
      parallel_iterations: how many iterations may run at once.
      back_prop: whether gradients may be taken through the loop.
      swap_memory: accepted (there is no device memory to swap to).
      name: name scope (default "while").
      maximum_iterations: optional cap on the number of iterations.
      return_same_structure: return a one-element structure unchanged instead of its element.

    Returns:
      The loop variables after the last iteration, in the structure the body returns (a
      single one unwrapped unless `return_same_structure`).

    Raises:
      TypeError: if cond or body is not callable, or cond returns a non-bool value.
      ValueError: for an empty loop_vars, a cond that returns a non-scalar, a body that
        returns another structure, or a loop variable whose shape changes without a shape
        invariant that allows it.
    """
    del swap_memory
    if not callable(cond):
        raise TypeError("cond must be callable.")
    if not callable(body):
        raise TypeError("body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    if not nest.is_nested(loop_vars) and not isinstance(loop_vars, (list, tuple)):
        loop_vars = [loop_vars]
    if not nest.flatten(loop_vars):
        raise ValueError("No loop variables provided")
    with name_scope(name, "while", nest.flatten(to_flows(loop_vars))) as scope:
        if maximum_iterations is not None:
            result = _with_iteration_cap(cond, body, loop_vars, shape_invariants,
                                         maximum_iterations, parallel_iterations, back_prop,
                                         scope)
        else:
            ctx = _new_context(scope, parallel_iterations, back_prop)
            result = build_loop(ctx, cond, body, loop_vars, shape_invariants)
    if not return_same_structure and isinstance(result, (list, tuple)) and \
            len(result) == 1 and not hasattr(type(result), "_fields"):
        return result[0]
    return result


def _new_context(scope, parallel_iterations, back_prop) -> WhileContext:
    """The loop's frame; an outermost one goes in the "while_context" collection (as in TF),
    so meta graphs keep it (ops/control_flow_proto.py)."""
    graph = get_default_graph()
    outer = graph._scopes.control_flow_context
    ctx = WhileContext((scope or "") + "while_context", parallel_iterations, back_prop, outer)
    if outer is None:
        graph.add_to_collection(GraphKeys.WHILE_CONTEXT, ctx)
    return ctx


def _with_iteration_cap(cond, body, loop_vars, shape_invariants, maximum_iterations,
                        parallel_iterations, back_prop, scope):
    """The loop with an iteration counter in front: TF's form of maximum_iterations."""
    from tensorweave.ops.math_ops import logical_and
    cap = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if cap.shape.ndims not in (None, 0):
        raise ValueError(f"maximum_iterations must be a scalar, got shape {cap.shape}")
    counter = convert_to_tensor(0, dtype=cap.dtype)
    invariants = None if shape_invariants is None else (counter.shape, shape_invariants)
    ctx = _new_context(scope, parallel_iterations, back_prop)
    _, result = build_loop(
        ctx, lambda i, lv: logical_and(i < cap, cond(*_as_args(lv))),
        lambda i, lv: (i + 1, _body_result(body(*_as_args(lv)), loop_vars)),
        (counter, loop_vars), invariants,
        unwrap_body=True)
    return result


def _as_args(loop_vars):
    return loop_vars if isinstance(loop_vars, (list, tuple)) and \
        not hasattr(type(loop_vars), "_fields") else [loop_vars]


def _loop_tensor(value):
    value = convert_to_tensor(value)
    if value.dtype._is_ref_dtype:
        from tensorweave.ops.array_ops import identity
        value = identity(value)
    return value


def build_loop(ctx, cond, body, loop_vars, shape_invariants=None, unwrap_body=False):
    """Builds the loop's ops in frame `ctx`; returns the Exits in loop_vars' structure."""
    flat_in = [_loop_tensor(v) for v in nest.flatten(to_flows(loop_vars))]
    invariants = _flat_invariants(loop_vars, shape_invariants, flat_in)
    enters = [ctx.enter(v, is_constant=False) for v in flat_in]
    with building_in(ctx, clear_control_dependencies=True):
        merges = []
        for e, shape in zip(enters, invariants):
            merged = prim.merge([e, e])[0]
            merged._shape = shape
            e._shape = shape
            merges.append(merged)
        ctx.merges = merges
        ctx.pivot = merges[0].op
        packed = from_flows(loop_vars, nest.pack_sequence_as(to_flows(loop_vars), merges))
        c = convert_to_tensor(cond(*_args(packed, unwrap_body)))
        if c.dtype.base_dtype != _dtypes.bool:
            raise TypeError(f"Input 'input' of 'LoopCond' Op has type {c.dtype.base_dtype.name} "
                            "that does not match expected type of bool.")
        if c.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {c.shape.ndims} for LoopCond "
                             f"of {c.name}: cond must return a scalar bool tensor")
        pred = apply_op(prim.LoopCond, [c], name="LoopCond")
        ctx.loop_cond = pred
        ctx.pivot = pred.op
        switches = [prim.switch(m, pred) for m in merges]
        ctx.switches = [s[0].op for s in switches]
        exits = [apply_op(prim.RefExit if s[0].dtype._is_ref_dtype else prim.Exit, [s[0]])
                 for s in switches]
        from tensorweave.ops.array_ops import identity
        body_in = [identity(s[1]) for s in switches]
        ctx.body_inputs = body_in
        ctx.pivot = body_in[0].op
        packed = from_flows(loop_vars, nest.pack_sequence_as(to_flows(loop_vars), body_in))
        result = _body_result(body(*_args(packed, unwrap_body)), loop_vars)
        _check_structure(packed, result)
        flat_out = [_loop_tensor(ctx.capture(convert_to_tensor(v)))
                    for v in nest.flatten(to_flows(result))]
        for v, m, shape, i in zip(flat_out, merges, invariants, range(len(merges))):
            _check_loop_var(v, m, shape, flat_in[i])
        nexts = [apply_op(prim.NextIteration, [v]) for v in flat_out]
        for m, n in zip(merges, nexts):
            m.op._update_input(1, n)
        ctx.body_outputs = flat_out
        ctx.next_iterations = [n.op for n in nexts]
    for op in [e.op for e in exits]:
        op._control_flow_context = ctx.outer
        LOOP_OF_EXIT[op] = ctx
    ctx.exits = exits
    # The exits take the structure the body returned (TF packs them so: a list of loop
    # variables whose body returns a tuple gives a tuple).
    return from_flows(result, nest.pack_sequence_as(to_flows(result), exits))


def _body_result(result, loop_vars):
    """A single value returned by the body counts as a one-element list (as in TF)."""
    del loop_vars
    if not nest.is_nested(result):
        return [result]
    return result


def _args(packed, unwrap_body):
    if unwrap_body:
        return packed
    return _as_args(packed)


def _flat_invariants(loop_vars, shape_invariants, flat_in) -> list:
    if shape_invariants is None:
        return [t.shape for t in flat_in]
    try:
        nest.assert_same_structure(to_flows(loop_vars), shape_invariants, check_types=False)
        flat = nest.flatten(shape_invariants)
    except (ValueError, TypeError):
        flat = list(shape_invariants) if len(flat_in) == len(shape_invariants) else None
        if flat is None:
            raise ValueError("shape_invariants must have the same structure as loop_vars") \
                from None
    out = []
    for t, inv in zip(flat_in, flat):
        inv = _ts.as_shape(inv)
        if not inv.is_compatible_with(t.shape):
            raise ValueError(f"The shape invariant specified for {t.name} is not compatible "
                             f"with the initial shape of the loop variable. It enters the "
                             f"loop with shape {t.shape}, but the specified shape invariant "
                             f"is {inv}.")
        out.append(inv)
    return out


def _check_structure(body_inputs, result) -> None:
    """TF's check of the body's result against the loop variables as the body received them,
    with nest's own ValueError; sequence types may differ (TF compares with check_types
    only where maximum_iterations nests the variables, a difference not kept here)."""
    nest.assert_same_structure(*(to_flows(list(v) if isinstance(v, (list, tuple)) else v)
                                 for v in (body_inputs, result)), check_types=False)


def _check_loop_var(out, merge, shape, initial) -> None:
    if out.dtype.base_dtype != merge.dtype.base_dtype:
        raise ValueError(f"Loop variable {initial.name} enters the loop as "
                         f"{merge.dtype.base_dtype.name} but the body returns "
                         f"{out.dtype.base_dtype.name} ({out.name})")
    if not _shape_within(out.shape, shape):
        raise ValueError(
            f"Input tensor '{initial.name}' enters the loop with shape {shape}, but has shape "
            f"{out.shape} after one iteration. To allow the shape to vary across iterations, "
            f"use the `shape_invariants` argument of tf.while_loop to specify a less-specific "
            f"shape.")


def _shape_within(shape, invariant) -> bool:
    """True if every dim the invariant fixes is the same in `shape`."""
    if invariant.ndims is None:
        return True
    if shape.ndims is None or shape.ndims != invariant.ndims:
        return False
    return all(i is None or s == i for s, i in zip(shape.as_list(), invariant.as_list()))
