"""tf.cond and tf.case: data-dependent branching built from Switch and Merge.

Each branch function runs inside a CondContext, so every value it takes from outside passes
through a Switch on the predicate and everything it computes is dead unless its branch is
taken: only the taken branch executes, side effects included. One Merge per output joins the
two branches. Gradients: a branch Switch's gradient is a Merge of the two branch gradients and
a Merge's gradient is a Switch of the incoming gradient on the same predicate.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import nest
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Operation
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_primitives as prim
from tensorweave.ops.control_flow_context import (
    COND_MERGES,
    COND_SWITCHES,
    CondContext,
    building_in,
)
from tensorweave.ops.loop_vars import from_flows, to_flows

__all__ = ["cond", "case"]


def _identity(t, name):
    from tensorweave.ops.array_ops import identity
    return identity(t, name=name)


def _build_branch(fn, ctx, label):
    """Runs one branch function in its context; returns (structure, flat tensors)."""
    if not callable(fn):
        raise TypeError(f"{label} must be callable.")
    with building_in(ctx):
        result = fn()
        if result is None:
            result = []
        flat = []
        for v in nest.flatten(to_flows(result)):
            if isinstance(v, Operation):
                from tensorweave.ops.control_flow_ops import with_dependencies
                v = with_dependencies([v], _identity(ctx.pred, "pivot"))
            else:
                v = ctx.capture(convert_to_tensor(v, as_ref=True))
            flat.append(v)
    return result, flat


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """Returns `true_fn()` if `pred` is true, else `false_fn()` (TF1's tf.cond).

    Only the taken branch runs. Ops created inside a branch function belong to it; ops created
    outside (even if a branch uses their value) always run.

    Args:
      pred: a scalar bool Tensor.
      true_fn, false_fn: callables returning the same nested structure of tensors.
      strict: keep singleton lists/tuples instead of unpacking them.
      name: name scope (default "cond").
      fn1, fn2: deprecated aliases of true_fn and false_fn.

    Returns:
      The merged outputs, in the branches' structure.

    Raises:
      TypeError: for a Python bool or non-bool predicate, or non-callable branches.
      ValueError: if the branches return different structures or dtypes.
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if true_fn is None or false_fn is None:
        raise TypeError("cond(): true_fn and false_fn arguments are required.")
    if isinstance(pred, bool):
        raise TypeError("pred must not be a Python bool")
    with name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype != _dtypes.bool:
            raise TypeError(f"pred must be a bool tensor, got {pred.dtype.base_dtype.name} "
                            f"({pred.name})")
        outer = get_default_graph()._scopes.control_flow_context
        p_false, p_true = prim.switch(pred, pred)
        pivot_t = _identity(p_true, "switch_t")
        pivot_f = _identity(p_false, "switch_f")
        pred = _identity(pred, "pred_id")
        ctx_t = CondContext(pred, pivot_t, 1, outer)
        res_t, flat_t = _build_branch(true_fn, ctx_t, "true_fn")
        ctx_f = CondContext(pred, pivot_f, 0, outer)
        res_f, flat_f = _build_branch(false_fn, ctx_f, "false_fn")
        try:
            nest.assert_same_structure(to_flows(res_t), to_flows(res_f))
        except (ValueError, TypeError) as e:
            raise ValueError(f"true_fn and false_fn must return the same structure: true_fn "
                             f"returned {res_t}, false_fn returned {res_f}: {e}") from None
        merged = []
        for t, f in zip(flat_t, flat_f):
            if t.dtype.base_dtype != f.dtype.base_dtype:
                raise ValueError(
                    f"Outputs of true_fn and false_fn must have the same type: "
                    f"{t.dtype.base_dtype.name} ({t.name}) vs {f.dtype.base_dtype.name} "
                    f"({f.name})")
            out = prim.merge([f, t])[0]
            COND_MERGES[out.op] = pred
            merged.append(out)
        result = from_flows(res_t, nest.pack_sequence_as(to_flows(res_t), merged))
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1 and \
            not hasattr(type(result), "_fields"):
        return result[0]
    return result


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The branch of the first true predicate (TF1's tf.case).

    Args:
      pred_fn_pairs: a list of (bool scalar Tensor, callable) pairs (or a dict).
      default: callable for when no predicate holds (if None, the last pair's callable is
        used for that case).
      exclusive: if True, more than one true predicate is an InvalidArgumentError at run time.
      strict, name: as for cond.

    Returns:
      The chosen callable's outputs.
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else \
        list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple")
        if not callable(pair[1]):
            raise TypeError(f"fn for pred {getattr(pair[0], 'name', pair[0])} must be callable.")
    if not pairs and default is None:
        raise ValueError("case needs at least one (pred, fn) pair or a default")
    with name_scope(name, "case", [p for p, _ in pairs]):
        preds = [convert_to_tensor(p) for p, _ in pairs]
        for p in preds:
            if p.dtype.base_dtype != _dtypes.bool:
                raise TypeError(f"pred must be a bool tensor, got {p.name} of "
                                f"{p.dtype.base_dtype.name}")
        fns = [fn for _, fn in pairs]
        if default is None:
            default = fns[-1]
            preds_for_chain, fns_for_chain = preds[:-1], fns[:-1]
        else:
            preds_for_chain, fns_for_chain = preds, fns
        if exclusive and len(preds) > 1:
            return _exclusive_case(preds, preds_for_chain, fns_for_chain, default, strict)
        return _chain(preds_for_chain, fns_for_chain, default, strict)


def _chain(preds, fns, default, strict):
    if not preds:
        return default()
    return cond(preds[0], fns[0], lambda: _chain(preds[1:], fns[1:], default, strict),
                strict=strict)


def _exclusive_case(preds, preds_for_chain, fns, default, strict):
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.logging_ops import Assert
    from tensorweave.ops.math_ops import cast
    from tensorweave.ops.reduction_ops import reduce_sum
    count = reduce_sum(cast(stack(preds), _dtypes.int32))
    names = ", ".join(p.name for p in preds)
    check = Assert(count <= 1, [f"Input error: exclusive=True: more than 1 conditions "
                                f"({names}) evaluated as True:", stack(preds)])
    with control_dependencies([check]):
        first = _identity(preds_for_chain[0], "case_pred") if preds_for_chain else None
    chain_preds = ([first] + preds_for_chain[1:]) if first is not None else []
    return _chain(chain_preds, fns, default, strict)


def _merge_grad(op, grad, _index_grad=None):
    pred = COND_MERGES.get(op)
    if pred is None:
        return [None] * len(op.inputs)
    grad = convert_to_tensor(grad)
    ctx = get_default_graph()._scopes.control_flow_context
    if ctx is not None:
        pred = ctx.capture(pred)
    grads = prim.switch(grad, pred)
    COND_SWITCHES[grads[0].op] = (pred, None)  # so second derivatives go through it
    return list(grads)


def _switch_grad(op, grad_false, grad_true):
    """Merges the branch gradients; a branch without one contributes zeros, live only when
    that branch is taken."""
    if op not in COND_SWITCHES:
        return [None, None]
    grads = [grad_false, grad_true]
    for k, g in enumerate(grads):
        if g is None:
            from tensorweave.ops.array_creation_ops import zeros_like
            grads[k] = prim.switch(zeros_like(op.inputs[0]), op.inputs[1])[k]
        else:
            grads[k] = convert_to_tensor(g)
    merged = prim.merge(grads, name="cond_grad")[0]
    COND_MERGES[merged.op] = op.inputs[1]
    return [merged, None]


prim.Merge.gradient(_merge_grad)
prim.Switch.gradient(_switch_grad)
